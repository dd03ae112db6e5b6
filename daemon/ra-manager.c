/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "ra-apply.h"
#include "ra-bus.h"
#include "ra-log.h"
#include "ra-manager.h"
#include "ra-settings.h"
#include "ra-util.h"

/* Enough for hundreds of disks appearing at once without ENOBUFS. */
#define MONITOR_BUFFER_BYTES (128 * 1024 * 1024)

static int load_config(const char *path, RaConfig **ret) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        int r;

        r = ra_config_new(&c);
        if (r < 0)
                return r;

        if (path)
                r = ra_config_parse_file(c, path, &errors);
        else
                r = ra_config_load(c, RA_CONFIG_FILE, RA_CONFIG_DROPIN_DIR, &errors);

        for (size_t i = 0; errors && errors[i]; i++)
                log_error("%s", errors[i]);
        if (r == -ENOMEM)
                return log_error_errno(r, "Out of memory while reading the configuration.");
        if (r < 0)
                return r;

        *ret = TAKE_PTR(c);
        return 0;
}

/*
 * Pins live in the state directory. A state we cannot read costs the pins,
 * not the tuning: it is logged and radaemon starts without them.
 */
static int load_state(Manager *m) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        int r;

        m->state_dir = strdup(m->config->state_dir);
        if (!m->state_dir)
                return -ENOMEM;

        r = ra_state_new(&m->state);
        if (r < 0)
                return r;

        if (mkdir(m->state_dir, 0755) < 0 && errno != EEXIST)
                log_warning_errno(errno, "Cannot create %s, pins will not be stored: %m", m->state_dir);

        r = ra_state_load(m->state, m->state_dir, &errors);
        for (size_t i = 0; errors && errors[i]; i++)
                log_warning("%s/%s: %s; that line is skipped.", m->state_dir, RA_STATE_FILE, errors[i]);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && r != -EINVAL)
                log_warning_errno(r, "Cannot read %s/%s, starting without stored pins: %m", m->state_dir,
                                  RA_STATE_FILE);
        return 0;
}

int ra_manager_new(const char *config_path, bool force_observe, Manager **ret) {
        _cleanup_(ra_manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;

        m->force_observe = force_observe;
        if (config_path) {
                m->config_path = strdup(config_path);
                if (!m->config_path)
                        return -ENOMEM;
        }

        r = load_config(m->config_path, &m->config);
        if (r < 0)
                return r;

        r = load_state(m);
        if (r < 0)
                return r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Cannot create the event loop: %m");

        m->udev = udev_new();
        if (!m->udev)
                return log_error_errno(ENOMEM, "Cannot create the udev context: %m");

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *ra_manager_free(Manager *m) {
        if (!m)
                return NULL;

        for (size_t i = 0; i < m->n_disks; i++)
                ra_disk_free(m->disks[i]);
        free(m->disks);

        ra_bus_close(m);
        sd_event_source_unref(m->monitor_source);
        udev_monitor_unref(m->monitor);
        udev_unref(m->udev);
        sd_event_unref(m->event);
        ra_config_free(m->config);
        ra_state_free(m->state);
        free(m->state_dir);
        free(m->config_path);
        free(m);
        return NULL;
}

RaDisk *ra_manager_find_disk(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (strcmp(m->disks[i]->name, name) == 0)
                        return m->disks[i];
        return NULL;
}

static int add_disk(Manager *m, const char *name, RaDisk **ret) {
        _cleanup_(ra_disk_freep) RaDisk *d = NULL;
        RaDisk **grown;
        int r;

        r = ra_disk_new(m, name, &d);
        if (r < 0)
                return r;

        grown = realloc(m->disks, (m->n_disks + 1) * sizeof(RaDisk *));
        if (!grown)
                return -ENOMEM;

        m->disks = grown;
        m->disks[m->n_disks++] = d;
        *ret = TAKE_PTR(d);
        return 0;
}

static void drop_disk(Manager *m, RaDisk *d) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i] == d) {
                        m->disks[i] = m->disks[--m->n_disks];
                        break;
                }
        ra_disk_free(d);
}

