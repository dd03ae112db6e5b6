/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ra-adapt-cost.h"
#include "ra-adapt-memory.h"
#include "ra-adapt-perf.h"
#include "ra-adapt.h"
#include "ra-util.h"

/*
 * Fewer reads a second than this is idle: nothing to learn from. A rate,
 * so that a sub-second peek (ra_adapt_peek()) needs its share; an interval
 * of a second or more needs 4 reads, as before peeks (per_interval()).
 */
#define IDLE_READS_PER_SEC 4.0
/* A step up must read this much faster to be kept... */
#define GAIN_UP 1.10
/* ...and the smallest window within RA_ADAPT_GAIN_TIE of the fastest is chosen (ra-adapt-perf.h). */
/* Exploring up multiplies the window by this, and starts from at least the kernel default. */
#define STEP_UP 4u
#define STEP_UP_FROM_KB 128u
/* Requests at least this share of the window (or of the largest request) fill it. */
#define WINDOW_BOUND 0.6
/* Page-cache reads a second below which the page cache says too little (256 KiB an interval, as before). */
#define PCACHE_MIN_BYTES_PER_SEC (256.0 * 1024)

static const char *const workload_names[_RA_WORKLOAD_MAX] = {
        [RA_WORKLOAD_IDLE] = "idle",
        [RA_WORKLOAD_SEQUENTIAL] = "sequential",
        [RA_WORKLOAD_RANDOM] = "random",
        [RA_WORKLOAD_MIXED] = "mixed",
};

const char *ra_workload_to_string(RaWorkload w) {
        return w >= 0 && w < _RA_WORKLOAD_MAX ? workload_names[w] : NULL;
}

/* The largest request a window of window_kb makes. */
static double request_limit_kb(uint32_t window_kb, uint32_t max_sectors_kb) {
        return max_sectors_kb > 0 && max_sectors_kb < window_kb ? max_sectors_kb : window_kb;
}

/*
 * The least of a count a second that an interval must see: the count of one
 * second over a second or more (a late tick, an idle disk's skipped
 * intervals), as before peeks; its share over a peek's fraction of one.
 */
static double per_interval(double per_sec, const RaObservation *o) {
        return per_sec * (o->rates.seconds < 1.0 ? o->rates.seconds : 1.0);
}

static bool paged(const RaObservation *o) {
        return o->evidence >= RA_EVIDENCE_FILEMAP &&
               (double) (o->pcache.seq_bytes + o->pcache.random_bytes) >=
                       per_interval(PCACHE_MIN_BYTES_PER_SEC, o);
}

/*
 * Per file: what was read ahead for files read in order, against what was
 * read for reads away from their file's last position. Files interleaving on
 * the disk do not count: each is judged on its own.
 */
static RaWorkload classify_pcache(const RaObservation *o) {
        const RaPcacheSummary *p = &o->pcache;
        uint64_t total = p->seq_bytes + p->random_bytes;

        if (p->seq_bytes * 4 >= total * 3)
                return RA_WORKLOAD_SEQUENTIAL;
        if (p->random_bytes * 4 >= total * 3 &&
            (double) p->random_reads >= per_interval(IDLE_READS_PER_SEC, o))
                return RA_WORKLOAD_RANDOM;
        return RA_WORKLOAD_MIXED;
}

