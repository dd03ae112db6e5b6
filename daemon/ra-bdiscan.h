/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "ra-bdi.h"

struct Manager;

/*
 * What the bdi watcher (ra-bdiwatch.c) found, read into the registry: every
 * bdi of a mounted file system in /proc/self/mountinfo, new ones decided
 * and written through the tuning path, gone ones forgotten.
 */
void ra_bdiscan_scan(struct Manager *m, const char *event);

/*
 * udevd's "add" (added) or "remove" of a bdi radaemon does not know yet: its
 * mount is not in mountinfo yet, or the scan waits its share of the time.
 * The scan that finds it reads it as udevd left it, as for a known one.
 */
void ra_bdiscan_udev_added(struct Manager *m, const char *name, bool added);

/* One bdi found outside a scan (a btrfs being mounted; b is cleared): true when it is to be decided and was.
 */
bool ra_bdiscan_take(struct Manager *m, RaBdi *b, const char *event);
