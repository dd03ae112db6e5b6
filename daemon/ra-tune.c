/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "ra-apply.h"
#include "ra-bus.h"
#include "ra-context.h"
#include "ra-inputs.h"
#include "ra-log.h"
#include "ra-openfiles.h"
#include "ra-registry.h"
#include "ra-settings.h"
#include "ra-state-store.h"
#include "ra-tune-knob.h"
#include "ra-tune-swap.h"
#include "ra-tune.h"
#include "ra-users.h"
#include "ra-util.h"

/*
 * A bdi whose udev "add" has not come through after this long: udevd is not
 * running, or lost it; writes from then on are somebody else's.
 */
#define UDEV_ADD_WAIT_USEC (30 * UINT64_C(1000000))

/* The drift check decides again, and a decision that finds sysfs moved checks the drift. */
static void decide(Manager *m, RaDisk *d, const char *event);
static const char *drift(Manager *m, RaDisk *d, uint32_t kb);

static bool decision_equal(const RaDecision *a, const RaDecision *b) {
        return a->kb == b->kb && a->source == b->source && strcmp(a->reason, b->reason) == 0;
}

/*
 * Every write of a disk's or a bdi's window: written, verified by reading
 * back; *ret_now is what the kernel holds after (unchanged where it could
 * not be read). -ENODEV: the object is gone.
 */
static int write_window(const RaDisk *d, uint32_t kb, uint32_t *ret_now) {
        _cleanup_close_ int sysfd = -1;

        sysfd = ra_disk_open_sysfs(d);
        return sysfd < 0 ? sysfd : ra_apply_read_ahead(sysfd, d->knob_attr, kb, ret_now);
}

static int knob_write(void *object, uint32_t kb, uint32_t *ret_now) {
        return write_window(object, kb, ret_now);
}

/* d's window, for what every knob shares (ra-tune-knob.c). */
static RaKnob window_knob(RaDisk *d) {
        return (RaKnob){
                .label = d->name,
                .device = d->name,
                .what = "read_ahead_kb",
                .unit = " KiB",
                .write = knob_write,
                .object = d,
                .write_error = &d->write_error,
                .reassert = &d->reassert,
        };
}

/*
 * Whether sysfs still holds what was last read. A value that moved (a FUSE
 * server's INIT answer, a udev rule, the kernel, somebody) goes through the
 * drift check, which knows each of them and decides; deciding over it here
 * would write over a server's answer.
 */
static bool sysfs_moved(Manager *m, RaDisk *d, const char **ret_again) {
        uint32_t now;

        *ret_again = NULL;
        /* A new medium's value is the kernel's; its udev event decides (a learning decision waits). */
        if (d->medium_pending)
                return true;

        if (ra_disk_read_knob(d, &now) < 0 || now == d->in.attrs.read_ahead_kb)
                return false;
        *ret_again = drift(m, d, now);
        return true;
}

/*
 * Decides for d, and writes unless the value is there already or radaemon
 * only observes. Returns the event to decide again with when the drift
 * check asks for it (the value had moved), else NULL.
 */
