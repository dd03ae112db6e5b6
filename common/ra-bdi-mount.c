/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <libmount.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "ra-bdi-mount.h"
#include "ra-util.h"

static int dup_field(char **field, const char *s) {
        if (!s)
                return 0;
        *field = strdup(s);
        return *field ? 0 : -ENOMEM;
}

int ra_mount_option_u64(const char *options, const char *name, uint64_t *ret) {
        char *value = NULL;
        size_t len = 0;
        char buf[32];

        if (!options || mnt_optstr_get_option(options, name, &value, &len) != 0 || len == 0)
                return -ENOENT;
        if (len >= sizeof(buf))
                return -ERANGE;
        memcpy(buf, value, len);
        buf[len] = '\0';
        return ra_parse_u64(buf, ret);
}

/* NFS's rsize, from the super options mountinfo shows ("rsize=1048576"). */
static uint32_t nfs_rsize_kb(struct libmnt_fs *fs) {
        uint64_t v;

        if (ra_mount_option_u64(mnt_fs_get_fs_options(fs), "rsize", &v) < 0 || v / 1024 > UINT32_MAX)
                return 0;
        return (uint32_t) (v / 1024);
}

/*
 * The user a FUSE mount is for, from the super option the kernel shows
 * ("user_id=1000"): fusermount, which lets any user mount, passes the
 * caller's. Root's own mounts (user_id=0) are root's choice, not a user's.
 */
static void fuse_user(struct libmnt_fs *fs, RaBdi *b) {
        uint64_t uid;

        if (ra_mount_option_u64(mnt_fs_get_fs_options(fs), "user_id", &uid) < 0 || uid == 0 ||
            uid >= UINT32_MAX)
                return;
        b->user_made = true;
        b->user_id = (uid_t) uid;
}

/* The kernel name of a btrfs mount's source: "/dev/mapper/x" is "dm-0" where it resolves. */
static void source_device_name(const char *source, char *buf, size_t size) {
        char resolved[PATH_MAX];
        const char *slash;

        if (source && realpath(source, resolved))
                source = resolved;
        slash = source ? strrchr(source, '/') : NULL;
        (void) snprintf(buf, size, "%s", slash ? slash + 1 : source ?: "");
}

/* The bdi of one mount; 1 when found (b filled), 0 for none of ours. */
int ra_bdi_of_mount(const char *sysfs_root, struct libmnt_fs *fs, RaBdi *b) {
        const char *type = mnt_fs_get_fstype(fs);
        dev_t dev = mnt_fs_get_devno(fs);
        char name[PATH_MAX];
        int r;

        *b = (RaBdi){ .kind = ra_bdi_kind_from_fs_type(type),
                      .s_dev = dev,
                      .mount_id = mnt_fs_get_id(fs),
                      .stripes = 1 };

        if (b->kind == RA_BDI_BTRFS) {
                source_device_name(mnt_fs_get_source(fs), name, sizeof(name));
                r = ra_bdi_read_btrfs(sysfs_root, name, b);
                if (r == -ENOENT)
                        return 0; /* unmounted under us */
                if (r < 0)
                        return r;
        } else {
                if (b->kind == RA_BDI_FUSEBLK) {
                        (void) snprintf(name, sizeof(name), "%u:%u-fuseblk", major(dev), minor(dev));
                        b->beneath = malloc(sizeof(dev_t));
                        if (!b->beneath)
                                return -ENOMEM;
                        b->beneath[b->n_beneath++] = dev;
                } else if (major(dev) == 0)
                        (void) snprintf(name, sizeof(name), "%u:%u", major(dev), minor(dev));
                else
                        return 0; /* on a disk: the disk's window */

                /* tmpfs, overlay, proc...: no bdi of their own. */
                if (!ra_bdi_exists(sysfs_root, name))
                        return 0;
                b->name = strdup(name);
                if (!b->name)
                        return -ENOMEM;
        }

        if (b->kind == RA_BDI_NFS)
                b->rsize_kb = nfs_rsize_kb(fs);
        if (b->kind == RA_BDI_FUSE || b->kind == RA_BDI_FUSEBLK)
                fuse_user(fs, b);
        if (dup_field(&b->fs_type, type) < 0 || dup_field(&b->mountpoint, mnt_fs_get_target(fs)) < 0 ||
            dup_field(&b->source, mnt_fs_get_source(fs)) < 0)
                return -ENOMEM;
        return 1;
}
