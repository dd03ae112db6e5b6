/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <libmount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "ra-bdi-mount.h"
#include "ra-mounts.h"
#include "ra-util.h"

/* A disk's own dev_t and its partitions', each to be mapped to the disk. */
typedef struct DevList {
        dev_t *devs;
        dev_t *knobs;
        size_t n;
} DevList;

static int devlist_add(DevList *l, dev_t dev, dev_t knob) {
        dev_t *d = reallocarray(l->devs, l->n + 1, sizeof(dev_t)), *k;

        if (!d)
                return -ENOMEM;
        l->devs = d;
        k = reallocarray(l->knobs, l->n + 1, sizeof(dev_t));
        if (!k)
                return -ENOMEM;
        l->knobs = k;
        l->devs[l->n] = dev;
        l->knobs[l->n++] = knob;
        return 0;
}

static void devlist_clear(DevList *l) {
        free(l->devs);
        free(l->knobs);
}

/* The partitions of a disk: directories under its sysfs one with a "partition" file. */
static int add_partitions(DevList *l, const char *sysfs_root, dev_t disk) {
        char path[128];
        struct dirent *de;
        DIR *d;
        int r = 0;

        (void) snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysfs_root, major(disk), minor(disk));
        d = opendir(path);
        if (!d)
                return 0; /* gone: its remove event follows */

        while ((de = readdir(d)) && r >= 0) {
                char file[sizeof(de->d_name) + 16], buf[32];
                unsigned ma, mi;
                int dfd = dirfd(d);

                if (de->d_name[0] == '.')
                        continue;
                (void) snprintf(file, sizeof(file), "%s/partition", de->d_name);
                if (faccessat(dfd, file, F_OK, 0) < 0)
                        continue;
                (void) snprintf(file, sizeof(file), "%s/dev", de->d_name);
                if (ra_read_file_at(dfd, file, buf, sizeof(buf)) < 0 || sscanf(buf, "%u:%u", &ma, &mi) != 2)
                        continue;
                r = devlist_add(l, makedev(ma, mi), disk);
        }
        closedir(d);
        return r;
}

int ra_mounts_foreach(const char *mountinfo, RaMountFunc f, void *userdata) {
        struct libmnt_table *tb = mnt_new_table();
        struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
        struct libmnt_fs *fs;
        int r;

        if (!tb || !it) {
                r = -ENOMEM;
                goto finish;
        }
        r = mnt_table_parse_file(tb, mountinfo);
        while (r >= 0 && mnt_table_next_fs(tb, it, &fs) == 0)
                r = f(fs, userdata);

finish:
        mnt_free_iter(it);
        mnt_unref_table(tb);
        return r < 0 ? r : 0;
}

typedef struct AddMount {
        RaSbMap *map;
        const DevList *l;
} AddMount;

static int add_mount(struct libmnt_fs *fs, void *userdata) {
        AddMount *a = userdata;
        dev_t dev = mnt_fs_get_devno(fs);
        int r = 0;

        if (major(dev) == 0)
                return minor(dev) != 0 ? ra_sbmap_add_anon(a->map, ra_kdev(dev)) : 0;
        for (size_t i = 0; i < a->l->n && r >= 0; i++)
                if (a->l->devs[i] == dev)
                        r = ra_sbmap_add(a->map, ra_kdev(dev), 0, a->l->knobs[i]);
        return r;
}

int ra_mounts_build(const char *mountinfo, const char *sysfs_root, const dev_t *disks, size_t n_disks,
                    RaSbMap *ret) {
        RaSbMap map = {};
        DevList l = {};
        int r = 0;

        for (size_t i = 0; i < n_disks && r >= 0; i++) {
                r = devlist_add(&l, disks[i], disks[i]);
                if (r >= 0)
                        r = add_partitions(&l, sysfs_root, disks[i]);
        }

        /* Raw reads: the block device's own inode, a partition's counting for its disk. */
        for (size_t i = 0; i < l.n && r >= 0; i++)
                r = ra_sbmap_add(&map, 0, ra_kdev(l.devs[i]), l.knobs[i]);

        if (r >= 0)
                r = ra_mounts_foreach(mountinfo, add_mount, &(AddMount){ .map = &map, .l = &l });

        devlist_clear(&l);
        if (r < 0) {
                ra_sbmap_clear(&map);
                return r;
        }
        ra_sbmap_clear(ret);
        *ret = map;
        return 0;
}

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

int ra_mounts_bdis(const char *mountinfo, const char *sysfs_root, RaBdi **ret, size_t *ret_n) {
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
