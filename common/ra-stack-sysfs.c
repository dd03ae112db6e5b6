/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "ra-stack-sysfs.h"
#include "ra-util.h"

/* Remembers the first path that was wrong, relative to the root; allocation failure only loses it. */
void ra_stack_walker_bad_path(RaStackWalker *w, const char *format, ...) {
        va_list ap;

        if (w->bad_path)
                return;
        va_start(ap, format);
        if (vasprintf(&w->bad_path, format, ap) < 0)
                w->bad_path = NULL;
        va_end(ap);
}

static bool device_is_gone(RaStackWalker *w, const char *name) {
        return faccessat(w->blockfd, name, F_OK, 0) < 0 && errno == ENOENT;
}

int ra_stack_sysfs_open(RaStackWalker *w, const char *name, int *ret_fd) {
        int fd;

        if (!ra_device_name_is_valid(name)) {
                ra_stack_walker_bad_path(w, "block/%s", name);
                return -EINVAL;
        }

        fd = openat(w->blockfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                int r = negative_errno();

                ra_stack_walker_bad_path(w, "block/%s", name);
                return ra_errno_is_gone(r) ? -ENODEV : r;
        }

        *ret_fd = fd;
        return 0;
}

/*
 * Reads one attribute of the device name. -ENOENT when it is missing from a
 * device that is still there, -ENODEV when the device went away.
 */
int ra_stack_sysfs_read_attr(RaStackWalker *w, int devfd, const char *name, const char *attr, char *buf,
                             size_t size) {
        int r;

        r = ra_read_file_at(devfd, attr, buf, size);
        if (r >= 0)
                return r;
        if (ra_errno_is_gone(r) && device_is_gone(w, name)) {
                ra_stack_walker_bad_path(w, "block/%s", name);
                return -ENODEV;
        }
        if (r == -ENOENT)
                return r;

        ra_stack_walker_bad_path(w, "block/%s/%s", name, attr);
        return r == -EFBIG ? -ERANGE : r;
}

/*
 * Read as radaemon reads a disk (ra_device_attrs_read_sysfs()), so that a
 * device's attributes mean the same in a stack as alone. Every block device
 * has a size and a read_ahead_kb: one without them is not one any more.
 */
int ra_stack_sysfs_read_queue(RaStackWalker *w, int devfd, RaStackDevice *d) {
        _cleanup_(ra_device_attrs_clear) RaDeviceAttrs a = {};
        const char *bad = NULL;
        int r;

        r = ra_device_attrs_read_sysfs(&a, devfd, &bad);
        if (r < 0) {
                if (ra_errno_is_gone(r) && device_is_gone(w, d->name)) {
                        ra_stack_walker_bad_path(w, "block/%s", d->name);
                        return -ENODEV;
                }
                if (bad)
                        ra_stack_walker_bad_path(w, "block/%s/%s", d->name, bad);
                /* Only the size and read_ahead_kb are required: missing, the device is on its way out. */
                return r == -ENOENT ? -ENODEV : r;
        }

        d->size_bytes = a.size_bytes;
        d->read_ahead_kb = a.read_ahead_kb;
        d->optimal_io_bytes = a.optimal_io_bytes;
        d->max_sectors_kb = a.max_sectors_kb;
        d->rotational = a.rotational;
        d->removable = a.removable;
        return 0;
}

static int version_cmp(const void *a, const void *b) {
        return strverscmp(*(char *const *) a, *(char *const *) b);
}

void ra_stack_sysfs_sort(char **l) {
        qsort(l, ra_strv_length(l), sizeof(char *), version_cmp);
}

/*
 * The names in dir/path, each a valid kernel name, sorted as versions ("sda2"
 * before "sda10"), at most RA_STACK_DEVICES_MAX of them. A directory that is
 * not there is empty: a recorded tree leaves empty ones out.
 */
int ra_stack_sysfs_list(RaStackWalker *w, int dirfd, const char *name, const char *path, char ***ret) {
        _cleanup_(ra_strv_freep) char **l = NULL;
        _cleanup_close_ int fd = -1;
        DIR *d;
        int r = 0;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;

        fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                r = negative_errno();
                if (ra_errno_is_gone(r) && device_is_gone(w, name)) {
                        ra_stack_walker_bad_path(w, "block/%s", name);
                        return -ENODEV;
                }
                if (r != -ENOENT) {
                        ra_stack_walker_bad_path(w, "block/%s/%s", name, path);
                        return r;
                }
                *ret = TAKE_PTR(l);
                return 0;
        }

        d = fdopendir(fd);
        if (!d)
                return negative_errno();
        TAKE_FD(fd);

        for (;;) {
                struct dirent *de;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                r = negative_errno();
                        break;
                }
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (!ra_device_name_is_valid(de->d_name)) {
                        r = -EINVAL;
                        break;
                }
                if (ra_strv_length(l) >= RA_STACK_DEVICES_MAX) {
                        r = -E2BIG;
                        break;
                }
                r = ra_strv_push(&l, de->d_name);
                if (r < 0)
                        break;
        }
        (void) closedir(d);
        if (r < 0) {
                ra_stack_walker_bad_path(w, "block/%s/%s", name, path);
                return r;
        }

        ra_stack_sysfs_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

