/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ra-device.h"
#include "ra-policy.h"

/*
 * A calibration: what one device costs to read, measured once per identity
 * before its first job, and the window that follows from it. Pure: the
 * daemon does the reads (daemon/ra-calib-sched.c) and hands the timings here.
 *
 * A read of S bytes costs a command plus the transfer, t = c + S / B. One
 * stream reading ahead W at a time gets W / (c + W / B), a share of B that
 * grows with W; a device behind a heavy controller (c large beside what B
 * moves in that time) needs a large window for its bandwidth, a fast one
 * does not. A rotational disk reads one stream as fast at any window (its
 * cache reads ahead), but pays a jump (seek and turn) for every read
 * elsewhere, which a window read for nothing adds to.
 */

/* What the reads may cost at most: bytes, and the device's time. */
#define RA_CALIB_BYTES_MAX (64ULL * 1024 * 1024)
#define RA_CALIB_NSEC_MAX 1000000000ULL

/* Five passes of at most five sizes, and eight jumps. */
#define RA_CALIB_SAMPLES_MAX 40
#define RA_CALIB_POINTS_MAX 8

/*
 * One direct read: its size, how long it took, and whether it jumped away
 * from the last. Or, where reads is above 1, a stream of that many reads
 * of kb, one after the other, and how long all of them took: a disk's own
 * cache reads ahead of any read it was just asked for, at the media's
 * rate, so only a stream's time tells that rate (see ra-calib-process.c).
 */
typedef struct RaCalibSample {
        uint32_t kb;
        uint32_t reads; /* 0 or 1: one read */
        uint64_t nsec;
        bool jump;
} RaCalibSample;

/* The measured curve: the throughput of one direct read of kb (the fastest alone, or the median stream). */
typedef struct RaCalibPoint {
        uint32_t kb;
        uint32_t kb_s;
} RaCalibPoint;

/* Where a device's cost model came from. */
typedef enum RaCalibSource {
        RA_CALIB_NONE,       /* no model yet */
        RA_CALIB_CALIBRATED, /* a calibration's own reads (ra_calib_fit) */
        RA_CALIB_TRACED,     /* the device's traced requests (ra_calib_trace_fit) */
} RaCalibSource;

typedef struct RaCalib {
        uint64_t when; /* seconds since the epoch; 0: no model */
        RaCalibSource source;
        uint32_t command_us;     /* the fitted cost of one command */
        uint32_t bandwidth_kb_s; /* the fitted transfer rate, KiB/s; 0: not measured */
        uint32_t jump_us;        /* a rotational disk's cost of a jump; 0: not measured */
        size_t n_points;
        RaCalibPoint points[RA_CALIB_POINTS_MAX];
} RaCalib;

/*
 * The sizes of the sequential reads, smallest first: 4 KiB to max_kb in
 * steps of 4x (4, 16, 64, 256, 1024), never more than a command carries
 * (max_kb, the queue's max_sectors_kb), nor above 1 MiB. Returns how many
 * were put in sizes (at most RA_CALIB_POINTS_MAX).
 */
size_t ra_calib_sizes(uint32_t max_kb, uint32_t sizes[static RA_CALIB_POINTS_MAX]);

/*
 * Where a calibration's n reads go, in the order they are made: the device
 * cut into n slots (as many as fit span bytes each, when fewer), each read
 * shift bytes into its own slot (shift taken modulo the room the slot
 * leaves, aligned to align), the slots taken a stride apart. No read goes
 * where an earlier one did, nor next to the one before it: a disk's cache,
 * which keeps what it read and reads ahead of it while the calibration
 * pauses, cannot answer any of them (a modelled 7200 rpm disk read the same
 * region five times "calibrated" at 565 MiB/s against its media's 150-180
 * MB/s). A calibration asked for again passes another shift, so that it
 * does not read where the last did, which the disk's cache may still hold.
 * Returns how many were placed (at most n).
 */
size_t ra_calib_places(uint64_t size_bytes, size_t n, uint64_t span, uint64_t align, uint64_t shift,
                       uint64_t *ret);

/*
 * Whether a read of kb (a stream's: all of its KiB) may still be made, from
 * what the samples so far cost: its time predicted at the best rate a
 * sequential read had yet (no sample: the first, a smallest read, always
 * may), within the bounds above.
 */
bool ra_calib_affordable(const RaCalibSample *s, size_t n, uint32_t kb);

