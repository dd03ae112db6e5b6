/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * Per-request detail from the block:block_rq_issue tracepoint: what the
 * counters in /sys/block/<dev>/stat cannot say. Those show how many bytes a
 * device reads in how many requests, but not whether the requests follow each
 * other: a sequential stream and random mmap faults with read-around both
 * make requests as large as the readahead window. The tracepoint gives each
 * request's start sector, so a request that starts where an earlier one ended
 * continues a stream, and one that does not is a jump.
 */

/* One line of trace_pipe text for block_rq_issue. */
typedef struct RaTraceEvent {
        uint32_t major;
        uint32_t minor;
        bool read;
        bool readahead; /* "A" in rwbs: issued by the readahead code */
        uint64_t sector;
        uint32_t nr_sectors;
} RaTraceEvent;

/*
 * Parses the part after "block_rq_issue: " of a trace_pipe line:
 * "<maj>,<min> <rwbs> <bytes> (<cmd>) <sector> + <nr> ...". Returns -EINVAL
 * for anything else, including other events.
 */
int ra_trace_parse_line(const char *line, RaTraceEvent *ret);

#define RA_TRACE_STREAMS 8
#define RA_TRACE_SIZE_BUCKETS 16 /* 4 KiB << n */

/* A sequential stream being followed: where its next request would start. */
typedef struct RaTraceStream {
        uint64_t next_sector;
        uint32_t window_kb; /* read_ahead_kb when the stream started */
        uint64_t last_seen; /* for replacing the stalest stream */
        bool used;
} RaTraceStream;

/* What one interval's requests showed. */
typedef struct RaTraceSummary {
        uint64_t requests;
        uint64_t bytes;
        uint64_t jumps;        /* requests that continued no stream */
        uint64_t readahead;    /* requests with the readahead flag */
        uint64_t window_bytes; /* read by streams that started under the current window */
        uint32_t request_kb;   /* mean size of the requests of the size class that moved the most bytes */
} RaTraceSummary;

/* Per device: the streams being followed and this interval's counts. */
typedef struct RaTraceAccount {
        RaTraceStream streams[RA_TRACE_STREAMS];
        uint64_t clock;
        RaTraceSummary now;
        uint64_t size_bytes[RA_TRACE_SIZE_BUCKETS];
        uint64_t size_count[RA_TRACE_SIZE_BUCKETS];
} RaTraceAccount;

/* Accounts one read request; window_kb is the device's read_ahead_kb now. */
void ra_trace_account_add(RaTraceAccount *a, const RaTraceEvent *e, uint32_t window_kb);

/* Hands out the interval's summary and starts the next; the streams stay. */
void ra_trace_account_take(RaTraceAccount *a, RaTraceSummary *ret);
