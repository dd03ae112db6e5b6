/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ra-bus.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-settings.h"
#include "ra-store.h"
#include "ra-tune-swap.h"
#include "ra-util.h"

/* Someone who changes the value back this often a minute is left to it, as for disks. */
#define REASSERT_MAX 3
#define REASSERT_WINDOW_USEC (60 * UINT64_C(1000000))

int ra_tune_swap_read(void) {
        char buf[32];
        uint32_t v;
        int r;

        r = ra_read_file_at(AT_FDCWD, RA_PAGE_CLUSTER_PATH, buf, sizeof(buf));
        if (r < 0)
                return r;
        r = ra_parse_u32(buf, &v);
        if (r < 0 || v > INT_MAX)
                return -EINVAL;
        return (int) v;
}

/* The one write of vm.page-cluster: written, read back; *ret_now is what the kernel holds. */
static int write_page_cluster(int value, int *ret_now) {
        char buf[16];
        int r, now;

        (void) snprintf(buf, sizeof(buf), "%d\n", value);
        r = ra_write_file_at(AT_FDCWD, RA_PAGE_CLUSTER_PATH, buf);
        now = ra_tune_swap_read();
        if (now >= 0)
                *ret_now = now;
        if (r < 0)
                return r;
        if (now < 0)
                return now;
        return now == value ? 0 : -EIO;
}

static void write_decision(Manager *m, const char *event) {
        RaSwapWatch *w = m->swap;
        int before = w->current, now = w->current, r;

        /*
         * The original is durable before the first write, so a crash cannot
         * lose it; while it cannot be saved, nothing is written.
         */
        if (!m->state->swap.has_original && before >= 0) {
                m->state->swap.original = before;
                m->state->swap.has_original = true;
                m->state_dirty = m->original_unsaved = true;
        }
        if (m->original_unsaved) {
                r = ra_store_flush(m);
                if (r < 0) {
                        if (r != w->write_error)
                                log_warning_errno(r,
                                                  "Swap: not writing %d to %s: the original values cannot "
                                                  "be saved first (%m); it keeps %d until they can.",
                                                  w->decision.value, RA_PAGE_CLUSTER_PATH, before);
                        w->write_error = r;
                        return;
                }
        }

        r = write_page_cluster(w->decision.value, &now);
        w->current = now;
        if (r < 0) {
                if (r != w->write_error)
                        log_warning_errno(r, "Swap: cannot write %d to %s: %m", w->decision.value,
                                          RA_PAGE_CLUSTER_PATH);
                w->write_error = r;
                return;
        }
        if (w->write_error != 0)
                log_info("Swap: %s can be written again.", RA_PAGE_CLUSTER_PATH);
        w->write_error = 0;
        log_info("Swap: vm.page-cluster %d -> %d (%s, on %s): %s", before, now,
                 ra_source_to_string(w->decision.source), event, w->decision.reason);
}

/*
 * Whether the sysctl still holds what was last read, as sysfs_moved() asks
 * of a disk: a value that moved goes through the drift check first, which
 * decides again, rather than being written over unseen.
 */
static bool sysctl_moved(Manager *m) {
        int now = ra_tune_swap_read();

        if (now < 0 || now == m->swap->current)
                return false;
        ra_tune_swap_drift(m, now);
        return true;
}

void ra_tune_swap_decide(Manager *m, const char *event) {
        RaSwapWatch *w = m->swap;
        RaSwapDecision previous = w->decision;
        RaSwapSettings s;
        bool news;

        if (w->model.class != w->active)
                ra_swap_model_reset(&w->model, w->active, m->state->swap.learned[w->active]);

        ra_settings_build_swap(m->config, m->state,
                               &(RaSwapRun){
                                       .learned = w->model.learned,
                                       .learned_reason = w->model.reason,
                                       .external = w->external,
                                       .current = w->current,
                               },
                               &s);
        ra_swap_decide(w->active, w->n_areas, &s, &w->decision);

        news = !w->announced || previous.value != w->decision.value ||
               previous.source != w->decision.source || strcmp(previous.reason, w->decision.reason) != 0;
        w->announced = true;

        if (w->decision.value < 0 || w->current < 0)
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0, "Swap: %s", w->decision.reason);
        else if (sysctl_moved(m))
                return;
        else if (w->decision.value == w->current)
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0,
                               "Swap: vm.page-cluster stays at %d (%s, on %s): %s", w->current,
                               ra_source_to_string(w->decision.source), event, w->decision.reason);
        else if (ra_context_observing(m))
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0,
                               "Swap: would change vm.page-cluster %d -> %d (%s, on %s; observe mode): %s",
                               w->current, w->decision.value, ra_source_to_string(w->decision.source), event,
                               w->decision.reason);
        else
                write_decision(m, event);
}

