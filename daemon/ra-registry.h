/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-context.h"

/*
 * The managed disks, bdis and stacked devices, by kernel name. Whoever is
 * told of a change (the sampler's tracer filters) is told through
 * on_disks_changed; dropping an object the bus knows goes through
 * ra_tune_forget(), which announces it.
 */
RaDisk *ra_registry_find(Manager *m, const char *name);
int ra_registry_add(Manager *m, RaKind kind, const char *name, RaDisk **ret);
/* Takes d out of the registry and frees it. */
void ra_registry_remove(Manager *m, RaDisk *d);

/* Something the sampler's tracer filters depend on changed (which disks a bdi reads through). */
void ra_registry_changed(Manager *m);

/* "3 disks", "1 disk and 2 bdis": what is managed, for the log and systemd's status. */
void ra_registry_describe(const Manager *m, char *buf, size_t size);
/*
 * The block devices without a medium (size 0: a loop device without a file,
 * an empty card reader), as "loop0-loop99, sr0" in buf; returns how many.
 */
size_t ra_registry_describe_empty(const Manager *m, char *buf, size_t size);
void ra_registry_notify_status(Manager *m);
