/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>

#include "ra-context.h"
#include "ra-log.h"
#include "ra-state-store.h"
#include "ra-tune-knob.h"

int ra_tune_knob_write(Manager *m, const RaKnob *k, uint32_t before, uint32_t want, const char *source,
                       const char *event, const char *reason, uint32_t *ret_now) {
        uint32_t now = before;
        int r;

        *ret_now = before;

        /*
         * A value before radaemon's first write is on disk before that
         * write: written over unsaved, it would be lost at the next start,
         * and Restore would put back radaemon's own value. The knob keeps
         * what it has; the next decision tries again.
         */
        r = ra_store_save_originals(m);
        if (r < 0) {
                if (r != *k->write_error)
                        log_warning_errno(r,
                                          "%s: not writing %" PRIu32
                                          "%s to %s: the original values cannot be "
                                          "saved first (%m); it keeps %" PRIu32 "%s until they can.",
                                          k->label, want, k->unit, k->what, before, k->unit);
                *k->write_error = r;
                return r;
        }

        r = k->write(k->object, want, &now);
        *ret_now = now;

        if (r == -ENODEV) {
                log_debug("%s: gone before %s could be written.", k->label, k->what);
                return r;
        }

        /* A write that keeps failing is logged once, not every interval. */
        if (r < 0) {
                if (r != *k->write_error) {
                        if (r == -EIO)
                                log_warning("%s: wrote %" PRIu32 "%s to %s, but the kernel holds %" PRIu32
                                            "%s.",
                                            k->label, want, k->unit, k->what, now, k->unit);
                        else
                                log_warning_errno(r, "%s: cannot write %" PRIu32 "%s to %s: %m", k->label,
                                                  want, k->unit, k->what);
                }
                *k->write_error = r;
                return r;
        }

        if (*k->write_error != 0)
                log_info("%s: %s can be written again.", k->label, k->what);
        *k->write_error = 0;
        log_disk(k->quiet ? LOG_DEBUG : LOG_INFO, RA_LOG_DECISION, k->device, now, source,
                 "%s: %s %" PRIu32 " -> %" PRIu32 "%s (%s, on %s): %s", k->label, k->what, before, now,
                 k->unit, source, event, reason);
        return 0;
}

int ra_tune_knob_settle(Manager *m, const RaKnob *k, bool news, uint32_t current, uint32_t want,
                        const char *source, const char *event, const char *reason, uint32_t *ret_now) {
        int r;

        *ret_now = current;
        if (want == current)
                log_full_errno(news && !k->quiet ? LOG_INFO : LOG_DEBUG, 0,
                               "%s: %s stays at %" PRIu32 "%s (%s, on %s): %s", k->label, k->what, want,
                               k->unit, source, event, reason);
        else if (ra_context_observing(m))
                log_full_errno(news && !k->quiet ? LOG_INFO : LOG_DEBUG, 0,
                               "%s: would change %s %" PRIu32 " -> %" PRIu32
                               "%s (%s, on %s; observe mode): %s",
                               k->label, k->what, current, want, k->unit, source, event, reason);
        else {
                r = ra_tune_knob_write(m, k, current, want, source, event, reason, ret_now);
                return r < 0 ? r : 1;
        }
        return 0;
}

bool ra_tune_knob_restore(Manager *m, const RaKnob *k, uint32_t before, uint32_t original, const char *why,
                          uint32_t *ret_now) {
        uint32_t now = before;
        int r;

        (void) m;
        r = k->write(k->object, original, &now);
        *ret_now = now;
        if (r == -ENODEV)
                return false;
        if (r < 0) {
                log_warning_errno(r, "%s: cannot put back the original %" PRIu32 "%s of %s: %m", k->label,
                                  original, k->unit, k->what);
                return false;
        }
        log_disk(LOG_INFO, RA_LOG_RESTORE, k->device, now, "original",
                 "%s: %s %" PRIu32 " -> %" PRIu32 "%s, its value before radaemon (%s).", k->label, k->what,
                 before, now, k->unit, why);
        return true;
}

RaDrift ra_tune_knob_drift(Manager *m, const RaKnob *k, uint32_t was, uint32_t now, uint32_t target) {
        RaReassert *ra = k->reassert;
        uint64_t usec;

        if (ra_context_observing(m) || now == target)
                return RA_DRIFT_IGNORE;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &usec);
        if (usec - ra->since > RA_REASSERT_WINDOW_USEC) {
                ra->since = usec;
                ra->count = 0;
        }

        if (m->config->external == RA_EXTERNAL_REASSERT && ra->count < RA_REASSERT_MAX) {
                ra->count++;
                log_disk(k->quiet ? LOG_DEBUG : LOG_INFO, RA_LOG_EXTERNAL, k->device, now, "external",
                         "%s: %s went from %" PRIu32 " to %" PRIu32
                         "%s behind radaemon's back; writing %" PRIu32
                         "%s again (external_changes = reassert).",
                         k->label, k->what, was, now, k->unit, target, k->unit);
                return RA_DRIFT_REASSERT;
        }

        if (m->config->external == RA_EXTERNAL_REASSERT)
                log_disk(k->quiet ? LOG_DEBUG : LOG_INFO, RA_LOG_EXTERNAL, k->device, now, "external",
                         "%s: %s was changed behind radaemon's back %u times within a minute; leaving it at "
                         "%" PRIu32 "%s.",
                         k->label, k->what, ra->count + 1, now, k->unit);
        else
                log_disk(k->quiet ? LOG_DEBUG : LOG_INFO, RA_LOG_EXTERNAL, k->device, now, "external",
                         "%s: %s went from %" PRIu32 " to %" PRIu32
                         "%s behind radaemon's back; leaving it (external_changes = yield).",
                         k->label, k->what, was, now, k->unit);
        return RA_DRIFT_YIELD;
}
