/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <ini.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ra-config.h"
#include "ra-path.h"
#include "ra-swap.h"
#include "ra-util.h"

#define DEFAULT_STATE_DIR LOCALSTATEDIR "/lib/radaemon"
#define INTERVAL_MIN_MS 100u
#define INTERVAL_MAX_MS 3600000u
/* A hundred years: "never" is 0. */
#define FORGET_MAX_DAYS 36500u

static const char *const mode_names[_RA_MODE_MAX] = {
        [RA_MODE_AUTO] = "auto",
        [RA_MODE_OBSERVE] = "observe",
};

const char *ra_mode_to_string(RaMode m) {
        return m >= 0 && m < _RA_MODE_MAX ? mode_names[m] : NULL;
}

static const char *const external_names[_RA_EXTERNAL_MAX] = {
        [RA_EXTERNAL_YIELD] = "yield",
        [RA_EXTERNAL_REASSERT] = "reassert",
};

const char *ra_external_to_string(RaExternal e) {
        return e >= 0 && e < _RA_EXTERNAL_MAX ? external_names[e] : NULL;
}

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

/* Where a bound was last set, so that a crossing can name its line. */
typedef struct Location {
        const char *path;
        unsigned line;
} Location;

typedef struct Parser {
        RaConfig *config;
        const char *path;
        FILE *f;
        unsigned line;
        char ***errors;
        int r; /* set on a failure that is not the file's fault (ENOMEM) */
        bool in_known_section;
        bool after_key;           /* the previous line was "key = value" or its continuation */
        bool continuation;        /* this line continues the previous key's value */
        RaDeviceSection *section; /* the [device:…] being read, if any */
        Location min_at, max_at;
} Parser;

static void add_error(Parser *p, const char *format, ...) _printf_(2, 3);
static void add_error(Parser *p, const char *format, ...) {
        _cleanup_free_ char *msg = NULL, *line = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&msg, format, ap);
        va_end(ap);
        if (r < 0 || asprintf(&line, "%s:%u: %s", p->path, p->line, msg) < 0 ||
            ra_strv_push(p->errors, line) < 0)
                p->r = -ENOMEM;
}

/* "[device:sd*]" has just been read: open a new section for its keys. */
static void begin_section(Parser *p, const char *name) {
        const char *glob;
        bool bdi = false, path = false;
        RaDeviceSection *grown;
        char *copy;

        p->section = NULL;
        p->in_known_section = false;

        if (strcmp(name, "daemon") == 0 || strcmp(name, "policy") == 0 || strcmp(name, "swap") == 0) {
                p->in_known_section = true;
                return;
        }

        if (strncmp(name, "bdi:", 4) == 0) {
                glob = name + 4;
                bdi = true;
                if (!*glob) {
                        add_error(p, "[bdi:GLOB] needs a glob on a bdi's name, mount point or file system "
                                     "type, such as [bdi:btrfs-*], [bdi:/srv/*] or [bdi:fuse.sshfs]");
                        return;
                }
        } else if (strncmp(name, "path:", 5) == 0) {
                glob = name + 5;
                path = true;
                if (glob[0] != '/' || strstr(glob, "/../") || strstr(glob, "/./")) {
                        add_error(p,
                                  "[path:PATH] needs an absolute path without . or .. components, such as "
                                  "[path:/var/lib/postgresql]");
                        return;
                }
        } else if (strncmp(name, "device:", 7) == 0) {
                glob = name + 7;
                if (!*glob || strchr(glob, '/')) {
                        add_error(p, "[device:GLOB] needs a glob on kernel names, such as [device:sd*]");
                        return;
                }
        } else {
                add_error(p,
                          "unknown section [%s]; known are [daemon], [policy], [swap], [device:GLOB], "
                          "[bdi:GLOB] and [path:PATH]",
                          name);
                return;
        }

        copy = strdup(glob);
        grown = copy ? realloc(p->config->sections, (p->config->n_sections + 1) * sizeof(RaDeviceSection))
                     : NULL;
        if (!copy || !grown) {
                free(copy);
                p->r = -ENOMEM;
                return;
        }

        p->config->sections = grown;
        p->section = &grown[p->config->n_sections++];
        *p->section = (RaDeviceSection){ .glob = copy, .bdi = bdi, .path = path };
        p->in_known_section = true;
}

/*
 * Checks each line as inih reads it, so that every error carries its line
 * number: inih itself reports only the first. Leading blanks are dropped,
 * except on an indented line without "=" right after a key: that continues
 * the key's value (long lists of devices), and inih hands it on under the
 * key's name. "#" after a blank starts a comment, as in the shipped file.
 */
