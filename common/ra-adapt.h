/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-calib.h"
#include "ra-diskstat.h"
#include "ra-pcache.h"
#include "ra-policy.h"
#include "ra-trace.h"

/*
 * The adaptive policy: pure, like the prior. It is fed one observation per
 * sampling interval and moves a device's learned window toward what reads
 * faster:
 *
 *  - random access dominates (requests do not follow each other, and each
 *    read-around is a whole window wasted on mmap faults): a small window;
 *  - sequential streams fill every request the window allows: where the
 *    device's cost model is sure (calibrated, or traced from its requests at
 *    two sizes or more), the window it says saves enough commands is taken
 *    at once, on the first busy interval that shows it (ra-adapt-cost.h);
 *    where it cannot tell, a window four times larger is tried. Of the
 *    windows measured, the smallest that reads within 5 % of the fastest
 *    is kept, so a larger one stays only when it
 *    reads more than about 5 % faster, and where bigger requests stop paying
 *    the smaller window comes back. Trying goes on past a step that neither
 *    paid nor hurt (a plateau), and ends at one that reads measurably slower
 *    or at the upper bound. Returning to a larger window measured before
 *    needs it to read 10 % faster than the one in force. A trial refuted
 *    is judged again on what the window it went back to reads next, in
 *    the same stretch (a machine that slowed during it refutes nothing).
 *
 * Above all of these, the memory a window holds (ra-adapt-memory.h): no
 * window grows past what its streams' tasks can hold, and one that they
 * cannot is cut at once.
 *
 * A file takes the device's window when it is opened, so a new window shows
 * only in streams opened afterwards. Throughput is therefore credited to a
 * window only for intervals read (nearly) all by streams that started under
 * it (the tracer knows each stream's start), and a window is judged by the
 * best of RA_ADAPT_SAMPLES or more such intervals: one that a stream began or
 * ended in reads less than the device can. Nothing moves until the window in
 * force has been judged. Without the block tracepoints the counters cannot
 * tell a sequential stream from random read-around (both make window-sized
 * requests), and the policy keeps the value it has.
 *
 * Where the page cache is traced (ra-pcache), its per-file evidence comes
 * first: many files each read in order are a sequential workload however
 * their reads interleave on the disk; the window shrinks only when reads
 * away from where their files were read fetch whole windows nobody asked
 * for (random mmap faults, random misses with read-around), and not while
 * files are read in order beside them; a window is credited with throughput
 * only from intervals read by files that run under it (each file's ra_pages
 * says which), and grows only while files fill the windows it allows.
 * A value is reversed (set by one class of workload, changed by another)
 * only on more intervals of evidence than set it, so a workload repeated
 * settles instead of swinging.
 *
 * A trial of a larger window is a bet made for the streams, and random
 * readers that open files during it run under it: a random mmap reader
 * opened under a scan's 2 MiB trial reads a few times slower. So while
 * random reads have wasted windows on the device within the last
 * RA_ADAPT_RECENT busy intervals (scans and lookups taking turns), no trial
 * goes past the kernel's default; a larger window already measured faster
 * is still taken.
 *
 * Page-cache evidence takes a window below the kernel's default only where
 * it pays in the device's time. Each read that fetched a window around it
 * costs the device a command and the transfer (its cost model, RaCalib:
 * the calibration's, or one learned from its own reads, or one assumed
 * from what it says it is, ra_calib_assumed()); read at the smallest
 * window it would cost the command and what it asked for. The difference,
 * summed over the interval's random reads, is the time the window wastes.
 * Below the default it goes when that is RA_ADAPT_WASTE_PERCENT or more of
 * the seconds of the random streak's busy intervals, the latest weighing
 * most (each twice the one before it): 50 mmap faults a second of 1 MiB on
 * a 7200 rpm disk waste a third to two thirds of its time and are cut on
 * the first busy interval (RA_ADAPT_CUT_WASTE_MS), ten scattered reads at boot waste
 * milliseconds and never are. Counting only intervals whose random reads
 * come RA_ADAPT_RANDOM_PER_FILE or more to each file read: programs
 * starting (a boot, a shell script) read a few scattered pages of each of
 * many files, and on a slow device that has nothing else to do they waste
 * as large a share of its time as random work does (see there): the disk
 * every program is loaded from must not lose its readahead to them. Those
 * intervals neither count nor end the streak. Down to the kernel's default
 * needs no more than the confirmation.
 *
 * A trial is judged only by reads of files that run under it. Files opened
 * before it began keep the window they took and say nothing of it, however
 * fast they read (readers of one block device share its inode: the page
 * cache tells them apart read by read, see ra-pcache.h). A trial proposed on
 * the page cache's evidence is judged only by it: in an interval with too few
 * page-cache reads (readers served from the cache) the block requests cannot
 * stand in, since a reader opened before the trial looks to them like a
 * stream begun under it after every jump. (One proposed on block requests,
 * where the page cache sees none of the device's reads, is judged by them.)
 * Until files opened under it have read RA_ADAPT_SAMPLES intervals (nearly)
 * alone, the trial stands, neither kept nor refuted, and the reason says so.
 * It stands without a time limit. Reverting it after a while would change
 * nothing for the files reading (they never saw it) and
 * would leave the next files opened, the only ones that can judge it, under
 * the old window again: a job that reads for an hour with files opened at
 * its start would have its trial proposed and withdrawn over and over and
 * never measured. What the trial costs meanwhile is what it was proposed
 * for: files opened while sequential reads fill every window get the larger
 * one; a random workload that opens files under it cuts it as it cuts any
 * window (on more evidence than set it).
 *
 * Hysteresis (all but the cost model's growth, and random cuts whose
 * windows cost RA_ADAPT_CUT_WASTE_MS, which need neither): a
 * workload class must hold for RA_ADAPT_CONFIRM busy intervals
 * (idle ones between them neither count nor break it: a job of one-second
 * runs with pauses confirms over three runs) and a change must be
 * RA_ADAPT_DWELL busy intervals old before the next. The first move from a
 * window nothing was learned for, by sequential reads, needs only the
 * RA_ADAPT_SAMPLES intervals that judge the trial it makes (ra-adapt.c).
 */

