/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/sysmacros.h>

#include "ra-apply.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-mounts.h"
#include "ra-registry.h"
#include "ra-sampler.h"
#include "ra-store.h"
#include "ra-tracer.h"
#include "ra-tune.h"
#include "ra-util.h"

/*
 * Drains a second, at most, when a CPU's trace buffer is half full (each
 * reads up to 1 MiB a CPU). 2.9 GB/s of cold page-cache reads through
 * 128 KiB windows took 16 a second here (68,000 events, none lost;
 * bench/overhead.py's files on 2 CPUs). Beyond that a storm of events costs
 * no more CPU: the rest is read with the next sample, and what the kernel
 * overwrote meanwhile is counted and said.
 */
#define WAKES_PER_SEC 64
/* Lost events are said at most once a minute, with everything lost since. */
#define LOST_SAID_USEC (60 * UINT64_C(1000000))

/* Idle samples before a disk is looked at less often, and the most skipped. */
#define IDLE_BEFORE_SKIPPING 5
#define SKIP_MAX 4

static int read_counters(int sysfd, RaDiskStat *ret) {
        char buf[512];
        int r;

        r = ra_read_file_at(sysfd, "stat", buf, sizeof(buf));
        if (r < 0)
                return r == -ENOENT ? -ENODEV : r;
        return ra_stats_parse(buf, ret);
}

/*
 * A bdi has no counters: its reads are those of the devices beneath it (all
 * zero for FUSE and NFS, whose rates come from the page cache instead). A
 * device that cannot be read now only leaves its share out.
 */
static void read_bdi_counters(const RaDisk *d, RaDiskStat *ret) {
        *ret = (RaDiskStat){};
        for (size_t i = 0; i < d->bdi.n_beneath; i++) {
                char path[64];
                _cleanup_close_ int fd = -1;
                RaDiskStat s;

                (void) snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(d->bdi.beneath[i]),
                                minor(d->bdi.beneath[i]));
                fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0 || read_counters(fd, &s) < 0)
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

/*
 * Turns the counters read at now into one interval's observation. Returns 1
 * when there is one, 0 for a first sample or counters that were reset
 * (another device behind the name): those only set the baseline.
 */
static int observe_disk(Manager *m, RaDisk *d, const RaDiskStat *stat, uint32_t kb, uint64_t now,
                        RaObservation *ret) {
        RaDiskStat delta;
        bool baseline =
                d->stat_usec == 0 || now <= d->stat_usec || ra_stats_delta(&d->stat, stat, &delta) < 0;

        *ret = (RaObservation){
                .window_kb = kb,
                /* A bio-based device on a kernel without block_bio_queue has its counters only. */
                .traced = m->tracer && (!d->bio_based || ra_tracer_sees_bios(m->tracer)),
                .evidence = m->tracer ? ra_tracer_evidence(m->tracer) : RA_EVIDENCE_NONE,
        };
        if (!baseline)
                ra_stats_rates(&delta, (double) (now - d->stat_usec) / 1e6, &ret->rates);
        ra_trace_account_take(&d->trace, &ret->trace);
        ra_pcache_account_take(&d->pcache, &ret->pcache);
        if (!baseline && d->kind == RA_KIND_BDI && d->bdi.n_beneath == 0)
                rates_from_pcache(&ret->pcache, &ret->rates);
        d->stat = *stat;
        d->stat_usec = now;
        return !baseline;
}

/*
 * Feeds the adaptive policy; true when it learned a new value. Learning moves
 * only a value radaemon chose itself, and only when it writes: a step it
 * cannot try would be stored untested. Otherwise the workload is still named.
 */
