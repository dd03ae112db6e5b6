/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "ra-stack.h"
#include "ra-util.h"

/* md's own limit is 1920 members (v1 superblocks); anything past this is not md/raid_disks. */
#define MD_RAID_DISKS_MAX 4096u
/* md/level is a short word: "raid10", "multipath", "container". */
#define MD_LEVEL_MAX 16
/* DM_NAME_LEN and DM_UUID_LEN, with their NUL. */
#define DM_NAME_MAX 128
#define DM_UUID_MAX 129

static const char *const kind_names[_RA_STACK_KIND_MAX] = {
        [RA_STACK_DISK] = "disk",   [RA_STACK_DM_CRYPT] = "dm-crypt",
        [RA_STACK_DM_LVM] = "lvm",  [RA_STACK_DM_MULTIPATH] = "multipath",
        [RA_STACK_DM_OTHER] = "dm", [RA_STACK_MD] = "md",
};

const char *ra_stack_kind_to_string(RaStackKind k) {
        return k >= 0 && k < _RA_STACK_KIND_MAX ? kind_names[k] : NULL;
}

static const char *const md_level_names[_RA_MD_LEVEL_MAX] = {
        [RA_MD_LEVEL_NONE] = "none",   [RA_MD_LEVEL_LINEAR] = "linear", [RA_MD_LEVEL_RAID0] = "raid0",
        [RA_MD_LEVEL_RAID1] = "raid1", [RA_MD_LEVEL_RAID4] = "raid4",   [RA_MD_LEVEL_RAID5] = "raid5",
        [RA_MD_LEVEL_RAID6] = "raid6", [RA_MD_LEVEL_RAID10] = "raid10", [RA_MD_LEVEL_OTHER] = "other",
};

const char *ra_md_level_to_string(RaMdLevel l) {
        return l >= 0 && l < _RA_MD_LEVEL_MAX ? md_level_names[l] : NULL;
}

static void device_clear(RaStackDevice *d) {
        free(d->name);
        free(d->dm_name);
        free(d->dm_uuid);
        for (size_t i = 0; i < d->n_slaves; i++)
                free(d->slaves[i].name);
        free(d->slaves);
        ra_strv_free(d->holders);
        *d = (RaStackDevice){};
}

RaStack *ra_stack_free(RaStack *s) {
        if (!s)
                return NULL;

        for (size_t i = 0; i < s->n_devices; i++)
                device_clear(&s->devices[i]);
        free(s->devices);
        free(s->leaves);
        return mfree(s);
}

typedef struct Walker {
        int blockfd; /* <root>/block */
        RaStack *stack;
        bool on_path[RA_STACK_DEVICES_MAX]; /* by index in stack->devices: a cycle comes back to one */
        char *bad_path;
} Walker;

/* Remembers the first path that was wrong, relative to the root; allocation failure only loses it. */
_printf_(2, 3) static void set_bad_path(Walker *w, const char *format, ...) {
        va_list ap;

        if (w->bad_path)
                return;
        va_start(ap, format);
        if (vasprintf(&w->bad_path, format, ap) < 0)
                w->bad_path = NULL;
        va_end(ap);
}

static bool device_is_gone(Walker *w, const char *name) {
        return faccessat(w->blockfd, name, F_OK, 0) < 0 && errno == ENOENT;
}

static int open_device(Walker *w, const char *name, int *ret_fd) {
        int fd;

        if (!ra_device_name_is_valid(name)) {
                set_bad_path(w, "block/%s", name);
                return -EINVAL;
        }

        fd = openat(w->blockfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                int r = negative_errno();

                set_bad_path(w, "block/%s", name);
                return ra_errno_is_gone(r) ? -ENODEV : r;
        }

        *ret_fd = fd;
        return 0;
}

/*
 * Reads one attribute of the device name. -ENOENT when it is missing from a
 * device that is still there, -ENODEV when the device went away.
 */
static int read_attr(Walker *w, int devfd, const char *name, const char *attr, char *buf, size_t size) {
        int r;

        r = ra_read_file_at(devfd, attr, buf, size);
        if (r >= 0)
                return r;
        if (ra_errno_is_gone(r) && device_is_gone(w, name)) {
                set_bad_path(w, "block/%s", name);
                return -ENODEV;
        }
        if (r == -ENOENT)
                return r;

        set_bad_path(w, "block/%s/%s", name, attr);
        return r == -EFBIG ? -ERANGE : r;
}