static void notify_status(Manager *m) {
        (void) sd_notifyf(false, "STATUS=Managing %zu disk%s%s.", m->n_disks, m->n_disks == 1 ? "" : "s",
                          ra_manager_observing(m) ? " in observe mode" : "");
}

static bool decision_equal(const RaDecision *a, const RaDecision *b) {
        return a->kb == b->kb && a->source == b->source && strcmp(a->reason, b->reason) == 0;
}

static void write_decision(Manager *m, RaDisk *d, const char *event) {
        const RaDecision *want = &d->decision;
        const char *source = ra_source_to_string(want->source);
        uint32_t before = d->attrs.read_ahead_kb, now = before;
        _cleanup_close_ int sysfd = -1;
        int r;

        sysfd = ra_disk_open_sysfs(d);
        r = sysfd < 0 ? sysfd : ra_apply_read_ahead(sysfd, want->kb, &now);
        d->attrs.read_ahead_kb = now;

        if (r == -ENODEV)
                log_debug("%s: gone before read_ahead_kb could be written.", d->name);
        else if (r == -EIO)
                log_warning("%s: wrote %" PRIu32 " KiB to read_ahead_kb, but the kernel holds %" PRIu32
                            " KiB.",
                            d->name, want->kb, now);
        else if (r < 0)
                log_warning_errno(r, "%s: cannot write %" PRIu32 " KiB to read_ahead_kb: %m", d->name,
                                  want->kb);
        else
                log_info("%s: read_ahead_kb %" PRIu32 " -> %" PRIu32 " KiB (%s, on %s): %s", d->name, before,
                         now, source, event, want->reason);
}

/* Decides, and writes unless the value is already there or we only observe. */
static void tune_disk(Manager *m, RaDisk *d, const char *event) {
        RaDecision previous = d->decision;
        bool news;

        ra_settings_for_device(m->config, m->state, d->name, d->identity, &d->settings);
        ra_policy_decide(&d->attrs, &d->settings, &d->decision);

        /* A change event that changes nothing is not worth an info line. */
        news = !d->announced || !decision_equal(&previous, &d->decision);
        d->announced = true;

        if (d->decision.kb == 0)
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0, "%s: %s", d->name, d->decision.reason);
        else if (d->decision.kb == d->attrs.read_ahead_kb)
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0,
                               "%s: read_ahead_kb stays at %" PRIu32 " KiB (%s, on %s): %s", d->name,
                               d->decision.kb, ra_source_to_string(d->decision.source), event,
                               d->decision.reason);
        else if (ra_manager_observing(m))
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0,
                               "%s: would change read_ahead_kb %" PRIu32 " -> %" PRIu32
                               " KiB (%s, on %s; observe mode): %s",
                               d->name, d->attrs.read_ahead_kb, d->decision.kb,
                               ra_source_to_string(d->decision.source), event, d->decision.reason);
        else
                write_decision(m, d, event);
}

/* Drops a disk from the registry, and from the bus if clients saw it there. */
static void forget_disk(Manager *m, RaDisk *d, int level, const char *why) {
        log_full_errno(level, 0, "%s: %s", d->name, why);
        if (d->published)
                ra_bus_disk_removed(m, d);
        drop_disk(m, d);
        notify_status(m);
}

/* Re-reads a disk the registry holds; false when it was dropped. */
static bool update_disk(Manager *m, RaDisk *d, struct udev_device *dev) {
        const char *bad = NULL;
        int r;

        r = ra_disk_update(d, dev, &bad);
        if (r == -ENODEV) {
                forget_disk(m, d, LOG_DEBUG, "gone, or without queue/read_ahead_kb; not managed.");
                return false;
        }
        if (r == -EINVAL && bad)
                log_warning("%s: ignoring %s=%s from udev: not a multiple of 4 from %u to %u (KiB) "
                            "or a boolean.",
                            d->name, bad, udev_device_get_property_value(dev, bad), RA_KB_MIN, RA_KB_LIMIT);
        else if (r < 0) {
                log_warning_errno(r, "%s: cannot read the device: %m", d->name);
                forget_disk(m, d, LOG_WARNING, "leaving it alone.");
                return false;
        }

        if (d->attrs.ignore) {
                forget_disk(m, d, LOG_INFO, "RADAEMON_IGNORE is set by a udev rule; leaving it alone.");
                return false;
        }
        return true;
}

