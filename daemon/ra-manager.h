/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libudev.h>
#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "ra-config.h"
#include "ra-disk.h"
#include "ra-sbmap.h"
#include "ra-state.h"

/*
 * The daemon's one context: the event loop, the configuration, the state
 * store, and the registry of managed disks. Events come from udev
 * (ra-udev.c), the sampler (ra-sampler.c) and the bus (ra-bus.c); every
 * decision and every write goes through here.
 */
typedef struct Manager {
        sd_event *event;
        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event_source *monitor_source;
        sd_event_source *trim; /* hands freed heap back once udev work has settled */
        sd_bus *bus;           /* NULL without a system bus */
        sd_event_source *bus_retry;
        bool bus_retry_logged; /* "no bus" was said once; say it again only after a success */
        sd_event_source *sampler;
        struct RaTracer *tracer;      /* NULL without tracefs */
        bool tracer_dirty;            /* the set of disks or mounts changed since its filters were set */
        sd_event_source *filters_due; /* sets them once the current burst of changes is handled */
        unsigned tracer_wakes;        /* drains this interval because a trace buffer was half full */
        char *learning_off;           /* why nothing can be learned (no tracefs); NULL when learning works */
        RaSbMap sbmap;                /* superblock -> managed disk, for the page-cache events */
        sd_event_source *mountinfo_source; /* /proc/self/mountinfo changes: the map follows */
        struct RaBdiEarly *bdi_early;      /* btrfs bdis decided while their mount runs (ra-bdiwatch.c) */

        /* Events the tracer lost, not yet said in the log, and what they are out of (ra-sampler.c). */
        uint64_t trace_lost, trace_read;
        uint64_t trace_since;     /* counted since (CLOCK_MONOTONIC, µs) */
        uint64_t trace_lost_said; /* when losses were last said (0: never) */

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

        RaDisk **disks;
        size_t n_disks;

        struct RaSwapWatch *swap; /* vm.page-cluster (ra-swapwatch.c) */
} Manager;

/* Reads the configuration; a bad one fails here with every error logged. */
int ra_manager_new(const char *config_path, bool force_observe, Manager **ret);
Manager *ra_manager_free(Manager *m);
RA_DEFINE_CLEANUP(Manager, ra_manager_free)

/*
 * Subscribes to udev, tunes every disk there is, publishes them on the bus,
 * starts the sampler, and tells systemd we are ready.
 */
int ra_manager_start(Manager *m);

/* SIGHUP and Reload(): a bad configuration is logged and the old one kept. */
int ra_manager_reload(Manager *m);

static inline bool ra_manager_observing(const Manager *m) {
        return m->force_observe || m->restored || m->config->mode == RA_MODE_OBSERVE;
}

/* --- the registry ---------------------------------------------------------- */

RaDisk *ra_manager_find_disk(Manager *m, const char *name);
int ra_manager_add_disk(Manager *m, RaKind kind, const char *name, RaDisk **ret);
/* Drops a disk, from the bus too if clients saw it, saying why at level. */
void ra_manager_forget_disk(Manager *m, RaDisk *d, int level, const char *why);

/*
 * A disk was (re)read. For a device radaemon has not seen before, the value
 * it holds now is remembered as its original (saved by
 * ra_manager_flush_state() before anything is written); for another medium
 * behind the name, learning starts from what is known about it.
 */
void ra_manager_disk_identified(Manager *m, RaDisk *d, const char *previous_identity);

void ra_manager_notify_status(Manager *m);

/* --- the state store ------------------------------------------------------- */

/*
 * Saves the state if anything waits to be saved. A failure is logged once,
 * published as StateError, and tuning goes on with the state in memory.
 */
int ra_manager_flush_state(Manager *m);

/* --- what the bus, the sampler and signals ask for --------------------------- */

/*
 * Pins every disk with d's identity to kb. With persist, the pin is on disk
 * when this returns 0, and nothing changed when it returns an error.
 */
int ra_manager_set_pin(Manager *m, RaDisk *d, uint32_t kb, bool persist, uid_t uid);
int ra_manager_clear_pin(Manager *m, RaDisk *d, uid_t uid);

/* The adaptive policy learned a new value for d: kept for its next plug; the caller decides again. */
void ra_manager_learned(Manager *m, RaDisk *d);

/*
 * Puts every managed disk back to the value it had before radaemon first
 * saw it. With stay, radaemon and its udev helper then write nothing until
 * a reload, also across restarts (Restore()); without, only the values go
 * back (restore_on_exit). Returns how many disks were put back.
 */
unsigned ra_manager_restore(Manager *m, bool stay, const char *why);
