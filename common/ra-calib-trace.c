/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ra-calib.h"
#include "ra-macro.h"

const char *ra_calib_source_to_string(RaCalibSource s) {
        switch (s) {
        case RA_CALIB_CALIBRATED:
                return "calibrated";
        case RA_CALIB_TRACED:
                return "traced";
        default:
                return "";
        }
}

/* 4 KiB and below: 0; then one class per factor of four, the last taking everything larger. */
static size_t size_class(uint32_t kb) {
        size_t k = 0;

        for (uint32_t top = 16; kb >= top && k + 1 < RA_CALIB_TRACE_CLASSES; top *= 4)
                k++;
        return k;
}

void ra_calib_trace_issue(RaCalibTrace *t, uint64_t sector, uint32_t kb, uint64_t time_ns) {
        size_t slot = 0;

        if (kb == 0 || time_ns == 0)
                return;
        /* A free slot, or else the oldest: its completion was lost (or is so slow it tells nothing). */
        for (size_t i = 0; i < RA_CALIB_TRACE_INFLIGHT; i++) {
                if (t->inflight[i].issued_ns == 0 || t->inflight[i].sector == sector) {
                        slot = i;
                        break;
                }
                if (t->inflight[i].issued_ns < t->inflight[slot].issued_ns)
                        slot = i;
        }
        /* Alone: nothing else in flight, nor still being served when it came. */
        t->inflight[slot].alone = time_ns >= t->last_done_ns;
        for (size_t i = 0; i < RA_CALIB_TRACE_INFLIGHT; i++)
                if (i != slot && t->inflight[i].issued_ns != 0)
                        t->inflight[slot].alone = false;
        t->inflight[slot].sector = sector;
        t->inflight[slot].issued_ns = time_ns;
        t->inflight[slot].kb = kb;
}

/* A sample into its class's fastest f (per read, for a stream) and count: a refit once the class counts. */
static void add_to(RaCalibTrace *t, RaCalibSample *f, uint64_t *count, RaCalibSample sample) {
        uint32_t n = sample.reads > 1 ? sample.reads : 1, fn = f->reads > 1 ? f->reads : 1;

        (*count)++;
        if (f->nsec == 0 || sample.nsec / n < f->nsec / fn) {
                *f = sample;
                t->changed = t->changed || *count >= RA_CALIB_TRACE_MIN;
        } else if (*count == RA_CALIB_TRACE_MIN)
                t->changed = true;
}

static void add_sample(RaCalibTrace *t, RaCalibSample sample) {
        size_t k = size_class(sample.kb);

        add_to(t, &t->fastest[k], &t->count[k], sample);
}

static void add_total(RaCalibTotal *total, uint32_t kb, uint64_t nsec) {
        total->n++;
        total->kb += kb;
        total->nsec += nsec;
}

/* One of a class's latest (RA_CALIB_TRACE_RECENT), usec a read: at least one, as no read is free. */
static void add_recent(RaCalibTrace *t, size_t k, uint32_t kb, uint64_t nsec) {
        uint64_t n = t->served[k].count;

        t->served[k].recent[n % RA_CALIB_TRACE_RECENT].kb = kb;
        t->served[k].recent[n % RA_CALIB_TRACE_RECENT].usec =
                nsec < 1000 ? 1 : (uint32_t) ((nsec + 500) / 1000);
}

/* A request of kb issued at issued_ns (alone or not) done at time_ns, timed both ways (ra-calib.h). */
static void add_request(RaCalibTrace *t, uint32_t kb, uint64_t issued_ns, bool alone, uint64_t time_ns) {
        uint64_t free_ns = issued_ns > t->last_done_ns ? issued_ns : t->last_done_ns;

        add_sample(t, (RaCalibSample){ .kb = kb, .nsec = time_ns - issued_ns });
        if (alone)
                add_total(&t->alone, kb, time_ns - issued_ns);
        if (time_ns > free_ns) {
                size_t k = size_class(kb);
                uint64_t n = t->served[k].count;

                add_total(&t->served_all, kb, time_ns - free_ns);
                add_recent(t, k, kb, time_ns - free_ns);
                add_to(t, &t->served[k].fastest, &t->served[k].count,
                       (RaCalibSample){ .kb = kb, .nsec = time_ns - free_ns });
                /*
                 * Which fit is the model is judged again as the evidence doubles, and as a class's
                 * latest are all new, once there is a fit.
                 */
                if ((t->served_all.n >= 8 && (t->served_all.n & (t->served_all.n - 1)) == 0) ||
                    (n + 1) % RA_CALIB_TRACE_RECENT == 0)
                        for (size_t c = 0; c < RA_CALIB_TRACE_CLASSES; c++)
                                t->changed = t->changed || t->count[c] >= RA_CALIB_TRACE_MIN;
        }
        if (time_ns > t->last_done_ns)
                t->last_done_ns = time_ns;
}

