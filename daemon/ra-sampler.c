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
#include "ra-tracefs.h"
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
/*
 * A disk reading in order is looked at this often between its samples
 * (the tuning path's on_interval() says which), for the growth its cost
 * model is sure of, which needs no confirmation: a quarter of the default
 * interval. Measured (tests/busy-grow.sh: ssd-ctrl read by `dd bs=64k` at
 * 110-160 MB/s, three runs): a trial's first requests made the traced model
 * sure, and the growth was taken 263-525 ms into the interval after the
 * trial rather than at its end. A peek runs the tuning path's sample
 * (ra_tune_sample()) on the interval so far: a read of the disk's stat, a
 * copy of its accounts, its traced model refitted and its value's drift
 * checked, four times a second while it reads; idle disks are not peeked.
 */
#define PEEK_USEC (250 * UINT64_C(1000))
/* Lost events are said at most once a minute, with everything lost since. */
#define LOST_SAID_USEC (60 * UINT64_C(1000000))

/* What the sampler keeps between intervals, its own: no other module reads it. */
struct RaSampler {
        sd_event_source *timer;
        uint64_t next_sample;         /* when the next interval ends (CLOCK_MONOTONIC, µs) */
        struct RaTracefs *tracer;     /* NULL without tracefs */
        bool tracer_dirty;            /* the set of disks or mounts changed since its filters were set */
        sd_event_source *filters_due; /* sets them once the current burst of changes is handled */
        unsigned tracer_wakes;        /* drains this interval because a trace buffer was half full */
        RaSbMap sbmap;                /* superblock -> managed disk, for the page-cache events */

        /* Events the tracer lost, not yet said in the log, and what they are out of. */
        uint64_t trace_lost, trace_read;
        uint64_t trace_since;     /* counted since (CLOCK_MONOTONIC, µs) */
        uint64_t trace_lost_said; /* when losses were last said (0: never) */
};

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
                        if (e->complete)
                                ra_calib_trace_complete(&d->costs, e->sector, e->time_ns);
                        else if (e->bio == d->in.bio_based) {
                                ra_trace_account_add(&d->sampled.trace, e, d->in.attrs.read_ahead_kb);
                                if (!e->bio)
                                        ra_calib_trace_issue(&d->costs, e->sector, e->nr_sectors / 2,
                                                             e->time_ns);
                        }
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

        if (!ra_sbmap_lookup(&m->sampler->sbmap, e->s_dev, e->ino, &knob))
                return;
        d = find_by_devnum(m, knob);
        if (d)
                ra_pcache_account_add(&d->sampled.pcache, e, d->in.attrs.read_ahead_kb);
}

/* Which superblocks the managed disks' files live on: at start, and when disks or mounts change. */
static void update_superblocks(Manager *m) {
        _cleanup_free_ dev_t *disks = calloc(m->n_disks + 1, sizeof(dev_t));
        size_t n = 0;
        int r;

        if (!disks)
                return (void) log_oom();
        for (size_t i = 0; i < m->n_disks; i++)
                if (ra_kind_is_block(m->disks[i]->kind))
                        disks[n++] = m->disks[i]->devnum;

        r = ra_mounts_build("/proc/self/mountinfo", "/sys", disks, n, &m->sampler->sbmap);
        /* A bdi's files: its superblock's, whose dev is the bdi's devnum here (0 while it mounts). */
        for (size_t i = 0; i < m->n_disks && r >= 0; i++)
                if (m->disks[i]->kind == RA_KIND_BDI && m->disks[i]->devnum != 0)
                        r = ra_sbmap_add(&m->sampler->sbmap, ra_kdev(m->disks[i]->devnum), 0,
                                         m->disks[i]->devnum);
        if (r < 0) {
                log_warning_errno(r, "Cannot map file systems to disks, ignoring: %m");
                return;
        }
        r = ra_tracefs_set_superblocks(m->sampler->tracer, &m->sampler->sbmap);
        if (r < 0)
                log_warning_errno(r, "Cannot set the page-cache events' filter, ignoring: %m");
        else
                log_debug("Page-cache events of %zu superblocks and raw devices.", m->sampler->sbmap.n);
}