static const char *decide_once(Manager *m, RaDisk *d, const char *event) {
        RaDecision previous = d->decision;
        RaKnob k = window_knob(d);
        RaSettingsRun run;
        const char *again = NULL;
        uint32_t was_kb;
        bool news;

        /* Yielding: the value to keep is what sysfs holds now, not what was tracked. */
        if (d->external)
                (void) ra_disk_read_knob(d, &d->in.attrs.read_ahead_kb);
        run = (RaSettingsRun){
                .learned_kb = d->model.learned_kb,
                .learned_reason = d->model.reason,
                .external = d->external,
        };
        was_kb = d->in.attrs.read_ahead_kb;
        ra_tune_leaf_identities(m, d);
        ra_inputs_decide(m->config, m->state, &d->in, &run, &d->settings, &d->decision);
        /* What D-Bus shows of its cost model: what the store keeps for it, as the settings took it. */
        if (d->kind == RA_KIND_DISK && d->in.identity && ra_state_cost_model(m->state, d->in.identity))
                d->calib = *ra_state_cost_model(m->state, d->in.identity);
        else
                d->calib = (RaCalib){};

        /* An event that changes nothing is not worth an info line. */
        news = !d->announced || !decision_equal(&previous, &d->decision);
        d->announced = true;
        /* A user's object says its news within its owner's budget (ra-users.c). */
        if (news || d->decision.kb != d->in.attrs.read_ahead_kb)
                k.quiet = ra_users_log_level(m, d, LOG_INFO) != LOG_INFO;

        /*
         * A value that moved since it was last read is the drift check's
         * first: written over unseen, a udev rule's value in a bdi's "add"
         * (nfsrahead's) would be lost as its original (seen under load).
         */
        if (d->decision.kb == 0)
                /* At the start, empty devices are said in one line (ra_manager_start()). */
                log_full_errno(news && !k.quiet && !ra_streq(event, "coldplug") ? LOG_INFO : LOG_DEBUG, 0,
                               "%s: %s", d->name, d->decision.reason);
        else if (sysfs_moved(m, d, &again))
                return again;
        else if (ra_tune_knob_settle(m, &k, news, was_kb, d->decision.kb,
                                     ra_source_to_string(d->decision.source), event, d->decision.reason,
                                     &d->in.attrs.read_ahead_kb) > 0) {
                d->decisions++;
                /* The files open under the old window: those whose reads call for the new take it. */
                if (d->in.attrs.read_ahead_kb != was_kb)
                        ra_openfiles_follow(m, d, was_kb, d->in.attrs.read_ahead_kb);
        }
        return NULL;
}

/*
 * The drift check may ask to decide again (a FUSE server's answer, the
 * kernel restacking, a value to reassert or yield to), and the decision
 * then reads sysfs again: a loop, not a recursion, and a bounded one. A
 * value that still moves after RA_TUNE_DECIDE_PASSES decisions is left to
 * the next interval's check (ra_tune_check_window()).
 */
#define RA_TUNE_DECIDE_PASSES 4

static void decide(Manager *m, RaDisk *d, const char *event) {
        for (unsigned pass = 0; event; pass++) {
                if (pass == RA_TUNE_DECIDE_PASSES) {
                        log_debug(
                                "%s: read_ahead_kb moved under %u decisions in a row; the next check decides.",
                                d->name, pass);
                        return;
                }
                event = decide_once(m, d, event);
        }
}

void ra_tune_drift(Manager *m, RaDisk *d, uint32_t kb) {
        decide(m, d, drift(m, d, kb));
}

/*
 * What the drift check makes of kb, found where d->in.attrs said otherwise:
 * the event to decide again with, or NULL.
 */