/*
 * The counts below are of busy intervals: busy seconds of the device at the
 * default interval_ms of 1000. CONFIRM and DWELL, three busy seconds, were
 * not sized by a measurement: the simulated devices of tests/test-adapt.c
 * check that with them nothing oscillates over 300 intervals and every
 * class settles within 80, and issue 29's "cut within five busy seconds"
 * fits them. SAMPLES: a window's throughput is the best of two seconds read
 * under it, as a second that a stream began or ended in reads less than the
 * device can. STRENGTH_MAX bounds a reversal at 13 busy seconds. RECENT, 30
 * busy seconds, came from the bench's phase workload on hdd-7200 (scans and
 * lookups taking turns within it, commit 416c7f1). None of these is yet
 * stated in the device's time. A peek within an interval (ra_adapt_peek())
 * counts towards none of them: they stay in whole intervals.
 */
#define RA_ADAPT_CONFIRM 3
#define RA_ADAPT_DWELL 3
#define RA_ADAPT_SAMPLES 2
#define RA_ADAPT_PERF_SLOTS 16
/* A reversal needs at most this many intervals more than RA_ADAPT_CONFIRM. */
#define RA_ADAPT_STRENGTH_MAX 10
/*
 * Random waste this many busy intervals ago or less holds trials at the
 * kernel's default; streams that filled their windows this recently hold
 * random cuts there (scans and lookups taking turns meet at the default:
 * each phase's files open under what the other left).
 */
