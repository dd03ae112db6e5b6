/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ra-bus.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-settings.h"
#include "ra-state-store.h"
#include "ra-tune-knob.h"
#include "ra-tune-swap.h"
#include "ra-util.h"

static const char *sysctl_path(const RaSwapWatch *w) {
        return w->sysctl_path ?: RA_PAGE_CLUSTER_PATH;
}

int ra_tune_swap_read(const RaSwapWatch *w) {
        char buf[32];
        uint32_t v;
        int r;

        r = ra_read_file_at(AT_FDCWD, sysctl_path(w), buf, sizeof(buf));
        if (r < 0)
                return r;
        r = ra_parse_u32(buf, &v);
        if (r < 0 || v > INT_MAX)
                return -EINVAL;
        return (int) v;
}

/* The one write of vm.page-cluster: written, read back; *ret_now is what the kernel holds. */
static int knob_write(void *object, uint32_t value, uint32_t *ret_now) {
        RaSwapWatch *w = object;
        char buf[16];
        int r, now;

        (void) snprintf(buf, sizeof(buf), "%" PRIu32 "\n", value);
        r = ra_write_file_at(AT_FDCWD, sysctl_path(w), buf);
        now = ra_tune_swap_read(w);
        if (now >= 0)
                *ret_now = (uint32_t) now;
        if (r < 0)
                return r;
        if (now < 0)
                return now;
        return (uint32_t) now == value ? 0 : -EIO;
}

/* vm.page-cluster, for what every knob shares (ra-tune-knob.c): said as "Swap: vm.page-cluster ...". */
static RaKnob swap_knob(RaSwapWatch *w) {
        return (RaKnob){
                .label = "Swap",
                .device = "vm.page-cluster",
                .what = "vm.page-cluster",
                .unit = "",
                .write = knob_write,
                .object = w,
                .write_error = &w->write_error,
                .reassert = &w->reassert,
        };
}

/*
 * Whether the sysctl still holds what was last read, as sysfs_moved() asks
 * of a disk: a value that moved goes through the drift check first, which
 * decides again, rather than being written over unseen.
 */
static bool sysctl_moved(Manager *m) {
        int now = ra_tune_swap_read(m->swap);

        if (now < 0 || now == m->swap->current)
                return false;
        ra_tune_swap_drift(m, now);
        return true;
}

void ra_tune_swap_decide(Manager *m, const char *event) {
        RaSwapWatch *w = m->swap;
        RaSwapDecision previous = w->decision;
        RaKnob k = swap_knob(w);
        RaSwapSettings s;
        uint32_t now;
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
        else {
                /* Saved before the first write, as a disk's original is (ra_tune_knob_write()). */
                if (!ra_context_observing(m) && w->decision.value != w->current)
                        ra_store_remember_swap_original(m, w->current);
                (void) ra_tune_knob_settle(m, &k, news, (uint32_t) w->current, (uint32_t) w->decision.value,
                                           ra_source_to_string(w->decision.source), event,
                                           w->decision.reason, &now);
                if (now <= INT_MAX)
                        w->current = (int) now;
        }
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

/* Someone else wrote the sysctl: yield, or write radaemon's value again, by the disks' rule. */
void ra_tune_swap_drift(Manager *m, int now_value) {
        RaSwapWatch *w = m->swap;
        int was = w->current;
        RaKnob k = swap_knob(w);

        if (now_value == was)
                return;
        w->current = now_value;

        if (w->external) {
                ra_tune_swap_decide(m, "external change");
                return;
        }
        /* Nothing to defend: no value decided, or none read before to tell a change from. */
        if (w->decision.value < 0 || was < 0 || now_value < 0)
                return;
        switch (ra_tune_knob_drift(m, &k, (uint32_t) was, (uint32_t) now_value,
                                   (uint32_t) w->decision.value)) {
        case RA_DRIFT_IGNORE:
                return;
        case RA_DRIFT_REASSERT:
                ra_tune_swap_decide(m, "reassert");
                return;
        case RA_DRIFT_YIELD:
                w->external = true;
                ra_tune_swap_decide(m, "external change");
                return;
        }
}

int ra_tune_swap_restore(Manager *m, const char *why) {
        RaSwapWatch *w = m->swap;
        RaSwapSnapshot before;
        uint32_t now;
        bool done;
        RaKnob k;

        if (!w || !m->state->swap.has_original || m->state->swap.original < 0)
                return 0;

        k = swap_knob(w);
        ra_tune_swap_begin(m, &before);
        done = ra_tune_knob_restore(m, &k, (uint32_t) w->current, (uint32_t) m->state->swap.original, why,
                                    &now);
        if (now <= INT_MAX)
                w->current = (int) now;
        ra_tune_swap_commit(m, &before);
        return done;
}

int ra_tune_swap_pin(Manager *m, int value, bool persist, uid_t uid) {
        bool changed;
        int r;

        r = ra_store_pin_swap(m, value, persist, &changed);
        if (r < 0 && !changed)
                return r;
        log_disk(LOG_INFO, RA_LOG_PIN, "vm.page-cluster", (uint32_t) value, "pinned",
                 "Swap: page-cluster pinned to %d by uid %u over D-Bus%s.", value, (unsigned) uid,
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
                log_disk(LOG_INFO, RA_LOG_PIN, "vm.page-cluster", 0, "",
                         "Swap: page-cluster pin cleared by uid %u over D-Bus; radaemon decides again.",
                         (unsigned) uid);
        ra_tune_swap(m, "unpin");
        return r;
}

void ra_tune_swap_learned(Manager *m) {
        RaSwapWatch *w = m->swap;

        ra_store_learned_swap(m, w->active, w->model.learned);
        ra_tune_swap_decide(m, "learning");
}
