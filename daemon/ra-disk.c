/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "ra-apply.h"
#include "ra-context.h"
#include "ra-dbus.h"
#include "ra-disk.h"
#include "ra-inputs.h"
#include "ra-log.h"
#include "ra-openfiles.h"
#include "ra-probe-run.h"
#include "ra-settings.h"
#include "ra-util.h"

static const char *const kind_names[_RA_KIND_MAX] = {
        [RA_KIND_DISK] = "disk",
        [RA_KIND_BDI] = "bdi",
        [RA_KIND_STACK] = "stack",
};

const char *ra_kind_to_string(RaKind k) {
        return k >= 0 && k < _RA_KIND_MAX ? kind_names[k] : NULL;
}

int ra_disk_new(struct Manager *m, RaKind kind, const char *name, RaDisk **ret) {
        _cleanup_(ra_disk_freep) RaDisk *d = NULL;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;

        d->manager = m;
        d->kind = kind;
        d->in.kind = kind == RA_KIND_BDI     ? RA_SETTINGS_BDI
                     : kind == RA_KIND_STACK ? RA_SETTINGS_STACK
                                             : RA_SETTINGS_DISK;
        d->knob_attr = kind == RA_KIND_BDI ? RA_APPLY_BDI_ATTR : RA_APPLY_DISK_ATTR;
        d->sampled.workload = "idle";
        d->sampled.evidence = "none";
        d->sampled.pcache.page_kb = ra_page_kb();
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

        ra_openfiles_scan_free(d);
        ra_inputs_clear(&d->in);
        for (size_t i = 0; i < RA_OPENFILES_KEPT; i++)
                free(d->open_files[i].path);
        free(d->name);
        free(d->object_path);
        free(d->syspath);
        free(d->devnode);
        free(d->reported_identity);
        free(d);
        return NULL;
}

