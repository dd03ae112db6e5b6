/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "ra-swapobj.h"

struct Manager;

/*
 * The tuning path's adapter for vm.page-cluster: the same steps as for a
 * window (ra-tune.h) on the one global value. The swap watcher reports
 * between ra_tune_swap_begin() and ra_tune_swap_commit(); everything that
 * writes the sysctl goes through ra_tune_swap_decide() or restore.
 */

/* What the sysctl holds, or a negative errno. */
int ra_tune_swap_read(const RaSwapWatch *w);

/* Before the watcher changes what clients see; ra_tune_swap_commit() announces the difference. */
void ra_tune_swap_begin(struct Manager *m, RaSwapSnapshot *ret);
void ra_tune_swap_commit(struct Manager *m, RaSwapSnapshot *before);

/* Decides (original saved before the first write), writes unless observing, logs. */
void ra_tune_swap_decide(struct Manager *m, const char *event);

/*
 * The watcher's model learned a value (RaSwapWatch.model.learned) for the
 * class of swap in use: stored for that class, and decided from.
 */
void ra_tune_swap_learned(struct Manager *m);

/* The sysctl holds now_value: if someone else wrote it, yield or write radaemon's value again. */
void ra_tune_swap_drift(struct Manager *m, int now_value);

/* Decides again (configuration reloaded, pin changed), announced. */
void ra_tune_swap(struct Manager *m, const char *event);

/* Puts back the value page-cluster had before radaemon first wrote it; 1 when it did. */
int ra_tune_swap_restore(struct Manager *m, const char *why);

/*
 * Pins page-cluster, or clears the pin, with the store's rule (ra-state-store.h):
 * with persist, durably when 0 is returned.
 */
int ra_tune_swap_pin(struct Manager *m, int value, bool persist, uid_t uid);
int ra_tune_swap_unpin(struct Manager *m, uid_t uid);
