/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

struct Manager;

/*
 * The [path:PATH] sections of the configuration follow the mounts and the
 * stacks: each names the object the files under its path read with
 * (common/ra-path.c), found again at start, at a reload, and after every
 * change of the mounts or of the block devices.
 */

/* Resolves every [path:] section of m->config now, saying what each names. */
void ra_pathwatch_resolve(struct Manager *m);

/*
 * Resolves them again once the current burst of events is handled; when
 * one now names another object, every object is decided again, as at a
 * reload, so the old one loses the section and the new one takes it.
 */
void ra_pathwatch_schedule(struct Manager *m);

void ra_pathwatch_stop(struct Manager *m);