/*
 * A number; a missing optional one is 0. Every block device has a size and a
 * read_ahead_kb: one without them is not one any more (-ENODEV).
 */
static int read_u64_attr(Walker *w, int devfd, const char *name, const char *attr, bool required,
                         uint64_t *ret) {
        char buf[32];
        int r;

        r = read_attr(w, devfd, name, attr, buf, sizeof(buf));
        if (r == -ENOENT) {
                if (required) {
                        set_bad_path(w, "block/%s/%s", name, attr);
                        return -ENODEV;
                }
                *ret = 0;
                return 0;
        }
        if (r < 0)
                return r;

        r = ra_parse_u64(buf, ret);
        if (r < 0)
                set_bad_path(w, "block/%s/%s", name, attr);
        return r;
}

static int read_u32_attr(Walker *w, int devfd, const char *name, const char *attr, bool required,
                         uint32_t *ret) {
        uint64_t v;
        int r;

        r = read_u64_attr(w, devfd, name, attr, required, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX) {
                set_bad_path(w, "block/%s/%s", name, attr);
                return -ERANGE;
        }

        *ret = (uint32_t) v;
        return 0;
}

static int read_bool_attr(Walker *w, int devfd, const char *name, const char *attr, bool *ret) {
        uint64_t v;
        int r;

        r = read_u64_attr(w, devfd, name, attr, false, &v);
        if (r < 0)
                return r;
        if (v > 1) {
                set_bad_path(w, "block/%s/%s", name, attr);
                return -EINVAL;
        }

        *ret = v == 1;
        return 0;
}

/*
 * dm names and uuids are whatever the tool that made them chose (cryptsetup
 * takes the user's name as it is): text without control characters, within
 * dm's limits. Empty is NULL.
 */
static int read_text_attr(Walker *w, int devfd, const char *name, const char *attr, size_t max, char **ret) {
        char buf[DM_UUID_MAX + 2];
        int r;

        /* max characters, the newline, and one more to tell a longer one. */
        r = read_attr(w, devfd, name, attr, buf, max + 2 < sizeof(buf) ? max + 2 : sizeof(buf));
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r < 0)
                return r;

        for (const char *p = buf; *p; p++)
                if ((unsigned char) *p < ' ' || *p == 0x7f) {
                        set_bad_path(w, "block/%s/%s", name, attr);
                        return -EINVAL;
                }

        if (r == 0) {
                *ret = NULL;
                return 0;
        }
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}

static int read_queue_attrs(Walker *w, int devfd, RaStackDevice *d) {
        uint64_t sectors;
        int r;

        /* In 512-byte sectors whatever the logical block size. */
        r = read_u64_attr(w, devfd, d->name, "size", true, &sectors);
        if (r < 0)
                return r;
        if (sectors > UINT64_MAX / 512) {
                set_bad_path(w, "block/%s/size", d->name);
                return -ERANGE;
        }
        d->size_bytes = sectors * 512;

        r = read_u32_attr(w, devfd, d->name, "queue/read_ahead_kb", true, &d->read_ahead_kb);
        if (r < 0)
                return r;
        r = read_u32_attr(w, devfd, d->name, "queue/optimal_io_size", false, &d->optimal_io_bytes);
        if (r < 0)
                return r;
        r = read_u32_attr(w, devfd, d->name, "queue/max_sectors_kb", false, &d->max_sectors_kb);
        if (r < 0)
                return r;
        r = read_bool_attr(w, devfd, d->name, "queue/rotational", &d->rotational);
        if (r < 0)
                return r;
        return read_bool_attr(w, devfd, d->name, "removable", &d->removable);
}

