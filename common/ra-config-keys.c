/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration's keys: for each, its section, its type, where it goes and its bounds, in one table. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ra-config-keys.h"
#include "ra-swap.h"
#include "ra-util.h"

#define INTERVAL_MIN_MS 100u
#define INTERVAL_MAX_MS 3600000u
/* A hundred years: "never" is 0. */
#define FORGET_MAX_DAYS 36500u

void ra_config_error(RaConfigParser *p, const char *format, ...) {
        _cleanup_free_ char *msg = NULL, *line = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&msg, format, ap);
        va_end(ap);
        if (r < 0 || asprintf(&line, "%s:%u: %s", p->path, p->line, msg) < 0 ||
            ra_strv_push(p->errors, line) < 0)
                p->r = -ENOMEM;
        /* What the error costs when a bad line costs its section (ra_config_read_lenient()). */
        if (p->section)
                p->section->invalid = true;
        else if (p->in_known_section)
                p->config->invalid_global = true;
}

static void config_parse_globs(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data) {
        char ***ret = data;
        _cleanup_(ra_strv_freep) char **l = NULL;

        l = ra_strv_split(value);
        if (!l) {
                p->r = -ENOMEM;
                return;
        }

        if (!l[0] && !k->may_be_empty) {
                ra_config_error(p, "%s needs at least one glob on kernel names", k->name);
                return;
        }
        for (size_t i = 0; !k->mount_points && l[i]; i++)
                if (strchr(l[i], '/')) {
                        ra_config_error(p, "%s: '%s' is not a glob on kernel names", k->name, l[i]);
                        return;
                }

        /* A continuation line adds to the list. */
        if (p->continuation) {
                for (size_t i = 0; l[i]; i++)
                        if (ra_strv_push(ret, l[i]) < 0) {
                                p->r = -ENOMEM;
                                return;
                        }
                return;
        }

        ra_strv_free(*ret);
        *ret = TAKE_PTR(l);
}

static void config_parse_enum(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data) {
        size_t n = 0;

        for (; k->names[n]; n++)
                if (strcmp(value, k->names[n]) == 0) {
                        *(int *) data = (int) n;
                        return;
                }
        /* Both enums have two values: "'auto' or 'observe'". */
        ra_config_error(p, "%s must be '%s' or '%s', not '%s'", k->name, k->names[0], k->names[n - 1],
                        value);
}

static void config_parse_bool(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data) {
        if (ra_parse_boolean(value, data) < 0)
                ra_config_error(p, "%s must be a boolean (yes or no), not '%s'", k->name, value);
}

static void config_parse_open_files(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data) {
        if (strcmp(value, "follow") == 0)
                *(RaOpenFiles *) data = RA_OPEN_FILES_FOLLOW;
        else if (strcmp(value, "leave") == 0)
                *(RaOpenFiles *) data = RA_OPEN_FILES_LEAVE;
        else
                ra_config_error(p, "%s must be 'follow' or 'leave', not '%s'", k->name, value);
}

/* A number in [min, max]; false, with the error added, when value is not one. */
static bool parse_bounded(RaConfigParser *p, const RaConfigKey *k, const char *value, uint32_t *ret) {
        uint32_t v;

        if (ra_parse_u32(value, &v) >= 0 && v >= k->min && v <= k->max) {
                *ret = v;
                return true;
        }
        if (k->days)
                ra_config_error(p, "%s must be a number of days from %u (never) to %u, not '%s'", k->name,
                                k->min, k->max, value);
        else
                ra_config_error(p, "%s must be a number from %u to %u, not '%s'", k->name, k->min, k->max,
                                value);
        return false;
}

static void config_parse_u32(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data) {
        (void) parse_bounded(p, k, value, data);
}

static void config_parse_int(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data) {
        uint32_t v;

        if (parse_bounded(p, k, value, &v))
                *(int *) data = (int) v;
}

static void config_parse_absolute_path(RaConfigParser *p, const RaConfigKey *k, const char *value,
                                       void *data) {
        char **ret = data, *copy;

        if (value[0] != '/') {
                ra_config_error(p, "%s must be an absolute path, not '%s'", k->name, value);
                return;
        }
        copy = strdup(value);
        if (!copy) {
                p->r = -ENOMEM;
                return;
        }
        free(*ret);
        *ret = copy;
}

static void config_parse_kb(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data) {
        uint32_t kb;

        if (ra_parse_u32(value, &kb) < 0 || !ra_kb_is_valid(kb)) {
                ra_config_error(p, "%s must be a multiple of 4 from %u to %u (KiB), not '%s'", k->name,
                                RA_KB_MIN, RA_KB_LIMIT, value);
                return;
        }
        *(uint32_t *) data = kb;
}

/* [policy]'s bounds: where each was set, good or bad, for check_bounds(). */
static void config_parse_bound(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data) {
        config_parse_kb(p, k, value, data);
        if (k->offset == offsetof(RaConfig, bounds.min_kb))
                p->min_at = (RaConfigLocation){ p->path, p->line };
        else
                p->max_at = (RaConfigLocation){ p->path, p->line };
}

