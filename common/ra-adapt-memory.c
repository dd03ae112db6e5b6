/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>

#include "ra-adapt-memory.h"

/* kb in whole pages, within what a window can be. */
static uint32_t pages_kb(uint64_t kb) {
        if (kb > RA_KB_LIMIT)
                return RA_KB_LIMIT;
        return kb < RA_KB_MIN ? RA_KB_MIN : (uint32_t) (kb - kb % RA_KB_MIN);
}

uint32_t ra_adapt_memory_budget_kb(const RaObservation *o, const RaAdaptLimits *l) {
        uint64_t streams = o->pcache.seq_streams;

        if (l->memory_kb == 0 || streams == 0)
                return 0;
        return pages_kb(l->memory_kb * RA_ADAPT_MEMORY_PERCENT / 100 / (2 * streams));
}

bool ra_adapt_memory_thrashes(const RaObservation *o) {
        const RaPcacheSummary *p = &o->pcache;

        /* Two windows read again at least: one page twice is a reader's own seek back. */
        return p->reread_bytes * 100 >= RA_ADAPT_THRASH_PERCENT * p->seq_bytes &&
               p->reread_bytes >= 2 * (uint64_t) o->window_kb * 1024;
}

static bool held(const RaModel *m) {
        return m->memory_kb > 0 && m->busy - m->memory_at <= RA_ADAPT_RECENT;
}

uint32_t ra_adapt_memory_held_kb(const RaModel *m) {
        return held(m) ? m->memory_kb : 0;
}

uint32_t ra_adapt_memory_observe(RaModel *m, const RaObservation *o, const RaAdaptLimits *l,
                                 char reason[static RA_REASON_MAX]) {
        uint32_t budget = ra_adapt_memory_budget_kb(o, l), thrash = 0;
        uint64_t streams = o->pcache.seq_streams;

        if (ra_adapt_memory_thrashes(o))
                thrash = pages_kb(o->window_kb / 2);
        if (!held(m))
                m->memory_kb = 0;
        if (budget > 0 && (m->memory_kb == 0 || budget <= m->memory_kb)) {
                m->memory_kb = budget;
                m->memory_at = m->busy;
        }
        if (thrash > 0 && (m->memory_kb == 0 || thrash <= m->memory_kb)) {
                m->memory_kb = thrash;
                m->memory_at = m->busy;
        }
        if (m->memory_kb == 0 || o->window_kb <= m->memory_kb)
                return m->memory_kb;

        if (thrash > 0 && thrash == m->memory_kb)
                ra_reason_format(reason,
                                 "Streams read again %.0f%% of what they read: pages read ahead were "
                                 "evicted before they were used, so the %" PRIu32 " KiB window is halved "
                                 "to %" PRIu32 " KiB while the memory is short.",
                                 (double) o->pcache.reread_bytes * 100 / (double) o->pcache.seq_bytes,
                                 o->window_kb, m->memory_kb);
        else if (budget > 0 && budget == m->memory_kb)
                ra_reason_format(reason,
                                 "%" PRIu64 " streams read by tasks that may hold %" PRIu64
                                 " MiB would hold %" PRIu64 " MiB in windows at %" PRIu32
                                 " KiB (each its window and the next): over %d%% of it, read ahead "
                                 "is evicted before it is read; %" PRIu32 " KiB fits.",
                                 streams, l->memory_kb / 1024, 2 * streams * o->window_kb / 1024,
                                 o->window_kb, RA_ADAPT_MEMORY_PERCENT, m->memory_kb);
        else
                ra_reason_format(reason,
                                 "Memory was short for the streams' windows within the last %d busy "
                                 "seconds: %" PRIu32 " KiB at most while that lasts.",
                                 RA_ADAPT_RECENT, m->memory_kb);
        return m->memory_kb;
}
