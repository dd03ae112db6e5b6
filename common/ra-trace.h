/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Per-request detail from the block:block_rq_issue tracepoint (per-bio
 * detail from block:block_bio_queue for bio-based devices, see below): what
 * the counters in /sys/block/<dev>/stat cannot say. Those show how many bytes a
 * device reads in how many requests, but not whether the requests follow each
 * other: a sequential stream and random mmap faults with read-around both
 * make requests as large as the readahead window. The tracepoint gives each
 * request's start sector, so a request that starts where an earlier one ended
 * (give or take a window: the block layer reorders a little) continues a
 * stream, and one that does not is a jump.
 *
 * Bio-based devices (dm, md, zram: no blk-mq queue, so no /sys/block/<dev>/mq)
 * issue no requests of their own: block_rq_issue fires only on the disks
 * beneath them, if any. What they are asked to read shows as
 * block_bio_queue on the device itself, a bio as submitted, with the same
 * fields. A bio on a request-based disk fires block_bio_queue too, before
 * the block layer merges it into requests, so a device is accounted from
 * one of the two events, never both.
 */

/* One read request, from a block_rq_issue record, or one bio, from a block_bio_queue record. */
typedef struct RaTraceEvent {
        uint64_t time_ns; /* the ring buffer's clock: orders events of different CPUs */
        uint32_t major;
        uint32_t minor;
        bool bio;      /* from block_bio_queue */
        bool complete; /* from block_rq_complete: the request that started at sector is done */
        bool read;
        bool readahead; /* "A" in rwbs: issued by the readahead code */
        uint64_t sector;
        uint32_t nr_sectors;
} RaTraceEvent;

/*
 * The kernel's ring buffer hands out binary records, which cost it nothing to
 * produce, where trace_pipe would print every one as text (most of the CPU
 * a busy device's tracing costs). The layout is not fixed: it is described
 * in tracefs, in events/header_page (the page header) and in the event's
 * format file (the record), both text, which this reads once at start.
 */
typedef struct RaTraceField {
        uint16_t offset;
        uint16_t size;
} RaTraceField;

typedef struct RaTraceFormat {
        uint16_t id;            /* common_type of the event's records */
        bool bio;               /* the event is block_bio_queue, not block_rq_issue */
        bool complete;          /* the event is block_rq_complete */
        RaTraceField dev;       /* major << 20 | minor */
        RaTraceField sector;    /* first sector */
        RaTraceField nr_sector; /* length in sectors */
        RaTraceField rwbs;      /* "R", "RA", "WS"...: what the request does */
        uint16_t commit_size;   /* of the page header's commit field: 4 or 8 */
        uint16_t data_offset;   /* where a page's records start */
} RaTraceFormat;

/* A ring-buffer page's layout, from events/header_page: shared by every event. */
typedef struct RaTracePage {
        uint16_t commit_size; /* 4 or 8 */
        uint16_t data_offset;
} RaTracePage;

int ra_trace_header_parse(const char *header_page, RaTracePage *ret);

/* Calls found() for every "field:" line of a format file, with the field's name and place. */
typedef void (*RaTraceFieldFn)(void *userdata, const char *name, RaTraceField f);
void ra_trace_fields_scan(const char *text, RaTraceFieldFn found, void *userdata);

/* The "ID: N" of an event's format file; -EINVAL without one. */
int ra_trace_event_id(const char *event_format, uint16_t *ret);

/*
 * Walks the records of one page of trace_pipe_raw, whatever their event,
 * and hands each one (starting with its common_type) to fn with its time.
 * Returns the number handed over, or -EINVAL for a page that does not parse
 * (the records before the fault are handed over all the same).
 */
typedef void (*RaTraceRecordFn)(void *userdata, uint64_t time_ns, const uint8_t *rec, size_t length);
int ra_trace_page_walk(const RaTracePage *f, const void *page, size_t size, RaTraceRecordFn fn,
                       void *userdata);

/*
 * Whether the kernel overwrote events of this page's CPU before the page was
 * read: it flags the first page read after a loss. How many were lost is in
 * the CPU's per_cpu/cpuN/stats ("overrun"); the page has room for the count
 * only when it is not full, which a busy CPU's pages mostly are.
 */
bool ra_trace_page_missed(const RaTracePage *f, const void *page, size_t size);

/*
 * Parses events/header_page and events/block/block_rq_issue/format, or
 * block_bio_queue's or block_rq_complete's (the format's name line says
 * which: bio or complete is set for them). block_rq_complete has the same
 * fields: its sector is where the request started, its time when the
 * device answered (ra_calib_trace_complete()).
 * -EINVAL when a field is missing or has a size this cannot read.
 */
int ra_trace_format_parse(const char *header_page, const char *event_format, RaTraceFormat *ret);

/*
 * Parses one page read from a per_cpu/cpuN/trace_pipe_raw and hands every
 * record of it of one of the n events in formats (which share the page
 * layout) to fn, in order. Returns the number of records handed over, or
 * -EINVAL for a page that does not parse (the records before the fault are
 * handed over all the same).
 */
typedef void (*RaTraceEventFn)(void *userdata, const RaTraceEvent *e);
int ra_trace_page_parse(const RaTraceFormat *formats, size_t n, const void *page, size_t size,
                        RaTraceEventFn fn, void *userdata);

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
        uint64_t switches;     /* requests that went on with a stream right after another stream's */
        uint64_t readahead;    /* requests with the readahead flag */
        uint64_t window_bytes; /* read by streams that started under the current window */
        uint32_t request_kb;   /* mean size of the requests of the size class that moved the most bytes */
} RaTraceSummary;

/* Per device: the streams being followed and this interval's counts. */
typedef struct RaTraceAccount {
        RaTraceStream streams[RA_TRACE_STREAMS];
        uint64_t clock;
        bool went_on; /* the last request went on with a stream (it was no jump) */
        RaTraceSummary now;
        uint64_t size_bytes[RA_TRACE_SIZE_BUCKETS];
        uint64_t size_count[RA_TRACE_SIZE_BUCKETS];
} RaTraceAccount;

/* Accounts one read request; window_kb is the device's read_ahead_kb now. */
void ra_trace_account_add(RaTraceAccount *a, const RaTraceEvent *e, uint32_t window_kb);

/* Hands out the interval's summary and starts the next; the streams stay. */
void ra_trace_account_take(RaTraceAccount *a, RaTraceSummary *ret);
