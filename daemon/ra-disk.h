/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libudev.h>
#include <stdbool.h>

#include "ra-device.h"
#include "ra-policy.h"

/* One disk radaemon manages: what it is, what we want for it, and why. */
typedef struct RaDisk {
        char *name; /* kernel name; the key of the registry */
        char *syspath;
        char *devnode;
        char *identity;

        RaDeviceAttrs attrs;
        RaSettings settings;
        RaDecision decision;

        bool announced; /* the decision has been logged at info level */
        bool seen;      /* found by the enumeration under way */
} RaDisk;

int ra_disk_new(const char *name, RaDisk **ret);
RaDisk *ra_disk_free(RaDisk *d);
RA_DEFINE_CLEANUP(RaDisk, ra_disk_free)

/*
 * Re-reads sysfs and the udev properties. Returns -ENODEV when the device is
 * gone; when a RADAEMON_* property is invalid, the rest is still read and
 * *ret_bad_property names the bad one.
 */
int ra_disk_update(RaDisk *d, struct udev_device *dev, const char **ret_bad_property);

/* Opens the disk's sysfs directory for the applier; -ENODEV when it is gone. */
int ra_disk_open_sysfs(const RaDisk *d);
