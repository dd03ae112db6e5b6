/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* show's "Open files:": the files already open radaemon gave their device's new window. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ra-util.h"
#include "racontrol.h"

void rc_open_files_free(RcOpenFile *files, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(files[i].comm);
                free(files[i].path);
                free(files[i].why);
        }
        free(files);
}

/* Whether path is under (or is) dir: both as realpath() and /proc make them, no trailing '/'. */
static bool path_under(const char *path, const char *dir) {
        size_t n = strlen(dir);

        if (strcmp(dir, "/") == 0)
                return true;
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int read_files(RcContext *c, sd_bus_message *m, RcOpenFile **files, size_t *n) {
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(tuusssuub)");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "tuusssuub")) > 0) {
                RcOpenFile f = {}, *grown;
                const char *comm, *path, *why;
                int open;

                r = sd_bus_message_read(m, "tuusssuub", &f.when_usec, &f.pid, &f.uid, &comm, &path, &why,
                                        &f.from_kb, &f.to_kb, &open);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
                if (c->path_absolute && !path_under(path, c->path_absolute))
                        continue;
                grown = realloc(*files, (*n + 1) * sizeof(RcOpenFile));
                if (!grown)
                        return -ENOMEM;
                *files = grown;
                f.open = open;
                f.comm = strdup(comm);
                f.path = strdup(path);
                f.why = strdup(why);
                (*files)[(*n)++] = f;
                if (!f.comm || !f.path || !f.why)
                        return -ENOMEM;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

int rc_get_open_files(RcContext *c, const char *object_path, RcOpenFile **ret, size_t *ret_n) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        RcOpenFile *files = NULL;
        size_t n = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        r = sd_bus_call_method(c->bus, RA_BUS_NAME, object_path, RA_BUS_DEVICE_INTERFACE, "ListOpenFiles",
                               &error, &reply, NULL);
        /* A radaemon from before open_files: it changed no open file's window. */
        if (sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_METHOD))
                return 0;
        if (r < 0)
                return rc_report_error("listing its open files", &error, r);
        r = read_files(c, reply, &files, &n);
        if (r < 0) {
                rc_open_files_free(files, n);
                return rc_report_error("listing its open files", NULL, r);
        }
        *ret = files;
        *ret_n = n;
        return 0;
}

static const char *why_text(const char *why) {
        if (ra_streq(why, "random"))
                return "its random reads brought whole windows";
        if (ra_streq(why, "evicted"))
                return "pages read ahead for it were evicted before it read them";
        if (ra_streq(why, "stream"))
                return "it read in order, filling each window";
        if (ra_streq(why, "undone"))
                return "the growth that gave it its window was undone";
        return why;
}

void rc_print_open_files(const RcOpenFile *files, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const RcOpenFile *f = &files[i];
                time_t when = (time_t) (f->when_usec / 1000000);
                char date[64] = "";
                struct tm tm;

                if (localtime_r(&when, &tm))
                        (void) strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", &tm);
                /* Any user names their files and their programs. */
                fputs(i == 0 ? "Open files:    " : "               ", stdout);
                rc_print_text(f->path);
                fputs(", read by ", stdout);
                rc_print_text(f->comm);
                printf(" (pid %" PRIu32 "): %" PRIu32 " -> %" PRIu32 " KiB at %s, %s%s\n", f->pid,
                       f->from_kb, f->to_kb, date, why_text(f->why), f->open ? "" : " (closed since)");
        }
}

void rc_json_open_files(const RcOpenFile *files, size_t n) {
        putchar('[');
        for (size_t i = 0; i < n; i++) {
                const RcOpenFile *f = &files[i];

                printf("%s{\"when_usec\":%" PRIu64 ",\"pid\":%" PRIu32 ",\"uid\":%" PRIu32 ",\"comm\":",
                       i == 0 ? "" : ",", f->when_usec, f->pid, f->uid);
                rc_json_string(f->comm);
                fputs(",\"path\":", stdout);
                rc_json_string(f->path);
                fputs(",\"why\":", stdout);
                rc_json_string(f->why);
                printf(",\"from_kb\":%" PRIu32 ",\"to_kb\":%" PRIu32 ",\"open\":%s}", f->from_kb, f->to_kb,
                       f->open ? "true" : "false");
        }
        putchar(']');
}
