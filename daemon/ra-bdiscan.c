/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ra-bdiscan.h"
#include "ra-context.h"
#include "ra-inputs.h"
#include "ra-log.h"
#include "ra-mounts.h"
#include "ra-registry.h"
#include "ra-tune.h"
#include "ra-users.h"
#include "ra-util.h"

/*
 * A bdi lives as long as its superblock, and is in mountinfo only once the
 * mount is done: udev's "add" for it comes before that, so mountinfo is what
 * the registry follows. Every change of it is a scan; a scan only reads
 * sysfs and mountinfo, and decides only for bdis it has not seen before.
 */

#define BDIS_ADDED_MAX 64

/*
 * The disks beneath managed bdis (ra_disk_update_bdi() named them, a
 * partition by its disk): their block requests are a file system's, not raw
 * reads.
 */
static void mark_beneath(Manager *m) {
        for (size_t i = 0; i < m->n_disks; i++) {
                m->disks[i]->beneath_bdi = false;
                m->disks[i]->bdi_switches = 0;
                m->disks[i]->bdi_turns = (RaCalibTurns){};
        }
        for (size_t i = 0; i < m->n_disks; i++) {
                const RaDisk *b = m->disks[i];

                if (b->kind != RA_KIND_BDI)
                        continue;
                for (size_t j = 0; b->in.beneath_names && b->in.beneath_names[j]; j++) {
                        RaDisk *d = ra_registry_find(m, b->in.beneath_names[j]);

                        if (d && ra_kind_is_block(d->kind))
                                d->beneath_bdi = true;
                }
        }
}

static uint64_t now_usec(Manager *m) {
        uint64_t now = 0;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        return now;
}

/* Whether udevd's "add" of name came before the scan that found it; forgotten once asked. */
static bool take_added(Manager *m, const char *name) {
        size_t n = ra_strv_length(m->bdis_added);

        for (size_t i = 0; i < n; i++)
                if (ra_streq(m->bdis_added[i], name)) {
                        free(m->bdis_added[i]);
                        memmove(&m->bdis_added[i], &m->bdis_added[i + 1], (n - i) * sizeof(char *));
                        return true;
                }
        return false;
}

void ra_bdiscan_udev_added(Manager *m, const char *name, bool added) {
        if (!added) {
                (void) take_added(m, name);
                return;
        }
        /* A few at a time are under way; more are mounts that failed, their "remove" lost. */
        if (ra_strv_contains(m->bdis_added, name) || ra_strv_length(m->bdis_added) >= BDIS_ADDED_MAX)
                return;
        if (ra_strv_push(&m->bdis_added, name) < 0)
                (void) log_oom();
}

/*
 * Reads a bdi from what a scan (or, for a btrfs being mounted, sysfs) found;
 * false when it is dropped. Read again later (mounted now, or udevd done with
 * it), it keeps what it learned and the value its file system was given.
 */
static bool read_bdi(Manager *m, RaDisk *d, RaBdi *b, const char *event) {
        bool again = d->in.identity != NULL;
        uint32_t was = d->in.attrs.read_ahead_kb;
        _cleanup_free_ char *previous = NULL;
        int r;

        if (again && !(previous = strdup(d->in.identity))) {
                (void) log_oom();
                return false;
        }
        /*
         * Reported before the read: what it finds (a FUSE server's INIT answer,
         * a value written behind radaemon's back, the mount's identity) and the
         * decision after it go out in one PropertiesChanged. Without memory it
         * is read at a later scan (reread stays set).
         */
        if (m->on_object_seen(m, d, event) < 0)
                return false;
        d->as_bdi.reread = false;
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
        if (d->in.attrs.ignore) {
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
                uint32_t kb = d->in.attrs.read_ahead_kb;

                d->in.attrs.read_ahead_kb = was;
                ra_tune_drift(m, d, kb);
                /* Read after udevd's "add": a write from now on is somebody else's. */
                if (d->as_bdi.udev_added)
                        d->as_bdi.udev_add_pending_since = 0;
        } else {
                /* udevd's "add" came before radaemon knew the bdi (ra_bdiscan_udev_added()). */
                if (take_added(m, d->name))
                        d->as_bdi.udev_added = true;
                d->in.server_kb = ra_inputs_server_kb(&d->in.attrs, m->state, d->in.identity);
                /* Looked for by the bdi watcher's FUSE timer from now on. */
                if (d->in.bdi.kind == RA_BDI_FUSE)
                        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &d->as_bdi.fuse_init_pending_since);
                /* Those found at start were made before: udevd is done with them. */
                if (m->ready && !d->as_bdi.udev_added)
                        d->as_bdi.udev_add_pending_since = now_usec(m);
        }
        if (!d->in.bdi.mountpoint)
                log_full_errno(ra_users_log_level(m, d, LOG_INFO), 0, "%s: %s being mounted (%s).", d->name,
                               d->in.bdi.fs_type, d->in.identity);
        else if (!again || !ra_streq(previous, d->in.identity) || !d->announced)
                log_full_errno(ra_users_log_level(m, d, LOG_INFO), 0, "%s: %s at %s (%s), bdi of %s.",
                               d->name, d->in.bdi.fs_type, d->in.bdi.mountpoint, d->in.identity,
                               d->in.bdi.source ?: "?");
        ra_tune_identified(m, d, previous);
        return true;
}