static char *read_line(char *buf, int size, void *userdata) {
        Parser *p = userdata;
        size_t len, skip;
        char *hash, *end;
        bool after_key = p->after_key;

        p->after_key = p->continuation = false;

        if (!fgets(buf, size, p->f))
                return NULL;
        p->line++;

        len = strlen(buf);
        if (len > 0 && buf[len - 1] != '\n' && !feof(p->f)) {
                int ch;

                while ((ch = fgetc(p->f)) != EOF && ch != '\n')
                        ;
                add_error(p, "line is longer than %d characters", size - 2);
                buf[0] = '\0';
                return buf;
        }

        /* A byte order mark, as editors on other systems write it. */
        if (p->line == 1 && strncmp(buf, "\xEF\xBB\xBF", 3) == 0) {
                memmove(buf, buf + 3, len - 2);
                len -= 3;
        }

        for (hash = strchr(buf, '#'); hash; hash = strchr(hash + 1, '#'))
                if (hash == buf || hash[-1] == ' ' || hash[-1] == '\t') {
                        *hash = '\0';
                        break;
                }
        buf[strcspn(buf, "\r\n")] = '\0';

        skip = strspn(buf, " \t");
        if (buf[skip] == '\0' || buf[skip] == ';') {
                buf[0] = '\0';
                return buf;
        }

        if (skip > 0 && after_key && !strchr(buf, '=')) {
                p->after_key = p->continuation = true;
                return buf;
        }
        memmove(buf, buf + skip, strlen(buf + skip) + 1);

        if (buf[0] == '[') {
                end = strchr(buf, ']');
                if (!end) {
                        add_error(p, "section header without a closing ']'");
                        buf[0] = '\0';
                        return buf;
                }
                *end = '\0';
                begin_section(p, buf + 1);
                *end = ']';
                return buf;
        }

        if (!strchr(buf, '=')) {
                add_error(p, "expected 'key = value' or '[section]'");
                buf[0] = '\0';
                return buf;
        }

        p->after_key = true;
        return buf;
}

static void parse_kb(Parser *p, const char *name, const char *value, uint32_t *ret) {
        uint32_t kb;

        if (ra_parse_u32(value, &kb) < 0 || !ra_kb_is_valid(kb)) {
                add_error(p, "%s must be a multiple of 4 from %u to %u (KiB), not '%s'", name, RA_KB_MIN,
                          RA_KB_LIMIT, value);
                return;
        }
        *ret = kb;
}