RaWorkload ra_adapt_classify(const RaObservation *o, uint32_t max_sectors_kb) {
        double reads = o->rates.read_iops * o->rates.seconds;
        double window = (double) o->window_kb * 1024;

        /* Not a single read is busy, however short the interval. */
        if (reads < 1 || reads < per_interval(IDLE_READS_PER_SEC, o))
                return RA_WORKLOAD_IDLE;

        if (paged(o))
                return classify_pcache(o);

        if (o->traced && o->trace.requests >= 1 &&
            (double) o->trace.requests >= per_interval(IDLE_READS_PER_SEC, o)) {
                const RaTraceSummary *t = &o->trace;
                double jump_ratio = (double) t->jumps / (double) t->requests;
                double run = t->jumps > 0 ? (double) t->bytes / (double) t->jumps : INFINITY;

                /*
                 * Streams rarely jump. Random reads jump at every request, or, as
                 * mmap read-around, once per window split into several requests.
                 */
                if (t->jumps == 0)
                        return RA_WORKLOAD_SEQUENTIAL;
                if (jump_ratio >= 0.5 || run <= 2 * window)
                        return RA_WORKLOAD_RANDOM;
                if (run >= 4 * window)
                        return RA_WORKLOAD_SEQUENTIAL;
                return RA_WORKLOAD_MIXED;
        }

        /*
         * The counters alone: requests well below the window mean small
         * random reads that readahead does not touch. Window-sized requests
         * may be a stream or read-around: no telling which.
         */
        if (o->rates.avg_read_request_bytes <= 64 * 1024 &&
            o->rates.avg_read_request_bytes < request_limit_kb(o->window_kb, max_sectors_kb) * 1024 / 2)
                return RA_WORKLOAD_RANDOM;
        return RA_WORKLOAD_MIXED;
}

static uint32_t clamp_to_limits(uint32_t kb, const RaAdaptLimits *l) {
        uint32_t hi = l->bounds.max_kb < l->size_cap_kb ? l->bounds.max_kb : l->size_cap_kb;

        if (kb > hi)
                kb = hi;
        if (kb < l->bounds.min_kb)
                kb = l->bounds.min_kb;
        kb -= kb % 4;
        return kb < RA_KB_MIN ? RA_KB_MIN : kb;
}

/*
 * Random reads that waste the window: whole windows read around them that
 * nobody asked for, by the page cache's account, or without it (with it
 * on, but too few page-cache reads: metadata, direct I/O) requests as large
 * as the window.
 */
static bool random_wastes(const RaObservation *o, const RaAdaptLimits *l) {
        const RaPcacheSummary *p = &o->pcache;

        if (o->evidence >= RA_EVIDENCE_FILEMAP)
                return paged(o) && p->waste_bytes * 2 >= p->random_bytes &&
                       p->waste_bytes >= (uint64_t) o->window_kb * 1024 &&
                       p->seq_bytes * 4 <= p->seq_bytes + p->random_bytes;
        return o->traced && o->trace.request_kb >= request_limit_kb(o->window_kb, l->max_sectors_kb) / 2;
}

/*
 * Random reads concentrated in the files read, as random work reads them;
 * not a few in each of many files, as programs starting do.
 */
static bool random_dense(const RaPcacheSummary *p) {
        return p->files > 0 && p->random_reads >= (uint64_t) RA_ADAPT_RANDOM_PER_FILE * p->files;
}

static uint32_t default_kb(const RaAdaptLimits *l) {
        return l->default_kb > 0 ? l->default_kb : STEP_UP_FROM_KB;
}

/* The windows cost the random streak's dense intervals RA_ADAPT_WASTE_PERCENT of their time or more. */
static bool random_costly(const RaModel *m) {
        return m->random_intervals > 0 && m->waste_usec * 100 >= RA_ADAPT_WASTE_PERCENT * m->busy_usec;
}

/* The random streak has cost enough of the device's time to cut at once (RA_ADAPT_CUT_WASTE_MS). */
static bool random_cut_due(const RaModel *m) {
        return random_costly(m) && m->wasted_usec >= RA_ADAPT_CUT_WASTE_MS * 1e3;
}

/* Busy interval at (0: never) is RA_ADAPT_RECENT busy intervals ago or less. */
static bool recent(const RaModel *m, unsigned at) {
        return at > 0 && m->busy - at <= RA_ADAPT_RECENT;
}