/*
 * Fits the samples: the curve, the command cost and bandwidth from the
 * sequential reads (least squares on the relative error of t = c + S / B
 * over each size's time: the fastest read timed alone, as interference
 * only adds time; the median of its streams, each stream's time shared
 * among its reads, as a stream's can be off either way; with one size
 * only, the bandwidth at that size and no command cost), a rotational
 * disk's jump from the reads that jumped. -EINVAL when no read was
 * sequential.
 */
int ra_calib_fit(const RaCalibSample *s, size_t n, uint64_t when, RaCalib *ret);

/*
 * The window a calibration says, as a decision with its reason (source
 * RA_SOURCE_CALIBRATED). Flash: the smallest power of two at which one
 * stream gets 95 % of the bandwidth (W >= 19 c B), at least 128 KiB and at
 * most 4 MiB; a device reading under 1 MiB/s, what it reads in a tenth of a
 * second. A disk whose head moves (a jump costs a millisecond more than two
 * commands) reads one stream as fast at any window, but streams that take
 * turns seek at every switch: it keeps its prior from size unless a jump
 * reads less than that, and then gets the window read in one jump, at least
 * 128 KiB. A "rotational" device whose jumps cost no more than a command is
 * decided as flash. Then, as a learned value, capped at a 128th of the
 * device's size, and held in bounds.
 */
void ra_calib_prior(const RaCalib *c, const RaDeviceAttrs *a, RaBounds bounds, RaDecision *ret);

/*
 * Whether a head moves: a rotational disk whose jump costs a millisecond
 * more than two commands. A device that only says it is rotational (a USB
 * bridge, a virtual disk over a host's page cache) jumps for the price of a
 * command.
 */
bool ra_calib_seeks(const RaCalib *c, bool rotational);

/*
 * The device's time, in microseconds, for one command reading kb: the
 * command, the transfer, and with jump a rotational disk's jump (seek and
 * turn) to get there. A read split in several commands costs the sum of
 * theirs. The learning policy weighs its choices with it (ra-adapt.h). A
 * calibration without a bandwidth (bandwidth_kb_s 0) counts no transfer.
 */
double ra_calib_read_usec(const RaCalib *c, uint32_t kb, bool jump);

/*
 * The window, in KiB, from which one stream reads at 95 % of the bandwidth:
 * it gets W / (c + W / B), so from W = 19 c B its commands cost at most 5 %
 * of its time. The calibration's window (ra_calib_prior()) and growth on
 * the model (ra-adapt-cost.h) both go by it.
 */
double ra_calib_stream_kb(const RaCalib *c);

/*
 * The cost model assumed for a device nothing measured (never calibrated,
 * nor learned from its own traced reads yet), from what it says it is. The
 * figures are the slow end of the devices of each kind met as system disks,
 * so that the time a window wastes is not understated where it matters most:
 *
 *  - rotational: bench/devmodel's hdd-7200 (a 1 TB 7200 rpm disk, from its
 *    data sheets): 50 us a command, the inner zone's 105 MB/s (the outer
 *    reads 210; a 5400 rpm laptop disk about 100), and a jump of an average
 *    seek plus half a turn, 8.5 + 4.2 ms;
 *  - otherwise a SATA SSD: 100 us a command (about 10,000 reads of 4 KiB a
 *    second at queue depth one) and 500 MB/s (SATA 6 Gb/s carries 600).
 *    NVMe reads faster and costs less a command, so there the time is
 *    overstated; a USB stick or an SD card reads slower, but is met
 *    mostly as a boot's or an installer's disk, whose scattered reads the
 *    policy tells apart by how they fall in files, not by time.
 *
 * when stays 0: nothing was measured.
 */
void ra_calib_assumed(bool rotational, RaCalib *ret);

/*
 * "250 us a command, 257.4 MiB/s; 4 KiB 14.0 MiB/s, ..., 1024 KiB 219.3
 * MiB/s; a jump 12.7 ms" ("14 KiB/s; 4 KiB 14 KiB/s" for one size), at most
 * size bytes.
 */
void ra_calib_describe(const RaCalib *c, char *buf, size_t size);

/*
 * The state file's form of a calibration, one word with no blanks:
 * "WHEN:COMMAND_US:KB_S:JUMP_US:KB/KB_S,KB/KB_S,...". Parse returns
 * -EINVAL on anything format would not have written.
 */
#define RA_CALIB_TEXT_MAX (4 * 21 + RA_CALIB_POINTS_MAX * 22)
int ra_calib_format(const RaCalib *c, char *buf, size_t size);
int ra_calib_parse(const char *s, RaCalib *ret);

