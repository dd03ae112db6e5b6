/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libudev.h>
#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "ra-config.h"
#include "ra-disk.h"
#include "ra-state.h"

typedef struct Manager {
        sd_event *event;
        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event_source *monitor_source;
        sd_bus *bus; /* NULL without a system bus */
        sd_event_source *sampler;
        struct RaTracer *tracer; /* NULL without tracefs */
        bool tracer_dirty;       /* the set of disks changed since its filter was set */

        char *config_path;  /* --config FILE, or NULL for the installed files */
        bool force_observe; /* --observe */
        RaConfig *config;
        RaState *state;
        char *state_dir; /* as it was at start: the one the state was read from */

        RaDisk **disks;
        size_t n_disks;
} Manager;

/* Reads the configuration; a bad one fails here with every error logged. */
int ra_manager_new(const char *config_path, bool force_observe, Manager **ret);
Manager *ra_manager_free(Manager *m);
RA_DEFINE_CLEANUP(Manager, ra_manager_free)

/*
 * Subscribes to udev, tunes every disk there is, publishes them on the bus,
 * and tells systemd we are ready.
 */
int ra_manager_start(Manager *m);

/* SIGHUP and Reload(): a bad configuration is logged and the old one kept. */
int ra_manager_reload(Manager *m);

/*
 * Pins every disk with d's identity to kb. With persist, the pin is on disk
 * when this returns 0, and nothing changed when it returns an error.
 */
int ra_manager_set_pin(Manager *m, RaDisk *d, uint32_t kb, bool persist, uid_t uid);
int ra_manager_clear_pin(Manager *m, RaDisk *d, uid_t uid);

/* The adaptive policy learned a new value for d: keep it, and apply it. */
void ra_manager_learned(Manager *m, RaDisk *d);

RaDisk *ra_manager_find_disk(Manager *m, const char *name);

static inline bool ra_manager_observing(const Manager *m) {
        return m->force_observe || m->config->mode == RA_MODE_OBSERVE;
}
