/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "ra-context.h"
#include "ra-log.h"
#include "ra-observe.h"
#include "ra-store.h"
#include "ra-tune.h"
#include "ra-util.h"

/*
 * The tuning path's side of the sampler's interval: what ra-observe.c saw
 * of d is decided, stored and announced here, in one transaction, so that
 * the observer only reports.
 */
void ra_tune_sample(Manager *m, RaDisk *d, uint64_t now) {
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

        seen = ra_observe_disk(m, d, sysfd, kb, now);
        if (seen == RA_OBSERVED_LEARNED)
                ra_store_learned(m, d);
        /* Before the commit: D-Bus clients hear of a new model with the rest. */
        if (d->kind == RA_KIND_DISK)
                ra_store_traced(m, d);
        ra_tune_commit(m, &t,
                       seen == RA_OBSERVED_LEARNED ? "learning"
                       : seen == RA_OBSERVED_TRIAL ? "trial"
                                                   : NULL);
}
