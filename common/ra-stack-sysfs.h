/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "ra-macro.h"
#include "ra-stack.h"

/*
 * The stack module's own: how its walks (ra-stack-walk.c) and its dm and md
 * parsers (ra-stack-dm.c, ra-stack-md.c) read one device's directory under
 * <root>/block (ra-stack-sysfs.c). Every read is strict, tells a device that
 * went away (-ENODEV) from one that is wrong, and remembers the first path
 * that was wrong for the caller's ret_bad_path. Nothing outside the stack
 * module includes this.
 */

typedef struct RaStackWalker {
        int blockfd; /* <root>/block */
        RaStack *stack;
        bool on_path[RA_STACK_DEVICES_MAX]; /* by index in stack->devices: a cycle comes back to one */
        char *bad_path;
} RaStackWalker;

/* Remembers the first path that was wrong, relative to the root ("block/md0/md/level"). */
_printf_(2, 3) void ra_stack_walker_bad_path(RaStackWalker *w, const char *format, ...);

/* Opens the directory of the whole device name (O_PATH). */
int ra_stack_sysfs_open(RaStackWalker *w, const char *name, int *ret_fd);

/* One attribute of the device name into buf: -ENOENT when it is missing, -ENODEV when the device is gone. */
int ra_stack_sysfs_read_attr(RaStackWalker *w, int devfd, const char *name, const char *attr, char *buf,
                             size_t size);

/* The size and the queue's attributes of d, whose directory is devfd. */
int ra_stack_sysfs_read_queue(RaStackWalker *w, int devfd, RaStackDevice *d);

/* The names in the directory path below dirfd, sorted as versions; a missing directory is empty. */
int ra_stack_sysfs_list(RaStackWalker *w, int dirfd, const char *name, const char *path, char ***ret);

/* Sorts a name list as versions: "sda2" before "sda10". */
void ra_stack_sysfs_sort(char **l);

/* What holds the device name or one of its partitions, each once, sorted. */
int ra_stack_sysfs_holders(RaStackWalker *w, int devfd, const char *name, char ***ret);

/* The whole device that slave (in name's slaves/) is or is a partition of. */
int ra_stack_sysfs_resolve_slave(RaStackWalker *w, int devfd, const char *name, const char *slave,
                                 char **ret_whole);

/* dm's name and uuid of d, and the kind its uuid tells (ra-stack-dm.c). */
int ra_stack_dm_read(RaStackWalker *w, int devfd, RaStackDevice *d);

/* md's level and geometry of d, and the disks a read is striped over (ra-stack-md.c). */
int ra_stack_md_read(RaStackWalker *w, int devfd, RaStackDevice *d);
