/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "ra-apply.h"
#include "ra-bdiwatch.h"
#include "ra-bus.h"
#include "ra-log.h"
#include "ra-manager.h"
#include "ra-sampler.h"
#include "ra-settings.h"
#include "ra-swapwatch.h"
#include "ra-udev.h"
#include "ra-util.h"

/*
 * A bdi whose udev "add" has not come through after this long: udevd is not
 * running, or lost it; writes from then on are somebody else's.
 */
#define UDEV_ADD_WAIT_USEC (30 * UINT64_C(1000000))

/* Someone who changes a value back this often a minute is left to it. */
#define REASSERT_MAX 3
#define REASSERT_WINDOW_USEC (60 * UINT64_C(1000000))

static int load_config(const char *path, RaConfig **ret) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        int r;

        r = ra_config_read(path, ret, &errors);
        for (size_t i = 0; errors && errors[i]; i++)
                log_error("%s", errors[i]);
        if (r == -ENOMEM)
                return log_oom();
        return r;
}

/*
 * A state file that exists but cannot be read must not be replaced by one that
 * knows nothing: its pins and true originals would be gone, and the values
 * radaemon wrote itself would become the originals. It is moved aside for
 * the administrator; where even that fails, nothing is saved at all.
 */
static void keep_unreadable_state(Manager *m, int error) {
        _cleanup_free_ char *from = NULL, *to = NULL;

        if (asprintf(&from, "%s/%s", m->state_dir, RA_STATE_FILE) < 0 ||
            asprintf(&to, "%s/%s.unreadable", m->state_dir, RA_STATE_FILE) < 0)
                return (void) log_oom();

        if (rename(from, to) >= 0) {
                log_warning_errno(error,
                                  "Cannot read %s (%m); moved it to %s, starting without what it held.",
                                  from, to);
                return;
        }

        log_warning_errno(error,
                          "Cannot read %s (%m), nor move it aside; nothing will be stored until it is fixed "
                          "and radaemon restarted.",
                          from);
        m->state_frozen = true;
        if (asprintf(&m->state_error, "Cannot read %s: %s", from, strerror(-error)) < 0)
                m->state_error = NULL;
}

/*
 * The state lives in the state directory. A state we cannot read costs what
 * it held, not the tuning: that is logged and radaemon starts without it.
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
                log_warning_errno(errno, "Cannot create %s, nothing will be stored: %m", m->state_dir);

        r = ra_state_load(m->state, m->state_dir, &errors);
        for (size_t i = 0; errors && errors[i]; i++)
                log_warning("%s/%s: %s; that line is skipped.", m->state_dir, RA_STATE_FILE, errors[i]);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && r != -EINVAL)
                keep_unreadable_state(m, r);

        m->restored = m->state->restored;
        if (m->restored)
                log_notice("The disks were restored to their values before radaemon; observing until a "
                           "reload.");
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
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return log_error_errno(r, "Not starting: the configuration is invalid.");

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

        ra_sampler_stop(m);
        ra_bdiwatch_stop(m);
        ra_sbmap_clear(&m->sbmap);
        free(m->learning_off);
        ra_swapwatch_free(m);
        sd_event_source_unref(m->bus_retry);
        ra_bus_close(m);
        sd_event_source_unref(m->monitor_source);
        sd_event_source_unref(m->trim);
        udev_monitor_unref(m->monitor);
        udev_unref(m->udev);
        sd_event_unref(m->event);
        ra_config_free(m->config);
        ra_state_free(m->state);
        free(m->state_dir);
        free(m->state_error);
        free(m->config_path);
        free(m);
        return NULL;
}

/* --- the registry ---------------------------------------------------------- */

RaDisk *ra_manager_find_disk(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (strcmp(m->disks[i]->name, name) == 0)
                        return m->disks[i];
        return NULL;
}

