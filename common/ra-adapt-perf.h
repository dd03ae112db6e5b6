/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-adapt.h"

/*
 * The adaptive policy's table of windows measured (RaModel.perf): the best
 * sequential throughput seen under each, for ra-adapt.c alone.
 */

/* Of the windows measured within this share of the fastest, the smallest is the best. */
#define RA_ADAPT_GAIN_TIE 0.95

RaPerf *ra_adapt_perf_find(RaModel *m, uint32_t kb);
/* Read under by streams opened under it for long enough to judge it. */
bool ra_adapt_perf_judged(RaModel *m, uint32_t kb);
/* Also for the recheck of a refuted trial (RaModel.recheck), which ends when another window reads. */
void ra_adapt_perf_record(RaModel *m, uint32_t kb, double bytes_per_sec);
/* A trial of trial_kb refuted for back_kb: back_kb's reads from now on judge it again. */
void ra_adapt_perf_recheck(RaModel *m, uint32_t trial_kb, uint32_t back_kb);
/* The fastest judged window's throughput. */
double ra_adapt_perf_fastest(const RaModel *m);
/* The smallest judged window that reads within RA_ADAPT_GAIN_TIE of the fastest judged one. */
const RaPerf *ra_adapt_perf_best(const RaModel *m);
/*
 * A window above kb was judged (RA_ADAPT_SAMPLES intervals or more): the
 * measurements decide about it, not growth. One measured once is not: a
 * random cut right after a scan's first interval under it would otherwise
 * leave the scans that follow under the cut for good (ra_adapt_perf_best()
 * ignores it, and neither the model nor a trial would go up to it).
 */
bool ra_adapt_perf_has_above(const RaModel *m, uint32_t kb);

/*
 * A sequential interval under a trial that was not read (nearly) all by
 * files under it (paged: on the page cache's evidence p): the trial waits,
 * and the reason says so the first time.
 */
void ra_adapt_perf_trial_wait(RaModel *m, const RaPcacheSummary *p, bool paged);
/* The trial in force was judged and nothing moves: it stays, and the reason says on what. */
void ra_adapt_perf_trial_kept(RaModel *m);
