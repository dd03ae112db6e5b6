/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#include "ra-apply.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-memlimit.h"
#include "ra-observe.h"
#include "ra-registry.h"
#include "ra-sampler.h"
#include "ra-state-store.h"
#include "ra-tracefs.h"
#include "ra-util.h"

/* Idle samples before a disk is looked at less often, and the most skipped. */
#define IDLE_BEFORE_SKIPPING 5
#define SKIP_MAX 4

/*
 * A bdi has no counters: its reads are those of the devices beneath it (all
 * zero for FUSE and NFS, whose rates come from the page cache instead). A
 * device that cannot be read now only leaves its share out.
 */
static void read_bdi_counters(const RaDisk *d, RaDiskStat *ret) {
        *ret = (RaDiskStat){};
        for (size_t i = 0; i < d->in.bdi.n_beneath; i++) {
                char path[64];
                _cleanup_close_ int fd = -1;
                RaDiskStat s;

                (void) snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(d->in.bdi.beneath[i]),
                                minor(d->in.bdi.beneath[i]));
                fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0 || ra_diskstat_read_at(fd, &s) < 0)
                        continue;
                ret->read_ios += s.read_ios;
                ret->read_merges += s.read_merges;
                ret->read_sectors += s.read_sectors;
                ret->read_ticks_ms += s.read_ticks_ms;
                ret->write_ios += s.write_ios;
                ret->write_merges += s.write_merges;
                ret->write_sectors += s.write_sectors;
                ret->write_ticks_ms += s.write_ticks_ms;
                ret->in_flight += s.in_flight;
                ret->time_in_queue_ms += s.time_in_queue_ms;
                /* Busy time is a share of the interval: the busiest device's. */
                if (s.io_ticks_ms > ret->io_ticks_ms)
                        ret->io_ticks_ms = s.io_ticks_ms;
        }
}

/* FUSE and NFS: what the page cache was filled with is what the file system was asked to read. */
static void rates_from_pcache(const RaPcacheSummary *p, RaRates *r) {
        uint64_t reads = p->seq_reads + p->random_reads, bytes = p->seq_bytes + p->random_bytes;

        if (r->seconds <= 0)
                return;
        r->read_iops = (double) reads / r->seconds;
        r->read_bytes_per_sec = (double) bytes / r->seconds;
        r->avg_read_request_bytes = reads > 0 ? (double) bytes / (double) reads : 0;
}

/* Rates move every interval; a signal is worth it only when they moved by a tenth. */
static void publish_rate(uint64_t *published, double now) {
        /* Rates are never negative: rounding needs no libm (whose pages would cost 300 KiB resident). */
        uint64_t v = now > 0 ? (uint64_t) (now + 0.5) : 0;
        uint64_t diff = *published > v ? *published - v : v - *published;

        if ((*published == 0) != (v == 0) || diff * 10 > (*published > v ? *published : v))
                *published = v;
}

static void add_turns(RaCalibTurns *to, const RaCalibTurns *t) {
        to->n += t->n;
        to->nsec += t->nsec;
        to->kb += t->kb;
}

/*
 * A bdi's block requests are traced under its disks' devnums, and its files'
 * streams take their turns there: on a disk whose head moves, each turn is
 * a jump, and it is the bdi's window that makes the turns fewer (four `dd`
 * of four files on btrfs over bench/devmodel's hdd-7200 grew by trials
 * while the same on xfs grew on the disk's turns within the first job). A
 * disk beneath a bdi keeps its turns for it (it does not learn from a file
 * system's requests), and the bdi takes them. A peek into the interval
 * leaves them, and adds the disk's own interval so far. Two bdis on
 * partitions of one disk share its turns: the first to look takes them.
 */
static void take_turns_beneath(Manager *m, const RaDisk *b, bool peek, RaObservation *ret) {
        for (size_t i = 0; b->in.beneath_names && b->in.beneath_names[i]; i++) {
                RaDisk *d = ra_registry_find(m, b->in.beneath_names[i]);

                if (!d || !d->beneath_bdi)
                        continue;
                ret->trace.switches += d->bdi_switches;
                add_turns(&ret->turns, &d->bdi_turns);
                if (peek) {
                        ret->trace.switches += d->sampled.trace.now.switches;
                        add_turns(&ret->turns, &d->costs.turns);
                } else {
                        d->bdi_switches = 0;
                        d->bdi_turns = (RaCalibTurns){};
                }
        }
}

/*
 * Turns the counters read at now into one interval's observation. Returns 1
 * when there is one, 0 for a first sample or counters that were reset
 * (another device behind the name): those only set the baseline. A peek
 * (ra_observe_disk()) takes copies of the accounts and keeps the baseline,
 * so the interval goes on whole.
 */