/* The tracer's filters, to the disks and superblocks managed now. */
static void set_tracer_filters(Manager *m) {
        int r;

        if (m->sampler->tracer_dirty) {
                _cleanup_free_ dev_t *requests = calloc(m->n_disks + 1, sizeof(dev_t));
                _cleanup_free_ dev_t *bios = calloc(m->n_disks + 1, sizeof(dev_t));
                size_t n_requests = 0, n_bios = 0;

                for (size_t i = 0; requests && bios && i < m->n_disks; i++)
                        if (m->disks[i]->in.bio_based)
                                bios[n_bios++] = m->disks[i]->devnum;
                        else
                                requests[n_requests++] = m->disks[i]->devnum;
                r = requests && bios
                            ? ra_tracefs_set_devices(m->sampler->tracer, requests, n_requests, bios, n_bios)
                            : -ENOMEM;
                if (r < 0)
                        log_warning_errno(r, "Cannot set the tracer's device filter, ignoring: %m");
                else if (n_bios > 0 && ra_tracefs_sees_bios(m->sampler->tracer))
                        log_debug("Tracing the bios of %zu bio-based devices.", n_bios);
                if (ra_tracefs_evidence(m->sampler->tracer) >= RA_EVIDENCE_FILEMAP)
                        update_superblocks(m);
                m->sampler->tracer_dirty = false;
        }
}

static void drain_tracer(Manager *m) {
        int r;

        set_tracer_filters(m);
        r = ra_tracefs_drain(m->sampler->tracer, on_trace_event, on_pcache_event, m);
        if (r < 0)
                log_debug_errno(r, "Reading the tracer failed, ignoring: %m");
}

/* Between two samples, when the kernel says a CPU's buffer is half full. */
static void on_tracer_full(void *userdata) {
        Manager *m = userdata;
        uint64_t budget = (uint64_t) WAKES_PER_SEC * m->config->interval_ms / 1000 ?: 1;

        if (++m->sampler->tracer_wakes >= budget)
                ra_tracefs_set_watching(m->sampler->tracer, false);
        drain_tracer(m);
}

/*
 * Events the kernel overwrote before they were read mean learning saw only
 * part of the reads: said in the log, with what they were out of, once when
 * it starts and then at most once a minute.
 */
static void say_lost(Manager *m, uint64_t now) {
        uint64_t read, lost;

        ra_tracefs_take_counts(m->sampler->tracer, &read, &lost);
        if (m->sampler->tracer_wakes > 0 || lost > 0)
                log_debug("Tracer: %u drains at a buffer's fill level this interval, %" PRIu64
                          " events read, %" PRIu64 " lost.",
                          m->sampler->tracer_wakes, read, lost);
        m->sampler->trace_read += read;
        m->sampler->trace_lost += lost;
        if (m->sampler->trace_lost == 0) {
                /* Nothing to say: what they are out of is counted from now. */
                m->sampler->trace_read = 0;
                m->sampler->trace_since = now;
                return;
        }
        if (m->sampler->trace_lost_said != 0 && now - m->sampler->trace_lost_said < LOST_SAID_USEC)
                return;
        log_notice("Tracing lost %" PRIu64 " of %" PRIu64 " events in the last %" PRIu64
                   " s: the kernel overwrote them before radaemon could read them, so learning saw part "
                   "of the reads.",
                   m->sampler->trace_lost, m->sampler->trace_lost + m->sampler->trace_read,
                   (now - m->sampler->trace_since + 500000) / 1000000);
        m->sampler->trace_read = m->sampler->trace_lost = 0;
        m->sampler->trace_since = m->sampler->trace_lost_said = now;
}

