/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-context.h"
#include "ra-swap.h"

/*
 * The state the daemon keeps on disk (common/ra-state.c's file): loaded
 * once, saved when something waits (state_dirty), never over a file that
 * could not be read nor moved aside (state_frozen), with one rule for a
 * change that must be durable. A failed save is logged once and told
 * through on_manager_changed ("StateError"); tuning goes on with the state
 * in memory.
 */
int ra_store_load(Manager *m);

/* Lets go of the state in memory, saved or not: the daemon's end. */
void ra_store_close(Manager *m);

/*
 * What is kept for identity (NULL: nothing, or identity NULL), and for
 * vm.page-cluster: to read. Only ra-state-store.c writes the state.
 */
const RaStateEntry *ra_store_entry(const Manager *m, const char *identity);
const RaStateSwap *ra_store_swap(const Manager *m);

/* Whether something waits to be saved. */
bool ra_store_pending(const Manager *m);

/*
 * ret_replaced (may be NULL) says whether the file on disk holds the new
 * state, even when the save then failed: see ra_state_save().
 */
int ra_store_save(Manager *m, bool *ret_replaced);

/*
 * Forgets the identities not seen for forget_after_days and those past
 * RA_STATE_MAX_ENTRIES (the oldest first; never a pinned one), once every
 * device present was found; then saves the state if anything waits to be
 * saved. Entries move: no RaStateEntry pointer survives it.
 */
int ra_store_flush(Manager *m);

/*
 * A value before radaemon's first write is on disk before that write: flushes
 * when an original waits to be saved (ra_store_remember_original()), else
 * does nothing. A write must not follow an error.
 */
int ra_store_save_originals(Manager *m);

/*
 * Pins (and unpins) every object with identity, and vm.page-cluster. With
 * persist the pin is on disk when 0 is returned; on an error memory is rolled
 * back only where the file was not replaced. *ret_changed: memory now holds
 * another pin than before.
 */
int ra_store_pin(Manager *m, const char *identity, uint32_t kb, bool persist, bool *ret_changed);
int ra_store_unpin(Manager *m, const char *identity, bool *ret_changed);
int ra_store_pin_swap(Manager *m, int value, bool persist, bool *ret_changed);
int ra_store_unpin_swap(Manager *m, bool *ret_changed);

/* What the adaptive policy learned for d, kept for its next plug; saved at the end of the interval. */
void ra_store_learned(Manager *m, const RaDisk *d);
/* What a calibration measured of d, kept for its identity: it is not measured again. Saved as learned is. */
void ra_store_calibrated(Manager *m, RaDisk *d, const RaCalib *c);
/*
 * The model fitted from d's traced requests, when they moved it: kept for
 * its identity beside any calibration, and d's model where none ran.
 * Saved when it first comes or moves by a twentieth.
 */
void ra_store_traced(Manager *m, RaDisk *d);

/* The same for swap of class c. */
void ra_store_learned_swap(Manager *m, RaSwapClass c, int value);

/*
 * d was read: for a device radaemon has not seen before, the value it holds
 * now is its original, saved before radaemon's first write (original_unsaved).
 */
void ra_store_remember_original(Manager *m, const RaDisk *d);

/* vm.page-cluster holds value before radaemon's first write: its original, unless one is known. */
void ra_store_remember_swap_original(Manager *m, int value);

/*
 * What an earlier radaemon kept under d's old identity moves to its identity
 * (ra_state_carry_over()). Returns 1 when something moved, 0 when nothing
 * did, -ENOMEM.
 */
int ra_store_carry_over(Manager *m, const RaDisk *d);

/*
 * Restore() put every value back (restored), or a reload ended it: kept in
 * the file, so that the udev helper and the next start observe as the
 * daemon does. Saved at once when it begins; its end goes with the next save.
 */
void ra_store_set_restored(Manager *m, bool restored);

/* The system's own starting value for identity (a FUSE server's INIT answer, a udev rule's write). */
void ra_store_set_original(Manager *m, const char *identity, uint32_t kb);
