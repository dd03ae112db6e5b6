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

/*
 * The daemon's one context: the event loop, the configuration, the state
 * (ra-state-store.c) and the registry of managed objects (ra-registry.c). The
 * sources (ra-udev.c, ra-bdiwatch.c, ra-sampler.c, ra-swapwatch.c) hand
 * what they see to the tuning path (ra-tune.c), which decides, writes and
 * announces; ra-manager.c starts and stops them all.
 */
typedef struct Manager {
        sd_event *event;
        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event_source *monitor_source;
        sd_event_source *trim; /* hands freed heap back once udev work has settled */
        sd_bus *bus;           /* NULL without a system bus */
        sd_event_source *bus_retry;
        bool openfiles_refused;    /* "pidfd_getfd refused" was said (ra-openfiles.c) */
        bool bus_retry_logged;     /* "no bus" was said once; say it again only after a success */
        struct RaSampler *sampler; /* the statistics sampler and its tracer (ra-sampler.c) */
        char *learning_off;        /* why nothing can be learned (no tracefs); NULL when learning works */
        sd_event_source *mountinfo_source; /* /proc/self/mountinfo changes: the map follows */
        sd_event_source *mounts_due;  /* the scan of the mounts, waiting for its share (ra-bdiwatch.c) */
        const char *mounts_due_event; /* what the waiting scan is for: "mount", "udev" */
        uint64_t mounts_next_usec;    /* CLOCK_MONOTONIC: when the next scan may follow its event */
        struct RaBdiEarly *bdi_early; /* btrfs bdis decided while their mount runs (ra-bdiwatch.c) */
        sd_event_source *paths_due;   /* the [path:] sections are resolved again (ra-pathwatch.c) */
        pid_t paths_stuck;     /* the child whose lookup of their paths passed its deadline; 0: none */
        struct RaUsers *users; /* what each user's objects may cost (ra-users.c) */
        pid_t probe_stuck;     /* the libblkid probe that passed its deadline; 0: none (ra-probe-run.c) */
        bool udevd_runs;       /* at start: devices udevd has not probed yet are left to it */
        char **bdis_added;     /* bdis whose udev "add" came before radaemon knew them (ra-bdiscan.c) */

        char *config_path;  /* --config FILE, or NULL for the installed files */
        bool force_observe; /* --observe */
        bool restored; /* Restore() put the originals back: observe until a reload (kept in the state) */
        bool ready;    /* coldplug done, READY=1 sent */
        RaConfig *config;

        RaState *state;
        char *state_dir;       /* as it was at start: the one the state was read from */
        bool state_dirty;      /* something is waiting to be saved */
        bool original_unsaved; /* a device's first original among it: saved before any write (ra-tune.c) */
        char *state_error;     /* why the last save failed; NULL when it worked */
        bool state_frozen;     /* the file could not be read, nor moved aside: never overwrite it */
        int state_lock;        /* holds the state directory's lock for the daemon's life; -1 before */

        RaDisk **disks;
        size_t n_disks;

        /* Objects a source reported and is reading, to be decided as a batch (ra-tune-batch.c). */
        struct RaPending *pending;
        size_t n_pending, n_pending_allocated;

        struct RaSwapWatch *swap;       /* vm.page-cluster (ra-swapwatch.c) */
        struct RaCalibJob *calibration; /* the one under way, and those given up on (ra-calib-sched.c) */

        /*
         * Set by ra-manager.c, as the tracer's callbacks are: how the layers
         * below reach what starts them without including it.
         */
        void (*on_disks_changed)(struct Manager *m); /* the registry changed: the sampler's filters follow */
        void (*on_manager_changed)(struct Manager *m, const char *property); /* the store's StateError */
        void (*on_bdis_moved)(struct Manager *m, const char *event); /* udev saw what bdis stand on */
        void (*on_mounts_moved)(struct Manager *m); /* mounts or stacks changed: [path:] sections follow */
        int (*on_reload)(struct Manager *m);        /* Reload() over the bus */
        /* A calibration started (running), or ended with what it measured (NULL: nothing)
         * (ra-calib-sched.c).
         */
        void (*on_calibration)(struct Manager *m, RaDisk *d, bool running, const RaCalib *measured);
        /*
         * The sampler's interval ended at now (peek: only a look between
         * samples, ra-sampler.c): every disk's reads to the tuning path, then
         * one save. Returns whether a disk wants a look before the next sample.
         */
        bool (*on_interval)(struct Manager *m, uint64_t now, bool peek);
        /* Why learning is off (no tracefs), or NULL now that it works (ra-sampler.c). */
        void (*on_learning)(struct Manager *m, const char *off);
        /*
         * The udev source and the bdi scan are about to read d again for event
         * (ra-udev.c, ra-bdiscan.c); < 0: not now, d must not be read. Then,
         * once each object seen is read, on_objects_read: the tuning path
         * decides the batch (ra-tune-batch.c).
         */
        int (*on_object_seen)(struct Manager *m, RaDisk *d, const char *event);
        void (*on_objects_read)(struct Manager *m);
} Manager;

static inline bool ra_context_observing(const Manager *m) {
        return m->force_observe || m->restored || m->config->mode == RA_MODE_OBSERVE;
}
