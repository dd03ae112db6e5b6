/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-swapobj.h"

/*
 * The swap watcher, a source: watches /proc/swaps (which signals changes to
 * poll), maps every area to the disk it lies on, learns from /proc/vmstat and
 * the disks' counters while swap-in is heavy, and hands what it saw to the
 * tuning path (ra-tune-swap.c), which decides and writes vm.page-cluster.
 */

struct Manager;

/* Reads /proc/swaps and the sysctl, decides, and starts watching. */
int ra_swapwatch_start(struct Manager *m);
void ra_swapwatch_free(struct Manager *m);
