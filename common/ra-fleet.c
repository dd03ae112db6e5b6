/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ra-device.h"
#include "ra-fleet.h"
#include "ra-util.h"

/* Bytes a glob and a hwdb file take as themselves. */
static bool glob_safe(unsigned char c) {
        return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
               strchr("-_.+,=@/", c) != NULL;
}

/* Appends s to out as a glob that matches s: see ra-fleet.h. out has room for strlen(s) more. */
static char *glob_append(char *out, const char *s) {
        bool in_utf8 = false;

        for (const unsigned char *p = (const unsigned char *) (s ?: ""); *p; p++) {
                if (*p >= 0x80) {
                        /* Byte by byte or character by character, as the locale says: '*' is both. */
                        if (!in_utf8)
                                *out++ = '*';
                        in_utf8 = true;
                        continue;
                }
                in_utf8 = false;
                *out++ = glob_safe(*p) ? (char) *p : '?';
        }
        return out;
}

int ra_fleet_match(const char *vendor, const char *model, const char *revision, bool with_revision,
                   char **ret) {
        size_t len;
        char *m, *p;

        if (!model || !*model)
                return -EINVAL;

        len = strlen(RA_FLEET_PREFIX) + strlen(vendor ?: "") + strlen(model) + strlen(revision ?: "") +
              sizeof("v:m:r:*:*");
        m = malloc(len);
        if (!m)
                return -ENOMEM;

        p = stpcpy(m, RA_FLEET_PREFIX "v");
        p = glob_append(p, vendor);
        p = stpcpy(p, ":m");
        p = glob_append(p, model);
        p = stpcpy(p, ":r");
        p = with_revision ? glob_append(p, revision) : stpcpy(p, "*");
        (void) stpcpy(p, ":*");

        *ret = m;
        return 0;
}

char *ra_fleet_comment_text(const char *s) {
        char *t = strdup(s ?: "");

        if (!t)
                return NULL;
        for (char *p = t; *p; p++)
                if ((unsigned char) *p < ' ' || *p == 0x7f)
                        *p = ' ';
        return t;
}

int ra_fleet_format_entry(const RaFleetEntry *e, bool with_revision, const char *host, const char *when,
                          char **ret) {
        _cleanup_free_ char *match = NULL, *reason = NULL, *name = NULL, *identity = NULL, *host_text = NULL;
        char *text;
        int r;

        if (!ra_kb_is_valid(e->kb))
                return -EINVAL;

        r = ra_fleet_match(e->vendor, e->model, e->revision, with_revision, &match);
        if (r < 0)
                return r;

        /* All of it from the daemon or the system: nothing may end the comment line early. */
        name = ra_fleet_comment_text(e->name);
        identity = ra_fleet_comment_text(e->identity);
        host_text = ra_fleet_comment_text(host);
        reason = ra_fleet_comment_text(e->reason);
        if (!name || !identity || !host_text || !reason)
                return -ENOMEM;

        if (asprintf(&text,
                     "# %s (%s) on %s, exported %s: %" PRIu32 " KiB. %s\n"
                     "%s\n"
                     " RADAEMON_FLEET_KB=%" PRIu32 "\n"
                     "\n",
                     name, *identity ? identity : "no identity", host_text, when, e->kb, reason, match,
                     e->kb) < 0)
                return -ENOMEM;

        *ret = text;
        return 0;
}