static const char *drift(Manager *m, RaDisk *d, uint32_t kb) {
        uint32_t was = d->in.attrs.read_ahead_kb;
        uint64_t now;
        RaKnob k;

        if (kb == was)
                return NULL;
        d->in.attrs.read_ahead_kb = kb;
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);

        /*
         * mount(2) returns before a FUSE server answers INIT, and its answer
         * lowers the window to the server's max_readahead: that is the
         * server's word on what is behind it, the prior, not someone else's.
         * A value radaemon wrote before the answer (a pin, a learned one)
         * comes down with it: deciding again writes it back.
         */
        if (d->kind == RA_KIND_BDI &&
            ra_bdi_fuse_init_answer(&d->in.bdi, d->as_bdi.fuse_init_pending_since > 0,
                                    now - d->as_bdi.fuse_init_pending_since, d->in.server_kb, was, kb)) {
                log_full_errno(ra_users_log_level(m, d, LOG_INFO), 0,
                               "%s: the FUSE server lowered the window to %" PRIu32 " KiB at INIT.", d->name,
                               kb);
                d->as_bdi.fuse_init_pending_since = 0;
                d->in.server_kb = kb;
                /*
                 * What the file system was given, where the state remembered
                 * the kernel's offer: the next mount starts from the answer
                 * (found after INIT, it holds the answer, not radaemon's value),
                 * and Restore goes back to it.
                 */
                ra_store_set_original(m, d->in.identity, kb);
                return "fuse init";
        }

        /*
         * Written while udevd runs the bdi's "add" (nfs-common's nfsrahead for
         * NFS): the system's starting value, its original for Restore, not
         * an external change. radaemon's decision stands, and is written once
         * udevd is done (the scan of its "add" decides again), so the two
         * settle instead of taking turns.
         */
        if (d->kind == RA_KIND_BDI && d->as_bdi.udev_add_pending_since > 0 &&
            now - d->as_bdi.udev_add_pending_since <= UDEV_ADD_WAIT_USEC) {
                log_disk(ra_users_log_level(m, d, LOG_INFO), RA_LOG_EXTERNAL, d->name, kb, "udev",
                         "%s: read_ahead_kb went from %" PRIu32 " to %" PRIu32
                         " KiB during its udev add event (a udev rule, such as nfs-common's nfsrahead): "
                         "its starting value; radaemon writes %" PRIu32 " KiB when udev is done.",
                         d->name, was, kb, d->decision.kb);
                ra_store_set_original(m, d->in.identity, kb);
                return NULL;
        }

        /*
         * dm and md stack the limits of the devices beneath again when one
         * comes or goes, and the kernel then puts the window back to its own
         * value for them, with no event after (Debian 12's 6.1, a member
         * added to a RAID1): the kernel re-reading the device, as a disk's
         * "change" is, not somebody's choice. radaemon decides again.
         */
        if (!d->external && kb != d->decision.kb && ra_disk_restacked(d, m->udev, kb)) {
                log_info("%s: read_ahead_kb went from %" PRIu32 " to %" PRIu32
                         " KiB, the kernel's value for its limits: it stacked the devices beneath "
                         "again; deciding again.",
                         d->name, was, kb);
                return "restack";
        }

        /* Yielding already: the target is whatever is there. */
        if (d->external)
                return "external change";

        /* Nothing to defend without a medium. */
        if (d->decision.kb == 0)
                return NULL;
        k = window_knob(d);
        k.quiet = ra_users_log_level(m, d, LOG_INFO) != LOG_INFO;
        switch (ra_tune_knob_drift(m, &k, was, kb, d->decision.kb)) {
        case RA_DRIFT_IGNORE:
                return NULL;
        case RA_DRIFT_REASSERT:
                return "reassert";
        case RA_DRIFT_YIELD:
                d->external = true;
                return "external change";
        }
        return NULL;
}

int ra_tune_begin(RaDisk *d, RaTune *ret) {
        *ret = (RaTune){ .disk = d };
        /* One nobody was told of yet is announced whole by ra_tune_commit(). */
        if (!d->published)
                return 0;
        if (ra_disk_snapshot(d, &ret->before) < 0)
                return log_oom();
        ret->has_before = true;
        return 0;
}

void ra_tune_abort(RaTune *t) {
        ra_disk_snapshot_clear(&t->before);
        *t = (RaTune){};
}

void ra_tune_commit(Manager *m, RaTune *t, const char *event) {
        RaDisk *d = t->disk;

        /* Published since ra_tune_begin(), or without memory for the snapshot then. */
        if (d->published && !t->has_before) {
                if (ra_disk_snapshot(d, &t->before) < 0) {
                        (void) log_oom();
                        return ra_tune_abort(t);
                }
                t->has_before = true;
        }

        if (event)
                decide(m, d, event);

        if (!d->published)
                ra_bus_disk_added(m, d);
        else
                ra_bus_disk_changed(m, d, &t->before);
        ra_tune_abort(t);
}

void ra_tune_calibration(Manager *m, RaDisk *d, bool running, const RaCalib *measured) {
        RaTune t;

        if (ra_tune_begin(d, &t) < 0) {
                d->calibrating = running;
                if (measured)
                        ra_store_calibrated(m, d, measured);
                return;
        }
        d->calibrating = running;
        if (measured)
                ra_store_calibrated(m, d, measured);
        ra_tune_commit(m, &t, measured ? "calibration" : NULL);
        if (measured)
                ra_tune_stack_tops(m, d, "calibration beneath");
}

void ra_tune_disk(Manager *m, RaDisk *d, const char *event) {
        RaTune t;

        if (ra_tune_begin(d, &t) >= 0)
                ra_tune_commit(m, &t, event);
}

