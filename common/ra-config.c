/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration: its defaults, the files it is read from in order, and what it says for one object. */
#include "config.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ra-config-parser.h"
#include "ra-config.h"
#include "ra-path.h"
#include "ra-util.h"

#define DEFAULT_STATE_DIR LOCALSTATEDIR "/lib/radaemon"

int ra_config_new(RaConfig **ret) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;

        c->devices = ra_strv_split("*");
        c->ignore = ra_strv_split("ram* zram*");
        c->bdis = ra_strv_split("*");
        c->state_dir = strdup(DEFAULT_STATE_DIR);
        if (!c->devices || !c->ignore || !c->bdis || !c->state_dir)
                return -ENOMEM;

        c->mode = RA_MODE_AUTO;
        c->interval_ms = 1000;
        c->forget_after_days = 365;
        c->bounds = (RaBounds){ .min_kb = 4, .max_kb = 8192 };
        c->calibrate = true;
        c->open_files = RA_OPEN_FILES_FOLLOW;
        c->swap_manage = true;
        c->swap_page_cluster = -1;

        *ret = TAKE_PTR(c);
        return 0;
}

RaConfig *ra_config_free(RaConfig *c) {
        if (!c)
                return NULL;

        for (size_t i = 0; i < c->n_sections; i++) {
                free(c->sections[i].glob);
                free(c->sections[i].resolved);
        }
        free(c->sections);
        ra_strv_free(c->devices);
        ra_strv_free(c->ignore);
        ra_strv_free(c->bdis);
        free(c->state_dir);
        free(c);
        return NULL;
}

static int check_bounds(RaConfig *c, char ***errors, RaConfigLocation min_at, RaConfigLocation max_at) {
        _cleanup_free_ char *line = NULL;
        RaConfigLocation at = min_at.line > 0 ? min_at : max_at;

        if (c->bounds.min_kb <= c->bounds.max_kb)
                return 0;

        /* Blame whichever of the two was set later. */
        if (max_at.line > 0 && (min_at.line == 0 || max_at.path != min_at.path || max_at.line > min_at.line))
                at = max_at;

        c->invalid_global = true;
        if (asprintf(&line, "%s:%u: min_kb %" PRIu32 " is larger than max_kb %" PRIu32,
                     at.path ? at.path : "radaemon.conf", at.line, c->bounds.min_kb, c->bounds.max_kb) < 0 ||
            ra_strv_push(errors, line) < 0)
                return -ENOMEM;
        return -EINVAL;
}

static int parse_one(RaConfig *c, const char *path, char ***errors, RaConfigLocation *min_at,
                     RaConfigLocation *max_at) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;

        f = fopen(path, "re");
        if (!f) {
                int r = negative_errno();

                if (asprintf(&line, "%s: %s", path, strerror(-r)) < 0 || ra_strv_push(errors, line) < 0)
                        return -ENOMEM;
                return r;
        }

        return ra_config_parse_stream(c, path, f, errors, min_at, max_at);
}

int ra_config_parse_file(RaConfig *c, const char *path, char ***errors) {
        RaConfigLocation min_at = {}, max_at = {};
        int r;

        r = parse_one(c, path, errors, &min_at, &max_at);
        if (r < 0)
                return r;
        return check_bounds(c, errors, min_at, max_at);
}

int ra_config_parse_text(RaConfig *c, const char *name, const char *text, size_t len, char ***errors) {
        _cleanup_fclose_ FILE *f = NULL;
        RaConfigLocation min_at = {}, max_at = {};
        int r;

        /* fmemopen() refuses an empty buffer; an empty file is a valid one. */
        if (len == 0)
                return 0;

        f = fmemopen((void *) text, len, "r");
        if (!f)
                return negative_errno();

        r = ra_config_parse_stream(c, name, f, errors, &min_at, &max_at);
        if (r < 0)
                return r;
        return check_bounds(c, errors, min_at, max_at);
}