static bool has_prefix(const char *s, const char *prefix) {
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static int read_dm(Walker *w, int devfd, RaStackDevice *d) {
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

static int read_md_number(Walker *w, int devfd, const RaStackDevice *d, const char *attr, bool required,
                          uint32_t *ret) {
        char buf[32];
        int r;

        r = read_attr(w, devfd, d->name, attr, buf, sizeof(buf));
        if (r == -ENOENT) {
                if (required) {
                        set_bad_path(w, "block/%s/%s", d->name, attr);
                        return -EINVAL;
                }
                *ret = 0;
                return 0;
        }
        if (r < 0)
                return r;

        r = parse_md_number(buf, ret);
        if (r < 0)
                set_bad_path(w, "block/%s/%s", d->name, attr);
        return r;
}

static int read_md(Walker *w, int devfd, RaStackDevice *d) {
        char level[MD_LEVEL_MAX];
        int r;

        d->kind = RA_STACK_MD;

        r = read_attr(w, devfd, d->name, "md/level", level, sizeof(level));
        if (r == -ENOENT)
                level[0] = '\0';
        else if (r < 0)
                return r;
        if (parse_md_level(level, &d->md_level) < 0) {
                set_bad_path(w, "block/%s/md/level", d->name);
                return -EINVAL;
        }

        r = read_md_number(w, devfd, d, "md/raid_disks", d->md_level != RA_MD_LEVEL_NONE, &d->md_raid_disks);
        if (r < 0)
                return r;
        if (d->md_raid_disks > MD_RAID_DISKS_MAX) {
                set_bad_path(w, "block/%s/md/raid_disks", d->name);
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
                set_bad_path(w, "block/%s/md/%s", d->name,
                             d->md_level == RA_MD_LEVEL_RAID10 ? "layout" : "raid_disks");
        return r;
}

static int version_cmp(const void *a, const void *b) {
        return strverscmp(*(char *const *) a, *(char *const *) b);
}

/*
 * The names in dir/path, each a valid kernel name, sorted as versions ("sda2"
 * before "sda10"), at most RA_STACK_DEVICES_MAX of them. A directory that is
 * not there is empty: a recorded tree leaves empty ones out.
 */
static int list_names(Walker *w, int dirfd, const char *name, const char *path, char ***ret) {
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
                        set_bad_path(w, "block/%s", name);
                        return -ENODEV;
                }
                if (r != -ENOENT) {
                        set_bad_path(w, "block/%s/%s", name, path);
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
                set_bad_path(w, "block/%s/%s", name, path);
                return r;
        }

        qsort(l, ra_strv_length(l), sizeof(char *), version_cmp);
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
static int read_holders(Walker *w, int devfd, const char *name, char ***ret) {
        _cleanup_(ra_strv_freep) char **holders = NULL, **entries = NULL;
        int r;

        r = list_names(w, devfd, name, "holders", &holders);
        if (r < 0)
                return r;

        /* The device's own directory: its partitions are subdirectories with a "partition" file. */
        r = list_names(w, devfd, name, ".", &entries);
        if (r < 0)
                return r;

        for (size_t i = 0; entries[i]; i++) {
                _cleanup_(ra_strv_freep) char **more = NULL;
                char path[PATH_MAX];

                if (!is_partition_dir(devfd, entries[i]))
                        continue;
                if ((size_t) snprintf(path, sizeof(path), "%s/holders", entries[i]) >= sizeof(path))
                        return -ENAMETOOLONG;
                r = list_names(w, devfd, name, path, &more);
                if (r < 0)
                        return r;
                r = strv_append_unique(&holders, more);
                if (r < 0)
                        return r;
        }

        qsort(holders, ra_strv_length(holders), sizeof(char *), version_cmp);
        *ret = TAKE_PTR(holders);
        return 0;
}

/*
 * The whole device a slave belongs to. A whole device is listed in block/; a
 * partition is not, and its link leads into its disk's directory
 * (…/block/sda/sda2), where it has a "partition" file.
 */
static int resolve_slave(Walker *w, int devfd, const char *name, const char *slave, char **ret_whole) {
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
                set_bad_path(w, "block/%s/slaves/%s", name, slave);
                return ra_errno_is_gone(r) ? -ENODEV : r;
        }
        n = readlinkat(devfd, path, target, sizeof(target));
        if (n < 0) {
                r = negative_errno();
                set_bad_path(w, "block/%s/slaves/%s", name, slave);
                return ra_errno_is_gone(r) ? -ENODEV : r;
        }
        if ((size_t) n >= sizeof(target)) {
                set_bad_path(w, "block/%s/slaves/%s", name, slave);
                return -ENAMETOOLONG;
        }
        target[n] = '\0';

        /* ".../<disk>/<partition>": the last component is the slave, the one before its disk. */
        slash = strrchr(target, '/');
        if (!slash || strcmp(slash + 1, slave) != 0 || slash == target) {
                set_bad_path(w, "block/%s/slaves/%s", name, slave);
                return -EINVAL;
        }
        *slash = '\0';
        last = strrchr(target, '/');
        last = last ? last + 1 : target;
        if (!ra_device_name_is_valid(last)) {
                set_bad_path(w, "block/%s/slaves/%s", name, slave);
                return -EINVAL;
        }

        /* Gone, if its disk or the partition is no longer there. */
        if ((size_t) snprintf(path, sizeof(path), "%s/%s", last, slave) >= sizeof(path))
                return -ENAMETOOLONG;
        partfd = openat(w->blockfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (partfd < 0) {
                r = negative_errno();
                set_bad_path(w, "block/%s/slaves/%s", name, slave);
                return ra_errno_is_gone(r) ? -ENODEV : r;
        }
        r = ra_read_file_at(partfd, "partition", number, sizeof(number));
        if (r < 0 || ra_parse_u64(number, &(uint64_t){ 0 }) < 0) {
                set_bad_path(w, "block/%s/%s/partition", last, slave);
                return r == -ENOENT || r >= 0 ? -EINVAL : r;
        }

        *ret_whole = strdup(last);
        return *ret_whole ? 0 : -ENOMEM;
}

static int read_device(Walker *w, int devfd, RaStackDevice *d) {
        int r;

        r = read_queue_attrs(w, devfd, d);
        if (r < 0)
                return r;

        if (faccessat(devfd, "dm", F_OK, 0) >= 0)
                r = read_dm(w, devfd, d);
        else if (faccessat(devfd, "md", F_OK, 0) >= 0)
                r = read_md(w, devfd, d);
        else
                d->kind = RA_STACK_DISK;
        if (r < 0)
                return r;

        return read_holders(w, devfd, d->name, &d->holders);
}

static int add_device(Walker *w, const char *name, size_t *ret_index) {
        RaStack *s = w->stack;
        RaStackDevice *grown;

        if (s->n_devices >= RA_STACK_DEVICES_MAX) {
                set_bad_path(w, "block/%s", name);
                return -E2BIG;
        }
        grown = realloc(s->devices, (s->n_devices + 1) * sizeof(RaStackDevice));
        if (!grown)
                return -ENOMEM;
        s->devices = grown;

        s->devices[s->n_devices] = (RaStackDevice){ .name = strdup(name) };
        if (!s->devices[s->n_devices].name)
                return -ENOMEM;
        *ret_index = s->n_devices++;
        return 0;
}

static int add_slave(RaStackDevice *d, const char *name, size_t device) {
        RaStackSlave *grown;
        char *copy;

        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        grown = realloc(d->slaves, (d->n_slaves + 1) * sizeof(RaStackSlave));
        if (!grown) {
                free(copy);
                return -ENOMEM;
        }
        d->slaves = grown;
        d->slaves[d->n_slaves++] = (RaStackSlave){ .name = copy, .device = device };
        return 0;
}

static int walk_down(Walker *w, const char *name, unsigned depth, size_t *ret_index) {
        _cleanup_(ra_strv_freep) char **slaves = NULL;
        _cleanup_close_ int devfd = -1;
        size_t index;
        int r;

        for (size_t i = 0; i < w->stack->n_devices; i++)
                if (strcmp(w->stack->devices[i].name, name) == 0) {
                        if (w->on_path[i]) {
                                set_bad_path(w, "block/%s", name);
                                return -ELOOP;
                        }
                        *ret_index = i;
                        return 0;
                }

        if (depth >= RA_STACK_DEPTH_MAX) {
                set_bad_path(w, "block/%s", name);
                return -ELOOP;
        }

        r = open_device(w, name, &devfd);
        if (r < 0)
                return r;
        r = add_device(w, name, &index);
        if (r < 0)
                return r;
        w->on_path[index] = true;

        r = read_device(w, devfd, &w->stack->devices[index]);
        if (r < 0)
                return r;

        r = list_names(w, devfd, name, "slaves", &slaves);
        if (r < 0)
                return r;

        for (size_t i = 0; slaves[i]; i++) {
                _cleanup_free_ char *whole = NULL;
                size_t child;

                r = resolve_slave(w, devfd, name, slaves[i], &whole);
                if (r < 0)
                        return r;
                r = walk_down(w, whole, depth + 1, &child);
                if (r < 0)
                        return r;
                /* The walk may have moved the array. */
                r = add_slave(&w->stack->devices[index], slaves[i], child);
                if (r < 0)
                        return r;
        }

        w->on_path[index] = false;
        *ret_index = index;
        return 0;
}

static int collect_leaves(RaStack *s) {
        s->leaves = calloc(s->n_devices, sizeof(size_t));
        if (!s->leaves)
                return -ENOMEM;

        /* In the order the walk met them, which is the order of the slaves. */
        for (size_t i = 0; i < s->n_devices; i++)
                if (s->devices[i].n_slaves == 0)
                        s->leaves[s->n_leaves++] = i;
        return 0;
}

static int open_block_dir(const char *sysfs_root, int *ret_fd) {
        _cleanup_close_ int rootfd = -1;
        int fd;

        rootfd = open(sysfs_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return negative_errno();
        fd = openat(rootfd, "block", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        *ret_fd = fd;
        return 0;
}

int ra_stack_read(const char *sysfs_root, const char *name, RaStack **ret, char **ret_bad_path) {
        _cleanup_(ra_stack_freep) RaStack *s = NULL;
        _cleanup_close_ int blockfd = -1;
        Walker w = {};
        size_t top;
        int r;

        if (ret_bad_path)
                *ret_bad_path = NULL;

        r = open_block_dir(sysfs_root, &blockfd);
        if (r < 0)
                return r;

        s = calloc(1, sizeof(RaStack));
        if (!s)
                return -ENOMEM;

        w = (Walker){ .blockfd = blockfd, .stack = s };
        r = walk_down(&w, name, 0, &top);
        if (r >= 0)
                r = collect_leaves(s);
        if (r < 0) {
                if (ret_bad_path)
                        *ret_bad_path = TAKE_PTR(w.bad_path);
                free(w.bad_path);
                return r;
        }

        free(w.bad_path);
        *ret = TAKE_PTR(s);
        return 0;
}

static int walk_up(Walker *w, const char *name, unsigned depth, char ***path, char ***visited,
                   char ***tops) {
        _cleanup_(ra_strv_freep) char **holders = NULL;
        _cleanup_close_ int devfd = -1;
        int r;

        if (ra_strv_contains(*path, name)) {
                set_bad_path(w, "block/%s", name);
                return -ELOOP;
        }
        if (ra_strv_contains(*visited, name))
                return 0;
        if (depth >= RA_STACK_DEPTH_MAX) {
                set_bad_path(w, "block/%s", name);
                return -ELOOP;
        }
        if (ra_strv_length(*visited) >= RA_STACK_DEVICES_MAX) {
                set_bad_path(w, "block/%s", name);
                return -E2BIG;
        }

        r = open_device(w, name, &devfd);
        if (r < 0)
                return r;
        r = read_holders(w, devfd, name, &holders);
        if (r < 0)
                return r;
        r = ra_strv_push(visited, name);
        if (r < 0)
                return r;

        if (!holders[0])
                return strv_push_unique(tops, name);

        r = ra_strv_push(path, name);
        if (r < 0)
                return r;
        for (size_t i = 0; holders[i]; i++) {
                r = walk_up(w, holders[i], depth + 1, path, visited, tops);
                if (r < 0)
                        return r;
        }
        /* Off the path again: the last one pushed is this device. */
        free((*path)[ra_strv_length(*path) - 1]);
        (*path)[ra_strv_length(*path) - 1] = NULL;
        return 0;
}

int ra_stack_find_tops(const char *sysfs_root, const char *name, char ***ret, char **ret_bad_path) {
        _cleanup_(ra_strv_freep) char **path = NULL, **visited = NULL, **tops = NULL;
        _cleanup_close_ int blockfd = -1;
        Walker w = {};
        int r;

        if (ret_bad_path)
                *ret_bad_path = NULL;

        r = open_block_dir(sysfs_root, &blockfd);
        if (r < 0)
                return r;

        path = calloc(1, sizeof(char *));
        visited = calloc(1, sizeof(char *));
        tops = calloc(1, sizeof(char *));
        if (!path || !visited || !tops)
                return -ENOMEM;

        w = (Walker){ .blockfd = blockfd };
        r = walk_up(&w, name, 0, &path, &visited, &tops);
        if (r < 0) {
                if (ret_bad_path)
                        *ret_bad_path = TAKE_PTR(w.bad_path);
                free(w.bad_path);
                return r;
        }

        free(w.bad_path);
        qsort(tops, ra_strv_length(tops), sizeof(char *), version_cmp);
        *ret = TAKE_PTR(tops);
        return 0;
}