/* One udev event, or one disk found by an enumeration ("coldplug", "reload"). */
static void handle_device(Manager *m, struct udev_device *dev, const char *event) {
        const char *name = udev_device_get_sysname(dev);
        RaDiskSnapshot before = {};
        RaDisk *d;
        int r;

        if (!name || !ra_streq(udev_device_get_devtype(dev), "disk"))
                return;

        d = ra_manager_find_disk(m, name);

        if (ra_streq(event, "remove")) {
                if (d)
                        forget_disk(m, d, LOG_INFO, "removed.");
                return;
        }

        if (!ra_config_manages(m->config, name)) {
                if (d)
                        forget_disk(m, d, LOG_INFO, "no longer managed: not in devices= or in ignore=.");
                return;
        }

        if (!d) {
                r = add_disk(m, name, &d);
                if (r < 0) {
                        log_error_errno(r, "%s: cannot track the disk: %m", name);
                        return;
                }
                notify_status(m);
        } else if (ra_disk_snapshot(d, &before) < 0) {
                log_error_errno(ENOMEM, "%s: cannot handle the %s event: %m", name, event);
                return;
        }
        d->seen = true;

        if (update_disk(m, d, dev)) {
                tune_disk(m, d, event);
                if (d->published)
                        ra_bus_disk_changed(m, d, &before);
                else
                        ra_bus_disk_added(m, d);
        }
        ra_disk_snapshot_clear(&before);
}

/*
 * Walks every block disk there is: at start (coldplug), after a reload, and
 * after the monitor lost events. Disks we track that are no longer there are
 * dropped, so the registry matches the system afterwards.
 */
static int enumerate_disks(Manager *m, const char *event) {
        struct udev_enumerate *e;
        struct udev_list_entry *item;
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
                m->disks[i]->seen = false;

        udev_list_entry_foreach (item, udev_enumerate_get_list_entry(e)) {
                struct udev_device *dev;

                dev = udev_device_new_from_syspath(m->udev, udev_list_entry_get_name(item));
                if (!dev)
                        continue; /* gone since the scan */
                handle_device(m, dev, event);
                udev_device_unref(dev);
        }
        udev_enumerate_unref(e);

        for (size_t i = m->n_disks; i > 0; i--)
                if (!m->disks[i - 1]->seen)
                        forget_disk(m, m->disks[i - 1], LOG_INFO, "gone while no events arrived.");

        return 0;
}