/* Random access: shrink only where read-around wastes. */
static uint32_t random_target(const RaModel *m, const RaObservation *o, const RaAdaptLimits *l,
                              char reason[static RA_REASON_MAX]) {
        const RaTraceSummary *t = &o->trace;
        const RaPcacheSummary *p = &o->pcache;
        uint32_t target = clamp_to_limits(RA_KB_MIN, l), floor_kb = clamp_to_limits(default_kb(l), l);
        double share = m->busy_usec > 0 ? m->waste_usec / m->busy_usec : 0;

        if (o->window_kb <= target || !random_wastes(o, l))
                return 0;
        /*
         * Streams filled their windows a moment ago: their files would open under the
         * cut. It stops where trials do then (STEP_UP_FROM_KB), or at the kernel's
         * default if that is less (a RAID's 2 x io_opt can be megabytes).
         */
        if (recent(m, m->scan_at) && target < STEP_UP_FROM_KB) {
                uint32_t scan_floor =
                        floor_kb < STEP_UP_FROM_KB ? floor_kb : clamp_to_limits(STEP_UP_FROM_KB, l);

                if (o->window_kb <= scan_floor)
                        return 0;
                ra_reason_format(
                        reason,
                        "Random reads dominate and their %" PRIu32
                        " KiB windows waste, but sequential streams filled theirs %u busy intervals "
                        "ago (scans and lookups taking turns): no lower than %" PRIu32
                        " KiB, which neither reads badly.",
                        o->window_kb, m->busy - m->scan_at, scan_floor);
                return scan_floor;
        }
        if (o->evidence >= RA_EVIDENCE_FILEMAP) {
                bool costly = random_costly(m);

                /* Programs starting, or too little of the device's time: no lower than the kernel's. */
                if (target < floor_kb && !costly) {
                        if (o->window_kb <= floor_kb)
                                return 0;
                        target = floor_kb;
                }
                if (target == floor_kb && !costly && m->random_intervals == 0)
                        ra_reason_format(reason,
                                         "Random reads dominate, but %" PRIu64 " in %" PRIu64
                                         " files (under %d a file, as programs starting read) are too few "
                                         "to go below the kernel's default: %" PRIu32
                                         " KiB wastes less than %" PRIu32 " KiB.",
                                         p->random_reads, p->files, RA_ADAPT_RANDOM_PER_FILE, target,
                                         o->window_kb);
                else if (target == floor_kb && !costly)
                        ra_reason_format(
                                reason,
                                "Random reads dominate, but their windows cost the device %.1f%% of "
                                "its time (%.0f ms a second), under %d%%: too little to go below "
                                "the kernel's default, and %" PRIu32 " KiB wastes less than %" PRIu32
                                " KiB.",
                                share * 100, share * 1000, RA_ADAPT_WASTE_PERCENT, target, o->window_kb);
                else
                        ra_reason_format(reason,
                                         "Random reads dominate (%" PRIu64 " over %u intervals, %" PRIu64
                                         " in %" PRIu64 " files in the last, %" PRIu64
                                         " mmap faults) and their %" PRIu32
                                         " KiB windows cost the device %.0f%% of its time, so %" PRIu32
                                         " KiB wastes least.",
                                         m->random_reads, m->random_intervals, p->random_reads, p->files,
                                         p->random_faults, o->window_kb, share * 100, target);
                return target;
        }
        ra_reason_format(reason,
                         "Random reads dominate (a jump every %" PRIu64
                         " KiB) and each one reads a whole %" PRIu32 " KiB window around it, so %" PRIu32
                         " KiB wastes least.",
                         t->bytes / 1024 / (t->jumps ? t->jumps : 1), o->window_kb, target);
        return target;
}

/*
 * Requests fill the window (or the largest request): files whose reading
 * reaches the window they run under would read more at once with a larger one.
 */
static bool fills_windows(const RaObservation *o, const RaAdaptLimits *l) {
        if (paged(o))
                return o->pcache.full_bytes * 5 >= o->pcache.seq_bytes;
        return o->trace.request_kb >= WINDOW_BOUND * request_limit_kb(o->window_kb, l->max_sectors_kb);
}

/* Requests fill the window, and a larger window is allowed and untried. */
static bool can_grow(const RaModel *m, const RaObservation *o, const RaAdaptLimits *l) {
        uint32_t cur = o->window_kb;

        return fills_windows(o, l) && cur < clamp_to_limits(RA_KB_LIMIT, l) &&
               !ra_adapt_perf_has_above(m, cur);
}

