/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "ra-disk.h"

struct Manager;

/*
 * One disk, one interval of the sampler: its window read (a change behind
 * radaemon's back goes to the drift check), its counters and what the tracer
 * saw turned into an observation, what the adaptive policy learned from it,
 * all handed to the tuning path in one transaction. The statistics are
 * skipped while an idle disk is looked at less often.
 */
void ra_observe_disk(struct Manager *m, RaDisk *d, uint64_t now);
