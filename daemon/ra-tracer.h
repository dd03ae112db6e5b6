/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "ra-macro.h"
#include "ra-trace.h"

/*
 * The optional request tracer: a tracefs instance of our own with the
 * block:block_rq_issue event, filtered to the managed disks' reads, read
 * once per sampling interval from each CPU's trace_pipe_raw. An instance
 * keeps our events apart from anybody else's tracing; reading once per
 * interval costs no wake-ups; binary records cost the kernel no printing
 * (trace_pipe's text cost some 2 µs a request); events beyond the buffer
 * are simply lost, which statistics can afford. Each CPU's buffer is in
 * time order, and a drain merges them.
 */
typedef struct RaTracer RaTracer;

/* -ENOENT when tracefs is not mounted, -EACCES when we may not use it. */
int ra_tracer_open(RaTracer **ret);
RaTracer *ra_tracer_close(RaTracer *t);
RA_DEFINE_CLEANUP(RaTracer, ra_tracer_close)

/* The devices whose reads are wanted; the kernel drops everything else. */
int ra_tracer_set_devices(RaTracer *t, const dev_t *devices, size_t n);

/* Reads what the kernel has buffered and hands every read request to fn, in time order. */
typedef void (*RaTraceHandler)(void *userdata, const RaTraceEvent *e);
int ra_tracer_drain(RaTracer *t, RaTraceHandler fn, void *userdata);

/* Where the instance lives, for messages. */
const char *ra_tracer_path(const RaTracer *t);