int ra_manager_add_disk(Manager *m, RaKind kind, const char *name, RaDisk **ret) {
        _cleanup_(ra_disk_freep) RaDisk *d = NULL;
        RaDisk **grown;
        int r;

        r = ra_disk_new(m, kind, name, &d);
        if (r < 0)
                return r;

        grown = realloc(m->disks, (m->n_disks + 1) * sizeof(RaDisk *));
        if (!grown)
                return -ENOMEM;

        m->disks = grown;
        m->disks[m->n_disks++] = d;
        ra_sampler_disks_changed(m);
        ra_manager_notify_status(m);
        *ret = TAKE_PTR(d);
        return 0;
}

void ra_manager_forget_disk(Manager *m, RaDisk *d, int level, const char *why) {
        log_full_errno(level, 0, "%s: %s", d->name, why);
        if (d->published)
                ra_bus_disk_removed(m, d);

        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i] == d) {
                        m->disks[i] = m->disks[--m->n_disks];
                        break;
                }
        ra_sampler_disks_changed(m);
        ra_disk_free(d);
        ra_manager_notify_status(m);
}

/* "3 disks", "1 disk and 2 bdis": what is managed, for the log and systemd's status. */
static void format_managed(const Manager *m, char *buf, size_t size) {
        size_t bdis = 0, disks;

        for (size_t i = 0; i < m->n_disks; i++)
                bdis += m->disks[i]->kind == RA_KIND_BDI;
        disks = m->n_disks - bdis;
        if (bdis == 0)
                (void) snprintf(buf, size, "%zu disk%s", disks, disks == 1 ? "" : "s");
        else
                (void) snprintf(buf, size, "%zu disk%s and %zu bdi%s", disks, disks == 1 ? "" : "s", bdis,
                                bdis == 1 ? "" : "s");
}

void ra_manager_notify_status(Manager *m) {
        char managed[64];

        /* Coldplug would say it once for each disk found. */
        if (!m->ready)
                return;
        format_managed(m, managed, sizeof(managed));
        (void) sd_notifyf(false, "STATUS=Managing %s%s.", managed,
                          ra_manager_observing(m) ? " in observe mode" : "");
}

void ra_manager_disk_identified(Manager *m, RaDisk *d, const char *previous_identity) {
        uint32_t learned;
        int r;

        /*
         * Before radaemon writes anything, what a device holds is what it had,
         * unless radaemon's udev helper already wrote it and says what was
         * there. Without a medium there is no device to speak of.
         */
        r = 0;
        if (d->attrs.size_bytes > 0)
                r = ra_state_remember_original(m->state, d->identity,
                                               d->attrs.has_original ? d->attrs.original_kb
                                                                     : d->attrs.read_ahead_kb);
        if (r > 0)
                m->state_dirty = true;
        else if (r < 0)
                log_warning_errno(r, "%s: cannot remember the original value: %m", d->name);

        /* Another medium behind the name: start from what is known about it. */
        if (ra_streq(previous_identity, d->identity))
                return;
        d->model = (RaModel){};
        d->trace = (RaTraceAccount){};
        d->pcache = (RaPcacheAccount){ .page_kb = ra_page_kb() };
        d->stat_usec = 0;
        learned = ra_state_learned(m->state, d->identity);
        if (learned > 0)
                ra_adapt_restore(&d->model, learned);
}

/* --- deciding and writing ------------------------------------------------- */

static bool decision_equal(const RaDecision *a, const RaDecision *b) {
        return a->kb == b->kb && a->source == b->source && strcmp(a->reason, b->reason) == 0;
}

