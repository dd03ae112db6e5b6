/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ra-log.h"
#include "ra-state-store.h"
#include "ra-util.h"

static void manager_changed(Manager *m, const char *property) {
        if (m->on_manager_changed)
                m->on_manager_changed(m, property);
}

/*
 * A state file that exists but cannot be read to its end must not be
 * replaced by one that knows nothing: its pins and true originals would be
 * gone, and the values radaemon wrote itself would become the originals.
 * What was read before the error is kept (the file is read in pieces:
 * ra_state_parse_fd()), and the file is moved aside for the administrator;
 * where even that fails, nothing is saved at all. A file too big or with a
 * line too long is no error: it is read for its pins and originals.
 */
static void keep_unreadable_state(Manager *m, int error) {
        _cleanup_free_ char *from = NULL, *to = NULL;

        if (asprintf(&from, "%s/%s", m->state_dir, RA_STATE_FILE) < 0 ||
            asprintf(&to, "%s/%s.unreadable", m->state_dir, RA_STATE_FILE) < 0)
                return (void) log_oom();

        if (rename(from, to) >= 0) {
                log_warning_errno(
                        error,
                        "Cannot read %s to its end (%m); moved it to %s, keeping the %zu entries read before.",
                        from, to, m->state->n_entries);
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
 * Two daemons on one state directory remove each other's temporary files
 * and overwrite each other's originals. The second one does not start: the
 * first already tunes these devices, and a second would write the same
 * sysfs files on its own decisions without a state to keep them in, which
 * is worse than one daemon. A directory that cannot be locked at all (not
 * there, read-only) is no other daemon's: saving reports that as before.
 */
static int lock_state_dir(Manager *m) {
        pid_t holder;
        int r;

        m->state_lock = -1;
        r = ra_state_lock(m->state_dir, &m->state_lock, &holder);
        if (r == -EBUSY) {
                if (holder > 0)
                        return log_error_errno(r,
                                               "Not starting: another radaemon (pid %ld) holds %s, its "
                                               "state directory.",
                                               (long) holder, m->state_dir);
                return log_error_errno(r, "Not starting: another radaemon holds %s, its state directory.",
                                       m->state_dir);
        }
        if (r < 0)
                log_warning_errno(r, "Cannot lock %s (%m); going on unlocked.", m->state_dir);
        return 0;
}

/*
 * The state lives in the state directory. A state we cannot read costs what
 * it held, not the tuning: that is logged and radaemon starts without it.
 */
int ra_store_load(Manager *m) {
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
        r = lock_state_dir(m);
        if (r < 0)
                return r;
        r = ra_state_tidy(m->state_dir);
        if (r < 0)
                log_warning_errno(
                        r, "Cannot tidy %s (the temporary files of an interrupted save, %s's mode): %m",
                        m->state_dir, RA_STATE_FILE);

        r = ra_state_load(m->state, m->state_dir, &errors);
        for (size_t i = 0; errors && errors[i]; i++)
                log_warning("%s/%s: %s; ignored.", m->state_dir, RA_STATE_FILE, errors[i]);
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

void ra_store_close(Manager *m) {
        if (m->state_lock >= 0)
                (void) close(m->state_lock);
        m->state_lock = -1;
        m->state = ra_state_free(m->state);
        m->state_dir = mfree(m->state_dir);
        m->state_error = mfree(m->state_error);
        m->state_dirty = m->original_unsaved = m->state_frozen = false;
}

const RaStateEntry *ra_store_entry(const Manager *m, const char *identity) {
        return identity ? ra_state_find(m->state, identity) : NULL;
}

const RaStateSwap *ra_store_swap(const Manager *m) {
        return &m->state->swap;
}

bool ra_store_pending(const Manager *m) {
        return m->state_dirty;
}

/*
 * Before this, the clock was not set yet (no RTC, no NTP yet): 0, which
 * neither ages nor refreshes anything. 2025-01-01.
 */
#define CLOCK_SET_AFTER 1735689600u

static uint64_t now_seconds(void) {
        time_t t = time(NULL);

        return t > (time_t) CLOCK_SET_AFTER ? (uint64_t) t : 0;
}

/*
 * Keeps the file bounded: what was not seen for forget_after_days, then the
 * oldest beyond RA_STATE_MAX_ENTRIES. Only once every device present was
 * found (ready): those are seen now, however long they have been there.
 * Returns how many were forgotten.
 */
static size_t forget(Manager *m) {
        uint64_t now = now_seconds();
        size_t expired, dropped;

        if (!m->ready || now == 0)
                return 0;
        for (size_t i = 0; i < m->n_disks; i++) {
                RaStateEntry *e =
                        m->disks[i]->in.identity ? ra_state_find(m->state, m->disks[i]->in.identity) : NULL;

                if (e)
                        e->seen = now;
        }

        ra_state_forget(m->state, now, (uint64_t) m->config->forget_after_days * 24 * 60 * 60,
                        RA_STATE_MAX_ENTRIES, &expired, &dropped);
        if (expired > 0)
                log_info("Forgot %zu device identit%s not seen for %" PRIu32 " days (forget_after_days).",
                         expired, expired == 1 ? "y" : "ies", m->config->forget_after_days);
        if (dropped > 0)
                log_notice("Forgot the %zu oldest device identit%s, to keep %u at most; pins are kept.",
                           dropped, dropped == 1 ? "y" : "ies", RA_STATE_MAX_ENTRIES);
        return expired + dropped;
}

/*
 * ret_replaced (may be NULL) says whether the file on disk holds the new
 * state, even when the save then failed: see ra_state_save().
 */
int ra_store_save(Manager *m, bool *ret_replaced) {
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
                        manager_changed(m, "StateError");
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
                manager_changed(m, "StateError");
        }
        return r;
}

/*
 * Forgetting moves entries: here, where no caller holds one, rather than in
 * ra_store_save(), which a pin calls with its entry in hand.
 */
int ra_store_flush(Manager *m) {
        if (forget(m) > 0)
                m->state_dirty = true;
        return m->state_dirty ? ra_store_save(m, NULL) : 0;
}

int ra_store_save_originals(Manager *m) {
        return m->original_unsaved ? ra_store_flush(m) : 0;
}

/*
 * The one rule for a change that must be durable (a pin with persist): when
 * the file was not replaced, *value goes back to saved and nothing changed;
 * when it was but its durability is unconfirmed, memory keeps what the file
 * holds, and the caller is still told of the failure.
 */
static int save_or_roll_back(Manager *m, void *value, const void *saved, size_t size) {
        bool replaced;
        int r;

        m->state_dirty = true;
        r = ra_store_save(m, &replaced);
        if (r < 0 && !replaced)
                memcpy(value, saved, size);
        return r;
}

int ra_store_pin(Manager *m, const char *identity, uint32_t kb, bool persist, bool *ret_changed) {
        RaStateEntry *e, saved;
        int r;

        *ret_changed = false;
        r = ra_state_ensure(m->state, identity, &e);
        if (r < 0)
                return r;

        saved = *e;
        if (persist) {
                e->pin_kb = kb;
                e->runtime_pin_kb = 0;
                r = save_or_roll_back(m, e, &saved, sizeof(*e));
        } else
                e->runtime_pin_kb = kb;

        *ret_changed = e->pin_kb != saved.pin_kb || e->runtime_pin_kb != saved.runtime_pin_kb;
        return r;
}

int ra_store_unpin(Manager *m, const char *identity, bool *ret_changed) {
        RaStateEntry *e = ra_state_find(m->state, identity), saved;
        int r = 0;

        *ret_changed = false;
        if (!e)
                return 0;

        saved = *e;
        e->runtime_pin_kb = 0;
        if (e->pin_kb > 0) {
                e->pin_kb = 0;
                r = save_or_roll_back(m, e, &saved, sizeof(*e));
        }

        *ret_changed = e->pin_kb != saved.pin_kb || e->runtime_pin_kb != saved.runtime_pin_kb;
        return r;
}

int ra_store_pin_swap(Manager *m, int value, bool persist, bool *ret_changed) {
        RaStateSwap saved = m->state->swap;
        int r = 0;

        if (persist) {
                m->state->swap.pin = value;
                m->state->swap.runtime_pin = -1;
                r = save_or_roll_back(m, &m->state->swap, &saved, sizeof(saved));
        } else
                m->state->swap.runtime_pin = value;

        *ret_changed = m->state->swap.pin != saved.pin || m->state->swap.runtime_pin != saved.runtime_pin;
        return r;
}

int ra_store_unpin_swap(Manager *m, bool *ret_changed) {
        RaStateSwap saved = m->state->swap;
        int r = 0;

        m->state->swap.runtime_pin = -1;
        if (saved.pin >= 0) {
                m->state->swap.pin = -1;
                r = save_or_roll_back(m, &m->state->swap, &saved, sizeof(saved));
        }

        *ret_changed = m->state->swap.pin != saved.pin || m->state->swap.runtime_pin != saved.runtime_pin;
        return r;
}

void ra_store_learned(Manager *m, const RaDisk *d) {
        RaStateEntry *e;

        log_debug("%s: learned %" PRIu32 " KiB: %s", d->name, d->model.learned_kb, d->model.reason);

        /* Kept for the next plug of this device, and for the udev helper: saved at the end of the interval.
         */
        if (ra_state_ensure(m->state, d->in.identity, &e) >= 0) {
                e->learned_kb = d->model.learned_kb;
                m->state_dirty = true;
        }
}

void ra_store_calibrated(Manager *m, RaDisk *d, const RaCalib *c) {
        RaStateEntry *e;

        d->calib = *c;
        if (ra_state_ensure(m->state, d->in.identity, &e) >= 0) {
                e->calib = *c;
                m->state_dirty = true;
                /*
                 * At once, not at the interval's flush: the udev helper
                 * decides the stacks above this disk from the state file, and
                 * one made in the next second must see the calibration the
                 * daemon decides it from (Debian 13's VM: an LV created just
                 * after its disk's calibration got the prior from the helper
                 * and the calibration from the daemon).
                 */
                (void) ra_store_save(m, NULL);
        }
}

/* Whether b differs from a by more than a twentieth: a refinement worth a write of the state file. */
static bool moved(uint32_t a, uint32_t b) {
        uint64_t diff = a > b ? a - b : b - a;

        return diff * 20 > a;
}

void ra_store_traced(Manager *m, RaDisk *d) {
        char how[128], text[512];
        RaStateEntry *e;
        RaCalib c;
        bool first;

        if (!d->costs.changed || !d->in.identity ||
            ra_calib_trace_fit(&d->costs, (uint64_t) time(NULL), &c) < 0)
                return;
        if (ra_state_ensure(m->state, d->in.identity, &e) < 0)
                return;
        first = e->traced.when == 0;
        /*
         * A fit within a twentieth of the one in force changes nothing: refits come as often as
         * a class's latest requests are all new (ra-calib.h), and each would otherwise be a
         * new model on D-Bus.
         */
        if (!first && !moved(e->traced.command_us, c.command_us) &&
            !moved(e->traced.bandwidth_kb_s, c.bandwidth_kb_s) && !moved(e->traced.jump_us, c.jump_us) &&
            e->traced.n_points == c.n_points)
                return;
        m->state_dirty = true;
        e->traced = c;
        if (e->calib.when == 0)
                d->calib = c;
        ra_calib_describe(&c, text, sizeof(text));
        if (d->costs.streams)
                (void) snprintf(how, sizeof(how), "streams and jumps");
        else
                /* The share is how one was told from the other (ra-calib.h). */
                (void) snprintf(how, sizeof(how),
                                "%s; timed from when the device was free, busy time explained: %.0f%%",
                                d->costs.serial   ? "one command at a time"
                                : d->costs.queued ? "most of each size; the fastest from issue queued"
                                                  : "the fastest of each size",
                                100 * d->costs.served_share);
        log_full_errno(first && e->calib.when == 0 ? LOG_INFO : LOG_DEBUG, 0,
                       "%s: %s from its own requests (%s): %s.", d->name,
                       first ? "modelled" : "model refined", how, text);
}

/* What a user made counts against their quota (RA_STATE_USER_QUOTA), across restarts too. */
static void remember_owner(Manager *m, const RaDisk *d) {
        RaStateEntry *e;

        if (!d->in.bdi.name || !d->in.bdi.user_made || ra_state_ensure(m->state, d->in.identity, &e) < 0)
                return;
        if (e->user_made && e->owner == d->in.bdi.user_id)
                return;
        e->user_made = true;
        e->owner = d->in.bdi.user_id;
        m->state_dirty = true;
}

void ra_store_remember_original(Manager *m, const RaDisk *d) {
        int r = 0;

        remember_owner(m, d);

        /*
         * Before radaemon writes anything, what a device holds is what it had,
         * unless radaemon's udev helper already wrote it and says what was
         * there. Without a medium there is no device to speak of.
         */
        if (d->in.attrs.size_bytes > 0)
                r = ra_state_remember_original(m->state, d->in.identity,
                                               d->in.attrs.has_original ? d->in.attrs.original_kb
                                                                        : d->in.attrs.read_ahead_kb);
        if (r > 0) {
                m->state_dirty = m->original_unsaved = true;
                /* Once: an original is recorded once per identity and run. */
                if (ra_state_escaped_length(d->in.identity) > RA_STATE_IDENTITY_MAX)
                        log_info("%s: its identity is longer than the %u bytes radaemon stores; tuned, not "
                                 "remembered past this run unless pinned.",
                                 d->name, RA_STATE_IDENTITY_MAX);
        } else if (r < 0)
                log_warning_errno(r, "%s: cannot remember the original value: %m", d->name);

        /* Seen: kept for forget_after_days from now. A day's difference is worth a save. */
        if (d->in.attrs.size_bytes > 0 && now_seconds() > 0 &&
            ra_state_touch(m->state, d->in.identity, now_seconds()) > 0)
                m->state_dirty = true;
}

void ra_store_set_original(Manager *m, const char *identity, uint32_t kb) {
        RaStateEntry *e;

        if (ra_state_ensure(m->state, identity, &e) >= 0 && (!e->has_original || e->original_kb != kb)) {
                e->original_kb = kb;
                e->has_original = true;
                /* On disk before radaemon's next write, as any original. */
                m->state_dirty = m->original_unsaved = true;
        }
}

int ra_store_carry_over(Manager *m, const RaDisk *d) {
        int r = ra_state_carry_over(m->state, &d->in.attrs, d->in.identity);

        if (r > 0)
                m->state_dirty = true;
        return r;
}

void ra_store_set_restored(Manager *m, bool restored) {
        if (m->restored == restored && m->state->restored == restored)
                return;
        m->restored = m->state->restored = restored;
        m->state_dirty = true;
        /* The udev helper reads it from the file: from now on it writes nothing either. */
        if (restored)
                (void) ra_store_save(m, NULL);
}

void ra_store_learned_swap(Manager *m, RaSwapClass c, int value) {
        if (c >= 0 && c < _RA_SWAP_CLASS_MAX) {
                m->state->swap.learned[c] = value;
                m->state_dirty = true;
        }
}

void ra_store_remember_swap_original(Manager *m, int value) {
        if (m->state->swap.has_original || value < 0)
                return;
        m->state->swap.original = value;
        m->state->swap.has_original = true;
        /* On disk before radaemon's first write, as a disk's original. */
        m->state_dirty = m->original_unsaved = true;
}
