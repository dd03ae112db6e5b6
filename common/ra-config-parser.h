/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The configuration file's syntax, read with inih, for common/ra-config.c alone. */

#include <stdio.h>

#include "ra-config-keys.h"
#include "ra-config.h"

/*
 * Parses one file's text on top of c. min_at and max_at are where [policy]'s
 * bounds were last set, carried across the files so that a crossing names
 * the later line. -EINVAL when the file had errors (in *errors).
 */
int ra_config_parse_stream(RaConfig *c, const char *path, FILE *f, char ***errors, RaConfigLocation *min_at,
                           RaConfigLocation *max_at);
