/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ra-prefetch.h"

/*
 * The tree walker behind `racontrol prefetch`: worker threads read
 * directories with large getdents64 buffers, look their entries up with
 * statx in the order the file system makes cheap, and, for --data, read
 * regular files ahead in physical order up to a budget. It runs with the
 * caller's rights and does not cross mount points.
 */

typedef struct RcWalkRoot {
        char *path;
        int fd; /* the root directory, opened once: what is beneath it is opened from here */
        const RaPrefetchFs *fs;
        uint64_t mnt_id; /* or the device number, where statx has no mount id */
        bool has_mnt_id;
        int rotational; /* of the device beneath: 1, 0, or -1 when unknown */
        /* ext4 on a device the caller may read: its metadata is read ahead there. */
        int device_fd;
        char *device;
        RaExt4Layout ext4;
        uint64_t device_chunk; /* bytes one POSIX_FADV_WILLNEED reads at most */
        uint32_t index;        /* among the walk's roots */
        /* How far its directories' own order is from inode order (ra_prefetch_count_descents). */
        atomic_uint_fast64_t pairs, descents;
        atomic_bool in_order; /* decided from the first directories: the walk leaves the rest */
        /* Set when the walk leaves its lookups to the later walk, and why (one sentence). */
        const char *aside;
} RcWalkRoot;

/* Counters the progress line reads while the walk runs. */
typedef struct RcWalkCounters {
        atomic_uint_fast64_t directories; /* read with getdents64 */
        atomic_uint_fast64_t entries;     /* looked up with statx */
        atomic_uint_fast64_t found;       /* entries seen in directories so far */
        atomic_uint_fast64_t skipped;     /* found, but left to the later walk (a root's aside) */
        atomic_uint_fast64_t vanished;    /* ENOENT between getdents64 and the lookup */
        atomic_uint_fast64_t denied;      /* EACCES/EPERM below a root */
        atomic_uint_fast64_t errors;      /* anything else */
        atomic_uint_fast64_t data_files;  /* read ahead */
        atomic_uint_fast64_t data_bytes;
        atomic_uint_fast64_t data_planned_bytes;
        atomic_bool data_phase;
} RcWalkCounters;

typedef struct RcWalk RcWalk;

/*
 * threads 0: one on a rotational disk, RC_WALK_THREADS otherwise; budget is
 * only used with data. Without always, a root on a rotational disk whose
 * later walk would read as cheaply by itself is left to it (its aside).
 */
#define RC_WALK_THREADS 16
int rc_walk_new(unsigned threads, bool data, bool always, uint64_t budget, RcWalk **ret);
RcWalk *rc_walk_free(RcWalk *w);

/*
 * Checks one root and adds it: -ENOTDIR for a file, the open or statfs
 * error otherwise. The RcWalkRoot returned stays valid as long as w.
 */
int rc_walk_add_root(RcWalk *w, const char *path, const RcWalkRoot **ret);

/* Starts the worker threads; the walk runs until done or stopped. */
int rc_walk_start(RcWalk *w);
/* True once every thread has finished (the walk, then the data phase). */
bool rc_walk_done(RcWalk *w);
/* Asks the threads to stop after what they are doing; safe from any thread. */
void rc_walk_stop(RcWalk *w);
/* Joins the threads. */
void rc_walk_join(RcWalk *w);

const RcWalkCounters *rc_walk_counters(RcWalk *w);
/* After start: how many threads walk. */
unsigned rc_walk_threads(RcWalk *w);

/* After join: the data plan's outcome. */
void rc_walk_data_summary(RcWalk *w, uint64_t *ret_budget, uint64_t *ret_files_over,
                          uint64_t *ret_bytes_over);
/* After join: the first error below a root, as "path: message", or NULL. */
const char *rc_walk_first_error(RcWalk *w);
