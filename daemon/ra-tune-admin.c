/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "ra-bus.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-registry.h"
#include "ra-state-store.h"
#include "ra-tune-swap.h"
#include "ra-tune.h"
#include "ra-util.h"

/*
 * What an administrator asks of the tuning path over D-Bus: a pin set or
 * cleared (every object of the identity decided again), and every value put
 * back. Each goes through ra_tune_begin() and ra_tune_commit() as any event.
 */

/* Decides again for every object with this identity: what is stored for it changed. */
static void tune_identity(Manager *m, const char *identity, const char *event) {
        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *d = m->disks[i];
                uint32_t now;
                RaTune t;

                if (!ra_streq(d->in.identity, identity) || ra_tune_begin(d, &t) < 0)
                        continue;
                /* A move not yet seen is seen now, or the decision would yield to it again. */
                if (!d->medium_pending && ra_disk_read_knob(d, &now) >= 0 &&
                    now != d->in.attrs.read_ahead_kb)
                        ra_tune_drift(m, d, now);
                d->external = false;
                ra_tune_commit(m, &t, event);
        }
}

int ra_tune_pin(Manager *m, RaDisk *d, uint32_t kb, bool persist, uid_t uid) {
        _cleanup_free_ char *identity = strdup(d->in.identity);
        bool changed;
        int r;

        if (!identity)
                return -ENOMEM;
        r = ra_store_pin(m, identity, kb, persist, &changed);
        if (changed) {
                log_disk(LOG_INFO, RA_LOG_PIN, d->name, kb, "pinned",
                         "%s: pinned to %" PRIu32 " KiB by uid %u over D-Bus, %s %s.", d->name, kb,
                         (unsigned) uid, persist ? "stored for" : "until radaemon stops, for", identity);
                tune_identity(m, identity, "pin");
        }
        return r;
}

int ra_tune_unpin(Manager *m, RaDisk *d, uid_t uid) {
        _cleanup_free_ char *identity = strdup(d->in.identity);
        bool changed;
        int r;

        if (!identity)
                return -ENOMEM;
        r = ra_store_unpin(m, identity, &changed);
        if (r >= 0 && !changed) {
                log_info("%s: no pin to clear (asked by uid %u).", d->name, (unsigned) uid);
                tune_identity(m, identity, "unpin");
        } else if (changed) {
                log_disk(LOG_INFO, RA_LOG_PIN, d->name, 0, "",
                         "%s: pin cleared by uid %u over D-Bus; radaemon decides again.", d->name,
                         (unsigned) uid);
                tune_identity(m, identity, "unpin");
        }
        return r;
}

unsigned ra_tune_restore_all(Manager *m, bool stay, const char *why) {
        unsigned n = 0;

        /*
         * Whatever the mode: observing now says nothing of what radaemon (or
         * its udev helper) wrote before.
         */
        for (size_t i = 0; i < m->n_disks; i++)
                n += ra_tune_restore(m, m->disks[i], why);

        /* vm.page-cluster counts as one more value put back. */
        n += (unsigned) ra_tune_swap_restore(m, why);

        if (stay && !m->restored) {
                ra_store_set_restored(m, true);
                ra_bus_manager_changed(m, "Mode");
                ra_registry_notify_status(m);
        }
        return n;
}