/* A disk whose head moves (ra-calib.h): streams and jumps, never one request answered from its cache. */
static void add_streamed(RaCalibTrace *t, uint64_t sector, uint32_t kb, uint64_t issued_ns,
                         uint64_t time_ns) {
        if (t->stream.start_ns != 0 && sector == t->stream.next_sector) {
                t->stream.kb += kb;
                t->stream.reads++;
                if (t->stream.kb >= RA_CALIB_TRACE_STREAM_KB && time_ns > t->stream.start_ns) {
                        RaCalibSample sample = { .kb = t->stream.kb / t->stream.reads,
                                                 .reads = t->stream.reads,
                                                 .nsec = time_ns - t->stream.start_ns };
                        size_t k = size_class(sample.kb);

                        add_sample(t, sample);
                        /* Its latest too, a read each: the model is the quartile's (ra-calib.h). */
                        add_recent(t, k, sample.kb, sample.nsec / sample.reads);
                        t->served[k].count++;
                        t->changed = t->changed || (t->served[k].count % RA_CALIB_TRACE_RECENT == 0 &&
                                                    t->count[k] >= RA_CALIB_TRACE_MIN);
                        t->stream.kb = t->stream.reads = 0;
                        t->stream.start_ns = time_ns;
                }
        } else {
                uint64_t free_ns = issued_ns > t->last_done_ns ? issued_ns : t->last_done_ns;

                if (time_ns > free_ns) {
                        t->turns.n++;
                        t->turns.nsec += time_ns - free_ns;
                        t->turns.kb += kb;
                        if (kb <= 64) {
                                t->jumps[t->n_jumps % RA_CALIB_TRACE_JUMPS] =
                                        (RaCalibSample){ .kb = kb, .nsec = time_ns - free_ns, .jump = true };
                                t->n_jumps++;
                                t->changed = t->changed || t->n_jumps >= RA_CALIB_TRACE_MIN;
                        }
                }
                t->stream.kb = t->stream.reads = 0;
                t->stream.start_ns = time_ns;
        }
        t->stream.next_sector = sector + (uint64_t) kb * 2;
        if (time_ns > t->last_done_ns)
                t->last_done_ns = time_ns;
}

void ra_calib_trace_complete(RaCalibTrace *t, uint64_t sector, uint64_t time_ns) {
        for (size_t i = 0; i < RA_CALIB_TRACE_INFLIGHT; i++) {
                uint64_t issued = t->inflight[i].issued_ns;
                uint32_t kb = t->inflight[i].kb;

                if (issued == 0 || t->inflight[i].sector != sector)
                        continue;
                t->inflight[i].issued_ns = 0;
                if (t->streams)
                        add_streamed(t, sector, kb, issued, time_ns);
                /* Clocks of two CPUs may disagree a little: a completion "before" its issue tells nothing.
                 */
                else if (time_ns > issued)
                        add_request(t, kb, issued, t->inflight[i].alone, time_ns);
                return;
        }
}

void ra_calib_trace_take_turns(RaCalibTrace *t, RaCalibTurns *ret) {
        *ret = t->turns;
        t->turns = (RaCalibTurns){};
}

/* The fit of a table's classes that count, with the jumps of a disk whose head moves; n 0: none counts. */
static int fit_classes(const RaCalibTrace *t, const RaCalibSample *per_class, const uint64_t *count,
                       uint64_t when, RaCalib *ret) {
        RaCalibSample s[RA_CALIB_TRACE_CLASSES + RA_CALIB_TRACE_JUMPS];
        size_t n = 0;

        for (size_t k = 0; k < RA_CALIB_TRACE_CLASSES; k++)
                if (count[k] >= RA_CALIB_TRACE_MIN)
                        s[n++] = per_class[k];
        if (n == 0)
                return -ENODATA;
        if (t->n_jumps >= RA_CALIB_TRACE_MIN)
                for (size_t i = 0; i < t->n_jumps && i < RA_CALIB_TRACE_JUMPS; i++)
                        s[n++] = t->jumps[i];
        return ra_calib_fit(s, n, when, ret);
}

/* The time a model gives a total's requests, in ns: from their mean size, as it is linear in the size. */
static double model_nsec(const RaCalib *c, const RaCalibTotal *total) {
        double n = (double) total->n;

        return n * ra_calib_read_usec(c, (uint32_t) ((double) total->kb / n + 0.5), false) * 1000;
}

