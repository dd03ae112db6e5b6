/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "ra-dbus.h"
#include "ra-disk.h"
#include "ra-swapobj.h"

/*
 * The D-Bus API of daemon/org.radaemon.ReadAhead1.xml on the system bus.
 * Every function is a no-op while there is no bus: radaemon tunes without one.
 */

struct Manager;

/*
 * Connects to the system bus, publishes the objects and takes the name.
 * No bus is not an error: it is logged once and tried again every few
 * seconds, as is a bus that goes away. Another owner of the name is an error.
 */
int ra_bus_open(struct Manager *m);
void ra_bus_close(struct Manager *m);

/* Emits PropertiesChanged for one property of the manager. */
void ra_bus_manager_changed(struct Manager *m, const char *property);

/* Announces a new disk; afterwards it counts as published. */
void ra_bus_disk_added(struct Manager *m, RaDisk *d);
void ra_bus_disk_removed(struct Manager *m, const RaDisk *d);
/* Emits PropertiesChanged for what differs from before. */
void ra_bus_disk_changed(struct Manager *m, const RaDisk *d, const RaDiskSnapshot *before);

/* Emits PropertiesChanged of the Swap object for what differs from before. */
void ra_bus_swap_changed(struct Manager *m, const RaSwapSnapshot *before);
