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
 * Their descriptors are looked for a step at a time from the event loop
 * (the first step at once); a change of d's window before the search ends
 * ends it.
 */
void ra_openfiles_follow(struct Manager *m, struct RaDisk *d, uint32_t old_kb, uint32_t new_kb);

/* Ends d's search for the files of its last change, if one is under way (the disk goes). */
void ra_openfiles_scan_free(struct RaDisk *d);

/*
 * Whether the reader still holds f open (the same descriptor names the same
 * path): what racontrol show says of a file it lists.
 */
bool ra_openfiles_still_open(const struct RaOpenFile *f);
