/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-device.h"

/*
 * Asks libblkid what udev would have said: the file system type (when
 * a->fs_type is NULL) and the optimal I/O size (when a->optimal_io_bytes is
 * 0). Reads no more than it must: readahead is off for the probe, and on a
 * small or removable device only the first RA_PROBE_SMALL_BYTES are looked
 * at, enough for FAT, exFAT, NTFS, ext* and XFS.
 *
 * Returns 1 when a file system was found, 0 when none was, or a negative
 * errno (-ENODEV when the device went away).
 */
#define RA_PROBE_SMALL_BYTES (8 * 1024)
int ra_probe_device(RaDeviceAttrs *a, const char *devnode);