/*
 * Registers one bdi the scan found, and reports it to the tuning path
 * (Manager.on_object_seen) when it is to be decided: new, read again, or
 * known and retune asks. True when it was reported.
 */
static bool take_bdi(Manager *m, RaBdi *b, bool retune, const char *event) {
        RaDisk *d = ra_registry_find(m, b->name);
        const char *keys[4];
        int r;

        if (d && d->kind != RA_KIND_BDI)
                return false; /* cannot be: no disk is named like a bdi */
        /*
         * A FUSE or NFS bdi's name is its superblock's dev, used again by the
         * next mount: unmounted and mounted again between two scans, it is
         * another file system under the old name.
         */
        if (d && d->in.bdi.mount_id > 0 && b->mount_id > 0 && d->in.bdi.mount_id != b->mount_id) {
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
                if (!d->as_bdi.reread && (d->in.bdi.mountpoint || !b->mountpoint)) {
                        if (!retune || m->on_object_seen(m, d, event) < 0)
                                return false;
                } else if (!read_bdi(m, d, b, event))
                        return false;
        } else {
                if (!ra_users_may_manage(m, b))
                        return false;
                r = ra_registry_add(m, RA_KIND_BDI, b->name, &d);
                if (r < 0) {
                        log_error_errno(r, "%s: cannot track the bdi: %m", b->name);
                        return false;
                }
                d->seen = true;
                if (!read_bdi(m, d, b, event))
                        return false;
        }
        if (d->published)
                d->external = false;
        return true;
}

/* The bdis a scan or a mount under way found and reported: the tuning path decides them. */
static void settle(Manager *m) {
        mark_beneath(m);
        m->on_objects_read(m);
        ra_registry_changed(m);
}

/* A btrfs whose mount is under way is not in mountinfo yet, and is kept while its bdi is there. */
static bool mounting(const RaDisk *d) {
        return !d->in.bdi.mountpoint && ra_bdi_exists("/sys", d->name);
}

void ra_bdiscan_scan(Manager *m, const char *event) {
        /* A reload or a moved [path:] section decides again for the bdis it keeps, as for the disks. */
        bool retune = ra_streq(event, "reload") || ra_streq(event, "path"), forgot = false;
        RaBdi *v = NULL;
        size_t n = 0;
        int r;

        r = ra_mounts_bdis("/proc/self/mountinfo", "/sys", &v, &n);
        if (r < 0) {
                log_warning_errno(r, "Cannot read the mounts' bdis, ignoring: %m");
                return;
        }

        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i]->kind == RA_KIND_BDI)
                        m->disks[i]->seen = false;
        (void) ra_users_refused(m);
        for (size_t i = 0; i < n; i++)
                (void) take_bdi(m, &v[i], retune, event);

        for (size_t i = m->n_disks; i > 0; i--) {
                RaDisk *d = m->disks[i - 1];

                if (d->kind == RA_KIND_BDI && !d->seen && !mounting(d)) {
                        ra_tune_forget(m, d, LOG_INFO, "unmounted.");
                        forgot = true;
                }
        }
        /*
         * A user's mount refused at the cap while one of theirs went in the
         * same scan (an unmount and a mount between two scans): taken now,
         * not at some later scan. A bdi taken already left its entry empty.
         */
        if (forgot && ra_users_refused(m) > 0)
                for (size_t i = 0; i < n; i++)
                        if (v[i].name)
                                (void) take_bdi(m, &v[i], false, event);
        ra_bdi_array_free(v, n);
        settle(m);
}

bool ra_bdiscan_take(Manager *m, RaBdi *b, const char *event) {
        if (!take_bdi(m, b, false, event))
                return false;
        settle(m);
        return true;
}
