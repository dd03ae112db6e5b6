/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe-device NAME: runs radaemon's libblkid probe on /dev/NAME, as the
 * daemon does where udev has not probed the device, and prints what it found.
 * tests/probe.sh checks how much that probe reads from the device.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "ra-device.h"
#include "ra-probe.h"
#include "ra-util.h"

int main(int argc, char *argv[]) {
        RaDeviceAttrs a = {};
        _cleanup_close_ int sysfd = -1;
        char syspath[512], devnode[512];
        int r;

        if (argc != 2 || !ra_device_name_is_valid(argv[1])) {
                fprintf(stderr, "usage: probe-device NAME\n");
                return 2;
        }
        (void) snprintf(syspath, sizeof(syspath), "/sys/block/%s", argv[1]);
        (void) snprintf(devnode, sizeof(devnode), "/dev/%s", argv[1]);

        a.name = strdup(argv[1]);
        sysfd = open(syspath, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (!a.name || sysfd < 0 || ra_device_attrs_read_sysfs(&a, sysfd, NULL) < 0) {
                fprintf(stderr, "probe-device: cannot read %s\n", syspath);
                return 1;
        }
        ra_device_attrs_guess_transport(&a, syspath);

        r = ra_probe_device(&a, devnode);
        if (r < 0) {
                fprintf(stderr, "probe-device: %s: %s\n", devnode, strerror(-r));
                return 1;
        }

        printf("%s\n", a.fs_type ? a.fs_type : "none");
        ra_device_attrs_clear(&a);
        return 0;
}
