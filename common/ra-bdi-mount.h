/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-bdi.h"

struct libmnt_fs;

/*
 * The number an option of a mount's options has ("user_id" in
 * "rw,user_id=1000,group_id=1000"), read with libmount's option parser, so
 * never from inside another option's value. -ENOENT when it has none.
 */
int ra_mount_option_u64(const char *options, const char *name, uint64_t *ret);

/*
 * The bdi a mount's files read with, when it is not a disk's: the one
 * reader of a mount for the daemon's bdi scan and for paths. Fills b (kind,
 * name, s_dev, mount_id, fs_type, mountpoint, source; btrfs: its devices and
 * stripes; fuseblk: its disk; NFS: rsize) and returns 1; returns 0 for a
 * file system on a disk (the disk's window) or one with no bdi of its own
 * (tmpfs, overlay, proc), or a btrfs unmounted under us; b is cleared by
 * the caller either way.
 */
int ra_bdi_of_mount(const char *sysfs_root, struct libmnt_fs *fs, RaBdi *b);