static bool learn(Manager *m, RaDisk *d, const RaObservation *o) {
        const RaStateEntry *e = ra_state_find(m->state, d->identity);
        RaAdaptLimits limits = {
                .bounds = ra_policy_bounds(&d->attrs, &d->settings),
                .size_cap_kb = ra_adapt_size_cap_kb(d->attrs.size_bytes),
                .max_sectors_kb = d->attrs.max_sectors_kb,
                /* What the kernel gave the device (2 x io_opt where it reports one), before radaemon. */
                .default_kb = e && e->has_original && e->original_kb > 0 ? e->original_kb : 0,
        };

        /*
         * The block requests of a disk beneath a bdi are its file system's, read
         * with the bdi's window: they say nothing about the disk's own. Only raw
         * reads of it (page-cache evidence on its own inode) teach it anything.
         */
        bool own = !d->beneath_bdi || o->pcache.seq_bytes + o->pcache.random_bytes > 0;

        if (own && d->attrs.size_bytes > 0 && !ra_context_observing(m) &&
            IN_SET(d->decision.source, RA_SOURCE_PRIOR, RA_SOURCE_LEARNED))
                return ra_adapt_update(&d->model, o, &limits);

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
        d->workload = ra_workload_to_string(d->model.workload);
        d->evidence = ra_evidence_to_string(d->model.evidence);
        publish_rate(&d->read_bytes_per_sec, o->rates.read_bytes_per_sec);
        publish_rate(&d->avg_read_request_bytes, o->rates.avg_read_request_bytes);

        if (d->model.workload == RA_WORKLOAD_IDLE) {
                d->idle_samples++;
                d->skip =
                        d->idle_samples < IDLE_BEFORE_SKIPPING ? 0 : d->idle_samples / IDLE_BEFORE_SKIPPING;
                if (d->skip > SKIP_MAX)
                        d->skip = SKIP_MAX;
        } else
                d->idle_samples = d->skip = 0;

        if (d->model.workload != RA_WORKLOAD_IDLE)
                log_debug("%s: %.0f reads/s, %.0f KiB/s, %.0f KiB a request; traced %" PRIu64
                          " requests, %" PRIu64 " jumps, %" PRIu32 " KiB requests, %" PRIu64
                          "%% under %" PRIu32 " KiB: %s",
                          d->name, o->rates.read_iops, o->rates.read_bytes_per_sec / 1024,
                          o->rates.avg_read_request_bytes / 1024, o->trace.requests, o->trace.jumps,
                          o->trace.request_kb,
                          o->trace.bytes ? o->trace.window_bytes * 100 / o->trace.bytes : 0, o->window_kb,
                          d->workload);
        if (o->pcache.events > 0)
                log_debug("%s: page cache: %" PRIu64 " files, %" PRIu64 " KiB in order (%" PRIu64
                          " KiB in full windows, %" PRIu64 " KiB under %" PRIu32 " KiB), %" PRIu64
                          " random reads (%" PRIu64 " faults) of %" PRIu64 " KiB, %" PRIu64
                          " KiB unasked, reads of %" PRIu32 " KiB",
                          d->name, o->pcache.files, o->pcache.seq_bytes / 1024, o->pcache.full_bytes / 1024,
                          o->pcache.window_bytes / 1024, o->window_kb, o->pcache.random_reads,
                          o->pcache.random_faults, o->pcache.random_bytes / 1024,
                          o->pcache.waste_bytes / 1024, o->pcache.req_kb);
}

/* One disk, one interval: drift every time, the statistics unless it is idle and skipped. */
static void sample_disk(Manager *m, RaDisk *d, uint64_t now) {
        _cleanup_close_ int sysfd = -1;
        const char *event = NULL;
        RaObservation o;
        RaTune t;
        RaDiskStat stat;
        uint32_t kb;
        int r;

        /* Every interval, idle or not: a change behind our back is noticed within one. */
        sysfd = ra_tune_check_window(m, d, &kb);
        if (sysfd < 0) {
                /* Gone: udev's remove event follows. */
                log_debug_errno(sysfd, "%s: cannot read read_ahead_kb, skipping: %m", d->name);
                return;
        }

        if (d->skip > 0 && d->trace.now.requests == 0 && d->pcache.now.events == 0) {
                d->skip--;
                return;
        }

        r = 0;
        if (d->kind == RA_KIND_BDI)
                read_bdi_counters(d, &stat);
        else
                r = read_counters(sysfd, &stat);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read the statistics, skipping: %m", d->name);
                return;
        }

        if (ra_tune_begin(d, &t) < 0)
                return;
        if (observe_disk(m, d, &stat, kb, now, &o) > 0) {
                bool learned = learn(m, d, &o);

                publish(d, &o);
                if (learned) {
                        ra_store_learned(m, d);
                        event = "learning";
                }
        }
        ra_tune_commit(m, &t, event);
}

static void on_trace_event(void *userdata, const RaTraceEvent *e) {
        Manager *m = userdata;

        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *d = m->disks[i];

                if (major(d->devnum) == e->major && minor(d->devnum) == e->minor) {
                        /*
                         * One event per device: a request-based disk's bios (taken
                         * when the filter could not name every device) would count
                         * its reads twice, before and after merging.
                         */
                        if (e->bio == d->bio_based)
                                ra_trace_account_add(&d->trace, e, d->attrs.read_ahead_kb);
                        return;
                }
        }
}

static RaDisk *find_by_devnum(Manager *m, dev_t dev) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i]->devnum == dev)
                        return m->disks[i];
        return NULL;
}

static void on_pcache_event(void *userdata, const RaPcacheEvent *e) {
        Manager *m = userdata;
        RaDisk *d;
        dev_t knob;

        if (!ra_sbmap_lookup(&m->sbmap, e->s_dev, e->ino, &knob))
                return;
        d = find_by_devnum(m, knob);
        if (d)
                ra_pcache_account_add(&d->pcache, e, d->attrs.read_ahead_kb);
}

