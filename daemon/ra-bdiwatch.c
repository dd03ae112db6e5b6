/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "ra-bdis.h"
#include "ra-bdiwatch.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-registry.h"
#include "ra-store.h"
#include "ra-tune.h"
#include "ra-util.h"

/*
 * A bdi lives as long as its superblock, and is in mountinfo only once the
 * mount is done: udev's "add" for it comes before that, so mountinfo is what
 * the registry follows. Every change of it is a scan; a scan only reads
 * sysfs and mountinfo, and decides only for bdis it has not seen before.
 */

/*
 * The disks beneath managed bdis (ra_disk_update_bdi() named them, a
 * partition by its disk): their block requests are a file system's, not raw
 * reads.
 */
static void mark_beneath(Manager *m) {
        for (size_t i = 0; i < m->n_disks; i++)
                m->disks[i]->beneath_bdi = false;
        for (size_t i = 0; i < m->n_disks; i++) {
                const RaDisk *b = m->disks[i];

                if (b->kind != RA_KIND_BDI)
                        continue;
                for (size_t j = 0; b->beneath_names && b->beneath_names[j]; j++) {
                        RaDisk *d = ra_registry_find(m, b->beneath_names[j]);

                        if (d && d->kind == RA_KIND_DISK)
                                d->beneath_bdi = true;
                }
        }
}

static void fuse_watch(Manager *m);
static uint64_t now_usec(Manager *m);

/*
 * Reads a bdi from what a scan (or, for a btrfs being mounted, sysfs) found;
 * false when it is dropped. Read again later (mounted now, or udevd done with
 * it), it keeps what it learned and the value its file system was given.
 */
static bool read_bdi(Manager *m, RaDisk *d, RaBdi *b) {
        bool again = d->identity != NULL;
        uint32_t was = d->attrs.read_ahead_kb;
        _cleanup_free_ char *previous = NULL;
        int r;

        if (again && !(previous = strdup(d->identity))) {
                (void) log_oom();
                return false;
        }
        d->reread = false;
        r = ra_disk_update_bdi(d, m->udev, b);
        if (r == -ENODEV) {
                ra_tune_forget(m, d, again ? LOG_INFO : LOG_DEBUG,
                               again ? "unmounted." : "gone before it could be read.");
                return false;
        }
        if (r == -EINVAL)
                log_warning("%s: ignoring a RADAEMON_* property from udev that is not a multiple of 4 from "
                            "%u to %u (KiB) or a boolean.",
                            d->name, RA_KB_MIN, RA_KB_LIMIT);
        else if (r < 0) {
                log_warning_errno(r, "%s: cannot read the bdi: %m", d->name);
                ra_tune_forget(m, d, LOG_WARNING, "leaving it alone.");
                return false;
        }
        if (d->attrs.ignore) {
                ra_tune_forget(m, d, LOG_INFO, "RADAEMON_IGNORE is set by a udev rule; leaving it alone.");
                return false;
        }

        /*
         * What the file system was given: FUSE's server's window, the kernel's
         * for others. After a restart the bdi holds radaemon's own value: the
         * one stored under its identity is the file system's.
         */
        if (again) {
                /* Changed since last read: by a FUSE server's INIT, or behind radaemon's back. */
                uint32_t kb = d->attrs.read_ahead_kb;

                d->attrs.read_ahead_kb = was;
                ra_tune_drift(m, d, kb);
                /* Read after udevd's "add": a write from now on is somebody else's. */
                if (d->udev_added)
                        d->udev_add_pending_since = 0;
        } else {
                const RaStateEntry *e = ra_state_find(m->state, d->identity);

                d->server_kb = d->attrs.has_original  ? d->attrs.original_kb
                               : e && e->has_original ? e->original_kb
                                                      : d->attrs.read_ahead_kb;
                if (d->bdi.kind == RA_BDI_FUSE) {
                        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &d->fuse_init_pending_since);
                        fuse_watch(m);
                }
                /* Those found at start were made before: udevd is done with them. */
                if (m->ready && !d->udev_added)
                        d->udev_add_pending_since = now_usec(m);
        }
        if (!d->bdi.mountpoint)
                log_info("%s: %s being mounted (%s).", d->name, d->bdi.fs_type, d->identity);
        else if (!again || !ra_streq(previous, d->identity) || !d->announced)
                log_info("%s: %s at %s (%s), bdi of %s.", d->name, d->bdi.fs_type, d->bdi.mountpoint,
                         d->identity, d->bdi.source ?: "?");
        ra_tune_identified(m, d, previous);
        return true;
}

