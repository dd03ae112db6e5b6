/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ra-path.h"
#include "ra-util.h"
#include "racontrol.h"

/*
 * A path where a verb takes a device: the object its files read with.
 * Resolved here, with the caller's own rights over the path, so that
 * radaemon never stats a path on somebody's behalf.
 */
int rc_resolve_target(RcContext *c, char **args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *absolute = NULL;
        int r;

        if (!ra_path_is_path(args[0]))
                return 0;

        absolute = realpath(args[0], NULL);
        if (!absolute) {
                fprintf(stderr, "racontrol: %s: %s\n", args[0], strerror(errno));
                return RC_EXIT_FAILURE;
        }

        r = ra_path_object("/sys", "/proc/self/mountinfo", NULL, absolute, &c->path_object);
        if (r == -ENODEV || r == -ENOENT) {
                fprintf(stderr, "racontrol: %s is on a file system with no device to read ahead from (%s)\n",
                        args[0], r == -ENODEV ? "tmpfs, proc, overlay or the like" : "not in any mount");
                return RC_EXIT_FAILURE;
        }
        if (r < 0) {
                fprintf(stderr, "racontrol: %s: cannot tell which device it reads from: %s\n", args[0],
                        strerror(-r));
                return RC_EXIT_FAILURE;
        }

        r = rc_connect(c);
        if (r != 0)
                return r;
        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE, "GetDevice",
                               &error, NULL, "s", c->path_object.name);
        if (sd_bus_error_has_name(&error, RA_BUS_ERROR_NO_SUCH_DEVICE)) {
                fprintf(stderr, "racontrol: %s reads with %s%s's window, which radaemon does not manage\n",
                        args[0], c->path_object.bdi ? "the bdi " : "", c->path_object.name);
                return RC_EXIT_FAILURE;
        }
        if (r < 0)
                return rc_report_error(c->path_object.name, &error, r);

        c->path = args[0];
        c->path_absolute = TAKE_PTR(absolute);
        args[0] = c->path_object.name;
        return 0;
}

void rc_print_path(const RcContext *c) {
        const RaPathObject *o = &c->path_object;

        /* A FUSE mount's source and mount point are any user's choice. */
        rc_print_text(c->path);
        printf(": its files read with %s%s's window (", o->bdi ? "the bdi " : "", o->name);
        rc_print_text(o->fs_type);
        fputs(" on ", stdout);
        rc_print_text(o->source);
        fputs(", mounted at ", stdout);
        rc_print_text(o->mountpoint);
        fputs(")\n\n", stdout);
}

void rc_json_path_begin(const RcContext *c) {
        const RaPathObject *o = &c->path_object;

        fputs("{\"path\":", stdout);
        rc_json_string(c->path);
        fputs(",\"mount_point\":", stdout);
        rc_json_string(o->mountpoint);
        fputs(",\"file_system\":", stdout);
        rc_json_string(o->fs_type);
        fputs(",\"source\":", stdout);
        rc_json_string(o->source);
        fputs(",\"device\":", stdout);
}
