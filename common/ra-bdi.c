/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ra-bdi.h"
#include "ra-util.h"

/* NFS before Linux 5.4: rsize times the RPC slot table's size less one. */
#define NFS_RSIZE_MULTIPLE 15u
#define NFS_MAX_KB (16u * 1024u)

static const char *const kind_names[_RA_BDI_KIND_MAX] = {
        [RA_BDI_BTRFS] = "btrfs", [RA_BDI_FUSE] = "fuse",   [RA_BDI_FUSEBLK] = "fuseblk",
        [RA_BDI_NFS] = "nfs",     [RA_BDI_OTHER] = "other",
};

const char *ra_bdi_kind_to_string(RaBdiKind k) {
        return k >= 0 && k < _RA_BDI_KIND_MAX ? kind_names[k] : NULL;
}

RaBdiKind ra_bdi_kind_from_fs_type(const char *fs_type) {
        if (!fs_type)
                return RA_BDI_OTHER;
        if (strcmp(fs_type, "btrfs") == 0)
                return RA_BDI_BTRFS;
        if (strcmp(fs_type, "fuseblk") == 0 || strncmp(fs_type, "fuseblk.", 8) == 0)
                return RA_BDI_FUSEBLK;
        if (strcmp(fs_type, "fuse") == 0 || strncmp(fs_type, "fuse.", 5) == 0)
                return RA_BDI_FUSE;
        if (strcmp(fs_type, "nfs") == 0 || strcmp(fs_type, "nfs4") == 0)
                return RA_BDI_NFS;
        return RA_BDI_OTHER;
}

void ra_bdi_clear(RaBdi *b) {
        free(b->name);
        free(b->fs_type);
        free(b->mountpoint);
        free(b->source);
        free(b->uuid);
        free(b->beneath);
        *b = (RaBdi){};
}

void ra_bdi_array_free(RaBdi *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                ra_bdi_clear(&v[i]);
        free(v);
}

void ra_bdi_keys(const RaBdi *b, const char *ret[static 4]) {
        size_t n = 0;

        if (b->name)
                ret[n++] = b->name;
        if (b->mountpoint)
                ret[n++] = b->mountpoint;
        if (b->fs_type)
                ret[n++] = b->fs_type;
        ret[n] = NULL;
}

bool ra_bdi_exists(const char *sysfs_root, const char *name) {
        _cleanup_free_ char *path = NULL;

        if (!ra_device_name_is_valid(name) || asprintf(&path, "%s/class/bdi/%s", sysfs_root, name) < 0)
                return false;
        return access(path, F_OK) == 0;
}

/* The name a sysfs link points at: ".../virtual/bdi/btrfs-3" is "btrfs-3". */
static int read_link_name(int dirfd, const char *link, char *buf, size_t size) {
        ssize_t n = readlinkat(dirfd, link, buf, size - 1);
        const char *slash;

        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        slash = strrchr(buf, '/');
        if (slash)
                memmove(buf, slash + 1, strlen(slash + 1) + 1);
        return 0;
}