/* The cost model tells what windows are worth to the interval's sequential reads (ra-adapt-cost.h). */
static bool model_tells(const RaObservation *o, const RaAdaptLimits *l) {
        if (paged(o))
                return ra_adapt_cost_tells(l, o, o->pcache.seq_reads, o->pcache.seq_bytes);
        return ra_adapt_cost_tells(l, o, o->trace.requests, o->trace.bytes);
}

/*
 * Growth the cost model is sure of (ra-adapt-cost.h): taken on the first
 * busy interval that shows it, without the confirmation, the dwell or a
 * trial that growth on throughput alone needs. A window above the one in
 * force judged already (ra_adapt_perf_has_above()) is the measurements' to judge.
 */
static uint32_t model_target(const RaModel *m, const RaObservation *o, const RaAdaptLimits *l,
                             char reason[static RA_REASON_MAX]) {
        uint32_t hi = clamp_to_limits(RA_KB_LIMIT, l), kb;

        if (!model_tells(o, l) || !can_grow(m, o, l))
                return 0;
        /* Random readers wasted windows a moment ago: they would open files under it. */
        if (recent(m, m->waste_at))
                hi = clamp_to_limits(STEP_UP_FROM_KB, l);
        if (paged(o))
                kb = ra_adapt_cost_grow_kb(l, o, o->pcache.seq_reads, o->pcache.seq_bytes, o->window_kb, hi,
                                           reason);
        else
                kb = ra_adapt_cost_grow_kb(l, o, o->trace.requests, o->trace.bytes, o->window_kb, hi,
                                           reason);
        return kb > 0 ? clamp_to_limits(kb, l) : 0;
}

/*
 * A trial is refuted by the window it is compared with, as that window read
 * before it. A machine that slows during the trial (a backup beside the job,
 * another tenant of the array) slows the trial's reads, not the ones before
 * it, and the larger window would be refuted for good. So the window the
 * refuted trial went back to is judged again on what it reads from then on,
 * RA_ADAPT_SAMPLES intervals alone: the trial and it are then measured in
 * the same stretch, one just before the other. Where the trial read
 * GAIN_UP faster than that, the slowdown was the machine's: the window's
 * record becomes what it reads now, and the trial's window comes back.
 * Otherwise both records stand, as measured.
 */
static uint32_t recheck_target(RaModel *m, const RaAdaptLimits *l, char reason[static RA_REASON_MAX]) {
        uint32_t kb = m->recheck_kb;
        const RaPerf *trial;
        RaPerf *back;

        if (kb == 0 || m->recheck.samples < RA_ADAPT_SAMPLES)
                return 0;
        m->recheck_kb = 0;
        trial = ra_adapt_perf_find(m, kb);
        back = ra_adapt_perf_find(m, m->recheck.kb);
        if (!trial || !back || trial->bytes_per_sec < GAIN_UP * m->recheck.bytes_per_sec)
                return 0;
        *back = m->recheck;
        ra_reason_format(
                reason,
                "Files opened under %" PRIu32 " KiB read %.1f MB/s now, %.0f%% slower than with %" PRIu32
                " KiB during its trial: the device slowed meanwhile, not the larger window, so %" PRIu32
                " KiB comes back.",
                back->kb, back->bytes_per_sec / 1e6, (1 - back->bytes_per_sec / trial->bytes_per_sec) * 100,
                kb, kb);
        return clamp_to_limits(kb, l);
}