static void write_decision(Manager *m, RaDisk *d, const char *event) {
        const RaDecision *want = &d->decision;
        uint32_t before = d->attrs.read_ahead_kb, now = before;
        _cleanup_close_ int sysfd = -1;
        int r;

        sysfd = ra_disk_open_sysfs(d);
        r = sysfd < 0 ? sysfd : ra_apply_read_ahead(sysfd, d->knob_attr, want->kb, &now);
        d->attrs.read_ahead_kb = now;

        if (r == -ENODEV) {
                log_debug("%s: gone before read_ahead_kb could be written.", d->name);
                return;
        }

        /* A write that keeps failing is logged once, not every interval. */
        if (r < 0) {
                if (r != d->write_error) {
                        if (r == -EIO)
                                log_warning("%s: wrote %" PRIu32
                                            " KiB to read_ahead_kb, but the kernel holds "
                                            "%" PRIu32 " KiB.",
                                            d->name, want->kb, now);
                        else
                                log_warning_errno(r, "%s: cannot write %" PRIu32 " KiB to read_ahead_kb: %m",
                                                  d->name, want->kb);
                }
                d->write_error = r;
                return;
        }

        if (d->write_error != 0)
                log_info("%s: read_ahead_kb can be written again.", d->name);
        d->write_error = 0;
        d->decisions++;
        log_disk(LOG_INFO, RA_LOG_DECISION, d->name, now, ra_source_to_string(want->source),
                 "%s: read_ahead_kb %" PRIu32 " -> %" PRIu32 " KiB (%s, on %s): %s", d->name, before, now,
                 ra_source_to_string(want->source), event, want->reason);
}

/*
 * "stays at" is said only of what sysfs holds: a value tracked from before a
 * write (ours or another's) is written again, and logged as the write it is.
 */
/* Yielding: the value to keep is what sysfs holds now, not what was tracked. */
static void track_sysfs(RaDisk *d) {
        _cleanup_close_ int sysfd = ra_disk_open_sysfs(d);
        uint32_t now;

        if (sysfd >= 0 && ra_apply_read_current(sysfd, d->knob_attr, &now) >= 0)
                d->attrs.read_ahead_kb = now;
}

/*
 * Before saying a value "stays": whether sysfs still holds it. A value that
 * moved since it was last read (a FUSE server's INIT answer, a udev rule, the
 * kernel, somebody) goes through the drift check, which knows each of them
 * and decides; deciding over it here would write over a server's answer.
 */
static bool sysfs_moved(Manager *m, RaDisk *d) {
        _cleanup_close_ int sysfd = ra_disk_open_sysfs(d);
        uint32_t now;

        if (sysfd < 0 || ra_apply_read_current(sysfd, d->knob_attr, &now) < 0 ||
            now == d->attrs.read_ahead_kb)
                return false;
        ra_manager_check_drift(m, d, now);
        return true;
}

void ra_manager_tune_disk(Manager *m, RaDisk *d, const char *event) {
        RaDecision previous = d->decision;
        bool news;

        if (d->kind == RA_KIND_BDI) {
                const char *keys[4];

                ra_bdi_keys(&d->bdi, keys);
                ra_settings_for_bdi(m->config, m->state, keys, d->identity, &d->settings);
                ra_bdi_prior(&d->bdi, d->beneath_kb, d->server_kb, ra_policy_bounds(&d->attrs, &d->settings),
                             &d->bdi_prior);
                d->settings.prior = &d->bdi_prior;
        } else {
                ra_settings_for_device(m->config, m->state, d->name, d->identity, &d->settings);
                if (ra_stack_decide(d->stack_read, d->stack, d->beneath_kb,
                                    ra_policy_bounds(&d->attrs, &d->settings), &d->bdi_prior))
                        d->settings.prior = &d->bdi_prior;
        }
        if (d->external)
                track_sysfs(d);
        /* What this run has learned, and whether it yields, are newer than the store. */
        d->settings.learned_kb = d->model.learned_kb;
        d->settings.learned_reason = d->model.reason;
        d->settings.external = d->external;
        ra_policy_decide(&d->attrs, &d->settings, &d->decision);

        /* An event that changes nothing is not worth an info line. */
        news = !d->announced || !decision_equal(&previous, &d->decision);
        d->announced = true;

        if (d->decision.kb == 0)
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0, "%s: %s", d->name, d->decision.reason);
        else if (d->decision.kb == d->attrs.read_ahead_kb) {
                if (!sysfs_moved(m, d))
                        log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0,
                                       "%s: read_ahead_kb stays at %" PRIu32 " KiB (%s, on %s): %s", d->name,
                                       d->decision.kb, ra_source_to_string(d->decision.source), event,
                                       d->decision.reason);
        } else if (ra_manager_observing(m))
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0,
                               "%s: would change read_ahead_kb %" PRIu32 " -> %" PRIu32
                               " KiB (%s, on %s; observe mode): %s",
                               d->name, d->attrs.read_ahead_kb, d->decision.kb,
                               ra_source_to_string(d->decision.source), event, d->decision.reason);
        else
                write_decision(m, d, event);
}

