/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "ra-context.h"
#include "ra-log.h"
#include "ra-observe.h"
#include "ra-state-store.h"
#include "ra-tune.h"
#include "ra-util.h"

/*
 * The tuning path's side of what the sources report and leave to it: the
 * sampler's interval, a batch of udev events or bdis made ready. They
 * observe; storing, deciding and saving are done here.
 */

/*
 * What ra-observe.c saw of d is decided, stored and announced in one
 * transaction.
 */
void ra_tune_sample(Manager *m, RaDisk *d, uint64_t now, bool peek) {
        _cleanup_close_ int sysfd = -1;
        RaObserved seen;
        uint32_t kb;
        RaTune t;

        /* Every interval, idle or not: a change behind our back is noticed within one. */
        sysfd = ra_tune_check_window(m, d, &kb);
        if (sysfd < 0) {
                /* Gone: udev's remove event follows. */
                log_debug_errno(sysfd, "%s: cannot read read_ahead_kb, skipping: %m", d->name);
                return;
        }
        if (ra_observe_skip(d) || ra_tune_begin(d, &t) < 0)
                return;

        /*
         * The model from the requests just drained, before learning weighs the
         * interval with it: a busy device's first requests of a new size (a
         * trial's) make its model sure an interval sooner. Before the commit:
         * D-Bus clients hear of a new model with the rest.
         */
        if (d->kind == RA_KIND_DISK)
                ra_store_traced(m, d);
        seen = ra_observe_disk(m, d, sysfd, kb, now, peek);
        if (seen == RA_OBSERVED_LEARNED)
                ra_store_learned(m, d);
        ra_tune_commit(m, &t,
                       seen == RA_OBSERVED_LEARNED ? "learning"
                       : seen == RA_OBSERVED_TRIAL ? "trial"
                                                   : NULL);
}

/*
 * Each write saves the originals first (ra_tune_knob_write()); a batch of
 * a coldplug's hundred disks would otherwise cost a save for each.
 */
void ra_tune_batch_ready(Manager *m) {
        (void) ra_store_flush(m);
}
