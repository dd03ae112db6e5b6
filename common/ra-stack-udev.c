/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <libudev.h>

#include "ra-stack.h"
#include "ra-util.h"

static const char *get_udev_property(void *userdata, const char *key) {
        return udev_device_get_property_value(userdata, key);
}

int ra_stack_read_leaf_udev(void *userdata, const char *name, RaDeviceAttrs *ret) {
        struct udev_device *u;
        _cleanup_close_ int sysfd = -1;
        const char *bad_attr = NULL, *bad_property = NULL, *syspath;
        int r;

        u = udev_device_new_from_subsystem_sysname(userdata, "block", name);
        if (!u)
                return errno == ENOMEM ? -ENOMEM : -ENODEV;
        syspath = udev_device_get_syspath(u);
        sysfd = syspath ? open(syspath, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        if (sysfd < 0)
                r = -ENODEV;
        else
                r = ra_device_read(ret, name, sysfd, syspath, get_udev_property, u, &bad_attr,
                                   &bad_property);
        udev_device_unref(u);
        /* A bad RADAEMON_* property of a leaf is the leaf's business: its prior does not use them. */
        return r == -EINVAL && bad_property ? 0 : r;
}