/* Which superblocks the managed disks' files live on: at start, and when disks or mounts change. */
static void update_superblocks(Manager *m) {
        _cleanup_free_ dev_t *disks = calloc(m->n_disks + 1, sizeof(dev_t));
        size_t n = 0;
        int r;

        if (!disks)
                return (void) log_oom();
        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i]->kind == RA_KIND_DISK)
                        disks[n++] = m->disks[i]->devnum;

        r = ra_mounts_build("/proc/self/mountinfo", "/sys", disks, n, &m->sbmap);
        /* A bdi's files: its superblock's, whose dev is the bdi's devnum here (0 while it mounts). */
        for (size_t i = 0; i < m->n_disks && r >= 0; i++)
                if (m->disks[i]->kind == RA_KIND_BDI && m->disks[i]->devnum != 0)
                        r = ra_sbmap_add(&m->sbmap, ra_kdev(m->disks[i]->devnum), 0, m->disks[i]->devnum);
        if (r < 0) {
                log_warning_errno(r, "Cannot map file systems to disks, ignoring: %m");
                return;
        }
        r = ra_tracer_set_superblocks(m->tracer, &m->sbmap);
        if (r < 0)
                log_warning_errno(r, "Cannot set the page-cache events' filter, ignoring: %m");
        else
                log_debug("Page-cache events of %zu superblocks and raw devices.", m->sbmap.n);
}

/* The tracer's filters, to the disks and superblocks managed now. */
static void set_tracer_filters(Manager *m) {
        int r;

        if (m->tracer_dirty) {
                _cleanup_free_ dev_t *requests = calloc(m->n_disks + 1, sizeof(dev_t));
                _cleanup_free_ dev_t *bios = calloc(m->n_disks + 1, sizeof(dev_t));
                size_t n_requests = 0, n_bios = 0;

                for (size_t i = 0; requests && bios && i < m->n_disks; i++)
                        if (m->disks[i]->bio_based)
                                bios[n_bios++] = m->disks[i]->devnum;
                        else
                                requests[n_requests++] = m->disks[i]->devnum;
                r = requests && bios ? ra_tracer_set_devices(m->tracer, requests, n_requests, bios, n_bios)
                                     : -ENOMEM;
                if (r < 0)
                        log_warning_errno(r, "Cannot set the tracer's device filter, ignoring: %m");
                else if (n_bios > 0 && ra_tracer_sees_bios(m->tracer))
                        log_debug("Tracing the bios of %zu bio-based devices.", n_bios);
                if (ra_tracer_evidence(m->tracer) >= RA_EVIDENCE_FILEMAP)
                        update_superblocks(m);
                m->tracer_dirty = false;
        }
}

static void drain_tracer(Manager *m) {
        int r;

        set_tracer_filters(m);
        r = ra_tracer_drain(m->tracer, on_trace_event, on_pcache_event, m);
        if (r < 0)
                log_debug_errno(r, "Reading the tracer failed, ignoring: %m");
}

/* Between two samples, when the kernel says a CPU's buffer is half full. */
static void on_tracer_full(void *userdata) {
        Manager *m = userdata;
        uint64_t budget = (uint64_t) WAKES_PER_SEC * m->config->interval_ms / 1000 ?: 1;

        if (++m->tracer_wakes >= budget)
                ra_tracer_set_watching(m->tracer, false);
        drain_tracer(m);
}

/*
 * Events the kernel overwrote before they were read mean learning saw only
 * part of the reads: said in the log, with what they were out of, once when
 * it starts and then at most once a minute.
 */
static void say_lost(Manager *m, uint64_t now) {
        uint64_t read, lost;

        ra_tracer_take_counts(m->tracer, &read, &lost);
        if (m->tracer_wakes > 0 || lost > 0)
                log_debug("Tracer: %u drains at a buffer's fill level this interval, %" PRIu64
                          " events read, %" PRIu64 " lost.",
                          m->tracer_wakes, read, lost);
        m->trace_read += read;
        m->trace_lost += lost;
        if (m->trace_lost == 0) {
                /* Nothing to say: what they are out of is counted from now. */
                m->trace_read = 0;
                m->trace_since = now;
                return;
        }
        if (m->trace_lost_said != 0 && now - m->trace_lost_said < LOST_SAID_USEC)
                return;
        log_notice("Tracing lost %" PRIu64 " of %" PRIu64 " events in the last %" PRIu64
                   " s: the kernel overwrote them before radaemon could read them, so learning saw part "
                   "of the reads.",
                   m->trace_lost, m->trace_lost + m->trace_read, (now - m->trace_since + 500000) / 1000000);
        m->trace_read = m->trace_lost = 0;
        m->trace_since = m->trace_lost_said = now;
}