static int is_conf_file(const struct dirent *de) {
        size_t len = strlen(de->d_name);

        return de->d_name[0] != '.' && len > 5 && strcmp(de->d_name + len - 5, ".conf") == 0;
}

int ra_config_load(RaConfig *c, const char *path, const char *dropin_dir, char ***errors) {
        /* Locations point into paths, which must live until the bounds are checked. */
        _cleanup_(ra_strv_freep) char **paths = NULL;
        struct dirent **entries = NULL;
        RaConfigLocation min_at = {}, max_at = {};
        int r = 0, n = 0;

        if (access(path, F_OK) == 0 && ra_strv_push(&paths, path) < 0)
                return -ENOMEM;

        if (dropin_dir) {
                n = scandir(dropin_dir, &entries, is_conf_file, alphasort);
                if (n < 0 && errno != ENOENT)
                        return negative_errno();
        }

        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *p = NULL;

                if (r >= 0 && (asprintf(&p, "%s/%s", dropin_dir, entries[i]->d_name) < 0 ||
                               ra_strv_push(&paths, p) < 0))
                        r = -ENOMEM;
                free(entries[i]);
        }
        free(entries);
        if (r < 0)
                return r;

        for (size_t i = 0; paths && paths[i]; i++) {
                int k = parse_one(c, paths[i], errors, &min_at, &max_at);

                if (k == -ENOMEM)
                        return k;
                if (k < 0 && r == 0)
                        r = k;
        }

        if (r == 0)
                r = check_bounds(c, errors, min_at, max_at);
        return r;
}

/* path alone, or the configuration file and its drop-ins, on the defaults; *ret even with errors. */
static int read_files(const char *path, RaConfig **ret, char ***errors) {
        int r;

        r = ra_config_new(ret);
        if (r < 0)
                return r;
        return path ? ra_config_parse_file(*ret, path, errors)
                    : ra_config_load(*ret, RA_CONFIG_FILE, RA_CONFIG_DROPIN_DIR, errors);
}

int ra_config_read(const char *path, RaConfig **ret, char ***errors) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        int r;

        r = read_files(path, &c, errors);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(c);
        return 0;
}

int ra_config_read_lenient(const char *path, RaConfig **ret, char ***errors, char ***ret_dropped) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **dropped = NULL;
        size_t kept = 0;
        int r;

        r = read_files(path, &c, errors);
        if (r < 0 && r != -EINVAL)
                return r;

        for (size_t i = 0; i < c->n_sections; i++) {
                _cleanup_free_ char *name = NULL;

                if (c->sections[i].invalid &&
                    (asprintf(&name, "[%s:%s]", ra_config_section_kind(&c->sections[i]),
                              c->sections[i].glob) < 0 ||
                     ra_strv_push(&dropped, name) < 0))
                        return -ENOMEM;
        }
        for (size_t i = 0; i < c->n_sections; i++) {
                RaDeviceSection *s = &c->sections[i];

                if (!s->invalid)
                        c->sections[kept++] = *s;
                else {
                        free(s->glob);
                        free(s->resolved);
                }
        }
        c->n_sections = kept;
        /* Only the keys of [daemon], [policy] and [swap] that parsed are taken: the rest observes. */
        if (c->invalid_global)
                c->mode = RA_MODE_OBSERVE;

        *ret = TAKE_PTR(c);
        if (ret_dropped)
                *ret_dropped = TAKE_PTR(dropped);
        return r == -EINVAL;
}

static bool match_keys(char *const *globs, const char *const *keys) {
        for (size_t i = 0; keys[i]; i++)
                if (ra_glob_match_any(globs, keys[i]))
                        return true;
        return false;
}

/* Whether section s is for the object keys name (keys[0] is the object's own name). */
static bool section_matches(const RaDeviceSection *s, bool bdi, const char *const *keys) {
        if (s->path)
                return s->resolved && s->resolved_bdi == bdi && ra_streq(s->resolved, keys[0]);
        return s->bdi == bdi && match_keys((char *[]){ s->glob, NULL }, keys);
}

