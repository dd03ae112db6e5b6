/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <string.h>

#include "ra-stack-sysfs.h"
#include "ra-util.h"

/* DM_NAME_LEN and DM_UUID_LEN, with their NUL. */
#define DM_NAME_MAX 128
#define DM_UUID_MAX 129

/*
 * dm names and uuids are whatever the tool that made them chose (cryptsetup
 * takes the user's name as it is): text without control characters, within
 * dm's limits. Empty is NULL.
 */
static int read_text_attr(RaStackWalker *w, int devfd, const char *name, const char *attr, size_t max,
                          char **ret) {
        char buf[DM_UUID_MAX + 2];
        int r;

        /* max characters, the newline, and one more to tell a longer one. */
        r = ra_stack_sysfs_read_attr(w, devfd, name, attr, buf,
                                     max + 2 < sizeof(buf) ? max + 2 : sizeof(buf));
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r < 0)
                return r;

        for (const char *p = buf; *p; p++)
                if ((unsigned char) *p < ' ' || *p == 0x7f) {
                        ra_stack_walker_bad_path(w, "block/%s/%s", name, attr);
                        return -EINVAL;
                }

        if (r == 0) {
                *ret = NULL;
                return 0;
        }
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}

static bool has_prefix(const char *s, const char *prefix) {
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

int ra_stack_dm_read(RaStackWalker *w, int devfd, RaStackDevice *d) {
        int r;

        r = read_text_attr(w, devfd, d->name, "dm/name", DM_NAME_MAX - 1, &d->dm_name);
        if (r < 0)
                return r;
        r = read_text_attr(w, devfd, d->name, "dm/uuid", DM_UUID_MAX - 1, &d->dm_uuid);
        if (r < 0)
                return r;

        /* The prefixes cryptsetup, lvm2 and multipath-tools give their devices. */
        if (has_prefix(d->dm_uuid, "CRYPT-"))
                d->kind = RA_STACK_DM_CRYPT;
        else if (has_prefix(d->dm_uuid, "LVM-"))
                d->kind = RA_STACK_DM_LVM;
        else if (has_prefix(d->dm_uuid, "mpath-"))
                d->kind = RA_STACK_DM_MULTIPATH;
        else
                d->kind = RA_STACK_DM_OTHER;
        return 0;
}
