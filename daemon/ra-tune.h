/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <sys/types.h>

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
 * A calibration of d started (running) or ended: announced (Calibrating);
 * what it measured, when anything, stored for d's identity and decided from.
 */
void ra_tune_calibration(struct Manager *m, RaDisk *d, bool running, const RaCalib *measured);

/*
 * Decides again every stack in the registry that leaf lies at the bottom
 * of: its cost model is composed from its leaves' (ra_stack_calibrated()),
 * so a leaf's new calibration or learned model changes it. The calibration
 * path calls it; so must whatever else stores a leaf's model.
 */
void ra_tune_stack_tops(struct Manager *m, const RaDisk *leaf, const char *event);

/*
 * Takes the identities a stack's leaves are kept under, as the registry
 * knows them now ("" where it does not hold one), into d->in.leaf_identities,
 * one per leaf: their calibrations compose the stack's. Left NULL for a
 * disk, or without memory (then the stack keeps its prior).
 */
void ra_tune_leaf_identities(struct Manager *m, RaDisk *d);

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

/*
 * d was (re)read by its source: its original is remembered (saved before
 * the first write), and for another medium behind the name learning starts
 * from what is known about it.
 */
void ra_tune_identified(struct Manager *m, RaDisk *d, const char *previous_identity);

/*
 * Drops d, from the bus too if clients saw it, saying why at level; a batch
 * it waits in decides nothing for it (ra-tune-batch.c).
 */
void ra_tune_forget(struct Manager *m, RaDisk *d, int level, const char *why);

/*
 * Pins every object with d's identity to kb, or clears the pin, and decides
 * again for them. With persist, the pin is on disk when this returns 0.
 */
int ra_tune_pin(struct Manager *m, RaDisk *d, uint32_t kb, bool persist, uid_t uid);
int ra_tune_unpin(struct Manager *m, RaDisk *d, uid_t uid);

/*
 * Puts every managed object and vm.page-cluster back to the value it had
 * before radaemon first saw it. With stay, radaemon and its udev helper then
 * write nothing until a reload, also across restarts (Restore()); without,
 * only the values go back (restore_on_exit). Returns how many were put back.
 */
unsigned ra_tune_restore_all(struct Manager *m, bool stay, const char *why);

/* Why learning is off (no tracefs), or NULL now that it works. */
void ra_tune_learning(struct Manager *m, const char *off);

/*
 * d's window looked at and its reads of the last interval observed
 * (ra_observe_disk()), at now (peek: of the interval so far, between
 * samples): what was learned stored, the decision taken again and
 * announced (ra-tune-report.c).
 */
void ra_tune_sample(struct Manager *m, RaDisk *d, uint64_t now, bool peek);

/*
 * A batch of objects was read and identified, and its decisions follow
 * (ra_tune_objects_read()): what they must find on disk first (originals
 * just remembered, an entry carried over) is saved once for all of them.
 */
void ra_tune_batch_ready(struct Manager *m);

/*
 * Manager.on_object_seen: a source (ra-udev.c, ra-bdiscan.c) is about to
 * read d again, for event: what clients saw of it is kept, and d waits in
 * the batch for ra_tune_objects_read(). Once in a batch: a source reads an
 * object again only after the batch is read. -ENOMEM: d is not in the batch
 * and must not be read now (a change is never made unannounced).
 */
int ra_tune_seen(struct Manager *m, RaDisk *d, const char *event);

/*
 * Manager.on_objects_read: every object seen since the last call has been
 * read. Block devices are identified (two reporting one identity are kept
 * apart, ra-identify.c), the batch saved once, each object decided once
 * for its event and announced; known devices now sharing an identity with
 * one that came are decided again ("identity clash").
 */
void ra_tune_objects_read(struct Manager *m);

/* A batch no source finished reading (radaemon stops): decided never, its snapshots freed. */
void ra_tune_batch_free(struct Manager *m);
