/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "ra-bdiscan.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-registry.h"
#include "ra-tune.h"
#include "ra-udev.h"
#include "ra-util.h"

/* Enough for hundreds of disks appearing at once without ENOBUFS. */
#define MONITOR_BUFFER_BYTES (128 * 1024 * 1024)
/* Quiet udev work for this long, and freed memory goes back to the kernel. */
#define TRIM_AFTER_USEC (1 * 1000 * 1000)
/* The event a top of a stack is decided again for, when a disk beneath it changed. */
#define STACK_EVENT "stack change"

/*
 * Re-reads a disk the registry holds; false when it was dropped. A disk that
 * vanishes before its event is handled (a detach's "change" comes after the
 * device is gone) is removed here: said like a "remove", if it was managed.
 */
static bool update_disk(Manager *m, RaDisk *d, struct udev_device *dev, bool known) {
        const char *bad = NULL;
        int r;

        r = ra_disk_update(d, dev, &bad);
        if (r == -ENODEV) {
                if (known)
                        ra_tune_forget(m, d, LOG_INFO, "removed.");
                else
                        ra_tune_forget(m, d, LOG_DEBUG,
                                       "gone, or without queue/read_ahead_kb; not managed.");
                return false;
        }
        if (r == -EINVAL && bad)
                log_warning("%s: ignoring %s=%s from udev: not a multiple of 4 from %u to %u (KiB) "
                            "or a boolean.",
                            d->name, bad, udev_device_get_property_value(dev, bad), RA_KB_MIN, RA_KB_LIMIT);
        else if (r < 0) {
                log_warning_errno(r, "%s: cannot read the device: %m", d->name);
                ra_tune_forget(m, d, LOG_WARNING, "leaving it alone.");
                return false;
        }

        if (d->in.attrs.ignore) {
                ra_tune_forget(m, d, LOG_INFO, "RADAEMON_IGNORE is set by a udev rule; leaving it alone.");
                return false;
        }
        return true;
}

/*
 * Registers, updates or drops the disk of one event; true when it was read,
 * to be decided with the batch (Manager.on_objects_read).
 */
static bool prepare_device(Manager *m, struct udev_device *dev, const char *event) {
        const char *name = udev_device_get_sysname(dev);
        uint32_t was;
        RaDisk *d;
        bool known;
        int r;

        if (!name || !ra_streq(udev_device_get_devtype(dev), "disk"))
                return false;

        d = ra_registry_find(m, name);

        if (ra_streq(event, "remove")) {
                if (d)
                        ra_tune_forget(m, d, LOG_INFO, "removed.");
                return false;
        }

        if (!ra_config_manages(m->config, name)) {
                if (d)
                        ra_tune_forget(m, d, LOG_INFO, "no longer managed: not in devices= or in ignore=.");
                return false;
        }

        known = d != NULL;
        if (!d) {
                /* A disk until its stack is read (ra_disk_update()). */
                r = ra_registry_add(m, RA_KIND_DISK, name, &d);
                if (r < 0) {
                        log_error_errno(r, "%s: cannot track the disk: %m", name);
                        return false;
                }
        }
        /* Seen, even when it cannot be handled now: enumeration must not forget a live disk. */
        d->seen = true;
        if (m->on_object_seen(m, d, event) < 0) {
                log_error_errno(ENOMEM, "%s: cannot handle the %s event: %m", name, event);
                return false;
        }

        was = d->in.attrs.read_ahead_kb;
        /* Dropped, it is out of the batch too (ra_tune_forget()). */
        if (!update_disk(m, d, dev, known))
                return false;
        /*
         * Re-read for a disk beneath, not for an event of its own: a value
         * that moved on the top since the last sample (an administrator's) is
         * left for the drift check to see, not taken as the tracked one.
         */
        if (known && ra_streq(event, STACK_EVENT))
                d->in.attrs.read_ahead_kb = was;

        /*
         * The kernel re-read the device, or the configuration changed: radaemon's
         * value applies again. Not for a change beneath: an administrator's value
         * on the top is still theirs.
         */
        if (!ra_streq(event, STACK_EVENT))
                d->external = false;
        return true;
}

/*
 * The names of the disks read from a burst of events or an enumeration,
 * decided together by the tuning path: one save for all of them, then the
 * writes. A disk is in a batch at most once, so no later event in it can
 * change or drop a disk an earlier one read.
 */
typedef struct Batch {
        char **names;
} Batch;

static void batch_finish(Manager *m, Batch *b) {
        m->on_objects_read(m);
        b->names = ra_strv_free(b->names);
}