#define RA_ADAPT_RECENT 30
/*
 * The share of the busy seconds that windows wasted on random reads must
 * cost before the window goes below the kernel's default: the cut makes
 * random reads on a device that has nothing else to do 1 / (1 - share)
 * times as fast, so a tenth is the 10 % a larger window must read faster by
 * to be kept. Measured (bench/devmodel's hdd-7200, issue 29) and modelled
 * (ra_calib_read_usec()), the workloads it must tell apart:
 *  - random mmap reads of one big file at the 1024 KiB rotational prior on
 *    a 7200 rpm disk: 51-53 faults a second against 182 at 4 KiB, so
 *    13.7 ms of each 19.2 ms fault is the window: 71 % (33 % modelled at
 *    160 MB/s and a 10 ms jump); on seed 004's SSD (250 us a command,
 *    270 MB/s, bench/devmodel's ssd-ctrl) at its calibrated 2048 KiB,
 *    8.3 ms a fault of which 8 ms is the window: 97 %;
 *  - python3 started from a cold cache, about 178 scattered reads of
 *    128 KiB in 17 files an interval: 5 % of a second on a SATA SSD (1 % at
 *    2 GB/s), and 7 % of a 7200 rpm disk it keeps busy; a Debian 12 boot's
 *    10 reads an interval: under 1 % anywhere;
 *  - random mmap reads at 128 KiB on a 7200 rpm disk: 7-12 % (a jump within
 *    the file of 10 or 5.5 ms), and the bench measured 128 KiB within about
 *    10 % of 4 KiB there (bench/results/2026-11-26-evidence-threshold.md).
 */
#define RA_ADAPT_WASTE_PERCENT 10
/*
 * A random streak's windows are cut without RA_ADAPT_CONFIRM's and
 * RA_ADAPT_DWELL's busy intervals once they have cost the device this much
 * of its time in all (RA_ADAPT_WASTE_PERCENT of it or more, in intervals
 * random_dense() counts): a quarter of a busy second. At the 10 % share a
 * cut takes 2.5 busy seconds, as the three intervals it needed before; where
 * the windows cost a quarter of the device's time or more, the first busy
 * second that shows it cuts, before a job's next run opens its files.
 * Measured through the cost models' accounts (ra_adapt_cost_random_waste_usec()):
 * bench/devmodel's hdd-7200 at its 512 KiB nowait prior, assumed rotational
 * (105 MB/s), 60-90 faults a second wasting 5 ms each, 300-450 ms of a
 * second; ssd-ctrl at 128 KiB, assumed SSD (500 MB/s), about 1,200 faults
 * wasting 0.25 ms each, 300 ms; the bench's runs of those jobs are 2 s, so
 * three intervals let the second run open under the old window (run 2 at
 * 0.67 and 0.33 of the best fixed value, bench/results/2026-11-27-user-after-29771bb.md).
 */
#define RA_ADAPT_CUT_WASTE_MS 250
/*
 * An interval counts towards RA_ADAPT_WASTE_PERCENT only with this many of
 * its random reads or more to each file read (its random reads over its
 * files). Device time alone cannot tell programs starting from random work
 * where the device is slow beside a command: on a USB stick (1 ms a
 * command, 30 MB/s, 120 KiB commands) a boot that keeps it busy reads each
 * 128 KiB window in 6.4 ms where 4 KiB take 1.1 ms, 82 % of its time "wasted"
 * by the per-read account, as much as random work; and the pages read
 * around a program's faults are what its next faults use, which that
 * account does not see. How the reads fall in files does tell them:
 * measured through this code on a copy of Debian's /usr (loop device,
 * read_ahead_kb 128, cold cache), scattered phases make 2-12 a file an
 * interval (python3 178 in 17-18 files, boots and program starts fewer);
 * random work makes 30-3,000 an interval in one or a few files (random mmap
 * reads of a big file, sqlite and pgbench lookups). 24 is twice the densest
 * scattered phase, and below the thinnest random one.
 */
#define RA_ADAPT_RANDOM_PER_FILE 24

typedef enum RaWorkload {
        RA_WORKLOAD_IDLE,
        RA_WORKLOAD_SEQUENTIAL,
        RA_WORKLOAD_RANDOM,
        RA_WORKLOAD_MIXED,
        _RA_WORKLOAD_MAX,
} RaWorkload;

const char *ra_workload_to_string(RaWorkload w);

/* One sampling interval of one device. */
typedef struct RaObservation {
        RaRates rates; /* from /sys/block/<dev>/stat */
        bool traced;   /* trace holds what the tracepoint saw */
        RaTraceSummary trace;
        uint32_t window_kb;  /* read_ahead_kb during the interval */
        RaEvidence evidence; /* RA_EVIDENCE_READAHEAD or _FILEMAP: pcache holds what the page cache saw */
        RaPcacheSummary pcache;
        RaCalibTurns turns; /* a disk whose head moves: its requests that jumped, timed */
} RaObservation;