/* Decides again for every disk with this identity and tells the bus what changed. */
static void retune_identity(Manager *m, const char *identity, const char *event) {
        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *d = m->disks[i];
                RaDiskSnapshot before;

                if (!ra_streq(d->identity, identity) || ra_disk_snapshot(d, &before) < 0)
                        continue;
                d->external = false;
                ra_manager_tune_disk(m, d, event);
                ra_bus_disk_changed(m, d, &before);
                ra_disk_snapshot_clear(&before);
        }
}

/* --- the state store ------------------------------------------------------- */

/*
 * ret_replaced (may be NULL) says whether the file on disk holds the new
 * state, even when the save then failed: see ra_state_save().
 */
static int save_state(Manager *m, bool *ret_replaced) {
        _cleanup_free_ char *error = NULL;
        bool replaced = false;
        int r;

        if (ret_replaced)
                *ret_replaced = false;
        if (m->state_frozen)
                return -EROFS;

        r = ra_state_save(m->state, m->state_dir, &replaced);
        if (ret_replaced)
                *ret_replaced = replaced;
        if (r >= 0) {
                m->state_dirty = false;
                if (m->state_error) {
                        log_info("%s/%s can be written again.", m->state_dir, RA_STATE_FILE);
                        m->state_error = mfree(m->state_error);
                        ra_bus_manager_changed(m, "StateError");
                }
                return 0;
        }

        if (asprintf(&error, "Cannot write %s/%s: %s", m->state_dir, RA_STATE_FILE, strerror(-r)) < 0)
                return -ENOMEM;
        if (!ra_streq(error, m->state_error)) {
                log_warning("%s; original, pinned and learned values are kept in memory until it can be.",
                            error);
                free(m->state_error);
                m->state_error = TAKE_PTR(error);
                ra_bus_manager_changed(m, "StateError");
        }
        return r;
}

int ra_manager_flush_state(Manager *m) {
        return m->state_dirty ? save_state(m, NULL) : 0;
}

/* --- lifecycle -------------------------------------------------------------- */

int ra_manager_start(Manager *m) {
        char managed[64];
        int r;

        /* Subscribe first, so nothing that appears during the walk is missed. */
        r = ra_udev_watch(m);
        if (r < 0)
                return r;

        r = ra_udev_enumerate(m, "coldplug");
        if (r < 0)
                return r;

        /* After the disks: a bdi's prior comes from the disks beneath it. */
        (void) ra_bdiwatch_start(m);

        r = ra_swapwatch_start(m);
        if (r < 0)
                return r;

        /* Only now take the name: a client that sees it finds every disk. */
        r = ra_bus_open(m);
        if (r < 0)
                return r;

        r = ra_sampler_start(m);
        if (r < 0)
                return r;

        format_managed(m, managed, sizeof(managed));
        log_info("Managing %s%s.", managed,
                 ra_manager_observing(m) ? " in observe mode: nothing is written" : "");
        (void) sd_notify(false, "READY=1");
        m->ready = true;
        ra_manager_notify_status(m);
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
                if (m->restored) {
                        m->restored = m->state->restored = false;
                        m->state_dirty = true;
                }
                if (!ra_streq(c->state_dir, m->state_dir))
                        log_notice("state_dir is now %s, but the state stays in %s until radaemon restarts.",
                                   c->state_dir, m->state_dir);
                if (was_observing != ra_manager_observing(m))
                        ra_bus_manager_changed(m, "Mode");
                r = ra_udev_enumerate(m, "reload");
                ra_bdiwatch_scan(m, "reload");
                ra_swapwatch_tune(m, "reload");
                /* tracefs may have been mounted since. */
                if (m->sampler)
                        ra_sampler_open_tracer(m);
                /* Said once every disk has been decided again under the new configuration. */
                log_info("Configuration reloaded.");
        }

        (void) sd_notify(false, "READY=1");
        ra_manager_notify_status(m);
        return r;
}