static int on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        for (;;) {
                struct udev_device *dev;
                const char *action;

                errno = 0;
                dev = udev_monitor_receive_device(m->monitor);
                if (!dev)
                        break;

                action = udev_device_get_action(dev) ?: "change";
                log_debug("%s: %s event.", udev_device_get_sysname(dev), action);
                handle_device(m, dev, action);
                udev_device_unref(dev);
        }

        /* The socket overflowed: events are lost, so look at everything again. */
        if (errno == ENOBUFS) {
                log_warning("Missed udev events (receive buffer overrun); re-reading every disk.");
                (void) enumerate_disks(m, "overrun");
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

static int watch_udev(Manager *m) {
        int r;

        m->monitor = udev_monitor_new_from_netlink(m->udev, "udev");
        if (!m->monitor)
                return log_error_errno(errno ?: ENOMEM, "Cannot create the udev monitor: %m");

        r = udev_monitor_filter_add_match_subsystem_devtype(m->monitor, "block", "disk");
        if (r < 0)
                return log_error_errno(r, "Cannot filter udev events: %m");

        r = udev_monitor_set_receive_buffer_size(m->monitor, MONITOR_BUFFER_BYTES);
        if (r < 0)
                log_debug_errno(r, "Cannot enlarge the udev receive buffer, ignoring: %m");

        r = udev_monitor_enable_receiving(m->monitor);
        if (r < 0)
                return log_error_errno(r, "Cannot listen to udev events: %m");

        r = sd_event_add_io(m->event, &m->monitor_source, udev_monitor_get_fd(m->monitor), EPOLLIN,
                            on_monitor, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch udev events: %m");

        if (!udevd_runs())
                log_warning("udevd does not seem to run: disks are tuned now, but no hotplug "
                            "events will arrive.");
        return 0;
}

int ra_manager_start(Manager *m) {
        int r;

        /* Subscribe first, so nothing that appears during the walk is missed. */
        r = watch_udev(m);
        if (r < 0)
                return r;

        r = enumerate_disks(m, "coldplug");
        if (r < 0)
                return r;

        /* Only now take the name: a client that sees it finds every disk. */
        r = ra_bus_open(m);
        if (r < 0)
                return r;

        log_info("Managing %zu disk%s%s.", m->n_disks, m->n_disks == 1 ? "" : "s",
                 ra_manager_observing(m) ? " in observe mode: nothing is written" : "");
        (void) sd_notify(false, "READY=1");
        notify_status(m);
        return 0;
}

int ra_manager_reload(Manager *m) {
        RaConfig *c = NULL;
        int r;

        (void) sd_notify(false, "RELOADING=1");

        r = load_config(m->config_path, &c);
        if (r < 0)
                log_error("Reloading failed; keeping the previous configuration.");
        else {
                bool was_observing = ra_manager_observing(m);

                ra_config_free(m->config);
                m->config = c;
                log_info("Configuration reloaded.");
                if (!ra_streq(c->state_dir, m->state_dir))
                        log_notice("state_dir is now %s, but pins stay in %s until radaemon restarts.",
                                   c->state_dir, m->state_dir);
                if (was_observing != ra_manager_observing(m))
                        ra_bus_mode_changed(m);
                r = enumerate_disks(m, "reload");
        }

        (void) sd_notify(false, "READY=1");
        notify_status(m);
        return r;
}

/* Decides again for every disk with this identity and tells the bus what changed. */
static void retune_identity(Manager *m, const char *identity, const char *event) {
        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *d = m->disks[i];
                RaDiskSnapshot before;

                if (!ra_streq(d->identity, identity) || ra_disk_snapshot(d, &before) < 0)
                        continue;
                tune_disk(m, d, event);
                ra_bus_disk_changed(m, d, &before);
                ra_disk_snapshot_clear(&before);
        }
}

int ra_manager_set_pin(Manager *m, RaDisk *d, uint32_t kb, bool persist, uid_t uid) {
        RaStateEntry *e, saved;
        int r;

        r = ra_state_ensure(m->state, d->identity, &e);
        if (r < 0)
                return r;

        saved = *e;
        if (persist) {
                e->pin_kb = kb;
                e->runtime_pin_kb = 0;
                r = ra_state_save(m->state, m->state_dir);
                if (r < 0) {
                        *e = saved;
                        return log_warning_errno(r, "%s: cannot store the pin in %s: %m", d->name,
                                                 m->state_dir);
                }
        } else
                e->runtime_pin_kb = kb;

        log_info("%s: pinned to %" PRIu32 " KiB by uid %u over D-Bus, %s %s.", d->name, kb, (unsigned) uid,
                 persist ? "stored for" : "until radaemon stops, for", d->identity);
        retune_identity(m, e->identity, "pin");
        return 0;
}

int ra_manager_clear_pin(Manager *m, RaDisk *d, uid_t uid) {
        RaStateEntry *e = ra_state_find(m->state, d->identity), saved;
        int r;

        if (!e || (e->pin_kb == 0 && e->runtime_pin_kb == 0)) {
                log_info("%s: no pin to clear (asked by uid %u).", d->name, (unsigned) uid);
                return 0;
        }

        saved = *e;
        e->runtime_pin_kb = 0;
        if (e->pin_kb > 0) {
                e->pin_kb = 0;
                r = ra_state_save(m->state, m->state_dir);
                if (r < 0) {
                        *e = saved;
                        return log_warning_errno(r, "%s: cannot remove the pin from %s: %m", d->name,
                                                 m->state_dir);
                }
        }

        log_info("%s: pin cleared by uid %u over D-Bus; radaemon decides again.", d->name, (unsigned) uid);
        retune_identity(m, e->identity, "unpin");
        return 0;
}
