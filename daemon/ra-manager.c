/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "ra-bdiwatch.h"
#include "ra-bus.h"
#include "ra-log.h"
#include "ra-manager.h"
#include "ra-sampler.h"
#include "ra-swapwatch.h"
#include "ra-tune.h"
#include "ra-udev.h"
#include "ra-util.h"

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
                m->state_dirty = m->original_unsaved = true;
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

/* Decides again for every disk with this identity and tells the bus what changed. */
static void retune_identity(Manager *m, const char *identity, const char *event) {
        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *d = m->disks[i];
                RaTune t;

                if (!ra_streq(d->identity, identity) || ra_tune_begin(d, &t) < 0)
                        continue;
                d->external = false;
                ra_tune_commit(m, &t, event);
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
                m->state_dirty = m->original_unsaved = false;
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
}

unsigned ra_manager_restore(Manager *m, bool stay, const char *why) {
        unsigned n = 0;

        /*
         * Whatever the mode: observing now says nothing of what radaemon (or
         * its udev helper) wrote before.
         */
        for (size_t i = 0; i < m->n_disks; i++)
                n += ra_tune_restore(m, m->disks[i], why);

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