/* How many devices one data stripe spans, from allocation/data/<profile>. */
static unsigned data_stripes(int fsfd, size_t n_devices) {
        static const struct {
                const char *profile;
                unsigned parity; /* devices of a stripe that hold no data */
                bool halves;     /* raid10: mirrored pairs */
        } striped[] = {
                { "raid0", 0, false },
                { "raid10", 0, true },
                { "raid5", 1, false },
                { "raid6", 2, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(striped); i++) {
                char path[64];
                size_t n = n_devices;

                (void) snprintf(path, sizeof(path), "allocation/data/%s", striped[i].profile);
                if (faccessat(fsfd, path, F_OK, 0) < 0)
                        continue;
                if (striped[i].halves)
                        n /= 2;
                n = n > striped[i].parity ? n - striped[i].parity : 1;
                return n > 0 ? (unsigned) n : 1;
        }
        return 1; /* single, dup, raid1*: a read goes to one device */
}

static int read_devices(int fsfd, RaBdi *b, const char *device_name, bool *ret_has) {
        _cleanup_free_ dev_t *devs = NULL;
        struct dirent *de;
        size_t n = 0;
        DIR *d;
        int dfd, r = 0;

        *ret_has = false;
        dfd = openat(fsfd, "devices", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        d = fdopendir(dfd);
        if (!d) {
                r = negative_errno();
                (void) ra_close(dfd);
                return r;
        }

        while ((de = readdir(d))) {
                char file[sizeof(de->d_name) + 8], buf[32];
                unsigned ma, mi;
                dev_t *grown;

                if (de->d_name[0] == '.')
                        continue;
                if (device_name && strcmp(de->d_name, device_name) == 0)
                        *ret_has = true;
                (void) snprintf(file, sizeof(file), "%s/dev", de->d_name);
                if (ra_read_file_at(dfd, file, buf, sizeof(buf)) < 0 || sscanf(buf, "%u:%u", &ma, &mi) != 2)
                        continue; /* going away */
                grown = reallocarray(devs, n + 1, sizeof(dev_t));
                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                devs = grown;
                devs[n++] = makedev(ma, mi);
        }
        closedir(d);
        if (r < 0)
                return r;

        free(b->beneath);
        b->beneath = TAKE_PTR(devs);
        b->n_beneath = n;
        return 0;
}

int ra_bdi_read_btrfs(const char *sysfs_root, const char *device_name, RaBdi *b) {
        _cleanup_free_ char *path = NULL;
        struct dirent *de;
        DIR *d;
        int r = -ENOENT;

        if (asprintf(&path, "%s/fs/btrfs", sysfs_root) < 0)
                return -ENOMEM;
        d = opendir(path);
        if (!d)
                return -ENOENT;

        while (r == -ENOENT && (de = readdir(d))) {
                _cleanup_close_ int fsfd = -1;
                char bdi[128];
                bool has = false;

                if (de->d_name[0] == '.' || strcmp(de->d_name, "features") == 0)
                        continue;
                fsfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fsfd < 0 || read_link_name(fsfd, "bdi", bdi, sizeof(bdi)) < 0)
                        continue; /* not mounted yet, or unmounted under us */
                if (b->name && strcmp(bdi, b->name) != 0)
                        continue;

                r = read_devices(fsfd, b, b->name ? NULL : device_name, &has);
                if (r < 0) {
                        r = r == -ENOMEM ? r : -ENOENT;
                        continue;
                }
                if (!b->name && !has) {
                        r = -ENOENT;
                        continue;
                }

                b->kind = RA_BDI_BTRFS;
                b->stripes = data_stripes(fsfd, b->n_beneath);
                free(b->uuid);
                b->uuid = strdup(de->d_name);
                if (!b->uuid || (!b->name && !(b->name = strdup(bdi))))
                        r = -ENOMEM;
                else
                        r = 0;
        }
        closedir(d);
        return r;
}

int ra_bdi_identity(const RaBdi *b, char **ret) {
        int r;

        switch (b->kind) {
        case RA_BDI_BTRFS:
                if (!b->uuid)
                        return -EINVAL;
                r = asprintf(ret, "btrfs:%s", b->uuid);
                break;
        case RA_BDI_FUSE:
        case RA_BDI_FUSEBLK:
                r = asprintf(ret, "fuse:%s:%s@%s", b->fs_type ?: "?", b->source ?: "?",
                             b->mountpoint ?: "?");
                break;
        case RA_BDI_NFS:
                r = asprintf(ret, "nfs:%s", b->source ?: "?");
                break;
        default:
                r = asprintf(ret, "bdi:%s:%s@%s", b->fs_type ?: "?", b->source ?: "?", b->mountpoint ?: "?");
        }
        return r < 0 ? -ENOMEM : 0;
}

static void prior_btrfs(const RaBdi *b, const uint32_t *beneath_kb, RaBounds bounds, RaDecision *ret) {
        uint32_t slowest = 0;
        uint64_t wanted;

        for (size_t i = 0; i < b->n_beneath; i++)
                if (beneath_kb[i] > 0 && (slowest == 0 || beneath_kb[i] < slowest))
                        slowest = beneath_kb[i];
        if (slowest == 0) {
                ra_reason_format(ret->reason, "btrfs: its devices are not known yet.");
                return;
        }

        wanted = (uint64_t) slowest * (b->stripes > 0 ? b->stripes : 1);
        if (wanted > RA_KB_LIMIT)
                wanted = RA_KB_LIMIT;
        ret->kb = ra_policy_clamp_kb((uint32_t) wanted, bounds);

        if (b->stripes > 1)
                ra_reason_format(ret->reason,
                                 "btrfs over %zu devices, data striped over %u: %" PRIu32
                                 " KiB, the slowest device's prior times the stripe, rather than the "
                                 "kernel's 4 MiB for any btrfs%s.",
                                 b->n_beneath, b->stripes, slowest * b->stripes,
                                 ret->kb != wanted ? ", held within the configured bounds" : "");
        else
                ra_reason_format(ret->reason,
                                 "btrfs over %zu device%s, a read from one at a time: %" PRIu32
                                 " KiB, the slowest device's prior, rather than the kernel's 4 MiB for "
                                 "any btrfs%s.",
                                 b->n_beneath, b->n_beneath == 1 ? "" : "s", slowest,
                                 ret->kb != wanted ? ", held within the configured bounds" : "");
}

void ra_bdi_prior(const RaBdi *b, const uint32_t *beneath_kb, uint32_t server_kb, RaBounds bounds,
                  RaDecision *ret) {
        uint64_t wanted;

        *ret = (RaDecision){ .source = RA_SOURCE_PRIOR };

        switch (b->kind) {
        case RA_BDI_BTRFS:
                prior_btrfs(b, beneath_kb, bounds, ret);
                return;

        case RA_BDI_FUSEBLK:
                if (b->n_beneath == 0 || beneath_kb[0] == 0) {
                        ra_reason_format(ret->reason, "fuseblk: its disk is not known yet.");
                        return;
                }
                ret->kb = ra_policy_clamp_kb(beneath_kb[0], bounds);
                ra_reason_format(ret->reason,
                                 "A FUSE file system on a disk: %" PRIu32 " KiB, its disk's prior.",
                                 ret->kb);
                return;

        case RA_BDI_NFS:
                if (b->rsize_kb > 0) {
                        wanted = (uint64_t) b->rsize_kb * NFS_RSIZE_MULTIPLE;
                        if (wanted > NFS_MAX_KB)
                                wanted = NFS_MAX_KB;
                        ret->kb = ra_policy_clamp_kb((uint32_t) wanted, bounds);
                        ra_reason_format(ret->reason,
                                         "NFS with rsize %" PRIu32 " KiB: %" PRIu32
                                         " KiB, 15 reads of rsize in flight as the kernel gave before "
                                         "Linux 5.4 (it now gives 128 KiB)%s.",
                                         b->rsize_kb, ret->kb,
                                         ret->kb != wanted ? ", held within the configured bounds" : "");
                        return;
                }
                break;

        default:
                break;
        }

        /* FUSE, NFS without rsize, others: the window the file system was given. */
        if (server_kb == 0) {
                ra_reason_format(ret->reason, "%s: its window is not known yet.",
                                 ra_bdi_kind_to_string(b->kind));
                return;
        }
        ret->kb = ra_policy_clamp_kb(server_kb, bounds);
        ra_reason_format(ret->reason,
                         b->kind == RA_BDI_FUSE
                                 ? "FUSE: %" PRIu32 " KiB, the window its server left at INIT; only the "
                                   "server knows what is behind it, and reads will show whether more pays."
                                 : "%" PRIu32 " KiB, the window the kernel gave this file system; reads "
                                   "will show whether another pays.",
                         ret->kb);
}

bool ra_bdi_fuse_init_answer(const RaBdi *b, bool pending, uint64_t since_found_usec, uint32_t server_kb,
                             uint32_t was_kb, uint32_t kb) {
        return b->kind == RA_BDI_FUSE && pending && since_found_usec < RA_BDI_FUSE_INIT_USEC &&
               kb < was_kb && kb <= server_kb;
}