static int strv_push_unique(char ***l, const char *s) {
        return ra_strv_contains(*l, s) ? 0 : ra_strv_push(l, s);
}

static int strv_append_unique(char ***l, char *const *other) {
        int r;

        for (size_t i = 0; other && other[i]; i++) {
                r = strv_push_unique(l, other[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool is_partition_dir(int devfd, const char *entry) {
        char path[PATH_MAX];
        struct stat st;

        if (fstatat(devfd, entry, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                return false;
        if ((size_t) snprintf(path, sizeof(path), "%s/partition", entry) >= sizeof(path))
                return false;
        return faccessat(devfd, path, F_OK, 0) >= 0;
}

/*
 * What holds the device: a disk's partitions are held (md0 on sda2), rarely
 * the disk itself, so both count.
 */
int ra_stack_sysfs_holders(RaStackWalker *w, int devfd, const char *name, char ***ret) {
        _cleanup_(ra_strv_freep) char **holders = NULL, **entries = NULL;
        int r;

        r = ra_stack_sysfs_list(w, devfd, name, "holders", &holders);
        if (r < 0)
                return r;

        /* The device's own directory: its partitions are subdirectories with a "partition" file. */
        r = ra_stack_sysfs_list(w, devfd, name, ".", &entries);
        if (r < 0)
                return r;

        for (size_t i = 0; entries[i]; i++) {
                _cleanup_(ra_strv_freep) char **more = NULL;
                char path[PATH_MAX];

                if (!is_partition_dir(devfd, entries[i]))
                        continue;
                if ((size_t) snprintf(path, sizeof(path), "%s/holders", entries[i]) >= sizeof(path))
                        return -ENAMETOOLONG;
                r = ra_stack_sysfs_list(w, devfd, name, path, &more);
                if (r < 0)
                        return r;
                r = strv_append_unique(&holders, more);
                if (r < 0)
                        return r;
        }

        ra_stack_sysfs_sort(holders);
        *ret = TAKE_PTR(holders);
        return 0;
}

/*
 * The whole device a slave belongs to. A whole device is listed in block/; a
 * partition is not, and its link leads into its disk's directory
 * (…/block/sda/sda2), where it has a "partition" file.
 */
int ra_stack_sysfs_resolve_slave(RaStackWalker *w, int devfd, const char *name, const char *slave,
                                 char **ret_whole) {
        char path[PATH_MAX], target[PATH_MAX], number[32];
        _cleanup_close_ int partfd = -1;
        const char *last;
        char *slash;
        ssize_t n;
        int r;

        if (faccessat(w->blockfd, slave, F_OK, 0) >= 0) {
                *ret_whole = strdup(slave);
                return *ret_whole ? 0 : -ENOMEM;
        }

        if ((size_t) snprintf(path, sizeof(path), "slaves/%s", slave) >= sizeof(path))
                return -ENAMETOOLONG;
        /* A link that leads nowhere: the slave went away. */
        if (faccessat(devfd, path, F_OK, 0) < 0) {
                r = negative_errno();
                ra_stack_walker_bad_path(w, "block/%s/slaves/%s", name, slave);
                return ra_errno_is_gone(r) ? -ENODEV : r;
        }
        n = readlinkat(devfd, path, target, sizeof(target));
        if (n < 0) {
                r = negative_errno();
                ra_stack_walker_bad_path(w, "block/%s/slaves/%s", name, slave);
                return ra_errno_is_gone(r) ? -ENODEV : r;
        }
        if ((size_t) n >= sizeof(target)) {
                ra_stack_walker_bad_path(w, "block/%s/slaves/%s", name, slave);
                return -ENAMETOOLONG;
        }
        target[n] = '\0';

        /* ".../<disk>/<partition>": the last component is the slave, the one before its disk. */
        slash = strrchr(target, '/');
        if (!slash || strcmp(slash + 1, slave) != 0 || slash == target) {
                ra_stack_walker_bad_path(w, "block/%s/slaves/%s", name, slave);
                return -EINVAL;
        }
        *slash = '\0';
        last = strrchr(target, '/');
        last = last ? last + 1 : target;
        if (!ra_device_name_is_valid(last)) {
                ra_stack_walker_bad_path(w, "block/%s/slaves/%s", name, slave);
                return -EINVAL;
        }

        /* Gone, if its disk or the partition is no longer there. */
        if ((size_t) snprintf(path, sizeof(path), "%s/%s", last, slave) >= sizeof(path))
                return -ENAMETOOLONG;
        partfd = openat(w->blockfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (partfd < 0) {
                r = negative_errno();
                ra_stack_walker_bad_path(w, "block/%s/slaves/%s", name, slave);
                return ra_errno_is_gone(r) ? -ENODEV : r;
        }
        r = ra_read_file_at(partfd, "partition", number, sizeof(number));
        if (r < 0 || ra_parse_u64(number, &(uint64_t){ 0 }) < 0) {
                ra_stack_walker_bad_path(w, "block/%s/%s/partition", last, slave);
                return r == -ENOENT || r >= 0 ? -EINVAL : r;
        }

        *ret_whole = strdup(last);
        return *ret_whole ? 0 : -ENOMEM;
}