/* --- what the bus, the sampler and signals ask for --------------------------- */

/*
 * Saves a pin change. When the file was not replaced, *e goes back to saved
 * and nothing changed; when it was but its durability is unconfirmed, memory
 * keeps what the file holds, and the caller is still told of the failure.
 */
static int save_pin(Manager *m, RaStateEntry *e, const RaStateEntry *saved) {
        bool replaced;
        int r;

        r = save_state(m, &replaced);
        if (r < 0 && !replaced)
                *e = *saved;
        return r;
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
                r = save_pin(m, e, &saved);
        } else
                e->runtime_pin_kb = kb;

        if (e->pin_kb != saved.pin_kb || e->runtime_pin_kb != saved.runtime_pin_kb) {
                log_disk(LOG_INFO, RA_LOG_PIN, d->name, kb, "pinned",
                         "%s: pinned to %" PRIu32 " KiB by uid %u over D-Bus, %s %s.", d->name, kb,
                         (unsigned) uid, persist ? "stored for" : "until radaemon stops, for", d->identity);
                retune_identity(m, e->identity, "pin");
        }
        return r;
}

int ra_manager_clear_pin(Manager *m, RaDisk *d, uid_t uid) {
        RaStateEntry *e = ra_state_find(m->state, d->identity), saved;
        int r = 0;

        if (!e || (e->pin_kb == 0 && e->runtime_pin_kb == 0)) {
                log_info("%s: no pin to clear (asked by uid %u).", d->name, (unsigned) uid);
                retune_identity(m, d->identity, "unpin");
                return 0;
        }

        saved = *e;
        e->runtime_pin_kb = 0;
        if (e->pin_kb > 0) {
                e->pin_kb = 0;
                r = save_pin(m, e, &saved);
        }

        if (e->pin_kb != saved.pin_kb || e->runtime_pin_kb != saved.runtime_pin_kb) {
                log_disk(LOG_INFO, RA_LOG_PIN, d->name, 0, "",
                         "%s: pin cleared by uid %u over D-Bus; radaemon decides again.", d->name,
                         (unsigned) uid);
                retune_identity(m, e->identity, "unpin");
        }
        return r;
}

void ra_manager_learned(Manager *m, RaDisk *d) {
        RaStateEntry *e;
        int r;

        log_debug("%s: learned %" PRIu32 " KiB: %s", d->name, d->model.learned_kb, d->model.reason);

        /* Kept for the next plug of this device, and for the udev helper: saved at the end of the interval.
         */
        r = ra_state_ensure(m->state, d->identity, &e);
        if (r >= 0) {
                e->learned_kb = d->model.learned_kb;
                m->state_dirty = true;
        }

        ra_manager_tune_disk(m, d, "learning");
}

/*
 * Whether kb is the kernel's own value for a stacked device's limits as they
 * are now. The size and optimal I/O size are read again on the way: the
 * resume that stacked them again may have changed both (a dm table reload,
 * whose "change" event comes after), and a decision from the old size would
 * be written only to be undone.
 */