void ra_tune_swap_begin(Manager *m, RaSwapSnapshot *ret) {
        ra_swapobj_snapshot(m->swap, ret);
}

void ra_tune_swap_commit(Manager *m, RaSwapSnapshot *before) {
        ra_bus_swap_changed(m, before);
        ra_swapobj_snapshot_clear(before);
}

void ra_tune_swap(Manager *m, const char *event) {
        RaSwapSnapshot before;

        if (!m->swap)
                return;
        ra_tune_swap_begin(m, &before);
        m->swap->external = false;
        ra_tune_swap_decide(m, event);
        ra_tune_swap_commit(m, &before);
}

/* Someone else wrote the sysctl: yield, or write radaemon's value again. */
void ra_tune_swap_drift(Manager *m, int now_value) {
        RaSwapWatch *w = m->swap;
        int was = w->current;
        uint64_t now;

        if (now_value == was)
                return;
        w->current = now_value;

        if (w->external) {
                ra_tune_swap_decide(m, "external change");
                return;
        }
        if (ra_context_observing(m) || w->decision.value < 0 || now_value == w->decision.value)
                return;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (now - w->reassert_since > REASSERT_WINDOW_USEC) {
                w->reassert_since = now;
                w->reasserts = 0;
        }
        if (m->config->external == RA_EXTERNAL_REASSERT && w->reasserts < REASSERT_MAX) {
                w->reasserts++;
                log_info("Swap: vm.page-cluster went from %d to %d behind radaemon's back; writing %d again "
                         "(external_changes = reassert).",
                         was, now_value, w->decision.value);
                ra_tune_swap_decide(m, "reassert");
                return;
        }
        log_info("Swap: vm.page-cluster went from %d to %d behind radaemon's back; leaving it.", was,
                 now_value);
        w->external = true;
        ra_tune_swap_decide(m, "external change");
}

int ra_tune_swap_restore(Manager *m, const char *why) {
        RaSwapWatch *w = m->swap;
        RaSwapSnapshot before;
        int now = -1, r;

        if (!w || !m->state->swap.has_original)
                return 0;

        ra_tune_swap_begin(m, &before);
        r = write_page_cluster(m->state->swap.original, &now);
        if (r < 0)
                log_warning_errno(r, "Swap: cannot put back the original page-cluster %d: %m",
                                  m->state->swap.original);
        else
                log_info("Swap: vm.page-cluster %d -> %d, its value before radaemon (%s).", w->current, now,
                         why);
        if (now >= 0)
                w->current = now;
        ra_tune_swap_commit(m, &before);
        return r >= 0;
}

int ra_tune_swap_pin(Manager *m, int value, bool persist, uid_t uid) {
        bool changed;
        int r;

        r = ra_store_pin_swap(m, value, persist, &changed);
        if (r < 0 && !changed)
                return r;
        log_info("Swap: page-cluster pinned to %d by uid %u over D-Bus%s.", value, (unsigned) uid,
                 persist ? ", stored" : ", until radaemon stops");
        ra_tune_swap(m, "pin");
        return r;
}

int ra_tune_swap_unpin(Manager *m, uid_t uid) {
        bool changed;
        int r;

        r = ra_store_unpin_swap(m, &changed);
        if (r < 0 && !changed)
                return r;
        if (changed)
                log_info("Swap: page-cluster pin cleared by uid %u over D-Bus; radaemon decides again.",
                         (unsigned) uid);
        ra_tune_swap(m, "unpin");
        return r;
}
