/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-disk.h"

struct Manager;

/* What one interval of a disk's reads told. */
typedef enum RaObserved {
        RA_OBSERVED_NOTHING, /* nothing new: a first sample, counters that cannot be read or were reset */
        RA_OBSERVED_TRIAL,   /* the adaptive policy's reason moved, not its value */
        RA_OBSERVED_LEARNED, /* it learned a value, worth keeping for the device's identity */
} RaObserved;

/*
 * Whether d is left alone this interval: an idle disk is looked at less
 * often, unless the tracer saw it read.
 */
bool ra_observe_skip(RaDisk *d);

/*
 * Whether d is looked at between its samples (a peek): it read
 * in order in its last interval, and learning may move its value.
 */
bool ra_observe_peekable(const struct Manager *m, const RaDisk *d);

/*
 * One disk, one interval of the sampler: its counters (through sysfd, its
 * sysfs directory) and what the tracer saw, at now with the window kb,
 * turned into an observation, fed to the adaptive policy and published on
 * d. It decides and stores nothing: the tuning path does with what it
 * returns (ra_tune_sample()). A peek between samples only looks at the
 * interval so far, and learns the growth the cost model is sure of
 * (ra_adapt_peek()).
 */
RaObserved ra_observe_disk(struct Manager *m, RaDisk *d, int sysfd, uint32_t kb, uint64_t now, bool peek);
