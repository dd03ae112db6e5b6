/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "ra-context.h"

/*
 * The daemon's lifecycle: reads the configuration and the state, starts the
 * sources (udev, the bdi watcher, the swap watcher, the sampler) and the
 * bus, wires them together, reloads, and stops them.
 */

/* Reads the configuration; a bad one fails here with every error logged. */
int ra_manager_new(const char *config_path, bool force_observe, Manager **ret);
Manager *ra_manager_free(Manager *m);
RA_DEFINE_CLEANUP(Manager, ra_manager_free)

/*
 * Subscribes to udev, tunes every disk there is, publishes them on the bus,
 * starts the sampler, and tells systemd we are ready.
 */
int ra_manager_start(Manager *m);

/*
 * SIGHUP and Reload(): a bad configuration is logged and the old one kept.
 * What waits to be saved is saved first, as at exit.
 */
int ra_manager_reload(Manager *m);

/*
 * Saves what waits to be saved (learned values, calibrations, originals:
 * between two samples they are in memory only), so that a stop or a
 * reload loses none of them. A failure is logged.
 */
int ra_manager_save(Manager *m, const char *why);