/* Scheduling slack: a twentieth of the interval keeps wake-ups together without blurring rates. */
static uint64_t accuracy_usec(const Manager *m) {
        return (uint64_t) m->config->interval_ms * 1000 / 20;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        uint64_t now;
        int r;

        /*
         * The time the samples are taken, not the time the tick was due: after
         * a stall the rates are then still bytes over the time they took.
         */
        r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return log_error_errno(r, "Cannot read the clock: %m");

        if (m->tracer) {
                drain_tracer(m);
                say_lost(m, now);
                m->tracer_wakes = 0;
                ra_tracer_set_watching(m->tracer, true);
        }

        for (size_t i = 0; i < m->n_disks; i++)
                sample_disk(m, m->disks[i], now);

        /* What was learned this interval, in one save. */
        (void) ra_store_flush(m);

        /* The interval may have changed with a reload. */
        r = sd_event_source_set_time(s, now + (uint64_t) m->config->interval_ms * 1000);
        if (r >= 0)
                r = sd_event_source_set_time_accuracy(s, accuracy_usec(m));
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0)
                return log_error_errno(r, "Cannot schedule the next sample: %m");
        return 0;
}

void ra_sampler_open_tracer(Manager *m) {
        _cleanup_free_ char *why = NULL;
        RaEvidence e;
        int r;

        if (m->tracer)
                return;

        r = ra_tracer_open(&m->tracer);
        if (r < 0) {
                if (r == -ENOENT)
                        why = strdup(
                                "This kernel has no tracefs, so radaemon cannot see reads to learn from.");
                else if (asprintf(
                                 &why,
                                 "tracefs at /sys/kernel/tracing cannot be used (%s) and radaemon could not "
                                 "mount it, so it cannot see reads to learn from; mount tracefs there and "
                                 "reload.",
                                 strerror(-r)) < 0)
                        why = NULL;
                log_notice("%s Pins, stored and prior values still apply.", why ?: "Learning is off.");
                ra_tune_learning(m, why ?: "Learning is off.");
                return;
        }

        e = ra_tracer_evidence(m->tracer);
        if (ra_tracer_mounted(m->tracer))
                log_notice("tracefs was not mounted: mounted it at %s to learn from reads.",
                           ra_tracer_mounted(m->tracer));
        log_info("Tracing %s through %s.",
                 e == RA_EVIDENCE_READAHEAD ? "readahead per file and block requests"
                 : e == RA_EVIDENCE_FILEMAP ? "page-cache fills per file and block requests"
                                            : "block requests (this kernel has no page-cache events)",
                 ra_tracer_path(m->tracer));
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &m->trace_since);
        r = ra_tracer_watch(m->tracer, m->event, on_tracer_full, m);
        if (r < 0)
                log_warning_errno(r, "Cannot watch how full the trace buffers are, reading them once an "
                                     "interval only: %m");
        ra_sampler_disks_changed(m);
        ra_tune_learning(m, NULL);
}

int ra_sampler_start(Manager *m) {
        uint64_t now;
        int r;

        ra_sampler_open_tracer(m);

        r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (r >= 0)
                r = sd_event_add_time(m->event, &m->sampler, CLOCK_MONOTONIC,
                                      now + (uint64_t) m->config->interval_ms * 1000, accuracy_usec(m),
                                      on_tick, m);
        if (r < 0)
                return log_error_errno(r, "Cannot start the statistics sampler: %m");
        return 0;
}

void ra_sampler_stop(Manager *m) {
        m->sampler = sd_event_source_disable_unref(m->sampler);
        m->filters_due = sd_event_source_disable_unref(m->filters_due);
        m->tracer = ra_tracer_close(m->tracer);
}

static int on_filters_due(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        if (m->tracer)
                set_tracer_filters(m);
        return 0;
}

/*
 * A disk managed now is traced from now, not from the next sample: its reads
 * in between would otherwise be filtered out. The filters are set once the
 * event loop has handled what is pending (a coldplug adds every disk first).
 */
void ra_sampler_disks_changed(Manager *m) {
        int r;

        m->tracer_dirty = true;
        if (!m->tracer)
                return;
        if (m->filters_due)
                r = sd_event_source_set_enabled(m->filters_due, SD_EVENT_ONESHOT);
        else
                r = sd_event_add_defer(m->event, &m->filters_due, on_filters_due, m);
        if (r < 0)
                log_debug_errno(r, "Cannot set the tracer's filters now, at the next sample then: %m");
}