static uint64_t read_diskseq(int sysfd) {
        char buf[32];
        uint64_t v;

        if (ra_read_file_at(sysfd, "diskseq", buf, sizeof(buf)) < 0 || ra_parse_u64(buf, &v) < 0)
                return 0;
        return v;
}

int ra_tune_check_window(Manager *m, RaDisk *d, uint32_t *ret_kb) {
        _cleanup_close_ int sysfd = -1;
        RaTune t;
        int r;

        sysfd = ra_disk_open_sysfs(d);
        r = sysfd < 0 ? sysfd : ra_apply_read_current(sysfd, d->knob_attr, ret_kb);
        if (r < 0)
                return r;

        /*
         * A new diskseq means a new medium, whose uevent is on its way: the
         * value the kernel gave it is not somebody else's.
         */
        if (*ret_kb == d->in.attrs.read_ahead_kb)
                return TAKE_FD(sysfd);
        if (read_diskseq(sysfd) != d->in.attrs.diskseq) {
                d->medium_pending = true;
                return TAKE_FD(sysfd);
        }

        /*
         * The new value, and whatever radaemon makes of it (yielding, a write
         * back, a FUSE server's answer taken as the prior), is told on the
         * bus as one change. Without memory for the snapshot the change is
         * left for the next look, rather than made unannounced.
         */
        if (ra_tune_begin(d, &t) < 0)
                return TAKE_FD(sysfd);
        ra_tune_drift(m, d, *ret_kb);
        ra_tune_commit(m, &t, NULL);
        return TAKE_FD(sysfd);
}

bool ra_tune_restore(Manager *m, RaDisk *d, const char *why) {
        const RaStateEntry *e = ra_state_find(m->state, d->in.identity);
        RaKnob k = window_knob(d);
        bool done;
        RaTune t;

        if (!e || !e->has_original || ra_tune_begin(d, &t) < 0)
                return false;
        done = ra_tune_knob_restore(m, &k, d->in.attrs.read_ahead_kb, e->original_kb, why,
                                    &d->in.attrs.read_ahead_kb);
        ra_tune_commit(m, &t, NULL);
        return done;
}

/*
 * What its traced requests taught belongs to the medium that answered them:
 * a loop device attached to another file, a card reader's next card, is
 * another device under the same name (a new diskseq), and a fast medium's
 * request classes would decide for a slow one (the bench's loop device
 * reused for a disk after a stick kept "1280 KiB 40892 MiB/s" in its model
 * and never cut a random reader). What the store keeps of an identity
 * comes back with it (decide_once()).
 */
static void forget_costs(RaDisk *d) {
        d->costs = (RaCalibTrace){ .streams = d->costs.streams };
        d->costs_diskseq = d->in.attrs.diskseq;
        d->bdi_switches = 0;
        d->bdi_turns = (RaCalibTurns){};
        d->calib_interrupted = 0;
}

void ra_tune_identified(Manager *m, RaDisk *d, const char *previous_identity) {
        uint32_t learned;

        ra_store_remember_original(m, d);

        if (d->costs_diskseq != d->in.attrs.diskseq)
                forget_costs(d);
        /* Another medium behind the name: start from what is known about it. */
        if (ra_streq(previous_identity, d->in.identity))
                return;
        forget_costs(d);
        d->model = (RaModel){};
        d->sampled.trace = (RaTraceAccount){};
        d->sampled.pcache = (RaPcacheAccount){ .page_kb = ra_page_kb() };
        d->sampled.stat_usec = 0;
        learned = ra_state_learned(m->state, d->in.identity);
        if (learned > 0)
                ra_adapt_restore(&d->model, learned);
}

void ra_tune_learning(Manager *m, const char *off) {
        bool changed = !ra_streq(off, m->learning_off);

        if (changed) {
                free(m->learning_off);
                m->learning_off = off ? strdup(off) : NULL;
                ra_bus_manager_changed(m, "LearningOff");
        }
        /* What learning is judged from follows whether tracing works. */
        if (changed || !off)
                ra_bus_manager_changed(m, "Evidence");
}
