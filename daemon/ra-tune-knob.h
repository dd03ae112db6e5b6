/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct Manager;

/*
 * What the tuning path writes, behind a small adapter: a disk's or a bdi's
 * window (ra-tune.c), or vm.page-cluster (ra-tune-swap.c). Both are written
 * after their originals are saved, read back, logged in the one journal
 * format (log_disk(), its MESSAGE_IDs), and defended against somebody
 * else's writes by the one reassert rule.
 */

/* Someone who changes a value back this often a minute is left to it. */
#define RA_REASSERT_MAX 3
#define RA_REASSERT_WINDOW_USEC (60 * UINT64_C(1000000))

typedef struct RaReassert {
        unsigned count; /* writes again after such changes, since since */
        uint64_t since; /* CLOCK_MONOTONIC usec */
} RaReassert;

typedef struct RaKnob {
        const char *label;  /* what the log's lines start with: "sda", "Swap" */
        const char *device; /* the journal's RADAEMON_DEVICE=: "sda", "vm.page-cluster" */
        const char *what;   /* what is written, in the log: "read_ahead_kb", "vm.page-cluster" */
        const char *unit;   /* after a value in the log: " KiB", "" */
        /*
         * Writes value and reads it back: 0 when it holds it, -EIO when the
         * kernel kept another, -ENODEV when the object is gone; *ret_now is
         * what it holds after, left alone when that cannot be read.
         */
        int (*write)(void *object, uint32_t value, uint32_t *ret_now);
        void *object;
        int *write_error; /* the errno of the last failed write, so that it is logged once */
        RaReassert *reassert;
        bool quiet; /* its news at debug level, not info: a user's object over its owner's budget */
} RaKnob;

/*
 * Writes want over before, once the originals waiting are on disk (a value
 * written over an unsaved original would be lost at the next start), and
 * logs the decision (source, event, reason) or the failure, once. Returns 0
 * when written; *ret_now is what the knob holds.
 */
int ra_tune_knob_write(struct Manager *m, const RaKnob *k, uint32_t before, uint32_t want,
                       const char *source, const char *event, const char *reason, uint32_t *ret_now);

/*
 * The decision's tail, once the knob is known to hold current still: says
 * that it stays, or what would be written in observe mode, or writes want
 * (ra_tune_knob_write()); news: the decision is new, said at info level.
 * Returns 1 when want was written, 0 when nothing was, or a negative errno.
 */
int ra_tune_knob_settle(struct Manager *m, const RaKnob *k, bool news, uint32_t current, uint32_t want,
                        const char *source, const char *event, const char *reason, uint32_t *ret_now);

/* Puts original back over before, logged; true when it is there. *ret_now as above. */
bool ra_tune_knob_restore(struct Manager *m, const RaKnob *k, uint32_t before, uint32_t original,
                          const char *why, uint32_t *ret_now);

typedef enum RaDrift {
        RA_DRIFT_IGNORE,   /* nothing to defend: observing, or radaemon's own value */
        RA_DRIFT_REASSERT, /* write target again */
        RA_DRIFT_YIELD,    /* leave it to them */
} RaDrift;

/*
 * Somebody else wrote now over was, where radaemon wants target: the one
 * rule (external_changes, at most RA_REASSERT_MAX writes again a minute),
 * said in the journal.
 */
RaDrift ra_tune_knob_drift(struct Manager *m, const RaKnob *k, uint32_t was, uint32_t now, uint32_t target);
