/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "ra-macro.h"

struct libmnt_fs;
struct libmnt_table;

/*
 * Which window the files under a path read with. Administrators speak of
 * "the device my data directory is on"; the kernel gives a file, at open,
 * the window of its file system's backing device:
 *
 *  - a file system on a disk, a partition or a stacked device (ext4, xfs on
 *    sda1, on an LV, on LUKS): the whole block device's queue/read_ahead_kb,
 *    the top of the stack (a partition shares its disk's);
 *  - btrfs: its own bdi, btrfs-N, whatever devices are beneath;
 *  - fuseblk: "<maj>:<min>-fuseblk" of its disk;
 *  - FUSE, NFS and other file systems with an anonymous dev: the bdi named
 *    after that dev, "<maj>:<min>".
 *
 * Pure: the mount comes from a mountinfo file and the devices from a sysfs
 * root the caller gives, and the path is taken as it is written (the caller
 * makes it absolute and resolves its links, realpath(3)).
 */
typedef struct RaPathObject {
        bool bdi;         /* name is a bdi's (/sys/class/bdi), not a block device's */
        char *name;       /* "sda", "dm-3", "btrfs-2", "0:52", "8:17-fuseblk" */
        char *mountpoint; /* the mount the path is under */
        char *fs_type;    /* as mountinfo says: "ext4", "btrfs", "fuse.sshfs" */
        char *source;     /* as mountinfo says: "/dev/mapper/vg-db", "server:/export" */
} RaPathObject;

void ra_path_object_clear(RaPathObject *o);

/*
 * Fills ret for the file system path is on now. -ENOENT when no mount holds
 * it (mountinfo has no "/"); -ENODEV when its device is not in sysfs (gone,
 * or a file system such as tmpfs or proc that nothing reads ahead for);
 * -EAGAIN when fstab (NULL: not asked) mounts a file system at path or
 * between it and the mount that holds it now, which is not mounted yet: at
 * boot, /srv/db is not the root's until its own mount has been made.
 */
int ra_path_object(const char *sysfs_root, const char *mountinfo, const char *fstab, const char *path,
                   RaPathObject *ret);

/* mountinfo and fstab read once, for many paths (every [path:] section at a mount change). */
typedef struct RaPathMounts {
        struct libmnt_table *mounted;
        struct libmnt_table *fstab; /* NULL: not asked, or none */
} RaPathMounts;

int ra_path_mounts_load(const char *mountinfo, const char *fstab, RaPathMounts *ret);
void ra_path_mounts_clear(RaPathMounts *m);
int ra_path_object_in(const char *sysfs_root, const RaPathMounts *mounts, const char *path,
                      RaPathObject *ret);

/*
 * The mount of table that holds path, the last one mounted there: by the
 * path's text alone, component by component (no file is looked at, so a
 * server that does not answer is not waited on). NULL when none does.
 */
struct libmnt_fs *ra_path_mount_of(struct libmnt_table *table, const char *path);

/*
 * path (absolute) with its links resolved, component by component: a link is
 * followed only when root owns it, as one a user owns (in a directory of
 * theirs under a configured path) could be swapped in to move an
 * administrator's value onto another disk: -EPERM then. What does not exist
 * is kept as written (a mount not made yet). -ELOOP past 40 links, -EINVAL
 * for a relative path. It asks each component of its file system, so it
 * waits on a server that does not answer: the daemon calls it in a child
 * with a deadline (daemon/ra-pathwatch.c).
 */
int ra_path_chase(const char *path, char **ret);

/* A command-line or configuration argument meant as a path, not a device name. */
bool ra_path_is_path(const char *s);