/*
 * A bdi a scan is to decide. One the bus knows is snapshot before it is read
 * again: what the read finds (a FUSE server's INIT answer, a value written
 * behind radaemon's back, the mount's identity) and the decision after it
 * go out in one PropertiesChanged.
 */
typedef struct Fresh {
        RaDisk *disk;
        RaTune tune;
} Fresh;

/*
 * Registers one bdi the scan found; fills ret and returns true when it is to
 * be decided: new, read again, or known and retune asks.
 */
static bool take_bdi(Manager *m, RaBdi *b, bool retune, Fresh *ret) {
        RaDisk *d = ra_registry_find(m, b->name);
        const char *keys[4];
        int r;

        *ret = (Fresh){};
        if (d && d->kind != RA_KIND_BDI)
                return false; /* cannot be: no disk is named like a bdi */
        /*
         * A FUSE or NFS bdi's name is its superblock's dev, used again by the
         * next mount: unmounted and mounted again between two scans, it is
         * another file system under the old name.
         */
        if (d && d->bdi.mount_id > 0 && b->mount_id > 0 && d->bdi.mount_id != b->mount_id) {
                ra_tune_forget(m, d, LOG_INFO, "unmounted.");
                d = NULL;
        }

        ra_bdi_keys(b, keys);
        if (!ra_config_manages_bdi(m->config, keys)) {
                if (d)
                        ra_tune_forget(m, d, LOG_INFO, "no longer managed: not in bdis=.");
                return false;
        }
        if (d) {
                d->seen = true;
                /* Decided while its mount ran, or udevd has finished with it. */
                if (!d->reread && (d->bdi.mountpoint || !b->mountpoint)) {
                        if (!retune)
                                return false;
                        (void) ra_tune_begin(d, &ret->tune);
                        ret->disk = d;
                        return true;
                }
                /*
                 * Without memory for the snapshot the read goes on (the next
                 * scan may be long in coming): settle() tells what its
                 * decision changes, not what the read found.
                 */
                (void) ra_tune_begin(d, &ret->tune);
                if (!read_bdi(m, d, b)) {
                        ra_tune_abort(&ret->tune);
                        *ret = (Fresh){};
                        return false;
                }
                ret->disk = d;
                return true;
        }

        r = ra_registry_add(m, RA_KIND_BDI, b->name, &d);
        if (r < 0) {
                log_error_errno(r, "%s: cannot track the bdi: %m", b->name);
                return false;
        }
        d->seen = true;
        (void) ra_tune_begin(d, &ret->tune);
        if (!read_bdi(m, d, b))
                return false;
        ret->disk = d;
        return true;
}

/* The bdis a scan or a mount under way found: originals saved in one save, then each decided. */
static void settle(Manager *m, Fresh *fresh, size_t n_fresh, const char *event) {
        mark_beneath(m);
        (void) ra_store_flush(m);
        for (size_t i = 0; i < n_fresh; i++) {
                RaDisk *d = fresh[i].disk;

                if (d->published)
                        d->external = false;
                ra_tune_commit(m, &fresh[i].tune, event);
        }
        ra_registry_changed(m);
}

/* A btrfs whose mount is under way is not in mountinfo yet, and is kept while its bdi is there. */
static bool mounting(const RaDisk *d) {
        return !d->bdi.mountpoint && ra_bdi_exists("/sys", d->name);
}

