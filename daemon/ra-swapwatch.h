/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "ra-stats.h"
#include "ra-swap.h"

/*
 * vm.page-cluster, kept right for the swap devices in use: watches
 * /proc/swaps (which signals changes to poll), maps every area to the disk
 * it lies on, decides with the pure policy of common/ra-swap.c, learns from
 * /proc/vmstat and the disks' counters while swap-in is heavy, and writes
 * /proc/sys/vm/page-cluster, the only file it writes. Published on the bus
 * as the Swap object.
 */

struct Manager;

#define RA_PAGE_CLUSTER_PATH "/proc/sys/vm/page-cluster"

typedef struct RaSwapDisk {
        char *name; /* kernel name under /sys/class/block */
        RaDiskStat stat;
        bool have_stat;
} RaSwapDisk;

typedef struct RaSwapWatch {
        struct Manager *manager;
        sd_event_source *swaps_source; /* /proc/swaps, for POLLPRI */
        sd_event_source *timer;

        RaSwapArea *areas;
        size_t n_areas;
        RaSwapClass active;
        size_t n_active;
        RaSwapDisk *disks; /* beneath the active areas */
        size_t n_disks;

        int current; /* what the sysctl holds; -1 when it cannot be read */
        bool external;
        unsigned reasserts;
        uint64_t reassert_since;
        int write_error;
        bool announced;
        RaSwapDecision decision;
        RaSwapModel model;

        RaVmSwapStat vm;
        uint64_t vm_usec; /* 0: no baseline */

        /* What the last busy interval showed, for the bus. */
        uint64_t swapin_pages_per_sec;
        uint32_t hit_percent;
        uint64_t avg_read_request_bytes;
} RaSwapWatch;

/* Reads /proc/swaps and the sysctl, decides, and starts watching. */
int ra_swapwatch_start(struct Manager *m);
void ra_swapwatch_free(struct Manager *m);

/* Decides again (configuration reloaded, pin changed) and writes unless observing. */
void ra_swapwatch_tune(struct Manager *m, const char *event);

/* Puts back the value page-cluster had before radaemon first wrote it; 1 when it did. */
int ra_swapwatch_restore(struct Manager *m, const char *why);

/* Pins page-cluster (persist: durably, the call returns after the save). */
int ra_swapwatch_set_pin(struct Manager *m, int value, bool persist, uid_t uid);
int ra_swapwatch_clear_pin(struct Manager *m, uid_t uid);

/* The Swap object on the bus. */
int ra_swapwatch_bus_add(struct Manager *m, sd_bus *bus);