/* Sets *ret to the globs in value, or appends them for a continuation line. */
static void parse_globs(Parser *p, const char *name, const char *value, bool may_be_empty, char ***ret) {
        _cleanup_(ra_strv_freep) char **l = NULL;

        l = ra_strv_split(value);
        if (!l) {
                p->r = -ENOMEM;
                return;
        }

        if (!l[0] && !may_be_empty) {
                add_error(p, "%s needs at least one glob on kernel names", name);
                return;
        }
        /* bdis= may name mount points; the others are on kernel names. */
        for (size_t i = 0; strcmp(name, "bdis") != 0 && l[i]; i++)
                if (strchr(l[i], '/')) {
                        add_error(p, "%s: '%s' is not a glob on kernel names", name, l[i]);
                        return;
                }

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

static void parse_daemon_key(Parser *p, const char *name, const char *value) {
        RaConfig *c = p->config;

        if (strcmp(name, "devices") == 0)
                parse_globs(p, name, value, false, &c->devices);
        else if (strcmp(name, "ignore") == 0)
                parse_globs(p, name, value, true, &c->ignore);
        else if (strcmp(name, "bdis") == 0)
                parse_globs(p, name, value, true, &c->bdis);
        else if (strcmp(name, "mode") == 0) {
                if (strcmp(value, "auto") == 0)
                        c->mode = RA_MODE_AUTO;
                else if (strcmp(value, "observe") == 0)
                        c->mode = RA_MODE_OBSERVE;
                else
                        add_error(p, "mode must be 'auto' or 'observe', not '%s'", value);
        } else if (strcmp(name, "interval_ms") == 0) {
                uint32_t ms;

                if (ra_parse_u32(value, &ms) < 0 || ms < INTERVAL_MIN_MS || ms > INTERVAL_MAX_MS)
                        add_error(p, "interval_ms must be a number from %u to %u, not '%s'", INTERVAL_MIN_MS,
                                  INTERVAL_MAX_MS, value);
                else
                        c->interval_ms = ms;
        } else if (strcmp(name, "restore_on_exit") == 0) {
                if (ra_parse_boolean(value, &c->restore_on_exit) < 0)
                        add_error(p, "restore_on_exit must be a boolean (yes or no), not '%s'", value);
        } else if (strcmp(name, "forget_after_days") == 0) {
                uint32_t days;

                if (ra_parse_u32(value, &days) < 0 || days > FORGET_MAX_DAYS)
                        add_error(
                                p,
                                "forget_after_days must be a number of days from 0 (never) to %u, not '%s'",
                                FORGET_MAX_DAYS, value);
                else
                        c->forget_after_days = days;
        } else if (strcmp(name, "state_dir") == 0) {
                char *copy;

                if (value[0] != '/') {
                        add_error(p, "state_dir must be an absolute path, not '%s'", value);
                        return;
                }
                copy = strdup(value);
                if (!copy) {
                        p->r = -ENOMEM;
                        return;
                }
                free(c->state_dir);
                c->state_dir = copy;
        } else
                add_error(p, "unknown key '%s' in [daemon]", name);
}

static void parse_policy_key(Parser *p, const char *name, const char *value) {
        if (strcmp(name, "min_kb") == 0) {
                parse_kb(p, name, value, &p->config->bounds.min_kb);
                p->min_at = (Location){ p->path, p->line };
        } else if (strcmp(name, "max_kb") == 0) {
                parse_kb(p, name, value, &p->config->bounds.max_kb);
                p->max_at = (Location){ p->path, p->line };
        } else if (strcmp(name, "external_changes") == 0) {
                if (strcmp(value, "yield") == 0)
                        p->config->external = RA_EXTERNAL_YIELD;
                else if (strcmp(value, "reassert") == 0)
                        p->config->external = RA_EXTERNAL_REASSERT;
                else
                        add_error(p, "external_changes must be 'yield' or 'reassert', not '%s'", value);
        } else if (strcmp(name, "calibrate") == 0) {
                if (ra_parse_boolean(value, &p->config->calibrate) < 0)
                        add_error(p, "calibrate must be a boolean (yes or no), not '%s'", value);
        } else
                add_error(p, "unknown key '%s' in [policy]", name);
}

static const char *section_kind(const RaDeviceSection *s) {
        return s->path ? "path" : s->bdi ? "bdi" : "device";
}

static void parse_device_key(Parser *p, const char *name, const char *value) {
        RaDeviceSection *s = p->section;

        if (strcmp(name, "ignore") == 0) {
                if (ra_parse_boolean(value, &s->ignore) < 0)
                        add_error(p, "ignore must be a boolean (yes or no), not '%s'", value);
                return;
        }
        if (strcmp(name, "read_ahead_kb") == 0)
                parse_kb(p, name, value, &s->read_ahead_kb);
        else if (strcmp(name, "min_kb") == 0)
                parse_kb(p, name, value, &s->min_kb);
        else if (strcmp(name, "max_kb") == 0)
                parse_kb(p, name, value, &s->max_kb);
        else {
                add_error(p, "unknown key '%s' in [%s:%s]", name, section_kind(s), s->glob);
                return;
        }

        if (s->min_kb > 0 && s->max_kb > 0 && s->min_kb > s->max_kb)
                add_error(p, "min_kb %" PRIu32 " is larger than max_kb %" PRIu32 " in [%s:%s]", s->min_kb,
                          s->max_kb, section_kind(s), s->glob);
}

static void parse_swap_key(Parser *p, const char *name, const char *value) {
        if (strcmp(name, "page_cluster") == 0) {
                uint32_t v;

                if (ra_parse_u32(value, &v) < 0 || !ra_swap_page_cluster_is_valid((int) v))
                        add_error(p, "page_cluster must be a number from 0 to %d, not '%s'",
                                  RA_SWAP_PAGE_CLUSTER_MAX, value);
                else
                        p->config->swap_page_cluster = (int) v;
        } else if (strcmp(name, "manage") == 0) {
                if (ra_parse_boolean(value, &p->config->swap_manage) < 0)
                        add_error(p, "manage must be a boolean (yes or no), not '%s'", value);
        } else
                add_error(p, "unknown key '%s' in [swap]", name);
}

static int handle_key(void *userdata, const char *section, const char *name, const char *value) {
        Parser *p = userdata;

        if (section[0] == '\0') {
                add_error(p, "'%s' is outside of any section; it belongs in [daemon] or [policy]", name);
                return 1;
        }

        /* An unknown section was reported at its header, once. */
        if (!p->in_known_section)
                return 1;

        if (p->continuation && strcmp(name, "devices") != 0 && strcmp(name, "ignore") != 0 &&
            strcmp(name, "bdis") != 0) {
                add_error(p,
                          "only devices, ignore and bdis continue on an indented line; '%s' takes one value",
                          name);
                return 1;
        }

        if (p->section)
                parse_device_key(p, name, value);
        else if (strcmp(section, "daemon") == 0)
                parse_daemon_key(p, name, value);
        else if (strcmp(section, "swap") == 0)
                parse_swap_key(p, name, value);
        else
                parse_policy_key(p, name, value);

        /* Keep going: one run should report every bad line. */
        return 1;
}

static int parse_stream(RaConfig *c, const char *path, FILE *f, char ***errors, Location *min_at,
                        Location *max_at) {
        Parser p = {
                .config = c,
                .path = path,
                .f = f,
                .errors = errors,
                .min_at = *min_at,
                .max_at = *max_at,
        };
        size_t n_errors = ra_strv_length(*errors);
        int r;

        r = ini_parse_stream(read_line, &p, handle_key, &p);
        if (p.r < 0)
                return p.r;
        if (r == -2)
                return -ENOMEM;
        if (r < 0 || ferror(f)) {
                p.line = 0;
                add_error(&p, "read error");
                return -EIO;
        }

        *min_at = p.min_at;
        *max_at = p.max_at;
        return ra_strv_length(*errors) > n_errors ? -EINVAL : 0;
}

static int check_bounds(const RaConfig *c, char ***errors, Location min_at, Location max_at) {
        _cleanup_free_ char *line = NULL;
        Location at = min_at.line > 0 ? min_at : max_at;

        if (c->bounds.min_kb <= c->bounds.max_kb)
                return 0;

        /* Blame whichever of the two was set later. */
        if (max_at.line > 0 && (min_at.line == 0 || max_at.path != min_at.path || max_at.line > min_at.line))
                at = max_at;

        if (asprintf(&line, "%s:%u: min_kb %" PRIu32 " is larger than max_kb %" PRIu32,
                     at.path ? at.path : "radaemon.conf", at.line, c->bounds.min_kb, c->bounds.max_kb) < 0 ||
            ra_strv_push(errors, line) < 0)
                return -ENOMEM;
        return -EINVAL;
}

static int parse_one(RaConfig *c, const char *path, char ***errors, Location *min_at, Location *max_at) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;

        f = fopen(path, "re");
        if (!f) {
                int r = negative_errno();

                if (asprintf(&line, "%s: %s", path, strerror(-r)) < 0 || ra_strv_push(errors, line) < 0)
                        return -ENOMEM;
                return r;
        }

        return parse_stream(c, path, f, errors, min_at, max_at);
}

