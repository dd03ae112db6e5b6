/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ra-policy.h"

/*
 * Swap readahead: vm.page-cluster, one global number (a swap-in reads up to
 * 2^page-cluster pages). This module is pure: parsers for /proc/swaps and
 * /proc/vmstat, and the policy that picks page-cluster from the swap devices
 * in use and learns from what swap-in did. daemon/ra-swap.c does the I/O.
 */

/* The kernel's default, and what radaemon never goes far from without evidence. */
#define RA_SWAP_KERNEL_DEFAULT 3
/*
 * The largest value a pin or [swap] page_cluster may set. The sysctl takes
 * up to 31, but 2^10 pages (4 MiB) per fault is already more than any device
 * pays back, and VMA-based readahead stops at 2^5 anyway.
 */
#define RA_SWAP_PAGE_CLUSTER_MAX 10
/* The range learning moves within, and the bench measures. */
#define RA_SWAP_LEARN_MAX 6
/*
 * At 0 the kernel reads nothing ahead, so swap-in could never show again
 * that more pays: learning stops at 1, which reads ahead only while the
 * kernel's own window sees its pages used.
 */
#define RA_SWAP_LEARN_MIN 1

typedef enum RaSwapClass {
        RA_SWAP_CLASS_UNKNOWN, /* could not map it to a block device */
        RA_SWAP_CLASS_ZRAM,    /* RAM, synchronous: readahead only costs */
        RA_SWAP_CLASS_NONROT,  /* SSD and alike: commands are cheap, seeks free */
        RA_SWAP_CLASS_ROT,     /* every command pays a seek */
        _RA_SWAP_CLASS_MAX,
} RaSwapClass;

const char *ra_swap_class_to_string(RaSwapClass c);

/* One line of /proc/swaps, and what the daemon found out about it. */
typedef struct RaSwapArea {
        char *filename; /* unescaped */
        bool is_file;   /* "file"; else "partition" (a block device) */
        uint64_t size_kb;
        uint64_t used_kb;
        int priority;
        char *device;      /* kernel name of the disk it lies on; NULL when unknown (daemon) */
        RaSwapClass class; /* (daemon) */
} RaSwapArea;

void ra_swap_areas_free(RaSwapArea *a, size_t n);

/*
 * Parses the text of /proc/swaps: a header line, then one area a line
 * (filename with \ooo escapes, type, size, used, priority). Anything else is
 * -EINVAL, so a format this code does not know is never half understood.
 */
int ra_swap_parse_swaps(const char *text, size_t len, RaSwapArea **ret, size_t *ret_n);

/* The swap counters of /proc/vmstat, in pages. */
typedef struct RaVmSwapStat {
        uint64_t pswpin;      /* pages read from swap devices */
        uint64_t pswpout;     /* pages written to them */
        uint64_t swap_ra;     /* pages read ahead */
        uint64_t swap_ra_hit; /* read-ahead pages a later fault found */
        bool has_ra;          /* the kernel has swap_ra and swap_ra_hit (4.14 and later) */
} RaVmSwapStat;

/* Parses /proc/vmstat ("name value" lines); pswpin and pswpout must be there. */
int ra_swap_parse_vmstat(const char *text, size_t len, RaVmSwapStat *ret);

/*
 * The class a swap-in most likely reads from: where most pages are swapped
 * out; with nothing swapped out yet, the highest priority, which the kernel
 * fills first. RA_SWAP_CLASS_UNKNOWN with no area; *ret_n_in_use (may be
 * NULL) says how many areas make up that set.
 */
RaSwapClass ra_swap_active_class(const RaSwapArea *a, size_t n, size_t *ret_n_in_use);

/* The first value for a class, with its reason. */
int ra_swap_prior(RaSwapClass c, char reason[static RA_REASON_MAX]);

/* One sampling interval's deltas, while the daemon watched. */
typedef struct RaSwapObservation {
        double seconds;
        uint64_t pswpin, swap_ra, swap_ra_hit; /* pages */
        bool has_ra;
        /* the disks beneath the active swap areas: */
        uint64_t read_ios, read_sectors, io_ticks_ms;
} RaSwapObservation;

/* Swap-in below this is not heavy enough to learn from (pages a second: 1 MiB/s). */
#define RA_SWAP_HEAVY_PAGES_PER_SEC 256
/*
 * Pages swapped in per judgement: enough faults that the hit ratio means
 * something (hundreds of pages read ahead), few enough that a workload of a
 * few seconds is judged more than once.
 */
#define RA_SWAP_WINDOW_PAGES 1024
/* Windows in a row that must agree before a step (one heavy interval may hold them all). */
#define RA_SWAP_AGREE 2
/* Windows in a row that agree and make the step two values: strong evidence, not a fluke. */
#define RA_SWAP_AGREE_STRONG (2 * RA_SWAP_AGREE)

typedef struct RaSwapModel {
        RaSwapClass class; /* learned for this class; another one starts over */
        int learned;       /* -1: nothing learned */
        char reason[RA_REASON_MAX];
        int direction; /* of the judgements in a row: +1 grow, -1 shrink, 0 keep */
        unsigned agree;
        RaSwapObservation window;   /* accumulated heavy intervals */
        char judged[RA_REASON_MAX]; /* what the last full window said */
        unsigned judgements;        /* how many there were */
        int at;                     /* the value the last interval was seen at; -1: none yet */
        /* Pages swapped in and used per second of device busy time, at each value (0: unknown). */
        double score[RA_SWAP_LEARN_MAX + 1];
} RaSwapModel;

void ra_swap_model_reset(RaSwapModel *m, RaSwapClass c, int learned);

/*
 * Feeds one interval at page-cluster current. Returns 1 when m->learned
 * changed (m->reason says why in one sentence), 0 otherwise. The first
 * interval at a new value is not evidence: its faults still find pages read
 * ahead at the old one.
 */
int ra_swap_learn(RaSwapModel *m, int current, const RaSwapObservation *o);

/* Everything but the devices that the decision depends on; -1 for "none". */
typedef struct RaSwapSettings {
        bool manage; /* [swap] manage */
        int pinned;  /* over D-Bus (this run's, else the stored one) */
        int config;  /* [swap] page_cluster */
        int learned; /* for the active class */
        const char *learned_reason;
        bool external; /* someone else wrote the sysctl, and radaemon yields */
        int current;   /* what the sysctl holds */
} RaSwapSettings;

typedef struct RaSwapDecision {
        int value; /* -1: nothing to decide; never written */
        RaSource source;
        char reason[RA_REASON_MAX];
} RaSwapDecision;

/*
 * The value radaemon wants: someone else's, when it yields; a pin (D-Bus,
 * then configuration); nothing without a swap area or with manage = no;
 * else what was learned for the active class; else its prior.
 */
void ra_swap_decide(RaSwapClass active, size_t n_areas, const RaSwapSettings *s, RaSwapDecision *ret);

static inline bool ra_swap_page_cluster_is_valid(int v) {
        return v >= 0 && v <= RA_SWAP_PAGE_CLUSTER_MAX;
}
