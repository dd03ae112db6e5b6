/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "ra-bdi.h"
#include "ra-sbmap.h"

struct libmnt_fs;

/*
 * Calls f for every mount of a mountinfo file (read with libmount), in
 * order, until f returns a negative errno, which is returned.
 */
typedef int (*RaMountFunc)(struct libmnt_fs *fs, void *userdata);
int ra_mounts_foreach(const char *mountinfo, RaMountFunc f, void *userdata);

/*
 * Builds the superblock map of the managed disks: each disk's raw inode and
 * its partitions' (from sysfs), and every file system mounted on one of them
 * (from mountinfo, read with libmount). mountinfo is the path of a
 * mountinfo file (/proc/self/mountinfo; tests give their own); sysfs_root
 * is where dev/block/M:m lives (/sys).
 */
int ra_mounts_build(const char *mountinfo, const char *sysfs_root, const dev_t *disks, size_t n_disks,
                    RaSbMap *ret);

/*
 * The bdis the mounted file systems read through that are not a disk's (see
 * ra-bdi.h), from mountinfo (read with libmount) and sysfs: one entry per
 * superblock, with its first mount point. File systems on a disk or a
 * partition, and those without a bdi of their own (tmpfs, overlay, proc),
 * are not listed. Returns 0 with *ret NULL and *ret_n 0 when there is none.
 */
int ra_mounts_bdis(const char *mountinfo, const char *sysfs_root, RaBdi **ret, size_t *ret_n);