static bool restacked(RaDisk *d, uint32_t kb) {
        _cleanup_(ra_device_attrs_clear) RaDeviceAttrs now = {};
        _cleanup_close_ int sysfd = -1;
        const char *bad = NULL;

        if (!d->stack)
                return false;
        sysfd = ra_disk_open_sysfs(d);
        if (sysfd < 0 || ra_device_attrs_read_sysfs(&now, sysfd, &bad) < 0 ||
            kb != ra_policy_kernel_kb(now.optimal_io_bytes))
                return false;
        d->attrs.size_bytes = now.size_bytes;
        d->attrs.optimal_io_bytes = now.optimal_io_bytes;
        return true;
}

void ra_manager_check_drift(Manager *m, RaDisk *d, uint32_t kb) {
        uint32_t was = d->attrs.read_ahead_kb;
        RaStateEntry *e;
        uint64_t now;

        if (kb == was)
                return;
        d->attrs.read_ahead_kb = kb;
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);

        /*
         * mount(2) returns before a FUSE server answers INIT, and its answer
         * lowers the window to the server's max_readahead: that is the
         * server's word on what is behind it, the prior, not someone else's.
         * A value radaemon wrote before the answer (a pin, a learned one)
         * comes down with it: deciding again writes it back.
         */
        if (d->kind == RA_KIND_BDI &&
            ra_bdi_fuse_init_answer(&d->bdi, d->fuse_init_pending_since > 0,
                                    now - d->fuse_init_pending_since, d->server_kb, was, kb)) {
                log_info("%s: the FUSE server lowered the window to %" PRIu32 " KiB at INIT.", d->name, kb);
                d->fuse_init_pending_since = 0;
                d->server_kb = kb;
                /*
                 * What the file system was given, where the state remembered
                 * the kernel's offer: the next mount starts from the answer
                 * (found after INIT, it holds the answer, not radaemon's value),
                 * and Restore goes back to it.
                 */
                if (ra_state_ensure(m->state, d->identity, &e) >= 0 &&
                    (!e->has_original || e->original_kb != kb)) {
                        e->original_kb = kb;
                        e->has_original = true;
                        m->state_dirty = true;
                }
                ra_manager_tune_disk(m, d, "fuse init");
                return;
        }

        /*
         * Written while udevd runs the bdi's "add" (nfs-common's nfsrahead for
         * NFS): the system's starting value, its original for Restore, not
         * an external change. radaemon's decision stands, and is written once
         * udevd is done (the scan of its "add" decides again), so the two
         * settle instead of taking turns.
         */
        if (d->kind == RA_KIND_BDI && d->udev_add_pending_since > 0 &&
            now - d->udev_add_pending_since <= UDEV_ADD_WAIT_USEC) {
                log_disk(LOG_INFO, RA_LOG_EXTERNAL, d->name, kb, "udev",
                         "%s: read_ahead_kb went from %" PRIu32 " to %" PRIu32
                         " KiB during its udev add event (a udev rule, such as nfs-common's nfsrahead): "
                         "its starting value; radaemon writes %" PRIu32 " KiB when udev is done.",
                         d->name, was, kb, d->decision.kb);
                if (ra_state_ensure(m->state, d->identity, &e) >= 0 &&
                    (!e->has_original || e->original_kb != kb)) {
                        e->original_kb = kb;
                        e->has_original = true;
                        m->state_dirty = true;
                }
                return;
        }

        /*
         * dm and md stack the limits of the devices beneath again when one
         * comes or goes, and the kernel then puts the window back to its own
         * value for them, with no event after (Debian 12's 6.1, a member
         * added to a RAID1): the kernel re-reading the device, as a disk's
         * "change" is, not somebody's choice. radaemon decides again.
         */
        if (!d->external && kb != d->decision.kb && restacked(d, kb)) {
                log_info("%s: read_ahead_kb went from %" PRIu32 " to %" PRIu32
                         " KiB, the kernel's value for its limits: it stacked the devices beneath "
                         "again; deciding again.",
                         d->name, was, kb);
                ra_manager_tune_disk(m, d, "restack");
                return;
        }

        /* Yielding already: the target is whatever is there. */
        if (d->external) {
                ra_manager_tune_disk(m, d, "external change");
                return;
        }

        /* Nothing to defend: observing, no medium, or our own value. */
        if (ra_manager_observing(m) || d->decision.kb == 0 || kb == d->decision.kb)
                return;

        if (now - d->reassert_since > REASSERT_WINDOW_USEC) {
                d->reassert_since = now;
                d->reasserts = 0;
        }

        if (m->config->external == RA_EXTERNAL_REASSERT && d->reasserts < REASSERT_MAX) {
                d->reasserts++;
                log_disk(LOG_INFO, RA_LOG_EXTERNAL, d->name, kb, "external",
                         "%s: read_ahead_kb went from %" PRIu32 " to %" PRIu32
                         " KiB behind radaemon's back; "
                         "writing %" PRIu32 " KiB again (external_changes = reassert).",
                         d->name, was, kb, d->decision.kb);
                write_decision(m, d, "reassert");
                return;
        }

        if (m->config->external == RA_EXTERNAL_REASSERT)
                log_disk(LOG_INFO, RA_LOG_EXTERNAL, d->name, kb, "external",
                         "%s: read_ahead_kb was changed behind radaemon's back %u times within a minute; "
                         "leaving it at %" PRIu32 " KiB.",
                         d->name, d->reasserts + 1, kb);
        else
                log_disk(LOG_INFO, RA_LOG_EXTERNAL, d->name, kb, "external",
                         "%s: read_ahead_kb went from %" PRIu32 " to %" PRIu32
                         " KiB behind radaemon's back; "
                         "leaving it (external_changes = yield).",
                         d->name, was, kb);
        d->external = true;
        ra_manager_tune_disk(m, d, "external change");
}

