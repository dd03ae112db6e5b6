/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The bench's device model: when a device completes each command it is given.
 * Pure: the caller passes the time, so tests drive it through simulated time.
 *
 * A disk seeks only when a command jumps: a command that continues where the
 * head is costs the media time, a short skip forward costs the time to pass
 * over the gap, and anything else a seek that grows with the distance plus
 * half a rotation. While idle, the drive reads on into a cache segment (its
 * read-ahead), and a command the cache holds costs only the bus. Flash costs
 * a command overhead plus the transfer, with N commands served at once. */

#include <stdint.h>

#include "dm-params.h"
#include "ra-macro.h"

typedef struct DmStats {
        uint64_t reads, writes;
        uint64_t read_bytes, write_bytes;
        uint64_t seeks;       /* disk: commands that moved the head away */
        uint64_t skips;       /* disk: short forward skips within a track */
        uint64_t cache_hits;  /* disk: commands the read cache held whole */
        uint64_t continued;   /* disk: commands that continued where the head was */
        uint64_t busy_ns;     /* time the device spent on commands */
        uint64_t media_bytes; /* disk: bytes read from the platters, read-ahead included */
} DmStats;

typedef struct DmModel DmModel;

DmModel *dm_model_new(const DmParams *params);
DmModel *dm_model_free(DmModel *m);
RA_DEFINE_CLEANUP(DmModel, dm_model_free);

/* Schedules a command that reaches the device at now_ns (any monotonic
 * clock); returns the time it completes. Commands are served in the order
 * they are given. */
uint64_t dm_model_read(DmModel *m, uint64_t now_ns, uint64_t offset, uint64_t len);
uint64_t dm_model_write(DmModel *m, uint64_t now_ns, uint64_t offset, uint64_t len);

/* A command waiting for the device (a list: the server keeps them on its
 * threads' stacks). */
typedef struct DmWaiting {
        uint64_t arrival_ns, offset;
        struct DmWaiting *next;
} DmWaiting;

/* Which of the waiting commands the device takes next: the earliest arrival,
 * or a lower offset that arrived within window_ns of it (commands sent one
 * after the other in ascending order may arrive swapped). */
const DmWaiting *dm_next_command(const DmWaiting *waiting, uint64_t window_ns);

/* When the device can start its next command (the first free slot). */
uint64_t dm_model_free_at(const DmModel *m);
const DmStats *dm_model_stats(const DmModel *m);

/* Seek time in ns for a jump of distance bytes (disk classes). */
double dm_model_seek_ns(const DmParams *p, uint64_t distance);
