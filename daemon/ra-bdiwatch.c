/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>

#include "ra-bdis.h"
#include "ra-bdiwatch.h"
#include "ra-bus.h"
#include "ra-log.h"
#include "ra-manager.h"
#include "ra-sampler.h"
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
                        RaDisk *d = ra_manager_find_disk(m, b->beneath_names[j]);

                        if (d && d->kind == RA_KIND_DISK)
                                d->beneath_bdi = true;
                }
        }
}

/* Registers one bdi the scan found; returns it when it is new, or known and retune asks, to be decided. */
static RaDisk *take_bdi(Manager *m, RaBdi *b, bool retune) {
        const char *keys[] = { b->name, b->mountpoint, b->fs_type, NULL };
        RaDisk *d = ra_manager_find_disk(m, b->name);
        int r;

        if (d && d->kind != RA_KIND_BDI)
                return NULL; /* cannot be: no disk is named like a bdi */

        if (!ra_config_manages_bdi(m->config, keys)) {
                if (d)
                        ra_manager_forget_disk(m, d, LOG_INFO, "no longer managed: not in bdis=.");
                return NULL;
        }
        if (d) {
                d->seen = true;
                return retune ? d : NULL;
        }

        r = ra_manager_add_disk(m, RA_KIND_BDI, b->name, &d);
        if (r < 0) {
                log_error_errno(r, "%s: cannot track the bdi: %m", b->name);
                return NULL;
        }
        d->seen = true;

        r = ra_disk_update_bdi(d, m->udev, b);
        if (r == -ENODEV) {
                ra_manager_forget_disk(m, d, LOG_DEBUG, "gone before it could be read.");
                return NULL;
        }
        if (r == -EINVAL)
                log_warning("%s: ignoring a RADAEMON_* property from udev that is not a multiple of 4 from "
                            "%u to %u (KiB) or a boolean.",
                            d->name, RA_KB_MIN, RA_KB_LIMIT);
        else if (r < 0) {
                log_warning_errno(r, "%s: cannot read the bdi: %m", d->name);
                ra_manager_forget_disk(m, d, LOG_WARNING, "leaving it alone.");
                return NULL;
        }
        if (d->attrs.ignore) {
                ra_manager_forget_disk(m, d, LOG_INFO,
                                       "RADAEMON_IGNORE is set by a udev rule; leaving it alone.");
                return NULL;
        }

        /*
         * What the file system was given: FUSE's server's window, the kernel's
         * for others. After a restart the bdi holds radaemon's own value: the
         * one stored under its identity is the file system's.
         */
        {
                const RaStateEntry *e = ra_state_find(m->state, d->identity);

                d->server_kb = d->attrs.has_original  ? d->attrs.original_kb
                               : e && e->has_original ? e->original_kb
                                                      : d->attrs.read_ahead_kb;
        }
        log_info("%s: %s at %s (%s), bdi of %s.", d->name, d->bdi.fs_type, d->bdi.mountpoint, d->identity,
                 d->bdi.source ?: "?");
        ra_manager_disk_identified(m, d, NULL);
        return d;
}

void ra_bdiwatch_scan(Manager *m, const char *event) {
        /* A reload decides again for the bdis it keeps, as for the disks. */
        bool retune = ra_streq(event, "reload");
        _cleanup_free_ RaDisk **fresh = NULL;
        RaBdi *v = NULL;
        size_t n = 0, n_fresh = 0;
        int r;

        r = ra_bdis_scan("/proc/self/mountinfo", "/sys", &v, &n);
        if (r < 0) {
                log_warning_errno(r, "Cannot read the mounts' bdis, ignoring: %m");
                return;
        }

        fresh = calloc(n + 1, sizeof(RaDisk *));
        if (!fresh) {
                ra_bdi_array_free(v, n);
                (void) log_oom();
                return;
        }
        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i]->kind == RA_KIND_BDI)
                        m->disks[i]->seen = false;
        for (size_t i = 0; i < n; i++) {
                RaDisk *d = take_bdi(m, &v[i], retune);

                if (d)
                        fresh[n_fresh++] = d;
        }
        ra_bdi_array_free(v, n);

        for (size_t i = m->n_disks; i > 0; i--) {
                RaDisk *d = m->disks[i - 1];

                if (d->kind == RA_KIND_BDI && !d->seen)
                        ra_manager_forget_disk(m, d, LOG_INFO, "unmounted.");
        }
        mark_beneath(m);

        /* Originals saved before the first write, in one save. */
        (void) ra_manager_flush_state(m);
        for (size_t i = 0; i < n_fresh; i++) {
                RaDisk *d = fresh[i];
                RaDiskSnapshot before;

                if (!d->published) {
                        ra_manager_tune_disk(m, d, event);
                        ra_bus_disk_added(m, d);
                } else if (ra_disk_snapshot(d, &before) >= 0) {
                        d->external = false;
                        ra_manager_tune_disk(m, d, event);
                        ra_bus_disk_changed(m, d, &before);
                        ra_disk_snapshot_clear(&before);
                }
        }
        ra_sampler_disks_changed(m);
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
        m->mountinfo_source = sd_event_source_disable_unref(m->mountinfo_source);
}
