/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

struct Manager;

/*
 * Where disks come from: a udev monitor for add, change and remove of block
 * disks (partitions are never looked at), and enumerations of every disk.
 */

/* Subscribes to udev events; call before the first enumeration. */
int ra_udev_watch(struct Manager *m);

/*
 * Walks every block disk there is: at start (coldplug), after a reload, and
 * after the monitor lost events. Disks the registry holds that are no longer
 * there are dropped, so it matches the system afterwards.
 */
int ra_udev_enumerate(struct Manager *m, const char *event);
