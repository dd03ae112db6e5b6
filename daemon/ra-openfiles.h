/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct Manager;
struct RaDisk;
struct RaOpenFile;

/*
 * d's window went from old_kb to new_kb: the files its readers hold open
 * under old_kb, whose own reads call for new_kb (ra_pcache_followers()),
 * take new_kb now instead of at their next open. Logs each file it changes.
 */
void ra_openfiles_follow(struct Manager *m, struct RaDisk *d, uint32_t old_kb, uint32_t new_kb);

/*
 * Whether the reader still holds f open (the same descriptor names the same
 * path): what racontrol show says of a file it lists.
 */
bool ra_openfiles_still_open(const struct RaOpenFile *f);
