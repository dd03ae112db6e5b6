/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

struct Manager;

/*
 * The bdis of mounted file systems in the registry beside the disks: found
 * at start, and again at every change of /proc/self/mountinfo and every
 * udev event of a bdi; a new one is decided and written at once, one whose
 * superblock is gone is forgotten.
 */
int ra_bdiwatch_start(struct Manager *m);
void ra_bdiwatch_scan(struct Manager *m, const char *event);
void ra_bdiwatch_stop(struct Manager *m);