static uint32_t sequential_target(RaModel *m, const RaObservation *o, const RaAdaptLimits *l,
                                  char reason[static RA_REASON_MAX]) {
        uint32_t cur = o->window_kb, next;
        const RaPerf *here = ra_adapt_perf_find(m, cur), *best;

        /* Not enough read yet by streams opened under this window: wait for them. */
        if (!here || here->samples < RA_ADAPT_SAMPLES)
                return 0;
        if ((next = recheck_target(m, l, reason)) != 0)
                return next;

        best = ra_adapt_perf_best(m);
        if (best && best->kb > cur && best->bytes_per_sec >= GAIN_UP * here->bytes_per_sec) {
                ra_reason_format(reason,
                                 "Sequential reads ran %.0f%% faster with %" PRIu32 " KiB than with %" PRIu32
                                 " KiB.",
                                 (best->bytes_per_sec / here->bytes_per_sec - 1) * 100, best->kb, cur);
                return clamp_to_limits(best->kb, l);
        }

        /*
         * Where the cost model cannot tell (none measured, one size only, or
         * streams held back by something other than the device), larger, fewer
         * commands may cost less: try a window four times larger, also past a
         * step that did not pay but did not hurt either (a plateau:
         * a striped or throttled device may pay again further up). A step that
         * reads measurably slower ends the search.
         */
        if ((!best || best->kb == cur ||
             here->bytes_per_sec >= RA_ADAPT_GAIN_TIE * ra_adapt_perf_fastest(m)) &&
            can_grow(m, o, l) && !model_tells(o, l)) {
                next = cur * STEP_UP < STEP_UP_FROM_KB ? STEP_UP_FROM_KB : cur * STEP_UP;
                /* Random readers wasted windows a moment ago: they would open files under the trial. */
                if (recent(m, m->waste_at) && next > STEP_UP_FROM_KB)
                        next = STEP_UP_FROM_KB;
                next = clamp_to_limits(next, l);
                if (next > cur && paged(o)) {
                        ra_reason_format(reason,
                                         "Sequential reads fill every %" PRIu32
                                         " KiB window the files run under (%" PRIu64
                                         " files in an interval, %.1f MB/s), so %" PRIu32
                                         " KiB is tried for fewer, larger commands.",
                                         cur, o->pcache.files, here->bytes_per_sec / 1e6, next);
                        return next;
                }
                if (next > cur) {
                        ra_reason_format(reason,
                                         "Sequential reads fill every %" PRIu32
                                         " KiB request the window allows (%.1f MB/s), so %" PRIu32
                                         " KiB is tried for fewer, larger commands.",
                                         o->trace.request_kb, here->bytes_per_sec / 1e6, next);
                        return next;
                }
        }

        if (best && best->kb < cur) {
                if (m->trial_kb == cur)
                        ra_adapt_perf_recheck(m, cur, best->kb);
                ra_reason_format(reason,
                                 "Bigger requests stopped paying: %" PRIu32 " KiB read as fast as %" PRIu32
                                 " KiB (%.0f%%), so the smaller window stays.",
                                 best->kb, cur, best->bytes_per_sec / here->bytes_per_sec * 100);
                return clamp_to_limits(best->kb, l);
        }
        return 0;
}

/* See the header: intervals read by streams opened under the window. True when this one was. */
static bool credit_throughput(RaModel *m, RaWorkload c, const RaObservation *o) {
        bool under;

        if (c != RA_WORKLOAD_SEQUENTIAL)
                return false;
        /* The files say which window they read under: only theirs is credited. */
        if (paged(o))
                under = o->pcache.window_bytes * 10 >= o->pcache.seq_bytes * 9;
        else if (m->trial_kb != 0 && m->trial_paged)
                /*
                 * Too few page-cache reads to say which window the readers took (they read what
                 * the cache holds). The block layer cannot say it for a trial: readers of one
                 * device opened before it look like streams begun under it after every jump.
                 * Only reads the page cache saw made under the trial judge it.
                 */
                under = false;
        else
                under = o->traced && o->trace.window_bytes * 10 >= o->trace.bytes * 9;
        if (under)
                ra_adapt_perf_record(m, o->window_kb, o->rates.read_bytes_per_sec);
        return under;
}

/*
 * The class c has held long enough to act on without the cost model (see the
 * header). The first move from a window nothing was learned for (the prior,
 * a calibration's or a fleet's value), by sequential reads, needs only the
 * confirmation that sequential_target() asks of the window in force anyway:
 * RA_ADAPT_SAMPLES intervals read under it, which judge the trial it makes.
 * No learned value is undone by it, and a trial is cheap where streams fill
 * every window. A busy flash device never calibrated whose readers make one
 * request size waited a third busy second for it (the bench's ssd-ctrl,
 * tests/busy-grow.sh: 128 -> 512 KiB 3.5 s after its first reader, 2048
 * within 0.3 s of the trial once its model saw two sizes). A value restored
 * from an earlier run (ra_adapt_restore()) was learned, by a class its
 * record does not keep: it waits the whole confirmation.
 */