char **ra_disk_beneath(const RaDisk *d) {
        return d->kind == RA_KIND_BDI ? d->in.beneath_names : d->in.leaf_names;
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

/*
 * A device on top of others (dm: LUKS, LVM; md RAID) is decided from its
 * stack: the disks at the bottom, read from udev's database exactly as
 * radaemon's udev helper reads them (common/ra-inputs.c), whose priors are
 * kept here. A plain disk has no stack. The kind follows what was read, at
 * every event: a dm device is a disk until its table is loaded, and one
 * whose stack is being built or torn down (not settled) is a stack all the
 * same, which waits for it. A stack this module cannot read is decided as
 * a disk, from its own attributes. Takes in's stack.
 */
static void take_stack(RaDisk *d, RaInputs *in) {
        const char *bad;

        ra_stack_free(d->in.stack);
        free(d->in.leaf_kb);
        ra_strv_free(d->in.leaf_names);
        free(d->in.stack_bad_path);
        d->in.stack = TAKE_PTR(in->stack);
        d->in.leaf_kb = TAKE_PTR(in->leaf_kb);
        d->in.leaf_names = TAKE_PTR(in->leaf_names);
        d->in.stack_bad_path = TAKE_PTR(in->stack_bad_path);
        d->in.stack_read = in->stack_read;
        d->in.kind = ra_settings_block_kind(d->in.stack_read);
        d->as_stack = (RaDiskStack){};

        bad = d->in.stack_bad_path;
        if (d->in.stack_read == -EAGAIN)
                log_debug("%s: its stack is not settled (%s); deciding once it is.", d->name, bad ?: "?");
        else if (d->in.stack_read < 0)
                log_debug_errno(d->in.stack_read,
                                "%s: cannot read its stack (%s), deciding from its own attributes: %m",
                                d->name, bad ?: "?");
        d->kind = d->in.kind == RA_SETTINGS_STACK ? RA_KIND_STACK : RA_KIND_DISK;
        if (d->in.stack)
                (void) ra_stack_describe(d->in.stack, d->as_stack.text);
}

static void read_stack(RaDisk *d, struct udev *udev) {
        _cleanup_(ra_inputs_clear) RaInputs in = {};

        in.stack_read = ra_stack_read_priors("/sys", d->name, ra_stack_read_leaf_udev, udev, &in.stack,
                                             &in.leaf_kb, &in.leaf_names, &in.stack_bad_path);
        take_stack(d, &in);
}

int ra_disk_update(RaDisk *d, struct udev_device *dev, const char **ret_bad_property) {
        const RaPropertySource src = {
                .get = get_udev_property,
                .userdata = dev,
                .read_beneath = ra_stack_read_leaf_udev,
                .beneath_userdata = udev_device_get_udev(dev),
        };
        _cleanup_(ra_inputs_clear) RaInputs in = {};
        const char *bad_attr = NULL;
        int r;

        r = replace_string(&d->syspath, udev_device_get_syspath(dev));
        if (r < 0)
                return r;
        r = replace_string(&d->devnode, udev_device_get_devnode(dev));
        if (r < 0)
                return r;
        d->devnum = udev_device_get_devnum(dev);

        /* The one open of its sysfs directory: gone, it is -ENODEV below. */
        r = ra_inputs_read_disk(&in, "/sys", d->name, &src, &bad_attr, ret_bad_property);
        if (r <= 0) {
                if (r < 0 && r != -ENOMEM)
                        log_debug_errno(r, "%s: cannot read %s/%s: %m", d->name, d->syspath,
                                        bad_attr ?: "?");
                return r == 0 ? -ENODEV : r;
        }

        /*
         * Without udevd nobody has probed the device: ask libblkid, cheaply,
         * in a child (ra-probe-run.h). Where udevd runs, its answer comes in
         * the device's event, and is awaited.
         */
        if (!udev_device_get_is_initialized(dev) && !d->manager->udevd_runs && d->devnode &&
            in.attrs.size_bytes > 0) {
                r = ra_probe_run(d->manager, &in.attrs, d->devnode);
                if (r == -ETIMEDOUT)
                        log_warning("%s: libblkid's probe did not answer in %d ms (its reads wait on "
                                    "something that does not answer): deciding without its file system, "
                                    "and probing no other device until that read returns.",
                                    d->name, RA_PROBE_DEADLINE_MSEC);
                else if (r == -EBUSY)
                        log_debug("%s: not probed: another device's probe still waits on its read.",
                                  d->name);
                else if (r < 0 && r != -ENODEV)
                        log_debug_errno(r, "%s: probing with libblkid failed, ignoring: %m", d->name);
        }

        ra_device_attrs_clear(&d->in.attrs);
        d->in.attrs = in.attrs; /* transport may point at bus: both move together */
        d->medium_pending = false;
        in.attrs = (RaDeviceAttrs){};
        /* A disk whose head moves is traced as streams and jumps (ra-calib.h). */
        d->costs.streams = d->in.attrs.rotational;

        d->in.identity = mfree(d->in.identity);
        r = ra_device_identity(&d->in.attrs, &d->in.identity);
        if (r < 0)
                return r;
        r = replace_string(&d->reported_identity, d->in.identity);
        if (r < 0)
                return r;

        /* Its requests are traced as bios (ra-inputs.h). */
        d->in.bio_based = in.bio_based;

        take_stack(d, &in);
        return *ret_bad_property ? -EINVAL : 0;
}

static int dup_or_null(const char *s, char **ret) {
        *ret = NULL;
        if (s && !(*ret = strdup(s)))
                return -ENOMEM;
        return 0;
}

int ra_disk_snapshot(const RaDisk *d, RaDiskSnapshot *ret) {
        *ret = (RaDiskSnapshot){
                .kind = d->kind,
                .size_bytes = d->in.attrs.size_bytes,
                .rotational = d->in.attrs.rotational,
                .removable = d->in.attrs.removable,
                .read_ahead_kb = d->in.attrs.read_ahead_kb,
                .decision = d->decision,
                .read_bytes_per_sec = d->sampled.read_bytes_per_sec,
                .avg_read_request_bytes = d->sampled.avg_read_request_bytes,
                .workload = d->sampled.workload,
                .decisions = d->decisions,
                .learned_kb = d->model.learned_kb,
                .evidence = d->sampled.evidence,
                .calibrated = d->calib.when,
                .calibrating = d->calibrating,
        };

        if (dup_or_null(d->devnode, &ret->node) < 0 || dup_or_null(d->in.identity, &ret->identity) < 0 ||
            dup_or_null(d->in.attrs.transport, &ret->transport) < 0) {
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

/* --- bdis ------------------------------------------------------------------ */

int ra_disk_update_bdi(RaDisk *d, struct udev *udev, RaBdi *b) {
        struct udev_device *u;
        _cleanup_close_ int sysfd = -1;
        const char *bad = NULL;
        uint32_t kb;
        int r, props = 0;

        ra_bdi_clear(&d->in.bdi);
        d->in.bdi = *b;
        *b = (RaBdi){};
        d->devnum = d->in.bdi.s_dev; /* the page-cache events' name for it */

        free(d->syspath);
        if (asprintf(&d->syspath, "/sys/class/bdi/%s", d->name) < 0) {
                d->syspath = NULL;
                return -ENOMEM;
        }
        sysfd = ra_disk_open_sysfs(d);
        if (sysfd < 0)
                return sysfd;
        r = ra_apply_read_current(sysfd, d->knob_attr, &kb);
        if (r < 0)
                return r;

        ra_device_attrs_clear(&d->in.attrs);
        d->in.attrs.name = strdup(d->name);
        if (!d->in.attrs.name)
                return -ENOMEM;
        d->in.attrs.read_ahead_kb = kb;
        d->in.attrs.transport = ra_bdi_kind_to_string(d->in.bdi.kind);

        d->in.beneath_names = ra_strv_free(d->in.beneath_names);
        d->in.beneath_kb = mfree(d->in.beneath_kb);
        r = ra_inputs_read_beneath(&d->in.attrs, &d->in.bdi, "/sys", ra_stack_read_leaf_udev, udev,
                                   &d->in.beneath_kb, &d->in.beneath_names);
        if (r < 0)
                return r;
        /* A network or FUSE file system's size is not a reason to cap its window. */
        if (d->in.attrs.size_bytes == 0)
                d->in.attrs.size_bytes = UINT64_MAX;

        /* An administrator's rule may pin or bound a bdi as it does a disk. */
        u = udev_device_new_from_subsystem_sysname(udev, "bdi", d->name);
        if (u) {
                props = ra_device_attrs_read_properties(&d->in.attrs, get_udev_property, u, &bad);
                udev_device_unref(u);
                if (props == -ENOMEM)
                        return props;
        }

        d->in.identity = mfree(d->in.identity);
        r = ra_bdi_identity(&d->in.bdi, &d->in.identity);
        if (r < 0)
                return r;
        return props;
}

/*
 * The size, the optimal I/O size and the stack are read again on the way:
 * the resume that stacked the limits again may have changed them (a dm
 * table reload, whose "change" event comes after), and a decision from the
 * old ones would be written only to be undone. The stack's top carries the
 * size the prior is capped by.
 */
bool ra_disk_restacked(RaDisk *d, struct udev *udev, uint32_t kb) {
        _cleanup_(ra_device_attrs_clear) RaDeviceAttrs now = {};
        _cleanup_close_ int sysfd = -1;
        const char *bad = NULL;

        if (d->kind != RA_KIND_STACK || !d->in.stack)
                return false;
        sysfd = ra_disk_open_sysfs(d);
        if (sysfd < 0 || ra_device_attrs_read_sysfs(&now, sysfd, &bad) < 0 ||
            kb != ra_policy_kernel_kb(now.optimal_io_bytes))
                return false;
        d->in.attrs.size_bytes = now.size_bytes;
        d->in.attrs.optimal_io_bytes = now.optimal_io_bytes;
        read_stack(d, udev);
        return true;
}

int ra_disk_read_knob(const RaDisk *d, uint32_t *ret_kb) {
        _cleanup_close_ int sysfd = ra_disk_open_sysfs(d);

        if (sysfd < 0)
                return sysfd;
        return ra_apply_read_current(sysfd, d->knob_attr, ret_kb);
}
