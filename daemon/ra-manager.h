/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libudev.h>
#include <stdbool.h>
#include <systemd/sd-event.h>

#include "ra-config.h"
#include "ra-disk.h"

typedef struct Manager {
        sd_event *event;
        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event_source *monitor_source;

        char *config_path;  /* --config FILE, or NULL for the installed files */
        bool force_observe; /* --observe */
        RaConfig *config;

        RaDisk **disks;
        size_t n_disks;
} Manager;

/* Reads the configuration; a bad one fails here with every error logged. */
int ra_manager_new(const char *config_path, bool force_observe, Manager **ret);
Manager *ra_manager_free(Manager *m);
RA_DEFINE_CLEANUP(Manager, ra_manager_free)

/* Subscribes to udev, tunes every disk there is, and tells systemd we are ready. */
int ra_manager_start(Manager *m);

/* SIGHUP: a bad configuration is logged and the old one kept. */
int ra_manager_reload(Manager *m);

RaDisk *ra_manager_find_disk(Manager *m, const char *name);

static inline bool ra_manager_observing(const Manager *m) {
        return m->force_observe || m->config->mode == RA_MODE_OBSERVE;
}