unsigned ra_manager_restore(Manager *m, bool stay, const char *why) {
        unsigned n = 0;

        /*
         * Whatever the mode: observing now says nothing of what radaemon (or
         * its udev helper) wrote before.
         */
        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *d = m->disks[i];
                const RaStateEntry *e = ra_state_find(m->state, d->identity);
                _cleanup_close_ int sysfd = -1;
                uint32_t now = d->attrs.read_ahead_kb;
                RaDiskSnapshot before;
                int r;

                if (!e || !e->has_original || ra_disk_snapshot(d, &before) < 0)
                        continue;

                sysfd = ra_disk_open_sysfs(d);
                r = sysfd < 0 ? sysfd : ra_apply_read_ahead(sysfd, d->knob_attr, e->original_kb, &now);
                if (r < 0 && r != -ENODEV)
                        log_warning_errno(r, "%s: cannot put back the original %" PRIu32 " KiB: %m", d->name,
                                          e->original_kb);
                else if (r >= 0) {
                        log_disk(LOG_INFO, RA_LOG_RESTORE, d->name, now, "original",
                                 "%s: read_ahead_kb %" PRIu32 " -> %" PRIu32
                                 " KiB, its value before radaemon (%s).",
                                 d->name, d->attrs.read_ahead_kb, now, why);
                        d->attrs.read_ahead_kb = now;
                        n++;
                }
                ra_bus_disk_changed(m, d, &before);
                ra_disk_snapshot_clear(&before);
        }

        /* vm.page-cluster counts as one more value put back. */
        n += (unsigned) ra_swapwatch_restore(m, why);

        if (stay && !m->restored) {
                m->restored = m->state->restored = true;
                (void) save_state(m, NULL);
                ra_bus_manager_changed(m, "Mode");
                ra_manager_notify_status(m);
        }
        return n;
}