static int observe_disk(Manager *m, RaDisk *d, const RaDiskStat *stat, uint32_t kb, uint64_t now, bool peek,
                        RaObservation *ret) {
        RaTracefs *tracer = ra_sampler_tracer(m);
        RaTraceAccount trace_copy, *trace = &d->sampled.trace;
        RaPcacheAccount pcache_copy, *pcache = &d->sampled.pcache;
        RaDiskStat delta;
        bool baseline = d->sampled.stat_usec == 0 || now <= d->sampled.stat_usec ||
                        ra_diskstat_delta(&d->sampled.stat, stat, &delta) < 0;

        *ret = (RaObservation){
                .window_kb = kb,
                /* A bio-based device on a kernel without block_bio_queue has its counters only. */
                .traced = tracer && (!d->in.bio_based || ra_tracefs_sees_bios(tracer)),
                .evidence = tracer ? ra_tracefs_evidence(tracer) : RA_EVIDENCE_NONE,
        };
        if (!baseline)
                ra_diskstat_rates(&delta, (double) (now - d->sampled.stat_usec) / 1e6, &ret->rates);
        if (peek) {
                trace_copy = *trace;
                pcache_copy = *pcache;
                trace = &trace_copy;
                pcache = &pcache_copy;
        }
        ra_trace_account_take(trace, &ret->trace);
        ra_pcache_account_take(pcache, &ret->pcache);
        if (peek)
                ret->turns = d->costs.turns;
        else
                ra_calib_trace_take_turns(&d->costs, &ret->turns);
        if (!peek && d->beneath_bdi) {
                d->bdi_switches += ret->trace.switches;
                add_turns(&d->bdi_turns, &ret->turns);
        }
        if (d->kind == RA_KIND_BDI)
                take_turns_beneath(m, d, peek, ret);
        if (!baseline && d->kind == RA_KIND_BDI && d->in.bdi.n_beneath == 0)
                rates_from_pcache(&ret->pcache, &ret->rates);
        if (!peek) {
                d->sampled.stat = *stat;
                d->sampled.stat_usec = now;
        }
        return !baseline;
}

/*
 * What the interval's sequential readers may hold: the tightest memory limit
 * among the tasks the page cache named (ra-memlimit.h). A task gone, or
 * hidden from the daemon, says nothing: its streams are judged by their
 * re-reads alone (ra-adapt-memory.h). 0: none known.
 */
static uint64_t readers_memory_kb(const RaPcacheSummary *p) {
        uint64_t kb = 0, one;

        for (uint32_t i = 0; i < p->n_pids; i++)
                if (ra_memlimit_task_kb("", p->pids[i], &one) >= 0 && (kb == 0 || one < kb))
                        kb = one;
        return kb;
}

/*
 * Feeds the adaptive policy; true when it learned a new value. Learning moves
 * only a value radaemon chose itself, and only when it writes: a step it
 * cannot try would be stored untested. Otherwise the workload is still named.
 */
static bool learnable(Manager *m, RaDisk *d, const RaObservation *o, RaAdaptLimits *ret) {
        const RaStateEntry *e = ra_store_entry(m, d->in.identity);

        *ret = (RaAdaptLimits){
                .bounds = ra_policy_bounds(&d->in.attrs, &d->settings),
                .size_cap_kb = ra_policy_learned_cap_kb(d->in.attrs.size_bytes),
                .max_sectors_kb = d->in.attrs.max_sectors_kb,
                /* What the kernel gave the device (2 x io_opt where it reports one), before radaemon. */
                .default_kb = e && e->has_original && e->original_kb > 0 ? e->original_kb : 0,
                /* What it costs to read, as stored (empty: never measured, the policy assumes one). */
                .calib = d->calib,
                .rotational = d->in.attrs.rotational,
        };

        /*
         * The block requests of a disk beneath a bdi are its file system's, read
         * with the bdi's window: they say nothing about the disk's own. Only raw
         * reads of it (page-cache evidence on its own inode) teach it anything.
         */
        bool own = !d->beneath_bdi || o->pcache.seq_bytes + o->pcache.random_bytes > 0;

        return own && d->in.attrs.size_bytes > 0 && !ra_context_observing(m) &&
               ra_source_learnable(d->decision.source);
}

static bool learn(Manager *m, RaDisk *d, const RaObservation *o) {
        RaAdaptLimits limits;

        if (learnable(m, d, o, &limits)) {
                /* Not for a peek, which holds to the bound the intervals set. */
                limits.memory_kb = readers_memory_kb(&o->pcache);
                return ra_adapt_update(&d->model, o, &limits);
        }

        d->model.workload = ra_adapt_classify(o, limits.max_sectors_kb);
        if (d->model.workload != RA_WORKLOAD_IDLE)
                d->model.evidence = o->evidence >= RA_EVIDENCE_FILEMAP &&
                                                    o->pcache.seq_bytes + o->pcache.random_bytes > 0
                                            ? o->evidence
                                    : o->traced ? RA_EVIDENCE_BLOCK
                                                : RA_EVIDENCE_NONE;
        return false;
}