/* "calibrated", "traced"; "" for RA_CALIB_NONE. */
const char *ra_calib_source_to_string(RaCalibSource s);

/*
 * The same model from a busy device's own requests, where no calibration
 * ran: block_rq_issue and block_rq_complete of each read give its size and
 * how long the device took. Requests queue behind each other (in the
 * scheduler, in the device's own queue), which only adds time, so what the
 * device costs is the fastest completion of each size class (the
 * calibration's: 4, 16, 64, 256, 1024, 4096 KiB, each class the sizes up to
 * the next), fitted as the calibration's reads are (ra_calib_fit()). A
 * class counts once RA_CALIB_TRACE_MIN of its requests completed: one
 * alone is as likely to have waited as not. No jump is measured.
 *
 * A device that serves one command at a time (a USB stick or bridge
 * without queueing, a controller that takes each command in turn) and is
 * never idle when a reader asks has no such fastest request: each waits
 * behind the others, the more the larger (four readers on the bench's
 * ssd-ctrl, 250 us a command, traced "0 us a command; 16 KiB 37 MiB/s,
 * 64 KiB 22 MiB/s"). Each request is therefore also timed from when the
 * device was free (its issue, or the completion before it), which is
 * exact for such a device, and these times are fitted as well. On a
 * device that serves several commands at once they mean little:
 * completions follow each other closer than any request takes. That fit is
 * the model (serial) where it can tell: two size classes or more count (of
 * one size alone, readers evenly spaced on a device that overlaps them
 * complete as regularly as one at a time), applied to every request so
 * timed it accounts for RA_CALIB_TRACE_SERIAL_SHARE or more of their time
 * together, which is the device's busy time (a device serving one at a
 * time spends it on nothing else; one that overlaps commands completes
 * several in it, and the fastest gaps between them account for a fraction:
 * 15 % for tests/test-calib.c's device serving eight at once, 100 % for
 * one at a time), and it gives the requests that had the device to
 * themselves at least that share of what they took (those took what they
 * cost on either kind). Up to RA_CALIB_TRACE_INFLIGHT requests are kept
 * in flight: beyond them the oldest is given up, which on a device serving
 * in order is the next to complete.
 */
#define RA_CALIB_TRACE_CLASSES 6
#define RA_CALIB_TRACE_MIN 4
#define RA_CALIB_TRACE_INFLIGHT 32
#define RA_CALIB_TRACE_SERIAL_SHARE 0.5
/*
 * Of the requests so timed, each class's fastest tell the kind: a device
 * overlapping commands completes them closer together than any takes, so
 * the fastest gaps account for a fraction of its busy time. The model is
 * taken from the fastest of the slowest three quarters of each class's
 * latest RA_CALIB_TRACE_RECENT instead, where that fit accounts for the
 * share above too: a completion the tracer sees late (handled late, or
 * coalesced with the next) leaves the request after it seeming served in
 * what is left of its time, and one such gap made a class's fastest on the
 * bench's ssd-ctrl, whose traced model was "0 us a command" (one in 97
 * late in tests/test-calib.c: 111 us and 361 MB/s for 250 and 270). The
 * quartile cannot tell the kind: on a device overlapping commands evenly,
 * the quartile of the gaps is near their mean and its fit explains most of
 * the busy time (docs/decisions.md).
 */
#define RA_CALIB_TRACE_RECENT 32

/*
 * Where the fastest do not tell one at a time, the fastest from issue are
 * the model, unless their fit finds no command cost: larger requests that
 * took longer than their size says waited behind others, and what the fit
 * measured is the queue. Then the fit of most of each class's latest,
 * timed from when the device was free, is the model where it accounts for
 * the share above and finds a command cost. The bench's ssd-ctrl read by
 * four readers from its first second: one completion in ten or twenty is
 * seen late (docs/decisions.md), the fastest timed from when the device was
 * free explained 0-29 % of its busy time, and the fastest from issue said
 * "0 us a command, 22 MiB/s" (250 us and 270 MB/s): its window stayed at
 * 128 KiB for 2.6-2.9 s of a job that reads best at 1-2 MiB, past the
 * start of the next job. On a device overlapping commands the latest are
 * its throughput, each command's cost shared among those it serves at
 * once: too cheap a command and too fast a MiB by about the same factor,
 * so whether a larger window pays is judged alike, but the device's busy
 * time (how much of it the reads take, what random faults waste) is
 * understated by that factor.
 */

