/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <systemd/sd-bus.h>

#include "ra-context.h"

/*
 * A disk's calibration (issue 26): once per identity, before its first job,
 * radaemon reads it directly (O_DIRECT, at idle I/O priority) in a few sizes,
 * and, if it is rotational, at a few places apart, and stores what that cost
 * (common/ra-calib.h): its first window follows from it. One disk at a time,
 * in a process of its own (ra-calib-process.h), so that neither the event
 * loop nor the daemon's exit ever waits on a device; the daemon watches its
 * exit and the shared memory it writes into. Each read has a deadline of
 * 10 s: past it the calibration is given up (the caller answered, the disk
 * not tried again this run) and the process is killed and left to die when
 * its read returns, if ever; only a disk without such a process left over
 * is calibrated again. Disks a direct read could hang or fail on are never
 * read (ra_calib_unsafe(): network block devices, optical drives, zoned
 * disks, suspended dm devices, drives without a medium); every read is a
 * whole number of the disk's logical blocks; and where the I/O scheduler
 * does not hold idle-class reads back (none, kyber), a pause after each
 * read keeps the calibration to a quarter of the device's time.
 * Like the other sources it only reports: Manager.on_calibration
 * (the tuning path's ra_tune_calibration()) is told when one starts and
 * what it measured, and stores, decides and announces.
 *
 * Only a disk decided from its prior (nothing learned, stored, pinned,
 * configured or given by a fleet), with a medium, while radaemon manages
 * (not observing) and calibrate= is on; only after a whole interval in which
 * it did nothing, and a rotational disk only while it is awake (it read or
 * wrote within the last minute: a calibration must not spin one up). Other
 * I/O on the disk while it runs stops it; it is tried again after a minute
 * of quiet.
 */

/* From the sampler, every interval a disk is looked at: starts its calibration when it is due. */
void ra_calib_sched_consider(Manager *m, RaDisk *d, uint64_t now);

/*
 * Calibrate() over D-Bus: measures d now whatever is stored, if no other
 * calibration runs and d can be read; replies to request when done, with
 * what was measured, or an error (within the read deadline when the device
 * does not answer). Returns 0 or a negative errno (-EBUSY: one runs;
 * -EAGAIN: d's last calibration was given up on and its read has not
 * returned; -EOPNOTSUPP: d may not be calibrated, *ret_why says why, a
 * phrase to follow "it is ").
 */
int ra_calib_sched_request(Manager *m, RaDisk *d, sd_bus_message *request, const char **ret_why);

/*
 * At exit: kills the calibration processes and reaps those that end within
 * a second; one still stuck in a read is left behind (it dies when the read
 * returns), so that the daemon exits on time.
 */
void ra_calib_sched_stop(Manager *m);