static bool confirmed(const RaModel *m, RaWorkload c) {
        if (m->learned_kb == 0 && c == RA_WORKLOAD_SEQUENTIAL)
                return m->pending_count >= RA_ADAPT_SAMPLES;
        return m->pending_count >= RA_ADAPT_CONFIRM && m->since_change >= RA_ADAPT_DWELL;
}

/* learned_kb becomes target, set by class c on the interval o (modelled: by the cost model). */
static void take(RaModel *m, RaWorkload c, const RaObservation *o, uint32_t target, bool modelled,
                 const char reason[static RA_REASON_MAX]) {
        m->set_by = c;
        m->set_strength = m->pending_count < RA_ADAPT_CONFIRM + RA_ADAPT_STRENGTH_MAX
                                  ? m->pending_count
                                  : RA_ADAPT_CONFIRM + RA_ADAPT_STRENGTH_MAX;
        /*
         * A larger window not measured yet, and not the model's, is a trial: files opened
         * under it will judge it.
         */
        m->trial_kb = c == RA_WORKLOAD_SEQUENTIAL && !modelled && target > o->window_kb &&
                                      !ra_adapt_perf_judged(m, target)
                              ? target
                              : 0;
        m->trial_from_kb = o->window_kb;
        m->trial_waited = 0;
        m->trial_paged = paged(o);
        m->learned_kb = target;
        memcpy(m->reason, reason, sizeof(m->reason));
        m->since_change = 0;
}

/* l with its cap lowered to the memory's bound (ra-adapt-memory.h), in *ret. */
static const RaAdaptLimits *memory_bounded(const RaAdaptLimits *l, uint32_t memory_kb, RaAdaptLimits *ret) {
        if (memory_kb == 0 || memory_kb >= l->size_cap_kb)
                return l;
        *ret = *l;
        ret->size_cap_kb = memory_kb;
        return ret;
}