void ra_bdiwatch_scan(Manager *m, const char *event) {
        /* A reload decides again for the bdis it keeps, as for the disks. */
        bool retune = ra_streq(event, "reload");
        _cleanup_free_ Fresh *fresh = NULL;
        RaBdi *v = NULL;
        size_t n = 0, n_fresh = 0;
        int r;

        r = ra_bdis_scan("/proc/self/mountinfo", "/sys", &v, &n);
        if (r < 0) {
                log_warning_errno(r, "Cannot read the mounts' bdis, ignoring: %m");
                return;
        }

        fresh = calloc(n + 1, sizeof(Fresh));
        if (!fresh) {
                ra_bdi_array_free(v, n);
                (void) log_oom();
                return;
        }
        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i]->kind == RA_KIND_BDI)
                        m->disks[i]->seen = false;
        for (size_t i = 0; i < n; i++)
                if (take_bdi(m, &v[i], retune, &fresh[n_fresh]))
                        n_fresh++;
        ra_bdi_array_free(v, n);

        for (size_t i = m->n_disks; i > 0; i--) {
                RaDisk *d = m->disks[i - 1];

                if (d->kind == RA_KIND_BDI && !d->seen && !mounting(d))
                        ra_tune_forget(m, d, LOG_INFO, "unmounted.");
        }
        settle(m, fresh, n_fresh, event);
}

/*
 * btrfs makes its bdi early in mount(2), and links it from
 * /sys/fs/btrfs/<uuid>/bdi once it has read its trees, before it reads its
 * block groups and returns. The kernel sends the bdi's uevent at once;
 * udevd's copy comes after the rules ran, often after mount(2) returned, and
 * mountinfo shows the mount only then. So radaemon takes the kernel's
 * uevents for bdis itself, looks for the link from the "add" on, and decides
 * when it is there: a file opened as mount(2) returns reads with radaemon's
 * window, not the 4 MiB btrfs gives (a file takes its window at open). The
 * link can come less than a millisecond before mount(2) returns (a small file
 * system on a fast device), so the first looks are 100 us apart; a readdir
 * and a readlink each. The mount point is not known yet: a bdis= glob or
 * [bdi:GLOB] section naming it applies at the mount, when mountinfo shows it.
 */
#define EARLY_GIVE_UP_USEC (30 * 1000 * 1000ULL) /* a mount slower than this is decided at its end */

/* How long to wait before looking again, age after the "add". */
static uint64_t early_interval(uint64_t age) {
        return age < 20 * 1000 ? 100 : age < 200 * 1000 ? 1000 : 20 * 1000;
}

typedef struct Early {
        char *name;
        uint64_t since; /* CLOCK_MONOTONIC usec of the "add" */
} Early;

typedef struct RaBdiEarly {
        struct udev_monitor *monitor;
        sd_event_source *monitor_source;
        sd_event_source *timer;
        sd_event_source *fuse_timer;
        Early *v;
        size_t n;
} RaBdiEarly;

static uint64_t now_usec(Manager *m) {
        uint64_t now = 0;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        return now;
}

/* One btrfs bdi whose mount is under way: true when settled (decided, not ours, or gone). */
static bool early_try(Manager *m, const char *name) {
        _cleanup_(ra_bdi_clear) RaBdi b = { .stripes = 1 };
        Fresh fresh;
        int r;

        if (ra_registry_find(m, name) || !ra_bdi_exists("/sys", name))
                return true; /* mountinfo was quicker, or the mount failed */

        b.name = strdup(name);
        b.fs_type = strdup("btrfs");
        if (!b.name || !b.fs_type) {
                (void) log_oom();
                return true;
        }
        r = ra_bdi_read_btrfs("/sys", NULL, &b);
        if (r == -ENOENT)
                return false; /* not linked yet */
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read its btrfs while it mounts, deciding at the mount: %m",
                                name);
                return true;
        }

        if (take_bdi(m, &b, false, &fresh))
                settle(m, &fresh, 1, "mount");
        return true;
}

