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
 * in a thread of its own, so that the event loop never waits on a device;
 * the thread touches nothing but its job, and hands it back through an
 * eventfd. Like the other sources it only reports: Manager.on_calibration
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
void ra_calibrate_consider(Manager *m, RaDisk *d, uint64_t now);

/*
 * Calibrate() over D-Bus: measures d now whatever is stored, if no other
 * calibration runs and d can be read; replies to request when done, with
 * what was measured, or an error. Returns 0 or a negative errno (-EBUSY:
 * one runs; -EOPNOTSUPP: d is not a disk that can be calibrated).
 */
int ra_calibrate_request(Manager *m, RaDisk *d, sd_bus_message *request);

/* At exit: waits for a calibration under way (at most about a second of reads). */
void ra_calibrate_stop(Manager *m);
