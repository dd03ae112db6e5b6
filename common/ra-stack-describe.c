/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ra-stack.h"
#include "ra-util.h"

/* A stack in words, for logs and D-Bus (ra_stack_describe()). */

typedef struct Text {
        char *buf;
        size_t size;
        size_t len;
        bool cut;
} Text;

#define CUT_MARK " ..."

/* Adds whole pieces only, and keeps room for the mark should one not fit. */
static void text_add(Text *t, const char *s) {
        size_t n = strlen(s);

        if (t->cut)
                return;
        if (t->len + n + sizeof(CUT_MARK) > t->size) {
                t->cut = true;
                return;
        }
        memcpy(t->buf + t->len, s, n + 1);
        t->len += n;
}

static const char *device_label(const RaStackDevice *d) {
        switch (d->kind) {
        case RA_STACK_DM_CRYPT:
                /* cryptsetup's uuid says which: "CRYPT-LUKS2-…", "CRYPT-PLAIN-…". */
                return d->dm_uuid && strncmp(d->dm_uuid, "CRYPT-LUKS", strlen("CRYPT-LUKS")) == 0
                               ? "LUKS"
                               : "dm-crypt";
        case RA_STACK_DM_LVM:
                return "LVM";
        case RA_STACK_DM_MULTIPATH:
                return "multipath";
        case RA_STACK_DM_OTHER:
                return "dm";
        case RA_STACK_MD:
                return IN_SET(d->md_level, RA_MD_LEVEL_NONE, RA_MD_LEVEL_OTHER)
                               ? "md"
                               : ra_md_level_to_string(d->md_level);
        default:
                return NULL;
        }
}

/*
 * Adds "<sep><shown> (<label>)" as one piece, so that a cut falls between
 * devices; shown is the name where it is listed, a partition's for a
 * partition.
 */
static void describe_device(const RaStack *s, size_t index, const char *sep, const char *shown,
                            unsigned depth, Text *t) {
        const RaStackDevice *d = &s->devices[index];
        const char *label = device_label(d);
        char piece[RA_STACK_DESCRIBE_MAX];

        if (strcmp(shown, d->name) != 0 && (label || d->n_slaves > 0))
                /* A partition of a stacked device: md0p1 (of md0, raid1). */
                (void) snprintf(piece, sizeof(piece), "%s%s (of %s%s%s)", sep, shown, d->name,
                                label ? ", " : "", label ?: "");
        else if (label)
                (void) snprintf(piece, sizeof(piece), "%s%s (%s)", sep, shown, label);
        else
                (void) snprintf(piece, sizeof(piece), "%s%s", sep, shown);
        text_add(t, piece);

        if (d->n_slaves == 0 || t->cut)
                return;
        if (depth >= RA_STACK_DEPTH_MAX) {
                t->cut = true;
                return;
        }

        for (size_t i = 0; i < d->n_slaves && !t->cut; i++) {
                const RaStackSlave *slave = &d->slaves[i];
                bool bracket = d->n_slaves > 1 && s->devices[slave->device].n_slaves > 0;

                describe_device(s, slave->device,
                                i == 0 ? (bracket ? " on [" : " on ") : (bracket ? ", [" : ", "),
                                slave->name, depth + 1, t);
                if (bracket)
                        text_add(t, "]");
        }
}

const char *ra_stack_describe(const RaStack *s, char buf[static RA_STACK_DESCRIBE_MAX]) {
        Text t = { .buf = buf, .size = RA_STACK_DESCRIBE_MAX };

        buf[0] = '\0';
        if (!s || s->n_devices == 0)
                return buf;

        describe_device(s, 0, "", s->devices[0].name, 0, &t);
        if (t.cut)
                memcpy(buf + t.len, CUT_MARK, sizeof(CUT_MARK));
        return buf;
}
