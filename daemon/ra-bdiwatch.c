/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "ra-bdiscan.h"
#include "ra-bdiwatch.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-mounts.h"
#include "ra-registry.h"
#include "ra-state-store.h"
#include "ra-tune.h"
#include "ra-util.h"

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

/*
 * A scan reads every mount and the sysfs of its bdi. One at every event, as
 * before, cost 20 % of a CPU while one user's loop of fusermount3 mounted and
 * unmounted 35 FUSE file systems a second (tests/mount-churn.sh): a scan
 * follows its event at once after a quiet spell, and otherwise waits until
 * scans have taken no more than 1/SCAN_SHARE of the time since the last began.
 */
#define SCAN_SHARE 20
#define SCAN_WAIT_MAX_USEC (1000 * 1000ULL) /* a scan slowed by something else delays none by more */

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

        (void) ra_bdiscan_take(m, &b, "mount");
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
                         d->kind == RA_KIND_BDI && !d->in.bdi.mountpoint)
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

                if (d->kind != RA_KIND_BDI || d->in.bdi.kind != RA_BDI_FUSE ||
                    d->as_bdi.fuse_init_pending_since == 0)
                        continue;
                interval = fuse_interval(now - d->as_bdi.fuse_init_pending_since);
                if (interval == 0)
                        continue; /* the sampler's from now on */
                (void) ra_close(ra_tune_check_window(m, d, &kb));
                if (d->as_bdi.fuse_init_pending_since > 0 && (next == 0 || interval < next))
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

void ra_bdiwatch_scan(Manager *m, const char *event) {
        ra_bdiscan_scan(m, event);
        /* A FUSE bdi it found waits for its server's INIT answer. */
        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i]->kind == RA_KIND_BDI && m->disks[i]->as_bdi.fuse_init_pending_since > 0) {
                        fuse_watch(m);
                        break;
                }
}

/* A scan now, and when the next may start: SCAN_SHARE times its cost after this one began. */
static void scan_timed(Manager *m, const char *event) {
        uint64_t start = ra_now_usec(), wait;

        ra_bdiwatch_scan(m, event);
        wait = (ra_now_usec() - start) * SCAN_SHARE;
        m->mounts_next_usec = start + (wait < SCAN_WAIT_MAX_USEC ? wait : SCAN_WAIT_MAX_USEC);
}

static int on_scan_due(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->mounts_due = sd_event_source_disable_unref(m->mounts_due);
        scan_timed(m, m->mounts_due_event);
        return 0;
}

void ra_bdiwatch_scan_soon(Manager *m, const char *event) {
        uint64_t now = ra_now_usec();
        int r;

        if (m->mounts_due)
                return; /* the scan due sees this change too */
        if (now >= m->mounts_next_usec) {
                scan_timed(m, event);
                return;
        }
        m->mounts_due_event = event;
        r = sd_event_add_time(m->event, &m->mounts_due, CLOCK_MONOTONIC, m->mounts_next_usec, 0, on_scan_due,
                              m);
        if (r < 0) {
                log_debug_errno(r, "Cannot wait to scan the mounts, scanning now: %m");
                scan_timed(m, event);
        }
}

/* Mounts come and go: the bdis, and the map of superblocks, follow (ra_bdiwatch_scan_soon()). */
static int on_mountinfo(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        ra_bdiwatch_scan_soon(m, "mount");
        m->on_mounts_moved(m);
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
        m->mounts_due = sd_event_source_disable_unref(m->mounts_due);
        m->mountinfo_source = sd_event_source_disable_unref(m->mountinfo_source);
}