bool ra_adapt_update(RaModel *m, const RaObservation *o, const RaAdaptLimits *limits) {
        RaWorkload c = ra_adapt_classify(o, limits->max_sectors_kb);
        char reason[RA_REASON_MAX] = "";
        const RaAdaptLimits *l = limits;
        RaAdaptLimits bounded;
        uint32_t target = 0, memory;
        bool modelled, split = m->split;

        /* An interval a peek moved the window in was read under two: it credits neither. */
        m->split = false;
        m->workload = c;
        if (c != RA_WORKLOAD_IDLE)
                m->evidence = paged(o) ? o->evidence : o->traced ? RA_EVIDENCE_BLOCK : RA_EVIDENCE_NONE;
        /* Idle intervals say nothing: a job of short runs with pauses between them is one workload. */
        if (c == RA_WORKLOAD_IDLE)
                return false;

        if (c != m->pending) {
                m->pending = c;
                m->pending_count = 0;
                m->random_reads = 0;
                m->random_intervals = 0;
                m->waste_usec = m->busy_usec = m->wasted_usec = 0;
        }
        m->pending_count++;
        m->since_change++;
        m->busy++;
        if (c == RA_WORKLOAD_SEQUENTIAL && fills_windows(o, l))
                m->scan_at = m->busy;
        if (c == RA_WORKLOAD_RANDOM && random_wastes(o, l)) {
                m->waste_at = m->busy;
                /*
                 * A few reads in each of many files (programs starting) add nothing however often
                 * they come, but end no streak either: a random workload's quiet moments look the
                 * same, and forgetting its evidence at each would only delay its cut.
                 */
                if (random_dense(&o->pcache)) {
                        double waste = ra_adapt_cost_random_waste_usec(o, l, clamp_to_limits(RA_KB_MIN, l));

                        m->random_reads += o->pcache.random_reads;
                        m->random_intervals++;
                        /* The latest intervals weigh most: the share over the last few seconds. */
                        m->waste_usec = m->waste_usec / 2 + waste;
                        m->busy_usec = m->busy_usec / 2 + o->rates.seconds * 1e6;
                        m->wasted_usec += waste;
                }
        }

        /*
         * Memory before anything else: a window its streams cannot hold reads the same data
         * again and again, however many commands a larger one would save. Cut at once: the
         * files opened next run under it.
         */
        memory = ra_adapt_memory_observe(m, o, limits, reason);
        l = memory_bounded(limits, memory, &bounded);
        if (memory > 0 && o->window_kb > memory && m->learned_kb != clamp_to_limits(memory, l)) {
                take(m, c, o, clamp_to_limits(memory, l), true, reason);
                return true;
        }

        /* A trial is one while it is the window learned and in force (not pinned over, not moved since). */
        if (m->trial_kb != 0 && (m->trial_kb != m->learned_kb || m->trial_kb != o->window_kb))
                m->trial_kb = 0;
        if ((split || !credit_throughput(m, c, o)) && c == RA_WORKLOAD_SEQUENTIAL && m->trial_kb != 0 &&
            !ra_adapt_perf_judged(m, m->trial_kb))
                ra_adapt_perf_trial_wait(m, &o->pcache, paged(o));

        if (c == RA_WORKLOAD_SEQUENTIAL && (o->traced || paged(o)))
                target = model_target(m, o, l, reason);
        else if (c == RA_WORKLOAD_RANDOM && random_cut_due(m))
                target = random_target(m, o, l, reason);
        modelled = target != 0;
        if (!modelled && !confirmed(m, c))
                return false;

        if (!modelled && c == RA_WORKLOAD_RANDOM)
                target = random_target(m, o, l, reason);
        else if (!modelled && c == RA_WORKLOAD_SEQUENTIAL && (o->traced || paged(o)))
                target = sequential_target(m, o, l, reason);

        if (target == 0 || target == o->window_kb || target == m->learned_kb) {
                if (c == RA_WORKLOAD_SEQUENTIAL && m->trial_kb != 0 &&
                    ra_adapt_perf_judged(m, m->trial_kb)) {
                        ra_adapt_perf_trial_kept(m);
                        m->trial_kb = 0;
                }
                return false;
        }

        /* Another class undoing what one set: only on more evidence than set it. */
        if (m->set_by != RA_WORKLOAD_IDLE && m->set_by != c && m->pending_count <= m->set_strength)
                return false;

        take(m, c, o, target, modelled, reason);
        return true;
}

bool ra_adapt_peek(RaModel *m, const RaObservation *o, const RaAdaptLimits *limits) {
        char reason[RA_REASON_MAX] = "";
        RaAdaptLimits bounded;
        const RaAdaptLimits *l = memory_bounded(limits, ra_adapt_memory_held_kb(m), &bounded);
        uint32_t target;

        /*
         * Only growth the model is sure of, which needs no confirmation, while
         * the intervals are sequential and over what sequential reads set:
         * undoing another class's value takes more evidence than set it,
         * counted in whole intervals.
         */
        if (m->pending != RA_WORKLOAD_SEQUENTIAL ||
            (m->set_by != RA_WORKLOAD_IDLE && m->set_by != RA_WORKLOAD_SEQUENTIAL) ||
            ra_adapt_classify(o, l->max_sectors_kb) != RA_WORKLOAD_SEQUENTIAL || !(o->traced || paged(o)))
                return false;
        target = model_target(m, o, l, reason);
        if (target == 0 || target <= o->window_kb || target == m->learned_kb)
                return false;
        take(m, RA_WORKLOAD_SEQUENTIAL, o, target, true, reason);
        m->split = true;
        return true;
}

void ra_adapt_restore(RaModel *m, uint32_t learned_kb) {
        m->learned_kb = learned_kb;
        ra_reason_format(m->reason, "Learned from this device's reads before: %" PRIu32 " KiB.", learned_kb);
}
