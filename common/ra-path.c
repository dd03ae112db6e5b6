/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libmount.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ra-bdi-mount.h"
#include "ra-path.h"
#include "ra-util.h"

void ra_path_object_clear(RaPathObject *o) {
        free(o->name);
        free(o->mountpoint);
        free(o->fs_type);
        free(o->source);
        *o = (RaPathObject){};
}

/* "a/b" + "/" + "c": *ret grown by one component (len bytes of name). */
static int append(char **ret, const char *name, size_t len) {
        char *s;

        if (asprintf(&s, "%s/%.*s", *ret, (int) len, name) < 0)
                return -ENOMEM;
        free(*ret);
        *ret = s;
        return 0;
}

int ra_path_chase(const char *path, char **ret) {
        _cleanup_free_ char *done = strdup(""), *todo = strdup(path ?: "");
        unsigned links = 0;
        bool missing = false;

        *ret = NULL;
        if (!done || !todo)
                return -ENOMEM;
        if (todo[0] != '/')
                return -EINVAL;

        for (size_t at = 0; todo[at];) {
                const char *name = todo + at + strspn(todo + at, "/");
                size_t len = strcspn(name, "/");
                _cleanup_free_ char *next = NULL, *target = NULL, *rest = NULL;
                struct stat st;
                ssize_t n;
                int r;

                at = (size_t) (name - todo) + len;
                if (len == 0 || (len == 1 && name[0] == '.'))
                        continue;
                if (len == 2 && name[0] == '.' && name[1] == '.') {
                        char *slash = strrchr(done, '/');

                        if (slash)
                                *slash = '\0';
                        continue;
                }
                next = strdup(done);
                if (!next)
                        return -ENOMEM;
                r = append(&next, name, len);
                if (r < 0)
                        return r;
                /* What is not there yet (a mount not made) is kept as written, as realpath -m does. */
                if (!missing && lstat(next, &st) < 0) {
                        if (errno != ENOENT && errno != ENOTDIR)
                                return -errno;
                        missing = true;
                }
                if (missing || !S_ISLNK(st.st_mode)) {
                        free(done);
                        done = TAKE_PTR(next);
                        continue;
                }

                /* A link only root could have made; any other may be a user's, swapped in. */
                if (st.st_uid != 0)
                        return -EPERM;
                if (++links > 40)
                        return -ELOOP;
                target = malloc(PATH_MAX);
                if (!target)
                        return -ENOMEM;
                n = readlink(next, target, PATH_MAX - 1);
                if (n < 0)
                        return -errno;
                target[n] = '\0';
                /* The link's text, then what was left after it. */
                if (asprintf(&rest, "%s/%s", target, todo + at) < 0) {
                        rest = NULL;
                        return -ENOMEM;
                }
                if (target[0] == '/')
                        done[0] = '\0';
                free(todo);
                todo = TAKE_PTR(rest);
                at = 0;
        }

        *ret = done[0] ? TAKE_PTR(done) : strdup("/");
        return *ret ? 0 : -ENOMEM;
}

bool ra_path_is_path(const char *s) {
        return strchr(s, '/') || strcmp(s, ".") == 0 || strcmp(s, "..") == 0;
}

static const char *last_component(const char *s) {
        const char *slash = strrchr(s, '/');

        return slash ? slash + 1 : s;
}

/*
 * The whole block device of dev: the device itself, or for a partition its
 * disk, whose queue and window the partition shares.
 */
static int block_device_name(const char *sysfs_root, dev_t dev, char **ret) {
        _cleanup_free_ char *link = NULL, *target = NULL;
        _cleanup_close_ int dirfd = -1;
        char *slash;
        ssize_t n;

        if (asprintf(&link, "%s/dev/block/%u:%u", sysfs_root, major(dev), minor(dev)) < 0)
                return -ENOMEM;
        target = malloc(4096);
        if (!target)
                return -ENOMEM;
        n = readlink(link, target, 4095);
        if (n < 0)
                return errno == ENOENT ? -ENODEV : -errno;
        target[n] = '\0';

        dirfd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return -ENODEV;
        /* A partition's directory sits in its disk's: ".../block/sda/sda1". */
        if (faccessat(dirfd, "partition", F_OK, 0) == 0) {
                slash = strrchr(target, '/');
                if (!slash)
                        return -ENODEV;
                *slash = '\0';
        }

        if (!ra_device_name_is_valid(last_component(target)))
                return -ENODEV;
        *ret = strdup(last_component(target));
        return *ret ? 0 : -ENOMEM;
}

