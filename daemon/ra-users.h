/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "ra-bdi.h"

struct Manager;
struct RaDisk;

/*
 * What users make (their FUSE mounts) costs them, not everyone: radaemon
 * manages at most RA_USER_OBJECTS_MAX of one user's at once, and what it
 * says of them shares a budget per user, so one user's churn neither floods
 * the journal nor rotates root's lines out of it.
 */
#define RA_USER_OBJECTS_MAX 64
#define RA_USER_LOG_BURST 30                      /* lines about one user's objects a window... */
#define RA_USER_LOG_WINDOW_USEC (60 * 1000000ULL) /* ...of this long */

/* Whether the bdi b, not managed yet, may be: false once its owner has the most (told once a window). */
bool ra_users_may_manage(struct Manager *m, const RaBdi *b);
/* How many ra_users_may_manage() refused since the last call. */
unsigned ra_users_refused(struct Manager *m);

/*
 * The level a line about d is logged at: level itself, or LOG_DEBUG for a
 * user's object once its owner's budget is spent. The lines left out are
 * counted and said in one line when the window ends.
 */
int ra_users_log_level(struct Manager *m, const struct RaDisk *d, int level);

void ra_users_free(struct Manager *m);
