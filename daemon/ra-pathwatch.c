/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ra-bdiwatch.h"
#include "ra-child.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-path.h"
#include "ra-pathwatch.h"
#include "ra-udev.h"
#include "ra-util.h"

#define FSTAB "/etc/fstab"
/*
 * How long the lookup of every [path:] section's path may take: a local
 * file system answers in microseconds, its cache in less; one that takes
 * longer waits on a server (a hard NFS mount whose server is gone waits for
 * ever), and the event loop does not wait with it.
 */
#define CHASE_DEADLINE_MSEC 2000

static void say(const RaDeviceSection *s) {
        if (s->chase_error == -EPERM)
                log_warning(
                        "[path:%s]: a link on its way is not root's (one a user owns could be swapped in "
                        "to move this section's value onto another disk): it names nothing until the "
                        "link is root's or the section names the link's target.",
                        s->glob);
        else if (s->resolved)
                log_info("[path:%s]: its files read with %s%s's window.", s->glob,
                         s->resolved_bdi ? "the bdi " : "", s->resolved);
        else
                log_info("[path:%s]: no file system holds it now (not mounted yet, or nothing reads ahead "
                         "there); it applies once one does.",
                         s->glob);
}

static bool same(const char *a, const char *b) {
        return a == b || ra_streq(a, b);
}

/* The child (ra-child.h): each section's index, ra_path_chase()'s result and the path, NUL after each. */
static _Noreturn void chase_child(const RaConfig *c) {
        FILE *f = fdopen(3, "w");

        for (size_t i = 0; f && i < c->n_sections; i++) {
                _cleanup_free_ char *real = NULL;
                int r;

                if (!c->sections[i].path)
                        continue;
                r = ra_path_chase(c->sections[i].glob, &real);
                fprintf(f, "%zu%c%d%c%s%c", i, 0, r, 0, real ?: "", 0);
                /* What is done reaches the daemon should a later one hang. */
                (void) fflush(f);
        }
        _exit(f && fclose(f) == 0 ? 0 : 1);
}

/*
 * Each [path:] section's path with its links resolved (ra_path_chase()),
 * looked up by a child within CHASE_DEADLINE_MSEC. *ret has one entry per
 * section: NULL where nothing came in time (the section keeps what it
 * names), "" where a link was refused. A child past its deadline is killed
 * and, when its lookup waits on a server that does not answer, cannot die
 * until it does: while it lives none other starts, so there is one at most.
 */
static char **chased_free(char **chased, size_t n) {
        for (size_t i = 0; chased && i < n; i++)
                free(chased[i]);
        free(chased);
        return NULL;
}

static int chase_all(Manager *m, char ***ret) {
        char **chased = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t n = m->config->n_sections, len = 0;
        bool was_stuck = m->paths_stuck > 0;
        int fd, r;
        pid_t pid;

        chased = calloc(n + 1, sizeof(char *));
        if (!chased)
                return -ENOMEM;
        if (ra_child_stuck(&m->paths_stuck)) {
                log_debug(
                        "[path:] sections: the last lookup of their paths has not returned; they keep what "
                        "they name.");
                *ret = TAKE_PTR(chased);
                return 0;
        }
        if (was_stuck)
                log_info("[path:] sections: the lookup of their paths that did not return has ended.");

        pid = ra_child_start(&fd);
        if (pid < 0) {
                chased_free(chased, n);
                return pid;
        }
        if (pid == 0)
                chase_child(m->config);
        r = ra_child_read(fd, CHASE_DEADLINE_MSEC, &buf, &len);
        (void) close(fd);
        ra_child_end(pid, r, &m->paths_stuck);
        if (r == -ETIMEDOUT)
                log_warning(
                        "[path:] sections: looking up their paths took longer than %u ms (a file system "
                        "that does not answer, such as a hard NFS mount whose server is gone); those not "
                        "looked up keep what they named, and are looked up again at the next mount change "
                        "once that lookup has returned.",
                        CHASE_DEADLINE_MSEC);
        else if (r < 0) {
                chased_free(chased, n);
                return r;
        }

        /* Whole records only: one cut short by the deadline is not taken. */
        for (size_t at = 0; buf && at < len;) {
                const char *index = buf + at, *status, *path;
                size_t i;
                int error;

                status = memchr(index, 0, len - at);
                path = status ? memchr(status + 1, 0, len - (size_t) (status + 1 - buf)) : NULL;
                if (!path || !memchr(path + 1, 0, len - (size_t) (path + 1 - buf)))
                        break;
                status++, path++;
                at = (size_t) (path - buf) + strlen(path) + 1;
                if (sscanf(index, "%zu", &i) != 1 || i >= n || sscanf(status, "%d", &error) != 1)
                        continue;
                m->config->sections[i].chase_error = error == -EPERM ? error : 0;
                /* Another error (a component it may not look at): as written, as before. */
                chased[i] = strdup(error == -EPERM ? "" : error < 0 ? m->config->sections[i].glob : path);
                if (!chased[i]) {
                        chased_free(chased, n);
                        return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(chased);
        return 0;
}

static bool resolve(Manager *m) {
        _cleanup_(ra_strv_freep) char **before = NULL;
        char **chased = NULL;
        size_t n = m->config->n_sections;
        bool changed = false;
        int r;

        if (n == 0)
                return false;
        /* What each names now; a section that names nothing keeps a NULL in the middle. */
        before = calloc(n + 1, sizeof(char *));
        if (!before) {
                log_error_errno(ENOMEM, "Cannot resolve the [path:] sections: %m");
                return false;
        }
        for (size_t i = 0; i < n; i++)
                before[i] = m->config->sections[i].resolved ? strdup(m->config->sections[i].resolved) : NULL;

        r = chase_all(m, &chased);
        if (r >= 0)
                r = ra_config_resolve_paths(m->config, "/sys", "/proc/self/mountinfo", FSTAB, chased,
                                            &changed);
        chased_free(chased, n);
        for (size_t i = 0; r >= 0 && changed && i < n; i++) {
                const RaDeviceSection *s = &m->config->sections[i];

                if (s->path && !same(s->resolved, before[i]))
                        say(s);
        }
        for (size_t i = 0; i < n; i++)
                before[i] = mfree(before[i]);
        if (r < 0) {
                log_error_errno(r, "Cannot resolve the [path:] sections, they keep what they named: %m");
                return false;
        }
        return changed;
}

void ra_pathwatch_resolve(Manager *m) {
        (void) resolve(m);
}

static int on_due(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        m->paths_due = sd_event_source_disable_unref(m->paths_due);
        if (!resolve(m))
                return 0;

        (void) ra_udev_enumerate(m, "path");
        ra_bdiwatch_scan(m, "path");
        return 0;
}

void ra_pathwatch_schedule(Manager *m) {
        int r;

        if (m->paths_due || !m->config)
                return;
        for (size_t i = 0; i < m->config->n_sections; i++)
                if (m->config->sections[i].path) {
                        r = sd_event_add_defer(m->event, &m->paths_due, on_due, m);
                        if (r < 0)
                                log_warning_errno(
                                        r, "Cannot follow the [path:] sections after this change: %m");
                        return;
                }
}

void ra_pathwatch_stop(Manager *m) {
        m->paths_due = sd_event_source_disable_unref(m->paths_due);
}
