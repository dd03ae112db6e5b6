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

/*
 * Whether vendor, model and revision hold no byte that would let one model's
 * key pass for another's (':') or end a line (a control character), nor, in
 * a record, a '#', where hwdb's comment starts even inside a match.
 */
static bool fields_fit(const char *vendor, const char *model, const char *revision, bool record) {
        const char *fields[] = { vendor, model, revision };

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                for (const unsigned char *p = (const unsigned char *) (fields[i] ?: ""); *p; p++)
                        if (*p == ':' || *p < ' ' || *p == 0x7f || (record && *p == '#'))
                                return false;
        return true;
}

int ra_fleet_key(const char *vendor, const char *model, const char *revision, char **ret) {
        char *key;

        if (!model || !*model)
                return -EINVAL;
        if (!fields_fit(vendor, model, revision, false))
                return -EILSEQ;

        if (asprintf(&key, RA_FLEET_PREFIX "v%s:m%s:r%s:", vendor ?: "", model, revision ?: "") < 0)
                return -ENOMEM;
        *ret = key;
        return 0;
}

/*
 * Appends s to out as a match for exactly s (see ra-fleet.h); *pattern says
 * whether hwdb reads out as an fnmatch() pattern already, as after a '*', '?'
 * or '['. out has room for 3 * strlen(s) more.
 */
static char *match_append(char *out, const char *s, bool *pattern) {
        for (const char *p = s ?: ""; *p; p++) {
                if (strchr("*?[", *p)) {
                        /* A bracket: the pattern starts here, and the byte is itself in it. */
                        *out++ = '[';
                        *out++ = *p;
                        *out++ = ']';
                        *pattern = true;
                } else if (*p == '\\' && *pattern) {
                        *out++ = '\\';
                        *out++ = '\\';
                } else
                        *out++ = *p;
        }
        return out;
}

int ra_fleet_match(const char *vendor, const char *model, const char *revision, bool with_revision,
                   char **ret) {
        bool pattern = false;
        size_t len;
        char *m, *p;

        if (!model || !*model)
                return -EINVAL;
        if (!fields_fit(vendor, model, revision, true))
                return -EILSEQ;

        len = strlen(RA_FLEET_PREFIX) + 3 * (strlen(vendor ?: "") + strlen(model) + strlen(revision ?: "")) +
              sizeof("v:m:r*:*");
        m = malloc(len);
        if (!m)
                return -ENOMEM;

        p = stpcpy(m, RA_FLEET_PREFIX "v");
        p = match_append(p, vendor, &pattern);
        p = stpcpy(p, ":m");
        p = match_append(p, model, &pattern);
        p = stpcpy(p, ":r");
        p = with_revision ? match_append(p, revision, &pattern) : stpcpy(p, "*");
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
