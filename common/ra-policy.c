/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ra-policy.h"
#include "ra-util.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)
#define TiB (GiB * 1024)

/* The kernel's VM_READAHEAD_PAGES: what most devices would have without us. */
#define KERNEL_DEFAULT_KB 128u

static const char *const source_names[_RA_SOURCE_MAX] = {
        [RA_SOURCE_PRIOR] = "prior",   [RA_SOURCE_LEARNED] = "learned",
        [RA_SOURCE_PINNED] = "pinned", [RA_SOURCE_UDEV] = "udev",
        [RA_SOURCE_CONFIG] = "config", [RA_SOURCE_EXTERNAL] = "external",
        [RA_SOURCE_FLEET] = "fleet",   [RA_SOURCE_CALIBRATED] = "calibrated",
};

const char *ra_source_to_string(RaSource s) {
        return s >= 0 && s < _RA_SOURCE_MAX ? source_names[s] : NULL;
}

void ra_bounds_override(RaBounds *b, uint32_t min_kb, uint32_t max_kb) {
        if (min_kb > 0) {
                b->min_kb = min_kb;
                if (b->max_kb < min_kb)
                        b->max_kb = min_kb;
        }
        if (max_kb > 0) {
                b->max_kb = max_kb;
                if (b->min_kb > max_kb)
                        b->min_kb = max_kb;
        }
}

void ra_reason_format(char reason[static RA_REASON_MAX], const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(reason, RA_REASON_MAX, format, ap);
        va_end(ap);
}

uint32_t ra_policy_size_cap_kb(uint64_t size_bytes) {
        uint64_t ratio = size_bytes / (2 * MiB);
        uint32_t cap = 4;

        while (ratio >= 4 && cap < RA_KB_LIMIT) {
                ratio /= 4;
                cap *= 2;
        }
        return cap;
}

uint32_t ra_policy_learned_cap_kb(uint64_t size_bytes) {
        uint64_t kb = size_bytes / 1024 / 128;

        kb -= kb % 4;
        if (kb < RA_KB_MIN)
                return RA_KB_MIN;
        return kb > RA_KB_LIMIT ? RA_KB_LIMIT : (uint32_t) kb;
}

static uint32_t round_to_pages(uint32_t kb) {
        return kb - kb % 4;
}

uint32_t ra_policy_clamp_kb(uint32_t kb, RaBounds b) {
        if (kb < b.min_kb)
                kb = b.min_kb;
        if (kb > b.max_kb)
                kb = b.max_kb;
        kb = round_to_pages(kb);
        return kb < RA_KB_MIN ? RA_KB_MIN : kb;
}

void ra_policy_prior(const RaDeviceAttrs *a, RaBounds bounds, RaDecision *ret) {
        char size[RA_SIZE_MAX];
        const char *why;
        uint32_t base, cap, wanted;

        *ret = (RaDecision){ .source = RA_SOURCE_PRIOR };

        if (a->size_bytes == 0) {
                ra_reason_format(ret->reason, "No medium (size 0), so there is nothing to read ahead yet.");
                return;
        }

        (void) ra_format_size(a->size_bytes, size);

        /*
         * USB bridges often claim to be rotational whatever is behind them,
         * so the transport comes before the rotational flag.
         */
        if (ra_streq(a->transport, "zram") || ra_streq(a->transport, "ram")) {
                /* The smallest: a bio-based RAM disk reads each page at memory speed when asked. */
                ret->kb = ra_policy_clamp_kb(RA_KB_MIN, bounds);
                ra_reason_format(ret->reason,
                                 "%s RAM disk: %" PRIu32 " KiB, because reading ahead in memory only copies "
                                 "pages nobody asked for and fills the page cache with them.",
                                 size, ret->kb);
                return;
        }
        if (ra_streq(a->transport, "usb")) {
                base = KERNEL_DEFAULT_KB;
                why = "USB storage starts at the kernel default until its throughput shows more pays";
        } else if (a->rotational) {
                base = a->size_bytes >= TiB ? 1024 : 512;
                why = "a rotational disk seeks when a command jumps: one stream reads as fast at any window "
                      "(its cache reads ahead), but streams that take turns seek at every switch, "
                      "and a larger window makes the switches fewer";
        } else if ((uint64_t) a->optimal_io_bytes * 2 / KiB > KERNEL_DEFAULT_KB) {
                /* As the kernel does, but only where it raises the default. */
                base = (uint32_t) ((uint64_t) a->optimal_io_bytes * 2 / KiB);
                why = "twice the optimal I/O size the driver reports";
        } else {
                base = KERNEL_DEFAULT_KB;
                why = "a non-rotational device without a large optimal I/O size starts at the "
                      "kernel default";
        }

        cap = ra_policy_size_cap_kb(a->size_bytes);
        wanted = base < cap ? base : cap;
        ret->kb = ra_policy_clamp_kb(wanted, bounds);

        if (ret->kb != wanted)
                ra_reason_format(ret->reason,
                                 "%s device: %s, held within the configured %" PRIu32 " to %" PRIu32 " KiB.",
                                 size, why, bounds.min_kb, bounds.max_kb);
        else if (cap < base)
                ra_reason_format(ret->reason,
                                 "%s device: capped at %" PRIu32 " KiB by its size, because a larger "
                                 "window would read a large share of so small a device.",
                                 size, cap);
        else
                ra_reason_format(ret->reason, "%s device: %s.", size, why);
}

