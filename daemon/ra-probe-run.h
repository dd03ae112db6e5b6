/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-device.h"

struct Manager;

/*
 * ra_probe_device() for a device udevd has not probed, in a child with a
 * deadline of RA_PROBE_DEADLINE_MSEC: a device whose reads wait on a server
 * that stopped answering (a loop device over a FUSE or NFS file) leaves a
 * child stuck in its read, not radaemon's event loop. While one is stuck, no
 * other device is probed (-EBUSY): one stuck process at most. Returns what
 * ra_probe_device() does, -ETIMEDOUT when the deadline passed.
 */
#define RA_PROBE_DEADLINE_MSEC 1000
int ra_probe_run(struct Manager *m, RaDeviceAttrs *a, const char *devnode);