/* What D-Bus shows, and how often an idle disk is looked at. */
static void publish(RaDisk *d, const RaObservation *o) {
        d->sampled.workload = ra_workload_to_string(d->model.workload);
        d->sampled.evidence = ra_evidence_to_string(d->model.evidence);
        publish_rate(&d->sampled.read_bytes_per_sec, o->rates.read_bytes_per_sec);
        publish_rate(&d->sampled.avg_read_request_bytes, o->rates.avg_read_request_bytes);

        if (d->model.workload == RA_WORKLOAD_IDLE) {
                d->sampled.idle_samples++;
                d->sampled.skip = d->sampled.idle_samples < IDLE_BEFORE_SKIPPING
                                          ? 0
                                          : d->sampled.idle_samples / IDLE_BEFORE_SKIPPING;
                if (d->sampled.skip > SKIP_MAX)
                        d->sampled.skip = SKIP_MAX;
        } else
                d->sampled.idle_samples = d->sampled.skip = 0;

        if (d->model.workload != RA_WORKLOAD_IDLE)
                log_debug("%s: %.0f reads/s, %.0f KiB/s, %.0f KiB a request; traced %" PRIu64
                          " requests, %" PRIu64 " jumps, %" PRIu32 " KiB requests, %" PRIu64
                          "%% under %" PRIu32 " KiB: %s",
                          d->name, o->rates.read_iops, o->rates.read_bytes_per_sec / 1024,
                          o->rates.avg_read_request_bytes / 1024, o->trace.requests, o->trace.jumps,
                          o->trace.request_kb,
                          o->trace.bytes ? o->trace.window_bytes * 100 / o->trace.bytes : 0, o->window_kb,
                          d->sampled.workload);
        if (o->pcache.events > 0)
                log_debug("%s: page cache: %" PRIu64 " files, %" PRIu64 " KiB in order (%" PRIu64
                          " KiB in full windows, %" PRIu64 " KiB under %" PRIu32 " KiB), %" PRIu64
                          " random reads (%" PRIu64 " faults) of %" PRIu64 " KiB, %" PRIu64
                          " KiB unasked, reads of %" PRIu32 " KiB; %" PRIu64 " streams, %" PRIu64
                          " KiB read again",
                          d->name, o->pcache.files, o->pcache.seq_bytes / 1024, o->pcache.full_bytes / 1024,
                          o->pcache.window_bytes / 1024, o->window_kb, o->pcache.random_reads,
                          o->pcache.random_faults, o->pcache.random_bytes / 1024,
                          o->pcache.waste_bytes / 1024, o->pcache.req_kb, o->pcache.seq_streams,
                          o->pcache.reread_bytes / 1024);
}

bool ra_observe_peekable(const Manager *m, const RaDisk *d) {
        return d->model.workload == RA_WORKLOAD_SEQUENTIAL && d->sampled.stat_usec > 0 &&
               !ra_context_observing(m) && ra_source_learnable(d->decision.source);
}

/* The interval so far (observe_disk()'s peek): the growth the cost model is sure of (ra_adapt_peek()). */
static RaObserved peek_disk(Manager *m, RaDisk *d, const RaObservation *o) {
        RaAdaptLimits limits;

        if (!learnable(m, d, o, &limits) || !ra_adapt_peek(&d->model, o, &limits))
                return RA_OBSERVED_NOTHING;
        log_debug("%s: grown %.0f ms into the interval, on %.0f KiB/s.", d->name, o->rates.seconds * 1e3,
                  o->rates.read_bytes_per_sec / 1024);
        return RA_OBSERVED_LEARNED;
}

bool ra_observe_skip(RaDisk *d) {
        if (d->sampled.skip == 0 || d->sampled.trace.now.requests > 0 || d->sampled.pcache.now.events > 0)
                return false;
        d->sampled.skip--;
        return true;
}

RaObserved ra_observe_disk(Manager *m, RaDisk *d, int sysfd, uint32_t kb, uint64_t now, bool peek) {
        char was[RA_REASON_MAX];
        RaObservation o;
        RaDiskStat stat;
        bool learned;
        int r = 0;

        if (d->kind == RA_KIND_BDI)
                read_bdi_counters(d, &stat);
        else
                r = ra_diskstat_read_at(sysfd, &stat);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read the statistics, skipping: %m", d->name);
                return RA_OBSERVED_NOTHING;
        }

        /* Counters that moved say a rotational disk is spinning: a calibration would not wake it. */
        if (d->sampled.stat_usec > 0 &&
            (stat.read_ios != d->sampled.stat.read_ios || stat.write_ios != d->sampled.stat.write_ios))
                d->active_usec = now;

        if (observe_disk(m, d, &stat, kb, now, peek, &o) <= 0)
                return RA_OBSERVED_NOTHING;
        if (peek)
                return peek_disk(m, d, &o);

        memcpy(was, d->model.reason, sizeof(was));
        learned = learn(m, d, &o);
        publish(d, &o);
        if (learned)
                return RA_OBSERVED_LEARNED;
        /* The same value, a new reason (a trial undecided, or kept): nothing to store. */
        return strcmp(was, d->model.reason) != 0 ? RA_OBSERVED_TRIAL : RA_OBSERVED_NOTHING;
}