static int nsec_cmp(const void *a, const void *b) {
        uint64_t x = ((const RaCalibSample *) a)->nsec, y = ((const RaCalibSample *) b)->nsec;

        return (x > y) - (x < y);
}

/* The fastest of the slowest three quarters of class k's latest (RA_CALIB_TRACE_RECENT), a read. */
static RaCalibSample quartile(const RaCalibTrace *t, size_t k) {
        RaCalibSample s[RA_CALIB_TRACE_RECENT];
        size_t n = t->served[k].count < RA_CALIB_TRACE_RECENT ? t->served[k].count : RA_CALIB_TRACE_RECENT;

        for (size_t i = 0; i < n; i++)
                s[i] = (RaCalibSample){ .kb = t->served[k].recent[i].kb,
                                        .nsec = (uint64_t) t->served[k].recent[i].usec * 1000 };
        qsort(s, n, sizeof(s[0]), nsec_cmp);
        return s[n / 4];
}

/*
 * The fit of each class's requests timed from when the device was free: the fastest (quarter false),
 * or the quartile of the latest; returns the share of all of them together that it accounts for, or
 * -1 where fewer than two classes count.
 */
static double fit_served(const RaCalibTrace *t, bool quarter, uint64_t when, RaCalib *ret) {
        RaCalibSample per_class[RA_CALIB_TRACE_CLASSES] = {};
        uint64_t count[RA_CALIB_TRACE_CLASSES];
        size_t classes = 0;

        for (size_t k = 0; k < RA_CALIB_TRACE_CLASSES; k++) {
                count[k] = t->served[k].count;
                if (count[k] < RA_CALIB_TRACE_MIN)
                        continue;
                classes++;
                per_class[k] = quarter ? quartile(t, k) : t->served[k].fastest;
        }
        /* One size alone: gaps as regular as one command at a time's come from readers evenly spaced too. */
        if (classes < 2 || fit_classes(t, per_class, count, when, ret) < 0)
                return -1;
        return model_nsec(ret, &t->served_all) / (double) t->served_all.nsec;
}

/* Whether the requests timed from when the device was free fit one that serves a command at a time. */
static bool served_fit(RaCalibTrace *t, uint64_t when, RaCalib *ret) {
        double share, alone;
        RaCalib most;

        t->served_share = 0;
        t->serial = false;
        if (t->streams)
                return false;
        share = fit_served(t, false, when, ret);
        if (share < 0)
                return false;
        t->served_share = share;
        alone = t->alone.n > 0 ? model_nsec(ret, &t->alone) / (double) t->alone.nsec : 1;
        t->serial = share >= RA_CALIB_TRACE_SERIAL_SHARE && alone >= RA_CALIB_TRACE_SERIAL_SHARE;
        if (!t->serial)
                return false;
        /* The kind told by the fastest; the model by most of each class. */
        if (fit_served(t, true, when, &most) >= RA_CALIB_TRACE_SERIAL_SHARE)
                *ret = most;
        return true;
}

/* A disk whose head moves: the quartile of each class's latest streams, and its jumps (ra-calib.h). */
static int fit_streams(const RaCalibTrace *t, uint64_t when, RaCalib *ret) {
        RaCalibSample per_class[RA_CALIB_TRACE_CLASSES] = {};

        for (size_t k = 0; k < RA_CALIB_TRACE_CLASSES; k++)
                if (t->count[k] >= RA_CALIB_TRACE_MIN)
                        per_class[k] = quartile(t, k);
        return fit_classes(t, per_class, t->count, when, ret);
}

int ra_calib_trace_fit(RaCalibTrace *t, uint64_t when, RaCalib *ret) {
        int r;

        t->changed = false;
        t->queued = false;
        if (t->streams) {
                r = fit_streams(t, when, ret);
                if (r < 0)
                        return r;
        } else if (!served_fit(t, when, ret)) {
                RaCalib most;
                double share;

                r = fit_classes(t, t->fastest, t->count, when, ret);
                if (r < 0)
                        return r;
                /* No command cost: the time of the queue, not the device's (ra-calib.h). */
                if (ret->command_us == 0 && ret->n_points >= 2 && !t->streams &&
                    (share = fit_served(t, true, when, &most)) >= RA_CALIB_TRACE_SERIAL_SHARE &&
                    most.command_us > 0) {
                        *ret = most;
                        t->queued = true;
                        t->served_share = share;
                }
        }
        ret->source = RA_CALIB_TRACED;
        return 0;
}
