/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-adapt.h"

/*
 * A window costs memory as well as the device's time. A stream reading
 * ahead W at a time holds up to two windows it has not read yet (the one
 * it reads in and the next, read when it reaches the mark), so S streams
 * hold 2 x S x W. Where that does not fit in what their tasks may hold (a
 * container's memory limit, a service's MemoryMax=, a small machine),
 * pages read ahead are evicted before they are read, and read again: the
 * device reads the same data several times over. Measured (sixteen `cat`
 * of sixteen 48 MiB files on ext4 over bench/devmodel's hdd-7200, a 64 MiB
 * memory cgroup): 128 KiB 49.6 MB/s, 512 KiB 52.9 (2 x 16 x 512 KiB is 16
 * MiB, a quarter of the limit; the device read 768 MiB for the 768 of
 * data), 2048 KiB 23.2 (64 MiB, all of it; 1905 MiB read), 8192 KiB 8.2
 * (5297 MiB read).
 *
 * So two rules, both above every other (the cost model's growth, trials):
 *
 *  - the budget: the windows of the interval's streams never hold more
 *    than RA_ADAPT_MEMORY_PERCENT of what the tightest of their tasks may
 *    hold (RaAdaptLimits.memory_kb: the daemon reads each task's memory
 *    cgroup limit; where readers live in different limits, the tightest
 *    bounds them all, since a window too large for one container thrashes
 *    it, while one too small for the others costs them at most the
 *    commands a larger one saves);
 *  - the evidence: where the interval's streams under the window in force
 *    read again what they had read ahead (RaPcacheSummary.reread_bytes)
 *    for RA_ADAPT_THRASH_PERCENT or more of what they read, the window
 *    thrashes, whatever the budget said (a task whose limit is not known:
 *    hidden from the daemon, or memory taken by other programs), and is
 *    halved.
 *
 * Either bound holds while the pressure lasts: for RA_ADAPT_RECENT busy
 * intervals after the last one that showed it, so that a job's next run
 * (whose files open under what its last seconds left, with fewer streams
 * at its tail) is not read under a window grown back meanwhile.
 */

/*
 * A quarter: where the measurement above read no page twice (512 KiB);
 * twice that budget is 1024 KiB, where sixteen streams under 64 MiB read
 * 10 % more than their data (846 MiB) with radaemon's first run at its
 * 1024 KiB prior. The rest of the limit is the tasks' own memory, the
 * pages they have read and not yet let go, and what the kernel reclaims
 * late.
 */
#define RA_ADAPT_MEMORY_PERCENT 25
/*
 * Reads again that much of what the streams read: the device spends that
 * share of its time reading the same data again, the share within which
 * two windows read alike (RA_ADAPT_GROW_PERCENT).
 */
#define RA_ADAPT_THRASH_PERCENT 5

/* The largest window the readers' memory allows the interval's streams; 0: no bound known. */
uint32_t ra_adapt_memory_budget_kb(const RaObservation *o, const RaAdaptLimits *l);

/* The interval's streams under the window in force read again what they had read ahead. */
bool ra_adapt_memory_thrashes(const RaObservation *o);

/*
 * Takes the interval's evidence into m's bound (m->memory_kb) and returns
 * the bound in force, 0 for none; when the window in force exceeds it,
 * why, in reason.
 */
uint32_t ra_adapt_memory_observe(RaModel *m, const RaObservation *o, const RaAdaptLimits *l,
                                 char reason[static RA_REASON_MAX]);

/* The bound in force without new evidence (a peek); 0: none. */
uint32_t ra_adapt_memory_held_kb(const RaModel *m);