/* The object a mount's files read with: its bdi (ra_bdi_of_mount) or, on a disk, the disk. */
static int object_of(const char *sysfs_root, struct libmnt_fs *fs, RaPathObject *o) {
        RaBdiKind kind;
        RaBdi b = {};
        int r;

        r = ra_bdi_of_mount(sysfs_root, fs, &b);
        if (r > 0) {
                o->bdi = true;
                o->name = TAKE_PTR(b.name);
        }
        ra_bdi_clear(&b);
        if (r != 0)
                return r < 0 ? r : 0;
        kind = ra_bdi_kind_from_fs_type(mnt_fs_get_fstype(fs));
        if (major(mnt_fs_get_devno(fs)) == 0 || kind == RA_BDI_BTRFS || kind == RA_BDI_FUSEBLK)
                return -ENODEV; /* tmpfs, proc, overlay: nothing reads ahead for them; or gone */
        return block_device_name(sysfs_root, mnt_fs_get_devno(fs), &o->name);
}

/*
 * The last mount (the one on top) at path or the nearest directory above
 * it, by name alone: libmount's own mnt_table_find_mountpoint() stats the
 * path, which a test's or a not yet mounted path does not have.
 */
struct libmnt_fs *ra_path_mount_of(struct libmnt_table *table, const char *path) {
        _cleanup_free_ char *p = strdup(path);
        struct libmnt_fs *fs;
        char *slash;

        if (!p)
                return NULL;
        for (;;) {
                fs = mnt_table_find_target(table, p[0] ? p : "/", MNT_ITER_BACKWARD);
                if (fs || !p[0])
                        return fs;
                slash = strrchr(p, '/');
                *slash = '\0';
        }
}

/* Whether fstab has a mount at path or above it that is deeper than mounted, which is not there yet. */
static bool awaits_mount(struct libmnt_table *fstab, const char *path, struct libmnt_fs *mounted) {
        struct libmnt_fs *fs;

        if (!fstab)
                return false; /* no fstab: what is mounted is all there is */
        fs = ra_path_mount_of(fstab, path);
        return fs && strlen(mnt_fs_get_target(fs)) > strlen(mnt_fs_get_target(mounted));
}

void ra_path_mounts_clear(RaPathMounts *m) {
        mnt_unref_table(m->mounted);
        mnt_unref_table(m->fstab);
        *m = (RaPathMounts){};
}

int ra_path_mounts_load(const char *mountinfo, const char *fstab, RaPathMounts *ret) {
        RaPathMounts m = {};

        m.mounted = mnt_new_table_from_file(mountinfo);
        if (!m.mounted)
                return -errno ?: -EIO;
        if (fstab)
                m.fstab = mnt_new_table_from_file(fstab); /* NULL: none, and nothing awaited */
        *ret = m;
        return 0;
}

int ra_path_object_in(const char *sysfs_root, const RaPathMounts *mounts, const char *path,
                      RaPathObject *ret) {
        struct libmnt_fs *fs;
        RaPathObject o = {};
        int r;

        if (!path || path[0] != '/')
                return -EINVAL;

        fs = ra_path_mount_of(mounts->mounted, path);
        if (!fs)
                return -ENOENT;
        if (awaits_mount(mounts->fstab, path, fs))
                return -EAGAIN;

        r = object_of(sysfs_root, fs, &o);
        if (r < 0)
                goto finish;
        o.mountpoint = strdup(mnt_fs_get_target(fs) ?: "");
        o.fs_type = strdup(mnt_fs_get_fstype(fs) ?: "");
        o.source = strdup(mnt_fs_get_source(fs) ?: "");
        if (!o.mountpoint || !o.fs_type || !o.source) {
                r = -ENOMEM;
                goto finish;
        }
        *ret = o;
        o = (RaPathObject){};
finish:
        ra_path_object_clear(&o);
        return r;
}

int ra_path_object(const char *sysfs_root, const char *mountinfo, const char *fstab, const char *path,
                   RaPathObject *ret) {
        RaPathMounts m;
        int r;

        if (!path || path[0] != '/')
                return -EINVAL;
        r = ra_path_mounts_load(mountinfo, fstab, &m);
        if (r < 0)
                return r;
        r = ra_path_object_in(sysfs_root, &m, path, ret);
        ra_path_mounts_clear(&m);
        return r;
}
