/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A walk's roots: the file system and mount of each, the block device beneath
 * the mount, and whether that device is rotational.
 */
#include "config.h"

#include <fcntl.h>
#include <libmount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ra-macro.h"
#include "ra-util.h"
#include "rc-prefetch-state.h"

/* The block device beneath a mount: the file system's own device number,
 * or, where that is an anonymous one (btrfs), the mount's source, found in
 * mountinfo by the mount's ID (libmount undoes mountinfo's escapes). */
static int mount_device(const struct statx *stx, const RcWalkRoot *root, dev_t *ret) {
        struct libmnt_table *tb = NULL;
        struct libmnt_iter *it = NULL;
        struct libmnt_fs *fs;
        const char *source = NULL;
        char path[64];
        struct stat st;
        int r = -ENODEV;

        (void) snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", stx->stx_dev_major, stx->stx_dev_minor);
        if (access(path, F_OK) == 0) {
                *ret = makedev(stx->stx_dev_major, stx->stx_dev_minor);
                return 0;
        }
        if (!root->has_mnt_id)
                return -ENODEV;

        tb = mnt_new_table_from_file("/proc/self/mountinfo");
        it = mnt_new_iter(MNT_ITER_FORWARD);
        while (tb && it && mnt_table_next_fs(tb, it, &fs) == 0)
                if (mnt_fs_get_id(fs) >= 0 && (uint64_t) mnt_fs_get_id(fs) == root->mnt_id) {
                        source = mnt_fs_get_srcpath(fs);
                        break;
                }
        if (source && stat(source, &st) == 0 && S_ISBLK(st.st_mode)) {
                *ret = st.st_rdev;
                r = 0;
        }
        mnt_free_iter(it);
        mnt_unref_table(tb);
        return r;
}

/* 1 for a rotational disk, 0 for one that is not, -1 when it cannot be told. */
static int device_rotational(const struct statx *stx, const RcWalkRoot *root) {
        char path[96], buf[8];
        dev_t dev;

        if (mount_device(stx, root, &dev) < 0)
                return -1;
        /* A partition has no queue of its own: its disk's is one directory up. */
        (void) snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/rotational", major(dev), minor(dev));
        if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0) {
                (void) snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/rotational", major(dev),
                                minor(dev));
                if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
                        return -1;
        }
        return IN_SET(buf[0], '0', '1') && buf[1] == '\0' ? buf[0] - '0' : -1;
}

int rc_walk_add_root(RcWalk *w, const char *path, const RcWalkRoot **ret) {
        _cleanup_close_ int fd = -1;
        struct statx stx;
        struct statfs sfs;
        RcWalkRoot **roots, *root;

        /* O_PATH first, so a file is told apart from a directory we may not read. */
        fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID, &stx) < 0)
                return -errno;
        if (!S_ISDIR(stx.stx_mode))
                return -ENOTDIR;
        fd = ra_close(fd);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* What is below is opened from this descriptor: its mount is what counts, not the first open's. */
        if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID, &stx) < 0 || fstatfs(fd, &sfs) < 0)
                return -errno;

        root = calloc(1, sizeof(*root));
        if (!root)
                return -ENOMEM;
        root->path = strdup(path);
        roots = reallocarray(w->roots, w->n_roots + 1, sizeof(*roots));
        if (!root->path || !roots) {
                free(root->path);
                free(root);
                return -ENOMEM;
        }
        w->roots = roots;
        root->fd = TAKE_FD(fd);

        root->fs = ra_prefetch_fs_from_magic((uint64_t) sfs.f_type);
        rc_devra_setup(root, &stx);
        root->has_mnt_id = stx.stx_mask & STATX_MNT_ID;
        root->mnt_id = root->has_mnt_id ? stx.stx_mnt_id : makedev(stx.stx_dev_major, stx.stx_dev_minor);
        root->rotational = device_rotational(&stx, root);
        root->index = (uint32_t) w->n_roots;
        roots[w->n_roots++] = root;
        if (ret)
                *ret = root;
        return 0;
}

/* The root path is beneath, or is: path itself, or path followed by '/' and more. */
static size_t root_prefix(const char *root, const char *path) {
        size_t n = strlen(root);

        if (strncmp(root, path, n) != 0)
                return 0;
        return path[n] == '\0' || path[n] == '/' || (n > 0 && root[n - 1] == '/') ? n : 0;
}

int rc_walk_open_beneath(const RcWalk *w, const char *path, int flags) {
        const RcWalkRoot *root = NULL;
        struct open_how how = {
                .flags = (uint64_t) (flags | O_NOFOLLOW | O_CLOEXEC),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        const char *rel;
        size_t len = 0;
        int fd;

        /* Roots within roots: the deepest, for the shortest way down. */
        for (size_t i = 0; i < w->n_roots; i++) {
                size_t n = root_prefix(w->roots[i]->path, path);

                if (n > len) {
                        root = w->roots[i];
                        len = n;
                }
        }
        if (!root)
                return -EXDEV;
        for (rel = path + len; *rel == '/'; rel++)
                ;
        fd = (int) syscall(SYS_openat2, root->fd, *rel ? rel : ".", &how, sizeof(how));
        if (fd < 0 && errno == ENOSYS) /* before Linux 5.6: the last component alone is not followed */
                fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}
