/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

struct Manager;
struct RaDisk;

/*
 * d's window went from old_kb to new_kb: the files its readers hold open
 * under old_kb, whose own reads call for new_kb (ra_pcache_followers()),
 * take new_kb now instead of at their next open. Logs each file it changes.
 */
void ra_openfiles_follow(struct Manager *m, struct RaDisk *d, uint32_t old_kb, uint32_t new_kb);
