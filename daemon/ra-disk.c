/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "ra-dbus.h"
#include "ra-disk.h"
#include "ra-log.h"
#include "ra-probe.h"
#include "ra-util.h"

int ra_disk_new(struct Manager *m, const char *name, RaDisk **ret) {
        _cleanup_(ra_disk_freep) RaDisk *d = NULL;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;

        d->manager = m;
        d->workload = "idle";
        d->evidence = "none";
        d->pcache.page_kb = ra_page_kb();
        d->name = strdup(name);
        if (!d->name)
                return -ENOMEM;

        r = sd_bus_path_encode(RA_BUS_DEVICE_PREFIX, name, &d->object_path);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(d);
        return 0;
}

RaDisk *ra_disk_free(RaDisk *d) {
        if (!d)
                return NULL;

        ra_device_attrs_clear(&d->attrs);
        free(d->name);
        free(d->object_path);
        free(d->syspath);
        free(d->devnode);
        free(d->identity);
        free(d);
        return NULL;
}

int ra_disk_open_sysfs(const RaDisk *d) {
        int fd;

        fd = open(d->syspath, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ENODEV : negative_errno();
        return fd;
}

static int replace_string(char **field, const char *value) {
        char *copy = NULL;

        if (value) {
                copy = strdup(value);
                if (!copy)
                        return -ENOMEM;
        }
        free(*field);
        *field = copy;
        return 0;
}

static const char *get_udev_property(void *userdata, const char *key) {
        return udev_device_get_property_value(userdata, key);
}

int ra_disk_update(RaDisk *d, struct udev_device *dev, const char **ret_bad_property) {
        _cleanup_(ra_device_attrs_clear) RaDeviceAttrs a = {};
        _cleanup_close_ int sysfd = -1;
        const char *bad_attr = NULL;
        int r, props;

        r = replace_string(&d->syspath, udev_device_get_syspath(dev));
        if (r < 0)
                return r;
        r = replace_string(&d->devnode, udev_device_get_devnode(dev));
        if (r < 0)
                return r;
        d->devnum = udev_device_get_devnum(dev);

        sysfd = ra_disk_open_sysfs(d);
        if (sysfd < 0)
                return sysfd;

        props = ra_device_read(&a, d->name, sysfd, d->syspath, get_udev_property, dev, &bad_attr,
                               ret_bad_property);
        if (props < 0 && props != -EINVAL) {
                if (props != -ENODEV && props != -ENOMEM)
                        log_debug_errno(props, "%s: cannot read %s/%s: %m", d->name, d->syspath,
                                        bad_attr ?: "?");
                return props;
        }

        /* Without udevd nobody has probed the device: ask libblkid, cheaply. */
        if (!udev_device_get_is_initialized(dev) && d->devnode && a.size_bytes > 0) {
                r = ra_probe_device(&a, d->devnode);
                if (r < 0 && r != -ENODEV)
                        log_debug_errno(r, "%s: probing with libblkid failed, ignoring: %m", d->name);
        }

        ra_device_attrs_clear(&d->attrs);
        d->attrs = a; /* transport may point at bus: both move together */
        a = (RaDeviceAttrs){};

        free(d->identity);
        d->identity = NULL;
        r = ra_device_identity(&d->attrs, &d->identity);
        if (r < 0)
                return r;

        return props;
}

static int dup_or_null(const char *s, char **ret) {
        *ret = NULL;
        if (s && !(*ret = strdup(s)))
                return -ENOMEM;
        return 0;
}

int ra_disk_snapshot(const RaDisk *d, RaDiskSnapshot *ret) {
        *ret = (RaDiskSnapshot){
                .size_bytes = d->attrs.size_bytes,
                .rotational = d->attrs.rotational,
                .removable = d->attrs.removable,
                .read_ahead_kb = d->attrs.read_ahead_kb,
                .decision = d->decision,
                .read_bytes_per_sec = d->read_bytes_per_sec,
                .avg_read_request_bytes = d->avg_read_request_bytes,
                .workload = d->workload,
                .decisions = d->decisions,
                .learned_kb = d->model.learned_kb,
                .evidence = d->evidence,
        };

        if (dup_or_null(d->devnode, &ret->node) < 0 || dup_or_null(d->identity, &ret->identity) < 0 ||
            dup_or_null(d->attrs.transport, &ret->transport) < 0) {
                ra_disk_snapshot_clear(ret);
                return -ENOMEM;
        }
        return 0;
}

void ra_disk_snapshot_clear(RaDiskSnapshot *s) {
        free(s->node);
        free(s->identity);
        free(s->transport);
        *s = (RaDiskSnapshot){};
}
