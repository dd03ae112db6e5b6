/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <syslog.h>

#include "ra-context.h"
#include "ra-disk.h"
#include "ra-log.h"
#include "ra-users.h"
#include "ra-util.h"

typedef struct RaUser {
        uid_t uid;
        unsigned lines;      /* said in this window */
        unsigned suppressed; /* left out of the log in this window */
        bool capped;         /* "the most radaemon manages" was said in this window */
} RaUser;

typedef struct RaUsers {
        RaUser *v;
        size_t n;
        sd_event_source *window_end; /* the end of the window the first line counted began */
        unsigned refused;            /* mounts refused at the cap since ra_users_refused() */
} RaUsers;

static RaUser *user_get(Manager *m, uid_t uid) {
        RaUser *grown;

        if (!m->users && !(m->users = calloc(1, sizeof(RaUsers))))
                return NULL;
        for (size_t i = 0; i < m->users->n; i++)
                if (m->users->v[i].uid == uid)
                        return &m->users->v[i];
        grown = reallocarray(m->users->v, m->users->n + 1, sizeof(RaUser));
        if (!grown)
                return NULL;
        m->users->v = grown;
        grown[m->users->n] = (RaUser){ .uid = uid };
        return &grown[m->users->n++];
}

static size_t managed_of(const Manager *m, uid_t uid) {
        size_t n = 0;

        for (size_t i = 0; i < m->n_disks; i++)
                n += m->disks[i]->kind == RA_KIND_BDI && m->disks[i]->in.bdi.user_made &&
                     m->disks[i]->in.bdi.user_id == uid;
        return n;
}

static int on_window_end(sd_event_source *s, uint64_t usec, void *userdata);

/* The window the budgets count in, from the first line counted: false when none can be. */
static bool window_armed(Manager *m) {
        return m->users->window_end ||
               sd_event_add_time_relative(m->event, &m->users->window_end, CLOCK_MONOTONIC,
                                          RA_USER_LOG_WINDOW_USEC, 0, on_window_end, m) >= 0;
}

bool ra_users_may_manage(Manager *m, const RaBdi *b) {
        RaUser *u;

        if (!b->user_made || managed_of(m, b->user_id) < RA_USER_OBJECTS_MAX)
                return true;
        u = user_get(m, b->user_id);
        if (u)
                m->users->refused++;
        /* Said once a window: a user going to and fro across the cap does not flood the log. */
        if (!u || !u->capped)
                log_notice("uid %" PRIu32
                           " has %d FUSE mounts managed, the most radaemon manages of one user's: "
                           "its others are left at the window their servers gave (%s at %s first).",
                           (uint32_t) b->user_id, RA_USER_OBJECTS_MAX, b->name,
                           b->mountpoint ?: "a mount under way");
        if (u && window_armed(m))
                u->capped = true;
        return false;
}

unsigned ra_users_refused(Manager *m) {
        unsigned n = m->users ? m->users->refused : 0;

        if (m->users)
                m->users->refused = 0;
        return n;
}

/* What was left out of the log, one line a user; every budget is whole again. */
static void say_left_out(Manager *m) {
        for (size_t i = 0; i < m->users->n; i++) {
                RaUser *u = &m->users->v[i];

                if (u->suppressed > 0)
                        log_info("%u lines about the FUSE mounts of uid %" PRIu32
                                 " were left out of the log "
                                 "(more than %d a minute); racontrol status shows them.",
                                 u->suppressed, (uint32_t) u->uid, RA_USER_LOG_BURST);
                u->lines = u->suppressed = 0;
                u->capped = false;
        }
        m->users->window_end = sd_event_source_disable_unref(m->users->window_end);
}

static int on_window_end(sd_event_source *s, uint64_t usec, void *userdata) {
        say_left_out(userdata);
        return 0;
}

int ra_users_log_level(Manager *m, const RaDisk *d, int level) {
        RaUser *u;

        if (level > LOG_INFO || level > ra_log_get_max_level() || d->kind != RA_KIND_BDI ||
            !d->in.bdi.user_made)
                return level;
        u = user_get(m, d->in.bdi.user_id);
        if (!u)
                return level;
        if (!window_armed(m))
                return level; /* no window to end: nothing is left out */
        if (u->lines < RA_USER_LOG_BURST) {
                u->lines++;
                return level;
        }
        u->suppressed++;
        return LOG_DEBUG;
}

void ra_users_free(Manager *m) {
        if (!m->users)
                return;
        say_left_out(m); /* at exit too: nothing left out goes unsaid */
        free(m->users->v);
        m->users = mfree(m->users);
}
