/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "ra-device.h"

/*
 * RADAEMON_FLEET_KB for the disk's model from udev's hwdb, looked up with
 * the key ra_fleet_key() makes of the disk's ID_VENDOR, ID_MODEL and
 * ID_REVISION (see ra-fleet.h): *ret_kb is 0 when there is no record (or no
 * model, or no hwdb), and when the record's value is one radaemon would not
 * take (said on stderr). -ENOMEM.
 */
int radaemon_udev_fleet_lookup(const RaDeviceAttrs *a, uint32_t *ret_kb);

/*
 * The fleet's value for a disk's model, unless a rule of the machine's set
 * RADAEMON_FLEET_KB already: looked up into a->fleet_kb and printed for
 * udev's database (radaemon reads it there). -ENOMEM.
 */
int radaemon_udev_fleet(RaDeviceAttrs *a);
