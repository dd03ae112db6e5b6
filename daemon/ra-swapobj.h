/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "ra-diskstat.h"
#include "ra-swap.h"
#include "ra-tune-knob.h"

/*
 * The Swap object: what the swap watcher (ra-swapwatch.c) saw of the swap
 * areas and /proc/vmstat, and what the tuning path (ra-tune-swap.c) decided
 * and wrote for vm.page-cluster. Published on the bus (ra-bus-objects.c).
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

        /* vm.page-cluster's file: RA_PAGE_CLUSTER_PATH when NULL, another in the unit tests */
        const char *sysctl_path;
        int current; /* what the sysctl holds; -1 when it cannot be read */
        bool external;
        RaReassert reassert; /* the disks' rule (ra-tune-knob.h) */
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

/*
 * What D-Bus clients see of the Swap object that can change, taken before a
 * change so that PropertiesChanged names exactly what did.
 */
typedef struct RaSwapSnapshot {
        int current;
        RaSwapDecision decision;
        char *devices;
        RaSwapClass active;
        uint64_t swapin_pages_per_sec;
        uint32_t hit_percent;
        uint64_t avg_read_request_bytes;
} RaSwapSnapshot;

void ra_swapobj_snapshot(const RaSwapWatch *w, RaSwapSnapshot *ret);
void ra_swapobj_snapshot_clear(RaSwapSnapshot *s);

/* "file:prio:class:device ..." — what clients see as Devices, to tell a change; NULL without memory. */
char *ra_swapobj_describe_areas(const RaSwapWatch *w);
