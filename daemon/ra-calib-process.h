/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ra-calib.h"

/*
 * A calibration's reads (ra-calib-sched.c), in a process of its own, forked
 * from the daemon: a read that never returns leaves that process waiting,
 * uninterruptibly, and the daemon gives up on it; a thread would keep the
 * daemon itself from exiting until the read returned.
 */

/* What the process hands back, in memory shared with it (MAP_SHARED). */
typedef struct RaCalibShared {
        RaCalibSample samples[RA_CALIB_SAMPLES_MAX];
        size_t n;
        int error;        /* a negative errno: it could not be read, or not at idle priority */
        bool interrupted; /* other I/O came while it ran */
        /*
         * ra_now_nsec() at which the read (or open) under way began;
         * 0 between reads: the daemon holds it against the read's deadline.
         */
        uint64_t reading_since;
} RaCalibShared;

/* What the process reads. */
typedef struct RaCalibReads {
        char *devnode;
        int sysfd;                           /* the disk's sysfs directory, for its counters */
        uint32_t sizes[RA_CALIB_POINTS_MAX]; /* ra_calib_sizes(), whole numbers of its blocks */
        size_t n_sizes;                      /* at least 1 */
        uint32_t jump_kb;                    /* ra_calib_jump_kb() */
        uint64_t size_bytes;
        bool rotational;
        char scheduler[32]; /* the queue's, for ra_calib_pause_nsec() */
        RaCalibShared *shared;
        int exit_fd; /* a pipe's write end, held open until the process exits */
} RaCalibReads;

/*
 * The forked process: makes the reads and exits (0; what it measured, or
 * its error, in r->shared). It keeps nothing of the daemon's open but stdio,
 * r->sysfd and r->exit_fd (one left waiting on a read must not hold the bus
 * connection), takes signals as they come, and dies with the daemon.
 */
__attribute__((noreturn)) void ra_calib_process(RaCalibReads *r, pid_t daemon);