const char *ra_config_section_kind(const RaDeviceSection *s) {
        return s->path ? "path" : s->bdi ? "bdi" : "device";
}

/* A section's window or bounds, which must not cross within it. */
static void config_parse_section_kb(RaConfigParser *p, const RaConfigKey *k, const char *value, void *data) {
        RaDeviceSection *s = p->section;

        config_parse_kb(p, k, value, data);
        if (s->min_kb > 0 && s->max_kb > 0 && s->min_kb > s->max_kb)
                ra_config_error(p, "min_kb %" PRIu32 " is larger than max_kb %" PRIu32 " in [%s:%s]",
                                s->min_kb, s->max_kb, ra_config_section_kind(s), s->glob);
}

static const char *const mode_names[] = { [RA_MODE_AUTO] = "auto", [RA_MODE_OBSERVE] = "observe", NULL };
static const char *const external_names[] = {
        [RA_EXTERNAL_YIELD] = "yield",
        [RA_EXTERNAL_REASSERT] = "reassert",
        NULL,
};

const char *ra_mode_to_string(RaMode m) {
        return m >= 0 && m < _RA_MODE_MAX ? mode_names[m] : NULL;
}

const char *ra_external_to_string(RaExternal e) {
        return e >= 0 && e < _RA_EXTERNAL_MAX ? external_names[e] : NULL;
}

/* config_parse_enum() writes an int. */
_Static_assert(sizeof(RaMode) == sizeof(int) && sizeof(RaExternal) == sizeof(int), "enums are ints");

/* section, name, parser, the field's offset, then what the parser needs. */
#define KEY(s, n, p, offset_, ...)                                                                          \
        { .section = (s), .name = (n), .parse = (p), .offset = (offset_), __VA_ARGS__ }
#define CONFIG(field) offsetof(RaConfig, field)
#define SECTION(field) offsetof(RaDeviceSection, field)

/* Every key of every section: a key not here is reported as unknown. */
static const RaConfigKey config_keys[] = {
        KEY(SECTION_DAEMON, "devices", config_parse_globs, CONFIG(devices), .list = true),
        KEY(SECTION_DAEMON, "ignore", config_parse_globs, CONFIG(ignore), .list = true,
            .may_be_empty = true),
        KEY(SECTION_DAEMON, "bdis", config_parse_globs, CONFIG(bdis), .list = true, .may_be_empty = true,
            .mount_points = true),
        KEY(SECTION_DAEMON, "mode", config_parse_enum, CONFIG(mode), .names = mode_names),
        KEY(SECTION_DAEMON, "interval_ms", config_parse_u32, CONFIG(interval_ms), .min = INTERVAL_MIN_MS,
            .max = INTERVAL_MAX_MS),
        KEY(SECTION_DAEMON, "restore_on_exit", config_parse_bool, CONFIG(restore_on_exit)),
        KEY(SECTION_DAEMON, "forget_after_days", config_parse_u32, CONFIG(forget_after_days), .min = 0,
            .max = FORGET_MAX_DAYS, .days = true),
        KEY(SECTION_DAEMON, "state_dir", config_parse_absolute_path, CONFIG(state_dir)),
        KEY(SECTION_POLICY, "min_kb", config_parse_bound, CONFIG(bounds.min_kb)),
        KEY(SECTION_POLICY, "max_kb", config_parse_bound, CONFIG(bounds.max_kb)),
        KEY(SECTION_POLICY, "external_changes", config_parse_enum, CONFIG(external),
            .names = external_names),
        KEY(SECTION_POLICY, "calibrate", config_parse_bool, CONFIG(calibrate)),
        KEY(SECTION_POLICY, "open_files", config_parse_open_files, CONFIG(open_files)),
        KEY(SECTION_SWAP, "page_cluster", config_parse_int, CONFIG(swap_page_cluster), .min = 0,
            .max = RA_SWAP_PAGE_CLUSTER_MAX),
        KEY(SECTION_SWAP, "manage", config_parse_bool, CONFIG(swap_manage)),
        KEY(SECTION_OBJECT, "ignore", config_parse_bool, SECTION(ignore)),
        KEY(SECTION_OBJECT, "read_ahead_kb", config_parse_section_kb, SECTION(read_ahead_kb)),
        KEY(SECTION_OBJECT, "min_kb", config_parse_section_kb, SECTION(min_kb)),
        KEY(SECTION_OBJECT, "max_kb", config_parse_section_kb, SECTION(max_kb)),
        KEY(SECTION_OBJECT, "open_files", config_parse_open_files, SECTION(open_files)),
};

const RaConfigKey *ra_config_key_find(RaConfigSection section, const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
                if (config_keys[i].section == section && strcmp(config_keys[i].name, name) == 0)
                        return &config_keys[i];
        return NULL;
}

bool ra_config_key_is_list(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
                if (config_keys[i].list && strcmp(config_keys[i].name, name) == 0)
                        return true;
        return false;
}