RaBounds ra_policy_bounds(const RaDeviceAttrs *a, const RaSettings *s) {
        RaBounds bounds = s->bounds;

        ra_bounds_override(&bounds, a->min_kb, a->max_kb);
        return bounds;
}

void ra_policy_decide(const RaDeviceAttrs *a, const RaSettings *s, RaDecision *ret) {
        RaBounds bounds = ra_policy_bounds(a, s);

        if (s->external) {
                *ret = (RaDecision){ .kb = a->read_ahead_kb, .source = RA_SOURCE_EXTERNAL };
                ra_reason_format(ret->reason,
                                 "Set to %" PRIu32
                                 " KiB by something other than radaemon, which leaves it alone until "
                                 "the device changes, a reload, or a pin.",
                                 a->read_ahead_kb);
        } else if (a->size_bytes == 0) {
                /* Nothing to read ahead, pinned or not: the value comes with the medium's change event. */
                ra_policy_prior(a, bounds, ret);
        } else if (s->pinned_kb > 0) {
                *ret = (RaDecision){ .kb = s->pinned_kb, .source = RA_SOURCE_PINNED };
                ra_reason_format(ret->reason, "Pinned to %" PRIu32 " KiB by an administrator over D-Bus.",
                                 s->pinned_kb);
        } else if (a->pin_kb > 0) {
                *ret = (RaDecision){ .kb = a->pin_kb, .source = RA_SOURCE_UDEV };
                ra_reason_format(ret->reason,
                                 "Pinned to %" PRIu32 " KiB by RADAEMON_READ_AHEAD_KB in a udev rule.",
                                 a->pin_kb);
        } else if (s->config_kb > 0) {
                *ret = (RaDecision){ .kb = s->config_kb, .source = RA_SOURCE_CONFIG };
                ra_reason_format(ret->reason,
                                 "Pinned to %" PRIu32 " KiB by read_ahead_kb in the configuration.",
                                 s->config_kb);
        } else if (s->learned_kb > 0) {
                *ret = (RaDecision){ .kb = ra_policy_clamp_kb(s->learned_kb, bounds),
                                     .source = RA_SOURCE_LEARNED };
                if (ret->kb != s->learned_kb)
                        ra_reason_format(ret->reason,
                                         "Learned %" PRIu32
                                         " KiB from this device's reads, held within %" PRIu32 " to %" PRIu32
                                         " KiB.",
                                         s->learned_kb, bounds.min_kb, bounds.max_kb);
                else if (s->learned_reason && s->learned_reason[0])
                        ra_reason_format(ret->reason, "%s", s->learned_reason);
                else
                        ra_reason_format(ret->reason,
                                         "Learned %" PRIu32 " KiB from this device's reads before.",
                                         s->learned_kb);
        } else if (a->fleet_kb > 0) {
                /* A starting value: what this device's reads here teach replaces it. */
                *ret = (RaDecision){ .kb = ra_policy_clamp_kb(a->fleet_kb, bounds),
                                     .source = RA_SOURCE_FLEET };
                if (ret->kb != a->fleet_kb)
                        ra_reason_format(
                                ret->reason,
                                "Starts at %" PRIu32 " KiB, the %" PRIu32
                                " KiB a fleet learned for this model (RADAEMON_FLEET_KB from udev's "
                                "hwdb) held within %" PRIu32 " to %" PRIu32
                                " KiB, until it learns its own here.",
                                ret->kb, a->fleet_kb, bounds.min_kb, bounds.max_kb);
                else
                        ra_reason_format(
                                ret->reason,
                                "Starts at %" PRIu32 " KiB, what a fleet learned for this model "
                                "(RADAEMON_FLEET_KB from udev's hwdb), until it learns its own here.",
                                ret->kb);
        } else if (s->has_calibrated) {
                *ret = s->calibrated;
                ret->kb = ra_policy_clamp_kb(ret->kb, bounds);
        } else if (s->has_prior)
                *ret = s->prior;
        else
                ra_policy_prior(a, bounds, ret);

        /*
         * The kernel keeps whole pages and rounds down: on a kernel with pages
         * larger than 4 KiB, a smaller value would be stored as 0.
         */
        if (ret->kb > 0 && ret->source != RA_SOURCE_EXTERNAL && ret->kb % ra_page_kb() != 0)
                ret->kb += ra_page_kb() - ret->kb % ra_page_kb();
}

uint32_t ra_policy_kernel_kb(uint32_t optimal_io_bytes) {
        uint32_t kb = optimal_io_bytes / 1024u * 2u;

        return kb > 128u ? kb : 128u;
}
