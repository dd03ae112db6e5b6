/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

struct Manager;

/*
 * The bdis of mounted file systems in the registry beside the disks: found
 * at start, and again after changes of /proc/self/mountinfo and udev events
 * of bdis (at once after a quiet spell, coalesced under churn); a new one is
 * decided and written then, one whose superblock is gone is forgotten.
 */
int ra_bdiwatch_start(struct Manager *m);
void ra_bdiwatch_scan(struct Manager *m, const char *event);
/* A scan for an event: at once, or once the scans before have had their share of the time. */
void ra_bdiwatch_scan_soon(struct Manager *m, const char *event);
void ra_bdiwatch_stop(struct Manager *m);
