/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "ra-tracefs.h"

/*
 * The tracer's inside, shared by its two halves: setting tracefs up
 * (ra-tracefs.c) and draining its buffers (ra-tracefs-drain.c). Nothing else
 * sees it: RaTracefs stays opaque.
 */

/* One CPU's buffer. */
typedef struct RaTracefsCpu {
        int fd;                /* per_cpu/cpuN/trace_pipe_raw */
        unsigned n;            /* N */
        sd_event_source *wake; /* the kernel's poll says the buffer is WAKE_PERCENT full */
        uint64_t overrun;      /* per_cpu/cpuN/stats when last read: events overwritten unread */
        bool missed;           /* a page read since says the kernel overwrote events */
} RaTracefsCpu;

struct RaTracefs {
        char *dir;
        /*
         * block_rq_issue's, then block_bio_queue's, then block_rq_complete's
         * (id 0 where the kernel has none)
         */
        RaTraceFormat formats[3];
        bool bio_on;      /* block_bio_queue is enabled */
        size_t page_size; /* what one read of trace_pipe_raw returns */
        RaTracefsCpu *cpus;
        size_t n_cpus;
        bool can_wake; /* the kernel took WAKE_PERCENT */
        RaTracefsWake wake;
        void *wake_userdata;
        uint64_t read;        /* events handed over since ra_tracefs_take_counts() */
        RaTraceEvent *events; /* one drain's, to be put in time order */
        size_t n_events, max_events;

        RaPcacheFormat pformat; /* the page-cache events, where evidence says they are on */
        RaEvidence evidence;
        RaPcacheEvent *pevents;
        size_t n_pevents, max_pevents;
        char *mounted; /* tracefs, where we mounted it */
};

/* Reads attr below the tracer's instance directory. */
int ra_tracefs_read_attr(const RaTracefs *t, const char *attr, char *buf, size_t size);
