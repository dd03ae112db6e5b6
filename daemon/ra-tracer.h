/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "ra-macro.h"
#include "ra-pcache.h"
#include "ra-sbmap.h"
#include "ra-trace.h"

/*
 * The optional request tracer: a tracefs instance of our own with the
 * block:block_rq_issue event (and block:block_bio_queue while a bio-based
 * device is managed, see ra-trace.h), filtered to the managed disks'
 * reads, read from each CPU's trace_pipe_raw once per sampling interval and
 * whenever a CPU's buffer is half full (ra_tracer_watch). An instance keeps
 * our events apart from anybody else's tracing; waking only at a fill level
 * costs no wake-ups while reads are slow; binary records cost the kernel no
 * printing (trace_pipe's text cost some 2 µs a request); events the kernel
 * overwrites before they are read are counted (ra_tracer_take_counts).
 * Each CPU's buffer is in time order, and a drain merges them.
 */
typedef struct RaTracer RaTracer;

/*
 * The same instance carries the page-cache events (ra-pcache) where the
 * kernel has them, filtered to the superblocks of the managed disks.
 *
 * Where tracefs is not mounted, it is mounted at /sys/kernel/tracing (and
 * unmounted at close). -ENOENT when the kernel has no tracefs, -EPERM or
 * -EACCES when we may not mount or use it.
 */
int ra_tracer_open(RaTracer **ret);
RaTracer *ra_tracer_close(RaTracer *t);
RA_DEFINE_CLEANUP(RaTracer, ra_tracer_close)

/*
 * The devices whose reads are wanted, request-based ones from
 * block_rq_issue and bio-based ones from block_bio_queue; the kernel drops
 * everything else. block_bio_queue is on only while bios is not empty.
 */
int ra_tracer_set_devices(RaTracer *t, const dev_t *requests, size_t n_requests, const dev_t *bios,
                          size_t n_bios);

/* Whether the kernel has block_bio_queue as this reads it: bio-based devices are traced. */
bool ra_tracer_sees_bios(const RaTracer *t);

/* The superblocks whose page-cache events are wanted. */
int ra_tracer_set_superblocks(RaTracer *t, const RaSbMap *map);

/*
 * Reads what the kernel has buffered and hands every read request to fn and
 * every page-cache event to pfn, each in time order.
 */
typedef void (*RaTraceHandler)(void *userdata, const RaTraceEvent *e);
typedef void (*RaPcacheHandler)(void *userdata, const RaPcacheEvent *e);
int ra_tracer_drain(RaTracer *t, RaTraceHandler fn, RaPcacheHandler pfn, void *userdata);

/*
 * Calls wake from the event loop when a CPU's buffer is half full, for a
 * drain before the kernel overwrites what it holds. Nothing is watched (0)
 * on a kernel that cannot wake a reader at a fill level: its buffers are
 * read once an interval only.
 */
typedef void (*RaTracerWake)(void *userdata);
int ra_tracer_watch(RaTracer *t, sd_event *event, RaTracerWake wake, void *userdata);

/* Stops and resumes those calls (a storm's budget spent, a new interval). */
void ra_tracer_set_watching(RaTracer *t, bool on);

/*
 * The events handed over, and those the kernel overwrote before they could
 * be read, since the last call.
 */
void ra_tracer_take_counts(RaTracer *t, uint64_t *ret_read, uint64_t *ret_lost);

/* RA_EVIDENCE_READAHEAD, _FILEMAP or _BLOCK: what the instance sees. */
RaEvidence ra_tracer_evidence(const RaTracer *t);

/* Where we mounted tracefs ourselves; NULL where it was mounted. */
const char *ra_tracer_mounted(const RaTracer *t);

/* Where the instance lives, for messages. */
const char *ra_tracer_path(const RaTracer *t);