static int arm(sd_event_source *timer, uint64_t usec) {
        int r = sd_event_source_set_time_relative(timer, usec);

        if (r >= 0)
                r = sd_event_source_set_enabled(timer, SD_EVENT_ONESHOT);
        return r;
}

static int on_early_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        RaBdiEarly *e = m->bdi_early;
        uint64_t now = now_usec(m), newest = 0;
        size_t kept = 0;

        /* As often as the newest mount under way needs. */

        for (size_t i = 0; i < e->n; i++) {
                if (early_try(m, e->v[i].name) || now - e->v[i].since > EARLY_GIVE_UP_USEC) {
                        free(e->v[i].name);
                        continue;
                }
                newest = e->v[i].since > newest ? e->v[i].since : newest;
                e->v[kept++] = e->v[i];
        }
        e->n = kept;
        if (kept > 0 && arm(e->timer, early_interval(now - newest)) < 0)
                log_warning("Cannot wait for a btrfs being mounted; it is decided at the mount.");
        return 0;
}

static void early_add(Manager *m, const char *name) {
        RaBdiEarly *e = m->bdi_early;
        Early *grown;

        if (early_try(m, name))
                return;
        for (size_t i = 0; i < e->n; i++)
                if (ra_streq(e->v[i].name, name))
                        return;
        grown = reallocarray(e->v, e->n + 1, sizeof(Early));
        if (!grown) {
                (void) log_oom();
                return;
        }
        e->v = grown;
        e->v[e->n] = (Early){ .name = strdup(name), .since = now_usec(m) };
        if (!e->v[e->n].name) {
                (void) log_oom();
                return;
        }
        if (e->n++ == 0 && arm(e->timer, early_interval(0)) < 0)
                log_warning("%s: cannot wait for its btrfs to be linked; it is decided at the mount.", name);
}

static int on_kernel_uevent(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        struct udev_device *dev;

        while ((dev = udev_monitor_receive_device(m->bdi_early->monitor))) {
                const char *name = udev_device_get_sysname(dev) ?: "";
                const char *action = udev_device_get_action(dev) ?: "";
                RaDisk *d;

                log_debug("%s: kernel %s uevent.", name, action);
                if (ra_streq(action, "add") && strncmp(name, "btrfs-", 6) == 0)
                        early_add(m, name);
                else if (ra_streq(action, "remove") && (d = ra_registry_find(m, name)) &&
                         d->kind == RA_KIND_BDI && !d->bdi.mountpoint)
                        ra_bdiwatch_scan(m, "udev"); /* a mount that failed */
                udev_device_unref(dev);
        }
        return 0;
}

/*
 * A FUSE bdi found before its server answered INIT: the answer sets the
 * window to min(the window then, the server's max_readahead), undoing a pin
 * or a learned value written before it (ra_tune_drift() tells the
 * answer and writes the value back). The sampler would see it up to an
 * interval later; a file opened meanwhile reads with the server's window.
 * So the window is looked at every millisecond for 100 ms after the bdi was
 * found, then every 10 ms up to a second: one read of sysfs each.
 */
static uint64_t fuse_interval(uint64_t age) {
        return age < 100 * 1000 ? 1000 : age < 1000 * 1000 ? 10 * 1000 : 0;
}

static int on_fuse_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        uint64_t now = now_usec(m), next = 0;

        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *d = m->disks[i];
                uint64_t interval;
                uint32_t kb;

                if (d->kind != RA_KIND_BDI || d->bdi.kind != RA_BDI_FUSE || d->fuse_init_pending_since == 0)
                        continue;
                interval = fuse_interval(now - d->fuse_init_pending_since);
                if (interval == 0)
                        continue; /* the sampler's from now on */
                (void) ra_close(ra_tune_check_window(m, d, &kb));
                if (d->fuse_init_pending_since > 0 && (next == 0 || interval < next))
                        next = interval;
        }
        if (next > 0 && arm(m->bdi_early->fuse_timer, next) < 0)
                log_debug("Cannot look for FUSE servers' INIT answers; the sampler sees them.");
        return 0;
}