int ra_config_parse_file(RaConfig *c, const char *path, char ***errors) {
        Location min_at = {}, max_at = {};
        int r;

        r = parse_one(c, path, errors, &min_at, &max_at);
        if (r < 0)
                return r;
        return check_bounds(c, errors, min_at, max_at);
}

int ra_config_parse_text(RaConfig *c, const char *name, const char *text, size_t len, char ***errors) {
        _cleanup_fclose_ FILE *f = NULL;
        Location min_at = {}, max_at = {};
        int r;

        /* fmemopen() refuses an empty buffer; an empty file is a valid one. */
        if (len == 0)
                return 0;

        f = fmemopen((void *) text, len, "r");
        if (!f)
                return negative_errno();

        r = parse_stream(c, name, f, errors, &min_at, &max_at);
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
        Location min_at = {}, max_at = {};
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

int ra_config_read(const char *path, RaConfig **ret, char ***errors) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        int r;

        r = ra_config_new(&c);
        if (r < 0)
                return r;

        r = path ? ra_config_parse_file(c, path, errors)
                 : ra_config_load(c, RA_CONFIG_FILE, RA_CONFIG_DROPIN_DIR, errors);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(c);
        return 0;
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
        *ret = (RaSettings){ .bounds = c->bounds };

        for (size_t i = 0; i < c->n_sections; i++) {
                const RaDeviceSection *s = &c->sections[i];

                if (!keys[0] || !section_matches(s, bdi, keys))
                        continue;

                ra_bounds_override(&ret->bounds, s->min_kb, s->max_kb);
                if (s->read_ahead_kb > 0)
                        ret->config_kb = s->read_ahead_kb;
        }
}

void ra_config_device_settings(const RaConfig *c, const char *name, RaSettings *ret) {
        section_settings(c, false, (const char *[]){ name, NULL }, ret);
}

void ra_config_bdi_settings(const RaConfig *c, const char *const *keys, RaSettings *ret) {
        section_settings(c, true, keys, ret);
}

int ra_config_resolve_paths(RaConfig *c, const char *sysfs_root, const char *mountinfo, const char *fstab,
                            bool *ret_changed) {
        RaPathMounts mounts = {};
        bool changed = false;
        int r;

        for (size_t i = 0; i < c->n_sections; i++) {
                RaDeviceSection *s = &c->sections[i];
                _cleanup_free_ char *real = NULL;
                RaPathObject o = {};

                if (!s->path)
                        continue;
                if (!mounts.mounted) {
                        r = ra_path_mounts_load(mountinfo, fstab, &mounts);
                        if (r < 0)
                                return r;
                }

                /* Through its links where it exists (/srv a link to /data): mountinfo names the target. */
                real = realpath(s->glob, NULL);
                r = ra_path_object_in(sysfs_root, &mounts, real ?: s->glob, &o);
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
