/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The configuration's keys, for common/ra-config*.c alone: the table that
 * says what each key is (ra-config-keys.c), and the state of a parse that
 * the keys' parsers write into. ra-config-parser.c reads the syntax with
 * inih and hands each key to its parser here.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ra-config.h"
#include "ra-macro.h"

/* Where a bound was last set, so that a crossing can name its line. */
typedef struct RaConfigLocation {
        const char *path;
        unsigned line;
} RaConfigLocation;

typedef struct RaConfigParser {
        RaConfig *config;
        const char *path;
        FILE *f;
        unsigned line;
        char ***errors;
        int r; /* set on a failure that is not the file's fault (ENOMEM) */
        bool in_known_section;
        bool after_key;           /* the previous line was "key = value" or its continuation */
        bool continuation;        /* this line continues the previous key's value */
        RaDeviceSection *section; /* the [device:…], [bdi:…] or [path:…] being read, if any */
        RaConfigLocation min_at, max_at;
} RaConfigParser;

/* Appends "file:line: message" to the errors. */
void ra_config_error(RaConfigParser *p, const char *format, ...) _printf_(2, 3);

/* The kinds of section; SECTION_OBJECT is [device:GLOB], [bdi:GLOB] or [path:PATH]. */
typedef enum RaConfigSection {
        SECTION_DAEMON,
        SECTION_POLICY,
        SECTION_SWAP,
        SECTION_OBJECT,
} RaConfigSection;

typedef struct RaConfigKey RaConfigKey;

/* Parses value into the field at data (RaConfig, or the RaDeviceSection for SECTION_OBJECT). */
typedef void (*RaConfigParse)(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data);

struct RaConfigKey {
        RaConfigSection section;
        const char *name;
        RaConfigParse parse;
        size_t offset;
        uint32_t min, max;        /* config_parse_u32, config_parse_int: the bounds */
        bool days;                /* the same: a number of days, where 0 means never */
        const char *const *names; /* config_parse_enum: the values' names, by value */
        bool list;                /* a list of globs: may go on over indented lines */
        bool may_be_empty;        /* the same: an empty list is allowed */
        bool mount_points;        /* the same: globs on mount points too (bdis=), not only on kernel names */
};

/* The key of this name in a section of this kind, or NULL: an unknown key. */
const RaConfigKey *ra_config_key_find(RaConfigSection section, const char *name);
/* Whether a key of this name takes a list, in any section: only those continue on an indented line. */
bool ra_config_key_is_list(const char *name);
/* "device", "bdi" or "path", as the section's header says. */
const char *ra_config_section_kind(const RaDeviceSection *s);
