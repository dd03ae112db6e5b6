/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <string.h>

#include "ra-stack-sysfs.h"
#include "ra-util.h"

/* md's own limit is 1920 members (v1 superblocks); anything past this is not md/raid_disks. */
#define MD_RAID_DISKS_MAX 4096u
/* md/level is a short word: "raid10", "multipath", "container". */
#define MD_LEVEL_MAX 16

static int parse_md_level(const char *s, RaMdLevel *ret) {
        static const struct {
                const char *name;
                RaMdLevel level;
        } table[] = {
                { "linear", RA_MD_LEVEL_LINEAR }, { "raid0", RA_MD_LEVEL_RAID0 },
                { "raid1", RA_MD_LEVEL_RAID1 },   { "raid4", RA_MD_LEVEL_RAID4 },
                { "raid5", RA_MD_LEVEL_RAID5 },   { "raid6", RA_MD_LEVEL_RAID6 },
                { "raid10", RA_MD_LEVEL_RAID10 },
        };

        /* An array that is not running has an empty level. */
        if (!*s) {
                *ret = RA_MD_LEVEL_NONE;
                return 0;
        }
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
                        return -EINVAL;

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (strcmp(s, table[i].name) == 0) {
                        *ret = table[i].level;
                        return 0;
                }
        *ret = RA_MD_LEVEL_OTHER;
        return 0;
}

/* The disks a read is striped over, as md itself counts them for its optimal I/O size. */
static int md_data_disks(const RaStackDevice *d, uint32_t *ret) {
        uint32_t parity = 0, near;

        switch (d->md_level) {
        case RA_MD_LEVEL_RAID0:
                break;
        case RA_MD_LEVEL_RAID4:
        case RA_MD_LEVEL_RAID5:
                parity = 1;
                break;
        case RA_MD_LEVEL_RAID6:
                parity = 2;
                break;
        case RA_MD_LEVEL_RAID10:
                /* Near copies share a stripe; far copies lie in other stripes and do not. */
                near = d->md_layout & 0xff;
                if (near == 0 || d->md_raid_disks < near)
                        return -EINVAL;
                *ret = d->md_raid_disks % near == 0 ? d->md_raid_disks / near : d->md_raid_disks;
                return 0;
        default:
                *ret = 1;
                return 0;
        }

        if (d->md_raid_disks <= parity)
                return -EINVAL;
        *ret = d->md_raid_disks - parity;
        return 0;
}

/*
 * md/raid_disks, md/chunk_size and md/layout: a number, or during a reshape
 * the new one and the old in parentheses ("4 (3)"). The new one counts: the
 * array is on its way there.
 */
static int parse_md_number(const char *s, uint32_t *ret) {
        _cleanup_free_ char *copy = NULL;
        uint32_t old;
        size_t len;
        char *blank;
        int r;

        if (!strchr(s, ' '))
                return ra_parse_u32(s, ret);

        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        blank = strchr(copy, ' ');
        len = strlen(blank);
        if (len < 4 || blank[1] != '(' || blank[len - 1] != ')')
                return -EINVAL;
        *blank = '\0';
        blank[len - 1] = '\0';

        r = ra_parse_u32(blank + 2, &old);
        if (r < 0)
                return r;
        return ra_parse_u32(copy, ret);
}

static int read_md_number(RaStackWalker *w, int devfd, const RaStackDevice *d, const char *attr,
                          bool required, uint32_t *ret) {
        char buf[32];
        int r;

        r = ra_stack_sysfs_read_attr(w, devfd, d->name, attr, buf, sizeof(buf));
        if (r == -ENOENT) {
                if (required) {
                        ra_stack_walker_bad_path(w, "block/%s/%s", d->name, attr);
                        return -EINVAL;
                }
                *ret = 0;
                return 0;
        }
        if (r < 0)
                return r;

        r = parse_md_number(buf, ret);
        if (r < 0)
                ra_stack_walker_bad_path(w, "block/%s/%s", d->name, attr);
        return r;
}

int ra_stack_md_read(RaStackWalker *w, int devfd, RaStackDevice *d) {
        char level[MD_LEVEL_MAX];
        int r;

        d->kind = RA_STACK_MD;

        r = ra_stack_sysfs_read_attr(w, devfd, d->name, "md/level", level, sizeof(level));
        if (r == -ENOENT)
                level[0] = '\0';
        else if (r < 0)
                return r;
        if (parse_md_level(level, &d->md_level) < 0) {
                ra_stack_walker_bad_path(w, "block/%s/md/level", d->name);
                return -EINVAL;
        }

        r = read_md_number(w, devfd, d, "md/raid_disks", d->md_level != RA_MD_LEVEL_NONE, &d->md_raid_disks);
        if (r < 0)
                return r;
        if (d->md_raid_disks > MD_RAID_DISKS_MAX) {
                ra_stack_walker_bad_path(w, "block/%s/md/raid_disks", d->name);
                return -ERANGE;
        }
        /* The geometry of the levels that stripe; the others' numbers mean nothing here. */
        if (IN_SET(d->md_level, RA_MD_LEVEL_RAID0, RA_MD_LEVEL_RAID4) ||
            IN_SET(d->md_level, RA_MD_LEVEL_RAID5, RA_MD_LEVEL_RAID6) || d->md_level == RA_MD_LEVEL_RAID10) {
                r = read_md_number(w, devfd, d, "md/chunk_size", false, &d->md_chunk_bytes);
                if (r < 0)
                        return r;
        }
        if (d->md_level == RA_MD_LEVEL_RAID10) {
                r = read_md_number(w, devfd, d, "md/layout", true, &d->md_layout);
                if (r < 0)
                        return r;
        }

        r = md_data_disks(d, &d->md_data_disks);
        if (r < 0)
                ra_stack_walker_bad_path(w, "block/%s/md/%s", d->name,
                                         d->md_level == RA_MD_LEVEL_RAID10 ? "layout" : "raid_disks");
        return r;
}