static bool ignored_by_section(const RaConfig *c, bool bdi, const char *const *keys) {
        for (size_t i = 0; i < c->n_sections; i++)
                if (c->sections[i].ignore && section_matches(&c->sections[i], bdi, keys))
                        return true;
        return false;
}

bool ra_config_manages(const RaConfig *c, const char *name) {
        return ra_glob_match_any(c->devices, name) && !ra_glob_match_any(c->ignore, name) &&
               !ignored_by_section(c, false, (const char *[]){ name, NULL });
}

bool ra_config_manages_bdi(const RaConfig *c, const char *const *keys) {
        return match_keys(c->bdis, keys) && !ignored_by_section(c, true, keys);
}

static void section_settings(const RaConfig *c, bool bdi, const char *const *keys, RaSettings *ret) {
        RaOpenFiles open_files = c->open_files;

        *ret = (RaSettings){ .bounds = c->bounds };

        for (size_t i = 0; i < c->n_sections; i++) {
                const RaDeviceSection *s = &c->sections[i];

                if (!keys[0] || !section_matches(s, bdi, keys))
                        continue;

                ra_bounds_override(&ret->bounds, s->min_kb, s->max_kb);
                if (s->read_ahead_kb > 0)
                        ret->config_kb = s->read_ahead_kb;
                if (s->open_files != RA_OPEN_FILES_UNSET)
                        open_files = s->open_files;
        }
        ret->leave_open_files = open_files == RA_OPEN_FILES_LEAVE;
}

void ra_config_device_settings(const RaConfig *c, const char *name, RaSettings *ret) {
        section_settings(c, false, (const char *[]){ name, NULL }, ret);
}

void ra_config_bdi_settings(const RaConfig *c, const char *const *keys, RaSettings *ret) {
        section_settings(c, true, keys, ret);
}

int ra_config_resolve_paths(RaConfig *c, const char *sysfs_root, const char *mountinfo, const char *fstab,
                            char *const *chased, bool *ret_changed) {
        RaPathMounts mounts = {};
        bool changed = false;
        int r;

        for (size_t i = 0; i < c->n_sections; i++) {
                RaDeviceSection *s = &c->sections[i];
                _cleanup_free_ char *real = NULL;
                RaPathObject o = {};

                if (!s->path || (chased && !chased[i]))
                        continue;
                if (chased)
                        real = chased[i][0] ? strdup(chased[i]) : NULL;
                else {
                        r = ra_path_chase(s->glob, &real);
                        if (r == -ENOMEM)
                                return r;
                        s->chase_error = r == -EPERM ? r : 0;
                }
                if (chased && chased[i][0] && !real)
                        return -ENOMEM;
                if (!mounts.mounted) {
                        r = ra_path_mounts_load(mountinfo, fstab, &mounts);
                        if (r < 0)
                                return r;
                }

                /*
                 * Through its links where it exists (/srv a link to /data): mountinfo names the
                 * target. One refused names nothing.
                 */
                r = (chased ? !chased[i][0] : s->chase_error < 0)
                            ? -EPERM
                            : ra_path_object_in(sysfs_root, &mounts, real ?: s->glob, &o);
                if (r == -ENOMEM) {
                        ra_path_mounts_clear(&mounts);
                        return r;
                }
                if (r < 0 ? s->resolved != NULL
                          : !ra_streq(s->resolved, o.name) || s->resolved_bdi != o.bdi) {
                        changed = true;
                        free(s->resolved);
                        s->resolved = TAKE_PTR(o.name);
                        s->resolved_bdi = o.bdi;
                }
                ra_path_object_clear(&o);
        }
        ra_path_mounts_clear(&mounts);

        if (ret_changed)
                *ret_changed = changed;
        return 0;
}
