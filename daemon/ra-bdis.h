/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "ra-bdi.h"

/*
 * The bdis the mounted file systems read through that are not a disk's (see
 * ra-bdi.h), from mountinfo (read with libmount) and sysfs: one entry per
 * superblock, with its first mount point. File systems on a disk or a
 * partition, and those without a bdi of their own (tmpfs, overlay, proc),
 * are not listed. Returns 0 with *ret NULL and *ret_n 0 when there is none.
 */
int ra_bdis_scan(const char *mountinfo, const char *sysfs_root, RaBdi **ret, size_t *ret_n);