/*
 * A disk whose head moves (streams set) is traced otherwise: its own cache
 * reads ahead of every request at the media's rate, so a request that
 * follows the last one is often answered from that cache, at the bus's
 * speed (the modelled 7200 rpm disk traced at 500-666 MiB/s, its media
 * reading 100-200). As the calibration does (ra-calib-process.c), such
 * requests are timed as a stream: from the completion of the one that
 * brought the head there to the completion of the last, once a stream has
 * read RA_CALIB_TRACE_STREAM_KB, and only a stream's time counts as a
 * sequential sample. The model is the quartile of each class's latest
 * streams (RA_CALIB_TRACE_RECENT, as above), not their fastest: a
 * completion seen late (the loop's worker, or the tracer, behind on a
 * busy machine) leaves the stream after it seeming to read in what is left
 * of its time, and one such sample was the model of the bench's hdd-7200
 * after a 1 GiB `dd`: "1024 KiB 1504.4 MiB/s" (its media 105-210 MB/s, its
 * bus 600), by which a random reader's 2 MiB windows cost it nothing and
 * were never cut (tests/media-reuse.sh). A request that jumped is timed from when the head was
 * free (its issue, or the completion before it: one command at a time),
 * and the last RA_CALIB_TRACE_JUMPS small ones (up to 64 KiB) give the
 * jump, as the calibration's jumps do.
 */
#define RA_CALIB_TRACE_STREAM_KB 1024
#define RA_CALIB_TRACE_JUMPS 15

/*
 * On such a disk, an interval's requests that jumped, of every size, each
 * timed from when the head was free: what streams that take turns pay for
 * each turn, a jump and the request's own command and transfer
 * (ra-adapt-cost.h tells them apart).
 */
typedef struct RaCalibTurns {
        uint64_t n;
        uint64_t nsec;
        uint64_t kb;
} RaCalibTurns;

/* Requests, their KiB and their time together. */
typedef struct RaCalibTotal {
        uint64_t n, kb, nsec;
} RaCalibTotal;

typedef struct RaCalibTrace {
        struct {
                uint64_t sector;
                uint64_t issued_ns; /* 0: a free slot */
                uint32_t kb;
                bool alone; /* issued with nothing else in flight */
        } inflight[RA_CALIB_TRACE_INFLIGHT];
        RaCalibSample fastest[RA_CALIB_TRACE_CLASSES]; /* nsec 0: none yet */
        uint64_t count[RA_CALIB_TRACE_CLASSES];
        bool changed; /* since the last fit: a class's fastest moved or it began to count, the requests
                         timed from when the device was free doubled, or a class's latest are all new */

        /* Each request timed from when the device was free (above), by class... */
        struct {
                RaCalibSample fastest;
                struct {
                        uint32_t kb, usec;
                } recent[RA_CALIB_TRACE_RECENT]; /* a ring */
                uint64_t count;
        } served[RA_CALIB_TRACE_CLASSES];
        RaCalibTotal served_all; /* ...and all of them together */
        RaCalibTotal alone;      /* the requests issued with nothing in flight, from their issue */
        double served_share; /* the last fit's: the share of served_all the fastest's fit accounts for (the
                                latest's, where queued) */
        bool serial;         /* the last fit's: served time is the model (the fastest's or the latest's) */
        bool queued;         /* the last fit's: not serial, but the fastest from issue queued (see above) */

        bool streams; /* a rotational disk: see above */
        struct {
                uint64_t next_sector; /* where a request continuing it starts */
                uint64_t start_ns;    /* 0: no stream */
                uint32_t kb, reads;
        } stream;
        uint64_t last_done_ns;                     /* the latest completion, either way of tracing */
        RaCalibSample jumps[RA_CALIB_TRACE_JUMPS]; /* a ring, n_jumps in all */
        uint64_t n_jumps;
        RaCalibTurns turns; /* this interval's, see above */
} RaCalibTrace;

/* A read request of kb from sector issued at time_ns (the trace clock). */
void ra_calib_trace_issue(RaCalibTrace *t, uint64_t sector, uint32_t kb, uint64_t time_ns);

/* The request that started at sector completed at time_ns; one never seen issued is ignored. */
void ra_calib_trace_complete(RaCalibTrace *t, uint64_t sector, uint64_t time_ns);

/* Hands out the interval's turns (above) and starts the next. */
void ra_calib_trace_take_turns(RaCalibTrace *t, RaCalibTurns *ret);

/*
 * The model from the classes that count (source RA_CALIB_TRACED, when
 * seconds since the epoch), and clears changed. -ENODATA while no class
 * counts.
 */
int ra_calib_trace_fit(RaCalibTrace *t, uint64_t when, RaCalib *ret);