static void batch_add(Manager *m, Batch *b, struct udev_device *dev, const char *event) {
        const char *name = udev_device_get_sysname(dev);

        if (name && ra_strv_contains(b->names, name))
                batch_finish(m, b);
        /* Without room for its name, the batch ends with it. */
        if (prepare_device(m, dev, event) && ra_strv_push(&b->names, name) < 0)
                batch_finish(m, b);
}

static int on_trim(sd_event_source *s, uint64_t usec, void *userdata) {
#ifdef HAVE_MALLOC_TRIM
        (void) malloc_trim(0);
#endif
        return 0;
}

/*
 * A walk or a burst of events allocates (libudev, libblkid) far more than
 * stays: once the udev work has been quiet for a second, the freed heap goes
 * back to the kernel, so an idle daemon's resident memory is what it keeps,
 * not what it once needed (with 10 disks, 1.2 MiB of heap for 30 KiB used).
 */
static void schedule_trim(Manager *m) {
        int r;

        if (m->trim)
                r = sd_event_source_set_time_relative(m->trim, TRIM_AFTER_USEC);
        else
                r = sd_event_add_time_relative(m->event, &m->trim, CLOCK_MONOTONIC, TRIM_AFTER_USEC,
                                               TRIM_AFTER_USEC / 10, on_trim, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->trim, SD_EVENT_ONESHOT);
        if (r < 0)
                log_debug_errno(r, "Cannot schedule returning memory, ignoring: %m");
}

int ra_udev_enumerate(Manager *m, const char *event) {
        struct udev_enumerate *e;
        struct udev_list_entry *item;
        Batch batch = {};
        int r;

        e = udev_enumerate_new(m->udev);
        if (!e)
                return log_error_errno(ENOMEM, "Cannot enumerate block devices: %m");

        r = udev_enumerate_add_match_subsystem(e, "block");
        if (r >= 0)
                r = udev_enumerate_add_match_property(e, "DEVTYPE", "disk");
        if (r >= 0)
                r = udev_enumerate_scan_devices(e);
        if (r < 0) {
                udev_enumerate_unref(e);
                return log_error_errno(r, "Cannot enumerate block devices: %m");
        }

        for (size_t i = 0; i < m->n_disks; i++)
                if (ra_kind_is_block(m->disks[i]->kind))
                        m->disks[i]->seen = false;

        udev_list_entry_foreach (item, udev_enumerate_get_list_entry(e)) {
                struct udev_device *dev;

                dev = udev_device_new_from_syspath(m->udev, udev_list_entry_get_name(item));
                if (!dev)
                        continue; /* gone since the scan */
                batch_add(m, &batch, dev, event);
                udev_device_unref(dev);
        }
        udev_enumerate_unref(e);
        batch_finish(m, &batch);

        for (size_t i = m->n_disks; i > 0; i--)
                if (ra_kind_is_block(m->disks[i - 1]->kind) && !m->disks[i - 1]->seen)
                        ra_tune_forget(m, m->disks[i - 1], LOG_INFO, "gone while no events arrived.");

        schedule_trim(m);
        return 0;
}

/*
 * A bdi's "add" comes before its mount is in mountinfo, and its "remove"
 * after the mount is gone: both are settled by a scan of the mounts. Once
 * udevd has finished an "add" or a "change" of one radaemon holds, the
 * properties its rules set are there: the scan reads them again, and a
 * window its rules wrote during the "add" is the bdi's starting value.
 */
static void bdi_event(Manager *m, struct udev_device *dev, const char *action) {
        RaDisk *d = ra_registry_find(m, udev_device_get_sysname(dev) ?: "");

        if (d && d->kind == RA_KIND_BDI && (ra_streq(action, "add") || ra_streq(action, "change")))
                d->as_bdi.reread = true;
        /* Its rules have run: what they wrote is read at the scan, as the starting value. */
        if (d && d->kind == RA_KIND_BDI && ra_streq(action, "add"))
                d->as_bdi.udev_added = true;
        if (!d && udev_device_get_sysname(dev) && (ra_streq(action, "add") || ra_streq(action, "remove")))
                ra_bdiscan_udev_added(m, udev_device_get_sysname(dev), ra_streq(action, "add"));
}

static bool manages_disk(void *userdata, const char *name) {
        RaDisk *d = ra_registry_find(userdata, name);

        return d && ra_kind_is_block(d->kind);
}

/*
 * A dm or md device is decided from the disks beneath it, which have events
 * of their own (a rule sets a disk's rotational flag, a size is re-read, an
 * md member comes or goes) that the device on top never sees: each managed
 * top above the disks in changed is read and decided again, as for an event
 * of its own, and the bus told.
 */
