/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-device.h"

/*
 * The policy: pure functions from what a device is (and, later, what it
 * does) to a read_ahead_kb and one sentence that says why. No I/O here, so
 * the tests can drive it with simulated devices.
 */

typedef enum RaSource {
        RA_SOURCE_PRIOR,      /* from the device's attributes */
        RA_SOURCE_LEARNED,    /* from observed throughput and access pattern */
        RA_SOURCE_PINNED,     /* set over D-Bus */
        RA_SOURCE_UDEV,       /* RADAEMON_READ_AHEAD_KB from a udev rule */
        RA_SOURCE_CONFIG,     /* read_ahead_kb in a [device:…] section */
        RA_SOURCE_EXTERNAL,   /* somebody else's value, left alone */
        RA_SOURCE_FLEET,      /* RADAEMON_FLEET_KB from udev's hwdb: what a fleet learned for the model */
        RA_SOURCE_CALIBRATED, /* from this device's own measured command cost and bandwidth */
        _RA_SOURCE_MAX,
} RaSource;

const char *ra_source_to_string(RaSource s);

/*
 * Whether a value came from radaemon itself (its prior, a calibration, a
 * fleet's starting value, what it learned), so that learning may move it;
 * a pin, a rule, the configuration or somebody else's value it may not.
 */
static inline bool ra_source_learnable(RaSource s) {
        return s == RA_SOURCE_PRIOR || s == RA_SOURCE_CALIBRATED || s == RA_SOURCE_FLEET ||
               s == RA_SOURCE_LEARNED;
}

typedef struct RaBounds {
        uint32_t min_kb;
        uint32_t max_kb;
} RaBounds;

/*
 * Replaces b's bounds by a more specific source's ([device:GLOB], udev); 0
 * leaves a bound as it is. A more specific bound may widen as well as narrow,
 * and where the two would cross, the more specific one wins.
 */
void ra_bounds_override(RaBounds *b, uint32_t min_kb, uint32_t max_kb);

#define RA_REASON_MAX 256

/* Formats one sentence of reason into a RA_REASON_MAX buffer, cut if it must be. */
void ra_reason_format(char reason[static RA_REASON_MAX], const char *format, ...) _printf_(2, 3);

typedef struct RaDecision {
        uint32_t kb; /* 0: nothing to decide (no medium); never written */
        RaSource source;
        char reason[RA_REASON_MAX];
} RaDecision;

/* What the configuration, the administrator and learning say about one device. */
typedef struct RaSettings {
        RaBounds bounds;            /* [policy], replaced where matching [device:…] sections say */
        uint32_t pinned_kb;         /* set over D-Bus; 0 when not pinned */
        uint32_t config_kb;         /* read_ahead_kb from the configuration; 0 when unset */
        uint32_t learned_kb;        /* from what the device did (ra-adapt); 0 when nothing learned */
        const char *learned_reason; /* one sentence, with learned_kb */
        bool external;              /* someone else set read_ahead_kb, and radaemon yields to it */
        bool leave_open_files;      /* open_files = leave: files keep the window they opened with */
        /*
         * Below what was learned here, above the kind's prior: what a fleet
         * learned for the device's model (RADAEMON_FLEET_KB from udev's hwdb,
         * the attributes' fleet_kb), then what a calibration measured on this
         * device (has_calibrated, calibrated).
         */
        bool has_calibrated;
        RaDecision calibrated;
        /*
         * Where the object's kind has a prior of its own (a bdi's, from what
         * lies beneath it; a stacked device's, from its leaves): it, instead
         * of the prior from the object's attributes.
         */
        bool has_prior;
        RaDecision prior;
} RaSettings;

/*
 * The largest window a device of this size gets from its attributes alone:
 * 4 KiB at 2 MiB and below, doubling for each 4x of size (128 KiB at 2 GiB,
 * 512 KiB at 32 GiB), so that a probe of a small device never reads a large
 * share of it.
 */
uint32_t ra_policy_size_cap_kb(uint64_t size_bytes);

/*
 * Learning and calibration never give a device a window larger than 1/128
 * of it, so a probe of a small stick never reads a large share of it; unlike
 * the prior's cap this grows with size itself, so a 22 GB device can learn
 * 2 MiB.
 */
uint32_t ra_policy_learned_cap_kb(uint64_t size_bytes);

/*
 * The window the kernel gives a queue from its limits, max(2 × optimal I/O
 * size, 128 KiB) (block/blk-settings.c), whenever it reads or stacks them
 * again: a dm table's resume, a member added to an md array.
 */
uint32_t ra_policy_kernel_kb(uint32_t optimal_io_bytes);

/* kb within the bounds, in whole 4 KiB pages, never below RA_KB_MIN. */
uint32_t ra_policy_clamp_kb(uint32_t kb, RaBounds b);

/* The first value for a device, from its size, rotation, transport and limits. */
void ra_policy_prior(const RaDeviceAttrs *a, RaBounds bounds, RaDecision *ret);

/*
 * The bounds in force for a device's automatic values and D-Bus pins: the
 * configuration's, replaced where RADAEMON_MIN_KB/RADAEMON_MAX_KB from udev
 * say otherwise.
 */
RaBounds ra_policy_bounds(const RaDeviceAttrs *a, const RaSettings *s);

/*
 * The value radaemon wants for a device: what is there, when radaemon yields
 * to someone else's change; nothing (0) without a medium; a pin where there is one (D-Bus, then udev, then
 * configuration); else what was learned here; else a fleet's value for the
 * model (RADAEMON_FLEET_KB), a starting value only; else a calibration's;
 * else the prior. All but the pins stay within the bounds of the
 * configuration and the RADAEMON_MIN_KB and RADAEMON_MAX_KB properties.
 */
void ra_policy_decide(const RaDeviceAttrs *a, const RaSettings *s, RaDecision *ret);
