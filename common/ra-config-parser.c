/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration file's syntax, read with inih: lines, sections, and each key handed to its parser. */
#include "config.h"

#include <ini.h>
#include <stdlib.h>
#include <string.h>

#include "ra-config-keys.h"
#include "ra-config-parser.h"
#include "ra-util.h"

static const char *const section_names[] = {
        [SECTION_DAEMON] = "daemon",
        [SECTION_POLICY] = "policy",
        [SECTION_SWAP] = "swap",
};

/* --- the sections -------------------------------------------------------- */

/* "[device:sd*]" has just been read: open a new section for its keys. */
static void begin_section(RaConfigParser *p, const char *name) {
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
                        ra_config_error(
                                p, "[bdi:GLOB] needs a glob on a bdi's name, mount point or file system "
                                   "type, such as [bdi:btrfs-*], [bdi:/srv/*] or [bdi:fuse.sshfs]");
                        return;
                }
        } else if (strncmp(name, "path:", 5) == 0) {
                glob = name + 5;
                path = true;
                if (glob[0] != '/' || strstr(glob, "/../") || strstr(glob, "/./")) {
                        ra_config_error(
                                p, "[path:PATH] needs an absolute path without . or .. components, such as "
                                   "[path:/var/lib/postgresql]");
                        return;
                }
        } else if (strncmp(name, "device:", 7) == 0) {
                glob = name + 7;
                if (!*glob || strchr(glob, '/')) {
                        ra_config_error(p,
                                        "[device:GLOB] needs a glob on kernel names, such as [device:sd*]");
                        return;
                }
        } else {
                ra_config_error(p,
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

/* --- inih ---------------------------------------------------------------- */

/*
 * inih's reader: hands inih one cleaned line at a time. inih splits every
 * key line and names the section, but as Debian builds it its handler gets
 * no line number (INI_HANDLER_LINENO), it returns only the first error's,
 * knows no "#" after a value (INI_INLINE_COMMENT_PREFIXES), cuts a section
 * name at 50 bytes, and never tells the handler a section began
 * (INI_CALL_HANDLER_ON_NEW_SECTION). So this reader counts the lines,
 * reports every malformed one with its number, and opens each section at
 * its header: an empty or repeated section is still checked and kept.
 *
 * Leading blanks are dropped, except on an indented line without "=" right
 * after a key: that continues the key's value (long lists of devices), and
 * inih hands it on under the key's name. "#" after a blank starts a
 * comment, as in the shipped file.
 */
static char *read_line(char *buf, int size, void *userdata) {
        RaConfigParser *p = userdata;
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
                ra_config_error(p, "line is longer than %d characters", size - 2);
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
                        ra_config_error(p, "section header without a closing ']'");
                        buf[0] = '\0';
                        return buf;
                }
                *end = '\0';
                begin_section(p, buf + 1);
                *end = ']';
                return buf;
        }

        if (!strchr(buf, '=')) {
                ra_config_error(p, "expected 'key = value' or '[section]'");
                buf[0] = '\0';
                return buf;
        }

        p->after_key = true;
        return buf;
}

/* inih's handler: one key, looked up in config_keys. */
static int handle_key(void *userdata, const char *section, const char *name, const char *value) {
        RaConfigParser *p = userdata;
        RaConfigSection kind;
        const RaConfigKey *k;
        void *base;

        if (section[0] == '\0') {
                ra_config_error(p, "'%s' is outside of any section; it belongs in [daemon] or [policy]",
                                name);
                return 1;
        }

        /* An unknown section was reported at its header, once. */
        if (!p->in_known_section)
                return 1;

        if (p->continuation && !ra_config_key_is_list(name)) {
                ra_config_error(
                        p,
                        "only devices, ignore and bdis continue on an indented line; '%s' takes one value",
                        name);
                return 1;
        }

        kind = p->section                       ? SECTION_OBJECT
               : strcmp(section, "daemon") == 0 ? SECTION_DAEMON
               : strcmp(section, "swap") == 0   ? SECTION_SWAP
                                                : SECTION_POLICY;
        k = ra_config_key_find(kind, name);
        if (!k) {
                if (p->section)
                        ra_config_error(p, "unknown key '%s' in [%s:%s]", name,
                                        ra_config_section_kind(p->section), p->section->glob);
                else
                        ra_config_error(p, "unknown key '%s' in [%s]", name, section_names[kind]);
                return 1;
        }

        base = kind == SECTION_OBJECT ? (void *) p->section : (void *) p->config;
        k->parse(p, k, value, (uint8_t *) base + k->offset);

        /* Keep going: one run should report every bad line. */
        return 1;
}

int ra_config_parse_stream(RaConfig *c, const char *path, FILE *f, char ***errors, RaConfigLocation *min_at,
                           RaConfigLocation *max_at) {
        RaConfigParser p = {
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
                ra_config_error(&p, "read error");
                return -EIO;
        }

        *min_at = p.min_at;
        *max_at = p.max_at;
        return ra_strv_length(*errors) > n_errors ? -EINVAL : 0;
}
