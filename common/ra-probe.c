/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <blkid.h>
#include <fcntl.h>
#include <string.h>

#include "ra-policy.h"
#include "ra-probe.h"
#include "ra-util.h"

static struct blkid_struct_probe *probe_free(blkid_probe pr) {
        blkid_free_probe(pr);
        return NULL;
}
RA_DEFINE_CLEANUP(struct blkid_struct_probe, probe_free)

/* Devices where every KiB read costs: small, removable, or behind USB. */
static bool is_costly(const RaDeviceAttrs *a) {
        return a->removable || ra_streq(a->transport, "usb") || ra_policy_size_cap_kb(a->size_bytes) <= 16;
}

int ra_probe_device(RaDeviceAttrs *a, const char *devnode) {
        _cleanup_(probe_freep) blkid_probe pr = NULL;
        _cleanup_close_ int fd = -1;
        const char *type = NULL;
        blkid_loff_t area = 0;
        int r;

        fd = open(devnode, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT || errno == ENXIO ? -ENODEV : negative_errno();

        /*
         * The page cache would otherwise turn each small superblock read
         * into a full readahead window. libblkid 2.38 does the same in
         * blkid_probe_set_device(); we do not rely on every version doing so.
         */
        (void) posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);

        pr = blkid_new_probe();
        if (!pr)
                return -ENOMEM;

        if (is_costly(a) && a->size_bytes > RA_PROBE_SMALL_BYTES)
                area = RA_PROBE_SMALL_BYTES;
        if (blkid_probe_set_device(pr, fd, 0, area) < 0)
                return -EIO;

        (void) blkid_probe_enable_partitions(pr, false);
        (void) blkid_probe_enable_superblocks(pr, a->fs_type == NULL);
        (void) blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
        /* RAID signatures live at the end of the device: not worth a seek. */
        (void) blkid_probe_filter_superblocks_usage(pr, BLKID_FLTR_ONLYIN, BLKID_USAGE_FILESYSTEM);
        (void) blkid_probe_enable_topology(pr, a->optimal_io_bytes == 0);

        r = blkid_do_safeprobe(pr);
        if (r < 0 && r != -2) /* -2: ambivalent, several signatures */
                return -EIO;

        if (a->optimal_io_bytes == 0) {
                blkid_topology tp = blkid_probe_get_topology(pr);
                unsigned long io_opt = tp ? blkid_topology_get_optimal_io_size(tp) : 0;

                if (io_opt <= UINT32_MAX)
                        a->optimal_io_bytes = (uint32_t) io_opt;
        }

        if (a->fs_type)
                return 1;

        if (r == 0 && blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0 && type) {
                a->fs_type = strdup(type);
                if (!a->fs_type)
                        return -ENOMEM;
                return 1;
        }

        return 0;
}