/* What bounds the learned window of a device. */
typedef struct RaAdaptLimits {
        RaBounds bounds;
        uint32_t size_cap_kb;    /* see ra_policy_learned_cap_kb() */
        uint32_t max_sectors_kb; /* the largest request the device takes; 0: unknown */
        uint32_t default_kb;     /* the kernel's value for it (its original); 0: 128 */
        RaCalib calib;           /* its cost model; bandwidth_kb_s 0: none, ra_calib_assumed() stands */
        bool rotational;         /* what it says it is, for ra_calib_assumed() */
        uint64_t memory_kb;      /* what the interval's sequential readers may hold (ra-adapt-memory.h); 0:
                                    unknown */
} RaAdaptLimits;

/* Sequential throughput seen with one window: the best interval of samples. */
typedef struct RaPerf {
        uint32_t kb;
        double bytes_per_sec;
        unsigned samples;
} RaPerf;

typedef struct RaModel {
        uint32_t learned_kb; /* 0: nothing learned; the prior stands */
        char reason[RA_REASON_MAX];
        RaWorkload workload; /* the latest interval's class, for reports */

        RaWorkload pending; /* the class being confirmed */
        unsigned pending_count;
        unsigned since_change;     /* busy intervals since learned_kb changed */
        RaWorkload set_by;         /* the class that set learned_kb... */
        unsigned set_strength;     /* ...confirmed over this many intervals */
        RaEvidence evidence;       /* what the latest busy interval was judged from */
        unsigned busy;             /* busy intervals seen */
        unsigned waste_at;         /* busy when random reads last wasted windows; 0: never */
        unsigned scan_at;          /* busy when sequential streams last filled their windows; 0: never */
        uint64_t random_reads;     /* page-cache evidence of the random class being confirmed: reads */
        unsigned random_intervals; /* that wasted windows over this many intervals dense enough to count, */
        double waste_usec;         /* the device's time the windows cost, and the busy time of those */
        double busy_usec;          /* intervals, in us, each interval weighing half the next */
        double wasted_usec;        /* the device's time the windows cost over all of them */

        uint32_t trial_kb;      /* a larger window on trial, not judged yet; 0: none */
        uint32_t trial_from_kb; /* the window it is judged against */
        unsigned trial_waited;  /* busy sequential intervals it stood with no file read under it */
        bool trial_paged;       /* proposed on page-cache evidence: only that judges it */
        bool split;             /* a peek moved learned_kb within the interval under way */

        uint32_t memory_kb; /* the largest window the streams' memory allows (ra-adapt-memory.h); 0: none */
        unsigned memory_at; /* busy when that last showed */

        RaPerf perf[RA_ADAPT_PERF_SLOTS];
        size_t n_perf;
        uint32_t recheck_kb; /* a trial refuted, judged again on the window it went back to... */
        RaPerf recheck;      /* ...read under it from then on (ra-adapt.c, recheck_target()) */
} RaModel;

RaWorkload ra_adapt_classify(const RaObservation *o, uint32_t max_sectors_kb);

/*
 * Feeds one interval. Returns true when learned_kb changed, with reason set
 * to one sentence on why. The reason may change without learned_kb: a trial
 * that stands undecided, or one that was judged and stays, says so there.
 */
bool ra_adapt_update(RaModel *m, const RaObservation *o, const RaAdaptLimits *limits);

/*
 * A look within an interval, over its reads so far (o, of o->rates.seconds
 * under a second), while the device reads in order: the growth its cost
 * model is sure of is taken at the pace the reads arrive, not a second later
 * (a job's next files open under it). Nothing else is decided, and nothing
 * is counted: the interval is fed whole to ra_adapt_update() when it ends.
 * Returns true when learned_kb grew, with the reason.
 */
bool ra_adapt_peek(RaModel *m, const RaObservation *o, const RaAdaptLimits *limits);

/* Starts from a value learned before (a re-plug, a restart). */
void ra_adapt_restore(RaModel *m, uint32_t learned_kb);
