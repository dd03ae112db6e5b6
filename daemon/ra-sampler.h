/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

struct Manager;
struct RaDisk;
struct RaTracefs;

/* The sampler's own state, behind Manager.sampler: NULL until it starts. */
typedef struct RaSampler RaSampler;

/*
 * The statistics sampler: every interval_ms it reads each managed disk's
 * /sys/block/<dev>/stat (and what the request tracer saw, where tracefs is
 * there), feeds the adaptive policy, and publishes the disk's workload and
 * rates. Idle disks are read less and less often, down to every fifth
 * interval, and at once again when the tracer sees them read. Between two
 * samples, disks that read in order are looked at sooner (peeks, see
 * ra-sampler.c), and the first sample comes soon after the start.
 */
int ra_sampler_start(struct Manager *m);

/* Opens the request tracer if it is not open: at start, and again at a reload. */
void ra_sampler_open_tracer(struct Manager *m);
void ra_sampler_stop(struct Manager *m);

/* The request tracer, for what it can see; NULL without tracefs or before the sampler starts. */
struct RaTracefs *ra_sampler_tracer(const struct Manager *m);

/* The set of disks changed: the tracer's filter follows at the next interval. */
void ra_sampler_disks_changed(struct Manager *m);
