/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* Where the window is, below a disk's sysfs directory and below a bdi's. */
#define RA_APPLY_DISK_ATTR "queue/read_ahead_kb"
#define RA_APPLY_BDI_ATTR "read_ahead_kb"

/*
 * The only code that writes read_ahead_kb. sysfd is the device's directory in
 * sysfs (/sys/block/<name>, /sys/class/bdi/<name>), attr one of the above.
 *
 * Returns 0 when the kernel holds kb afterwards; -ENODEV when the device went
 * away (a normal event, not a failure); -EIO when the kernel kept another
 * value; another negative errno when the write itself failed. ret_now, if not
 * NULL, receives what sysfs holds afterwards whenever it could be read.
 */
int ra_apply_read_ahead(int sysfd, const char *attr, uint32_t kb, uint32_t *ret_now);

/* Reads the current value; -ENODEV when the device went away. */
int ra_apply_read_current(int sysfd, const char *attr, uint32_t *ret_kb);
