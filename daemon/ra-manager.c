/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <string.h>
#include <systemd/sd-daemon.h>

#include "ra-bdiwatch.h"
#include "ra-bus.h"
#include "ra-calib-sched.h"
#include "ra-log.h"
#include "ra-manager.h"
#include "ra-observe.h"
#include "ra-pathwatch.h"
#include "ra-registry.h"
#include "ra-sampler.h"
#include "ra-state-store.h"
#include "ra-swapwatch.h"
#include "ra-tune-swap.h"
#include "ra-tune.h"
#include "ra-udev.h"
#include "ra-users.h"
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
 * At start a bad line costs its section, not the start: a daemon that does
 * not start at boot tunes nothing, and nobody may be there to see why
 * (ra_config_read_lenient()). A reload is stricter (load_config()): the
 * configuration that runs is known good, and whoever reloads is told.
 */
static int load_config_at_start(const char *path, RaConfig **ret) {
        _cleanup_(ra_strv_freep) char **errors = NULL, **dropped = NULL;
        int r;

        r = ra_config_read_lenient(path, ret, &errors, &dropped);
        if (r == -ENOMEM)
                return log_oom();
        for (size_t i = 0; errors && errors[i]; i++)
                log_error("%s", errors[i]);
        if (r < 0)
                return log_error_errno(r, "Not starting: the configuration cannot be read.");
        for (size_t i = 0; dropped && dropped[i]; i++)
                log_warning("%s: left out, for the error in it; the other sections apply.", dropped[i]);
        if ((*ret)->invalid_global)
                log_warning(
                        "The configuration's [daemon], [policy] or [swap] has an error: radaemon starts in "
                        "observe mode (it decides and reports, but writes nothing) until it is fixed and "
                        "reloaded.");
        return 0;
}

/*
 * The sampler's interval: each disk's reads to the tuning path, which may
 * make it worth a calibration now; what was learned, in one save.
 */
static bool on_interval(Manager *m, uint64_t now, bool peek) {
        bool peeks = false;

        for (size_t i = 0; i < m->n_disks; i++) {
                /* A peek between samples: only disks reading in order (ra_observe_peekable()). */
                if (peek && !ra_observe_peekable(m, m->disks[i]))
                        continue;
                ra_tune_sample(m, m->disks[i], now, peek);
                if (!peek)
                        ra_calib_sched_consider(m, m->disks[i], now);
        }
        /* Saved once an interval at most, as before peeks: a stop saves what one learned since. */
        if (!peek)
                (void) ra_store_flush(m);
        for (size_t i = 0; i < m->n_disks && !peeks; i++)
                peeks = ra_observe_peekable(m, m->disks[i]);
        return peeks;
}

int ra_manager_new(const char *config_path, bool force_observe, Manager **ret) {
        _cleanup_(ra_manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;

        m->state_lock = -1;
        m->force_observe = force_observe;
        /* The sources and the store tell what starts them through these, as the tracer does. */
        m->on_disks_changed = ra_sampler_disks_changed;
        m->on_manager_changed = ra_bus_manager_changed;
        m->on_bdis_moved = ra_bdiwatch_scan_soon;
        m->on_mounts_moved = ra_pathwatch_schedule;
        m->on_reload = ra_manager_reload;
        m->on_calibration = ra_tune_calibration;
        m->on_interval = on_interval;
        m->on_learning = ra_tune_learning;
        m->on_object_seen = ra_tune_seen;
        m->on_objects_read = ra_tune_objects_read;
        if (config_path) {
                m->config_path = strdup(config_path);
                if (!m->config_path)
                        return -ENOMEM;
        }

        r = load_config_at_start(m->config_path, &m->config);
        if (r < 0)
                return r;

        r = ra_store_load(m);
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

        ra_tune_batch_free(m);
        for (size_t i = 0; i < m->n_disks; i++)
                ra_disk_free(m->disks[i]);
        free(m->disks);

        ra_calib_sched_stop(m);
        ra_sampler_stop(m);
        ra_bdiwatch_stop(m);
        ra_pathwatch_stop(m);
        ra_users_free(m);
        ra_strv_free(m->bdis_added);
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
        ra_store_close(m);
        free(m->config_path);
        free(m);
        return NULL;
}

/* --- lifecycle -------------------------------------------------------------- */

int ra_manager_start(Manager *m) {
        char managed[64], empty[160];
        size_t n_empty;
        int r;

        /* Subscribe first, so nothing that appears during the walk is missed. */
        r = ra_udev_watch(m);
        if (r < 0)
                return r;

        /* Before any decision: a [path:] section is for whatever its path is on at start. */
        ra_pathwatch_resolve(m);
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

        /* One line for them all: a machine can have a hundred loop devices without a file. */
        n_empty = ra_registry_describe_empty(m, empty, sizeof(empty));
        if (n_empty > 0)
                log_info("%zu device%s no medium (%s); %s tuned when one arrives.", n_empty,
                         n_empty == 1 ? " has" : "s have", empty, n_empty == 1 ? "it is" : "they are");
        ra_registry_describe(m, managed, sizeof(managed));
        log_info("Managing %s%s.", managed,
                 ra_context_observing(m) ? " in observe mode: nothing is written" : "");
        (void) sd_notify(false, "READY=1");
        m->ready = true;
        ra_registry_notify_status(m);
        return 0;
}

int ra_manager_save(Manager *m, const char *why) {
        int r;

        if (!ra_store_pending(m))
                return 0;
        r = ra_store_flush(m);
        if (r < 0)
                return log_error_errno(
                        r, "Cannot save %s/%s %s: %m; what was learned since the last save is lost.",
                        m->state_dir, RA_STATE_FILE, why);
        log_debug("Saved %s/%s %s.", m->state_dir, RA_STATE_FILE, why);
        return 0;
}

int ra_manager_reload(Manager *m) {
        RaConfig *c = NULL;
        int r;

        (void) sd_notify(false, "RELOADING=1");
        /*
         * What the file holds is what the udev helper decides from, and what
         * an administrator copies: after a reload it is all there.
         */
        (void) ra_manager_save(m, "before reloading");

        r = load_config(m->config_path, &c);
        if (r < 0)
                log_error("Reloading failed; keeping the previous configuration.");
        else {
                bool was_observing = ra_context_observing(m);

                ra_config_free(m->config);
                m->config = c;
                ra_store_set_restored(m, false);
                if (!ra_streq(c->state_dir, m->state_dir))
                        log_notice("state_dir is now %s, but the state stays in %s until radaemon restarts.",
                                   c->state_dir, m->state_dir);
                if (was_observing != ra_context_observing(m))
                        ra_bus_manager_changed(m, "Mode");
                ra_pathwatch_resolve(m);
                r = ra_udev_enumerate(m, "reload");
                ra_bdiwatch_scan(m, "reload");
                ra_tune_swap(m, "reload");
                /* tracefs may have been mounted since. */
                if (m->sampler)
                        ra_sampler_open_tracer(m);
                /* Said once every disk has been decided again under the new configuration. */
                log_info("Configuration reloaded.");
        }

        (void) sd_notify(false, "READY=1");
        ra_registry_notify_status(m);
        return r;
}
