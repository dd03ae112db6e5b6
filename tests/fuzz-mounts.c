/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A mount table as users shape it (any FUSE mount point, source and
 * options), into what radaemon makes of it: each mount's bdi and identity
 * keys, where a loop device's file on it would be and whether it is
 * calibrated, the mount that holds a path below it, and its names as the
 * log writes them. libmount parses the table; the rest is ours.
 */
#include "config.h"

#include <libmount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "ra-bdi-mount.h"
#include "ra-calib-safe.h"
#include "ra-path.h"
#include "ra-util.h"

static void one_mount(const RaPathMounts *mounts, struct libmnt_fs *fs) {
        const char *target = mnt_fs_get_target(fs), *keys[4];
        RaCalibDevice d = RA_CALIB_DEVICE_INIT;
        RaPathObject o = {};
        char *below = NULL, *escaped;
        RaBdi b;

        /* The real /sys, read only: a mount's bdi is looked up there. */
        if (ra_bdi_of_mount("/sys", fs, &b) > 0)
                ra_bdi_keys(&b, keys);
        ra_bdi_clear(&b);

        d.name = "loop7";
        ra_calib_backing_from_mount(&d, mnt_fs_get_fstype(fs), mnt_fs_get_fs_options(fs));
        (void) ra_calib_unsafe(&d);

        if (target && asprintf(&below, "%s/file.img", target) >= 0) {
                (void) ra_path_mount_of(mounts->mounted, below);
                (void) ra_path_object_in("/sys", mounts, below, &o);
                ra_path_object_clear(&o);
                free(below);
        }
        escaped = ra_text_escape(target ?: "");
        free(escaped);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        RaPathMounts mounts = {};
        struct libmnt_iter *it;
        struct libmnt_fs *fs;
        char path[64];
        int fd;

        fd = memfd_create("mountinfo", MFD_CLOEXEC);
        if (fd < 0)
                return 0;
        if (write(fd, data, size) != (ssize_t) size) {
                (void) close(fd);
                return 0;
        }
        (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        it = mnt_new_iter(MNT_ITER_FORWARD);
        if (it && ra_path_mounts_load(path, NULL, &mounts) >= 0)
                while (mnt_table_next_fs(mounts.mounted, it, &fs) == 0)
                        one_mount(&mounts, fs);
        mnt_free_iter(it);
        ra_path_mounts_clear(&mounts);
        (void) close(fd);
        return 0;
}