/* Scheduling slack: a twentieth of the interval keeps wake-ups together without blurring rates. */
static uint64_t accuracy_usec(const Manager *m) {
        return (uint64_t) m->config->interval_ms * 1000 / 20;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        uint64_t now, next;
        bool peek, peeks;
        int r;

        /*
         * The time the samples are taken, not the time the tick was due: after
         * a stall the rates are then still bytes over the time they took.
         */
        r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return log_error_errno(r, "Cannot read the clock: %m");

        /* A tick before the interval's end only peeks. */
        peek = now + accuracy_usec(m) < m->sampler->next_sample;
        if (m->sampler->tracer) {
                drain_tracer(m);
                say_lost(m, now);
                /* The wakes' budget is an interval's: a peek's drain does not renew it. */
                if (!peek)
                        m->sampler->tracer_wakes = 0;
                ra_tracefs_set_watching(m->sampler->tracer, true);
        }

        /* The interval may have changed with a reload. */
        if (!peek)
                m->sampler->next_sample = now + (uint64_t) m->config->interval_ms * 1000;
        peeks = m->on_interval(m, now, peek);

        /* A peek no closer to the sample than half of one: that sample sees the same. */
        next = m->sampler->next_sample;
        if (peeks && now + PEEK_USEC + PEEK_USEC / 2 <= next)
                next = now + PEEK_USEC;
        r = sd_event_source_set_time(s, next);
        if (r >= 0)
                r = sd_event_source_set_time_accuracy(s, next == m->sampler->next_sample ? accuracy_usec(m)
                                                                                         : PEEK_USEC / 20);
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

        if (m->sampler->tracer)
                return;

        r = ra_tracefs_open(&m->sampler->tracer);
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
                m->on_learning(m, why ?: "Learning is off.");
                return;
        }

        e = ra_tracefs_evidence(m->sampler->tracer);
        if (ra_tracefs_mounted(m->sampler->tracer))
                log_notice("tracefs was not mounted: mounted it at %s to learn from reads.",
                           ra_tracefs_mounted(m->sampler->tracer));
        log_info("Tracing %s through %s.",
                 e == RA_EVIDENCE_READAHEAD ? "readahead per file and block requests"
                 : e == RA_EVIDENCE_FILEMAP ? "page-cache fills per file and block requests"
                                            : "block requests (this kernel has no page-cache events)",
                 ra_tracefs_path(m->sampler->tracer));
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &m->sampler->trace_since);
        r = ra_tracefs_watch(m->sampler->tracer, m->event, on_tracer_full, m);
        if (r < 0)
                log_warning_errno(r, "Cannot watch how full the trace buffers are, reading them once an "
                                     "interval only: %m");
        ra_sampler_disks_changed(m);
        m->on_learning(m, NULL);
}

int ra_sampler_start(Manager *m) {
        uint64_t now;
        int r;

        m->sampler = calloc(1, sizeof(*m->sampler));
        if (!m->sampler)
                return log_oom();
        /* The disks added before it started are traced too. */
        m->sampler->tracer_dirty = true;
        ra_sampler_open_tracer(m);

        /*
         * The first sample, which only sets each disk's baseline, soon: a job
         * that starts with the daemon is then judged on its first full interval
         * rather than its second.
         */
        r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (r >= 0) {
                m->sampler->next_sample = now + PEEK_USEC;
                r = sd_event_add_time(m->event, &m->sampler->timer, CLOCK_MONOTONIC, m->sampler->next_sample,
                                      PEEK_USEC / 20, on_tick, m);
        }
        if (r < 0)
                return log_error_errno(r, "Cannot start the statistics sampler: %m");
        return 0;
}

void ra_sampler_stop(Manager *m) {
        if (!m->sampler)
                return;
        sd_event_source_disable_unref(m->sampler->timer);
        sd_event_source_disable_unref(m->sampler->filters_due);
        ra_tracefs_close(m->sampler->tracer);
        ra_sbmap_clear(&m->sampler->sbmap);
        m->sampler = mfree(m->sampler);
}

struct RaTracefs *ra_sampler_tracer(const Manager *m) {
        return m->sampler ? m->sampler->tracer : NULL;
}

static int on_filters_due(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        if (m->sampler->tracer)
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

        if (!m->sampler)
                return;
        m->sampler->tracer_dirty = true;
        if (!m->sampler->tracer)
                return;
        if (m->sampler->filters_due)
                r = sd_event_source_set_enabled(m->sampler->filters_due, SD_EVENT_ONESHOT);
        else
                r = sd_event_add_defer(m->event, &m->sampler->filters_due, on_filters_due, m);
        if (r < 0)
                log_debug_errno(r, "Cannot set the tracer's filters now, at the next sample then: %m");
}