static void redecide_tops(Manager *m, char *const *changed) {
        _cleanup_(ra_strv_freep) char **tops = NULL;
        Batch batch = {};
        int r;

        r = ra_stack_tops_to_redecide("/sys", changed, manages_disk, m, &tops);
        if (r < 0) {
                log_warning_errno(r, "Cannot find the devices on top of the disks that changed: %m");
                return;
        }
        for (size_t i = 0; tops && tops[i]; i++) {
                struct udev_device *dev = udev_device_new_from_subsystem_sysname(m->udev, "block", tops[i]);

                if (!dev)
                        continue; /* gone: its "remove" is on its way */
                log_debug("%s: a disk beneath it changed; deciding again.", tops[i]);
                batch_add(m, &batch, dev, STACK_EVENT);
                udev_device_unref(dev);
        }
        batch_finish(m, &batch);
}

static int on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        _cleanup_(ra_strv_freep) char **changed = NULL;
        Manager *m = userdata;
        Batch batch = {};
        bool bdis = false;
        int error;

        /* Everything that is there now, as one batch: a storm of hotplugs costs one save. */
        for (;;) {
                struct udev_device *dev;
                const char *action;

                errno = 0;
                dev = udev_monitor_receive_device(m->monitor);
                if (!dev)
                        break;

                action = udev_device_get_action(dev) ?: "change";
                log_debug("%s: %s event.", udev_device_get_sysname(dev), action);
                if (ra_streq(udev_device_get_subsystem(dev), "bdi")) {
                        bdi_event(m, dev, action);
                        bdis = true;
                } else {
                        batch_add(m, &batch, dev, action);
                        /* Managed or not, a disk beneath a managed stack decides its top. */
                        if (!ra_streq(action, "remove") && udev_device_get_sysname(dev) &&
                            !ra_strv_contains(changed, udev_device_get_sysname(dev)) &&
                            ra_strv_push(&changed, udev_device_get_sysname(dev)) < 0)
                                (void) log_oom();
                }
                udev_device_unref(dev);
        }
        error = errno;
        batch_finish(m, &batch);
        redecide_tops(m, changed);
        if (bdis)
                m->on_bdis_moved(m, "udev");
        schedule_trim(m);
        /* A stack built or taken apart moves what a [path:] section's files read with. */
        m->on_mounts_moved(m);

        /* The socket overflowed: events are lost, so look at everything again. */
        if (error == ENOBUFS) {
                log_warning("Missed udev events (receive buffer overrun); re-reading every disk.");
                (void) ra_udev_enumerate(m, "overrun");
        }

        return 0;
}

/* udevd leaves its control socket behind when it exits: ask whether anyone listens. */
static bool udevd_runs(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/run/udev/control" };
        _cleanup_close_ int fd = -1;

        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        return fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0;
}

int ra_udev_watch(Manager *m) {
        const char *e = getenv("RADAEMON_UDEV_BUFFER_BYTES");
        uint32_t buffer = MONITOR_BUFFER_BYTES;
        int r;

        /* Tests make the buffer small to see an overrun handled. */
        if (e && ra_parse_u32(e, &buffer) < 0)
                log_warning("Ignoring RADAEMON_UDEV_BUFFER_BYTES=%s: not a number.", e);

        m->monitor = udev_monitor_new_from_netlink(m->udev, "udev");
        if (!m->monitor)
                return log_error_errno(errno ?: ENOMEM, "Cannot create the udev monitor: %m");

        r = udev_monitor_filter_add_match_subsystem_devtype(m->monitor, "block", "disk");
        if (r >= 0)
                r = udev_monitor_filter_add_match_subsystem_devtype(m->monitor, "bdi", NULL);
        if (r < 0)
                return log_error_errno(r, "Cannot filter udev events: %m");

        r = udev_monitor_set_receive_buffer_size(m->monitor, (int) buffer);
        if (r < 0)
                log_debug_errno(r, "Cannot enlarge the udev receive buffer, ignoring: %m");

        r = udev_monitor_enable_receiving(m->monitor);
        if (r < 0)
                return log_error_errno(r, "Cannot listen to udev events: %m");

        r = sd_event_add_io(m->event, &m->monitor_source, udev_monitor_get_fd(m->monitor), EPOLLIN,
                            on_monitor, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch udev events: %m");

        m->udevd_runs = udevd_runs();
        if (!m->udevd_runs)
                log_warning(
                        "udevd does not seem to run: disks are tuned now, but no hotplug events will arrive.");
        return 0;
}
