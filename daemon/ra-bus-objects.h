/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "ra-disk.h"

struct Manager;

/*
 * The Device objects (one per managed disk, bdi or stacked device) and the
 * Swap object, and the signals that tell what changed of them. ra-bus.c
 * holds the connection and the manager object.
 */
int ra_bus_objects_add(struct Manager *m, sd_bus *bus);

/* SetReadAhead() and ClearPin() of a device, for its own object and the manager's. */
int ra_bus_device_set_read_ahead(RaDisk *d, sd_bus_message *msg, uint32_t kb, int persist,
                                 sd_bus_error *error);
int ra_bus_device_clear_pin(RaDisk *d, sd_bus_message *msg, sd_bus_error *error);
