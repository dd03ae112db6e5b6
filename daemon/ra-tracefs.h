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
 * whenever a CPU's buffer is half full (ra_tracefs_watch). An instance keeps
 * our events apart from anybody else's tracing; waking only at a fill level
 * costs no wake-ups while reads are slow; binary records cost the kernel no
 * printing (trace_pipe's text cost some 2 µs a request); events the kernel
 * overwrites before they are read are counted (ra_tracefs_take_counts).
 * Each CPU's buffer is in time order, and a drain merges them.
 */
typedef struct RaTracefs RaTracefs;

/*
 * The same instance carries the page-cache events (ra-pcache) where the
 * kernel has them, filtered to the superblocks of the managed disks.
 *
 * Where tracefs is not mounted, it is mounted at /sys/kernel/tracing (and
 * unmounted at close). -ENOENT when the kernel has no tracefs, -EPERM or
 * -EACCES when we may not mount or use it.
 */
int ra_tracefs_open(RaTracefs **ret);
RaTracefs *ra_tracefs_close(RaTracefs *t);
RA_DEFINE_CLEANUP(RaTracefs, ra_tracefs_close)

/*
 * The devices whose reads are wanted, request-based ones from
 * block_rq_issue and bio-based ones from block_bio_queue; the kernel drops
 * everything else. block_bio_queue is on only while bios is not empty.
 */
int ra_tracefs_set_devices(RaTracefs *t, const dev_t *requests, size_t n_requests, const dev_t *bios,
                           size_t n_bios);

/* Whether the kernel has block_bio_queue as this reads it: bio-based devices are traced. */
bool ra_tracefs_sees_bios(const RaTracefs *t);

/* The superblocks whose page-cache events are wanted. */
int ra_tracefs_set_superblocks(RaTracefs *t, const RaSbMap *map);

/*
 * Reads what the kernel has buffered and hands every read request to fn and
 * every page-cache event to pfn, each in time order.
 */
typedef void (*RaTraceHandler)(void *userdata, const RaTraceEvent *e);
typedef void (*RaPcacheHandler)(void *userdata, const RaPcacheEvent *e);
int ra_tracefs_drain(RaTracefs *t, RaTraceHandler fn, RaPcacheHandler pfn, void *userdata);

/*
 * Calls wake from the event loop when a CPU's buffer is half full, for a
 * drain before the kernel overwrites what it holds. Nothing is watched (0)
 * on a kernel that cannot wake a reader at a fill level: its buffers are
 * read once an interval only.
 */
typedef void (*RaTracefsWake)(void *userdata);
int ra_tracefs_watch(RaTracefs *t, sd_event *event, RaTracefsWake wake, void *userdata);

/* Stops and resumes those calls (a storm's budget spent, a new interval). */
void ra_tracefs_set_watching(RaTracefs *t, bool on);

/*
 * The events handed over, and those the kernel overwrote before they could
 * be read, since the last call.
 */
void ra_tracefs_take_counts(RaTracefs *t, uint64_t *ret_read, uint64_t *ret_lost);

/* RA_EVIDENCE_READAHEAD, _FILEMAP or _BLOCK: what the instance sees. */
RaEvidence ra_tracefs_evidence(const RaTracefs *t);

/* Where we mounted tracefs ourselves; NULL where it was mounted. */
const char *ra_tracefs_mounted(const RaTracefs *t);

/* Where the instance lives, for messages. */
const char *ra_tracefs_path(const RaTracefs *t);
