/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ra-bdiwatch.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-pathwatch.h"
#include "ra-udev.h"
#include "ra-util.h"

#define FSTAB "/etc/fstab"

static void say(const RaDeviceSection *s) {
        if (s->resolved)
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

static bool resolve(Manager *m) {
        _cleanup_(ra_strv_freep) char **before = NULL;
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

        r = ra_config_resolve_paths(m->config, "/sys", "/proc/self/mountinfo", FSTAB, &changed);
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
