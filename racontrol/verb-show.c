/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ra-util.h"
#include "racontrol.h"

int verb_show(RcContext *c, char **args) {
        _cleanup_free_ char *evidence = NULL, *learning_off = NULL;
        RcOpenFile *files = NULL;
        size_t n_files = 0;
        RcDevice d;
        int r;

        if (strcmp(args[0], RC_SWAP_NAME) == 0)
                return rc_swap_show(c);

        r = rc_get_device(c, args[0], &d);
        if (r != 0)
                return r;
        r = rc_get_learning(c, &evidence, &learning_off);
        if (r == 0)
                r = rc_get_open_files(c, d.path, &files, &n_files);
        if (r != 0) {
                rc_device_clear(&d);
                return r;
        }

        if (c->json) {
                if (c->path)
                        rc_json_path_begin(c);
                rc_json_device_open(&d);
                fputs(",\"open_files\":", stdout);
                rc_json_open_files(files, n_files);
                putchar('}');
                if (c->path)
                        putchar('}');
                putchar('\n');
        } else {
                r = rc_device_escape_text(&d);
                if (r >= 0)
                        r = rc_text_escape(&learning_off);
                if (r < 0) {
                        rc_device_clear(&d);
                        rc_open_files_free(files, n_files);
                        return rc_report_error(args[0], NULL, r);
                }
                if (c->path)
                        rc_print_path(c);
                rc_print_device(&d);
                rc_print_learning(evidence, learning_off);
                rc_print_open_files(files, n_files);
        }

        rc_device_clear(&d);
        rc_open_files_free(files, n_files);
        return 0;
}