/* A FUSE bdi was found: its server's INIT answer is looked for from now on. */
static void fuse_watch(Manager *m) {
        int enabled = SD_EVENT_OFF;

        if (!m->bdi_early || !m->bdi_early->fuse_timer)
                return;
        (void) sd_event_source_get_enabled(m->bdi_early->fuse_timer, &enabled);
        if (enabled == SD_EVENT_OFF && arm(m->bdi_early->fuse_timer, fuse_interval(0)) < 0)
                log_debug("Cannot look for a FUSE server's INIT answer; the sampler sees it.");
}

/* Without it a btrfs is decided at the mount, a millisecond after mount(2) returns. */
static int early_start(Manager *m) {
        RaBdiEarly *e;
        int r;

        e = m->bdi_early = calloc(1, sizeof(RaBdiEarly));
        if (!e)
                return -ENOMEM;
        e->monitor = udev_monitor_new_from_netlink(m->udev, "kernel");
        if (!e->monitor)
                return errno > 0 ? -errno : -ENOMEM;
        r = udev_monitor_filter_add_match_subsystem_devtype(e->monitor, "bdi", NULL);
        if (r >= 0)
                r = udev_monitor_enable_receiving(e->monitor);
        if (r >= 0)
                r = sd_event_add_io(m->event, &e->monitor_source, udev_monitor_get_fd(e->monitor), EPOLLIN,
                                    on_kernel_uevent, m);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &e->timer, CLOCK_MONOTONIC, early_interval(0), 1,
                                               on_early_timer, m); /* accuracy 0 would be 250 ms */
        if (r >= 0)
                r = sd_event_source_set_enabled(e->timer, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &e->fuse_timer, CLOCK_MONOTONIC, fuse_interval(0),
                                               1, on_fuse_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(e->fuse_timer, SD_EVENT_OFF);
        return r;
}

static void early_stop(Manager *m) {
        RaBdiEarly *e = m->bdi_early;

        if (!e)
                return;
        sd_event_source_disable_unref(e->timer);
        sd_event_source_disable_unref(e->fuse_timer);
        sd_event_source_disable_unref(e->monitor_source);
        udev_monitor_unref(e->monitor);
        for (size_t i = 0; i < e->n; i++)
                free(e->v[i].name);
        free(e->v);
        free(e);
        m->bdi_early = NULL;
}

/* Mounts come and go: the bdis, and the map of superblocks, follow at once. */
static int on_mountinfo(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        ra_bdiwatch_scan(m, "mount");
        return 0;
}

int ra_bdiwatch_start(Manager *m) {
        int fd, r;

        ra_bdiwatch_scan(m, "coldplug");

        r = early_start(m);
        if (r < 0) {
                early_stop(m);
                log_warning_errno(r, "Cannot listen to the kernel's bdi events, a btrfs is decided when "
                                     "mount(2) has returned: %m");
        }

        fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return log_warning_errno(
                        errno, "Cannot open /proc/self/mountinfo, mounts made later are not seen: %m");
        r = sd_event_add_io(m->event, &m->mountinfo_source, fd, EPOLLPRI, on_mountinfo, m);
        if (r >= 0)
                r = sd_event_source_set_io_fd_own(m->mountinfo_source, true);
        if (r < 0) {
                m->mountinfo_source = sd_event_source_disable_unref(m->mountinfo_source);
                (void) ra_close(fd);
                return log_warning_errno(r, "Cannot watch /proc/self/mountinfo, mounts made later are not "
                                            "seen: %m");
        }
        return 0;
}

void ra_bdiwatch_stop(Manager *m) {
        early_stop(m);
        m->mountinfo_source = sd_event_source_disable_unref(m->mountinfo_source);
}
