/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-disk.h"

struct Manager;

/*
 * The one path from what a source saw to sysfs and the bus: a snapshot of
 * what clients see, then the source's changes to the object, then the
 * decision (common/ra-policy.c), the originals saved, the write, the log, and
 * the difference announced in one PropertiesChanged (or the object added).
 * Every write of a disk's or a bdi's window is made here.
 */
typedef struct RaTune {
        RaDisk *disk;
        RaDiskSnapshot before;
        bool has_before;
} RaTune;

/*
 * Before a source changes anything clients see of d. A published object
 * without memory for the snapshot is left for the next look (-ENOMEM): a
 * change is never made unannounced.
 */
int ra_tune_begin(RaDisk *d, RaTune *ret);

/*
 * Decides for event (NULL: the source changed only what it saw, there is
 * nothing to decide), writes, and announces what changed since
 * ra_tune_begin(). Ends t.
 */
void ra_tune_commit(struct Manager *m, RaTune *t, const char *event);

/* Forgets t without announcing: the object was dropped meanwhile. */
void ra_tune_abort(RaTune *t);

/* ra_tune_begin() and ra_tune_commit() around nothing but a decision. */
void ra_tune_disk(struct Manager *m, RaDisk *d, const char *event);

/*
 * A source read kb from d's window. If that is not what radaemon left there,
 * someone else changed it (a FUSE server's INIT answer, a udev rule, the
 * kernel re-stacking, somebody): yield or write radaemon's value again.
 * Within the caller's ra_tune_begin()/ra_tune_commit().
 */
void ra_tune_drift(struct Manager *m, RaDisk *d, uint32_t kb);

/*
 * Reads d's window and, when it moved, checks the drift and announces it.
 * Returns d's sysfs directory for further reads, or a negative errno (gone).
 */
int ra_tune_check_window(struct Manager *m, RaDisk *d, uint32_t *ret_kb);

/* Puts d's original value back; true when it is there. */
bool ra_tune_restore(struct Manager *m, RaDisk *d, const char *why);
