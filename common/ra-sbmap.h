/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Which knob governs the reads of a superblock. The page-cache tracepoints
 * name a file by its superblock's dev (s_dev) and its inode; the window it
 * reads with comes from its backing device:
 *
 *  - a file system on a disk or a partition: s_dev is the disk's or the
 *    partition's dev_t, and the disk's read_ahead_kb governs it;
 *  - a raw block device (dd of /dev/sdb, a partition's node): its pages
 *    belong to the block device's own inode in the kernel's internal bdev
 *    file system, whose s_dev is anonymous (major 0) and not in any
 *    mountinfo, and whose inode number is the device's dev_t.
 *
 * Kept open for what follows: btrfs, FUSE and NFS superblocks (their own
 * bdis) and dm/md devices are entries with another knob.
 */

/* The kernel's encoding of a dev_t in tracepoints: major << 20 | minor. */
uint32_t ra_kdev(dev_t dev);

typedef struct RaSbEntry {
        uint32_t s_dev; /* 0: the block devices' own superblock, whichever it is */
        uint64_t ino;   /* with s_dev 0: the block device's kdev; else 0 (every inode) */
        dev_t knob;     /* the managed disk */
} RaSbEntry;

typedef struct RaSbMap {
        RaSbEntry *entries;
        size_t n;
        uint32_t *anon; /* anonymous s_devs of mounted file systems: not the block devices' */
        size_t n_anon;
} RaSbMap;

void ra_sbmap_clear(RaSbMap *m);

/* A file system's superblock (ino 0), or with s_dev 0 a raw block device's inode. */
int ra_sbmap_add(RaSbMap *m, uint32_t s_dev, uint64_t ino, dev_t knob);
/* A mounted file system whose s_dev is anonymous: its inode numbers are not devices. */
int ra_sbmap_add_anon(RaSbMap *m, uint32_t s_dev);

/* The knob that governs reads of (s_dev, ino); false for what radaemon does not manage. */
bool ra_sbmap_lookup(const RaSbMap *m, uint32_t s_dev, uint64_t ino, dev_t *ret_knob);

/*
 * The tracefs event filter that passes exactly the mapped superblocks (and
 * a little more for raw devices, which lookup then drops); one that passes
 * everything (lookup picks) when it would not fit in size. Returns 0 or
 * -ENOBUFS when even that does not fit.
 */
int ra_sbmap_filter(const RaSbMap *m, char *buf, size_t size);
