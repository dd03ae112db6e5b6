/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ra-bus.h"
#include "ra-context.h"
#include "ra-identify.h"
#include "ra-log.h"
#include "ra-registry.h"
#include "ra-tune.h"
#include "ra-users.h"
#include "ra-util.h"

/*
 * What the sources that read objects (ra-udev.c, ra-bdiscan.c) report, and
 * the tuning path then decides: each object seen is snapshot before it is
 * read, and once the source has read them all the batch is identified,
 * saved once (an original must be on disk before radaemon first writes, and
 * one save for hundreds of disks keeps coldplug fast), decided once per
 * object and announced. The sources change no window and no entry.
 */
typedef struct RaPending {
        RaTune tune;    /* what D-Bus clients saw, for PropertiesChanged */
        char event[24]; /* "add", "change", "coldplug", "mount", ... for the log */
} RaPending;

int ra_tune_seen(Manager *m, RaDisk *d, const char *event) {
        RaPending *p;
        int r;

        if (m->n_pending == m->n_pending_allocated) {
                size_t n = m->n_pending_allocated * 2 + 16;
                RaPending *grown = realloc(m->pending, n * sizeof(RaPending));

                if (!grown)
                        return log_oom();
                m->pending = grown;
                m->n_pending_allocated = n;
        }
        p = &m->pending[m->n_pending];
        r = ra_tune_begin(d, &p->tune);
        if (r < 0)
                return r;
        (void) snprintf(p->event, sizeof(p->event), "%s", event);
        m->n_pending++;
        return 0;
}

/* d is dropped: it is decided in no batch, however often it was seen. */
static void drop_pending(Manager *m, RaDisk *d) {
        for (size_t i = 0; i < m->n_pending;)
                if (m->pending[i].tune.disk == d) {
                        ra_tune_abort(&m->pending[i].tune);
                        memmove(&m->pending[i], &m->pending[i + 1],
                                (m->n_pending - i - 1) * sizeof(RaPending));
                        m->n_pending--;
                } else
                        i++;
}

void ra_tune_batch_free(Manager *m) {
        for (size_t i = 0; i < m->n_pending; i++)
                ra_tune_abort(&m->pending[i].tune);
        m->pending = mfree(m->pending);
        m->n_pending = m->n_pending_allocated = 0;
}

void ra_tune_forget(Manager *m, RaDisk *d, int level, const char *why) {
        log_full_errno(ra_users_log_level(m, d, level), 0, "%s: %s", d->name, why);
        drop_pending(m, d);
        if (d->published)
                ra_bus_disk_removed(m, d);
        ra_registry_remove(m, d);
}

/* ra_identify(), then what the tuning path does for a device (re)identified. */
static void identify(Manager *m, RaDisk *d, const char *previous, char ***partners) {
        ra_identify(m, d, previous, partners);
        ra_tune_identified(m, d, previous);
}

/* Devices known before, now sharing their identity with one that came: apart too, decided again. */
static void partners_apart(Manager *m, char **partners) {
        for (size_t i = 0; partners && partners[i]; i++) {
                _cleanup_(ra_strv_freep) char **more = NULL;
                _cleanup_free_ char *previous = NULL;
                RaDisk *d = ra_registry_find(m, partners[i]);
                RaTune t;

                if (!d || !ra_streq(d->in.identity, d->reported_identity))
                        continue;
                previous = strdup(d->in.identity);
                if (!previous || ra_tune_begin(d, &t) < 0) {
                        (void) log_oom();
                        continue;
                }
                /* Every other device reporting it is in the registry already: none is named again. */
                identify(m, d, previous, &more);
                ra_tune_commit(m, &t, "identity clash");
        }
}

void ra_tune_objects_read(Manager *m) {
        _cleanup_(ra_strv_freep) char **partners = NULL;
        _cleanup_free_ RaPending *batch = TAKE_PTR(m->pending);
        size_t n = m->n_pending;

        m->n_pending = m->n_pending_allocated = 0;
        /*
         * A block device's identity once every device of the batch is in the
         * registry, so that two reporting one identity are seen whatever their
         * order (ra-identify.c). A bdi's source identified it as it read it.
         */
        for (size_t i = 0; i < n; i++)
                if (ra_kind_is_block(batch[i].tune.disk->kind))
                        identify(m, batch[i].tune.disk, batch[i].tune.before.identity, &partners);
        ra_tune_batch_ready(m);
        for (size_t i = 0; i < n; i++)
                ra_tune_commit(m, &batch[i].tune, batch[i].event);
        partners_apart(m, partners);
}
