/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <libgen.h>
#include <libmount.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "ra-bdi-mount.h"
#include "ra-bdis.h"
#include "ra-mounts.h"
#include "ra-util.h"

static bool have_superblock(const RaBdi *v, size_t n, dev_t dev) {
        for (size_t i = 0; i < n; i++)
                if (v[i].s_dev == dev)
                        return true;
        return false;
}

typedef struct Scan {
        const char *sysfs_root;
        RaBdi *v;
        size_t n;
} Scan;

static int scan_mount(struct libmnt_fs *fs, void *userdata) {
        Scan *s = userdata;
        RaBdi b, *grown;
        int r;

        /* Bind mounts and subvolumes: one superblock, one bdi, named by its first mount. */
        if (have_superblock(s->v, s->n, mnt_fs_get_devno(fs)))
                return 0;
        r = ra_bdi_of_mount(s->sysfs_root, fs, &b);
        if (r <= 0) {
                ra_bdi_clear(&b);
                return r;
        }
        grown = reallocarray(s->v, s->n + 1, sizeof(RaBdi));
        if (!grown) {
                ra_bdi_clear(&b);
                return -ENOMEM;
        }
        s->v = grown;
        s->v[s->n++] = b;
        return 0;
}

int ra_bdis_scan(const char *mountinfo, const char *sysfs_root, RaBdi **ret, size_t *ret_n) {
        Scan s = { .sysfs_root = sysfs_root };
        int r;

        r = ra_mounts_foreach(mountinfo, scan_mount, &s);
        if (r < 0) {
                ra_bdi_array_free(s.v, s.n);
                return r;
        }
        *ret = s.v;
        *ret_n = s.n;
        return 0;
}
