/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ra-identify.h"
#include "ra-log.h"
#include "ra-state-store.h"
#include "ra-state.h"
#include "ra-util.h"

/*
 * Two present block devices that report one identity (a maker's serial on
 * every unit) would share pins, originals and what was learned: d is kept
 * apart under its own (ra_device_identity_apart()), and the names of the
 * others still under the shared one are added to *partners, to be moved
 * apart too. Returns how many other present devices report d's identity.
 */
static int keep_apart(Manager *m, RaDisk *d, char ***partners) {
        _cleanup_free_ char *apart = NULL;
        size_t others = 0;
        int r;

        /* Without a medium there is no device to speak of: an empty card reader shares nothing. */
        if (!d->reported_identity || d->in.attrs.size_bytes == 0)
                return 0;
        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *o = m->disks[i];

                if (o == d || !ra_kind_is_block(o->kind) || o->in.attrs.size_bytes == 0 ||
                    !ra_streq(o->reported_identity, d->reported_identity))
                        continue;
                others++;
                /* Still under the shared identity: it must move apart too. */
                if (ra_streq(o->in.identity, o->reported_identity) &&
                    !ra_strv_contains(*partners, o->name)) {
                        r = ra_strv_push(partners, o->name);
                        if (r < 0)
                                return r;
                }
        }
        if (others == 0)
                return 0;

        r = ra_device_identity_apart(&d->in.attrs, d->reported_identity, &apart);
        if (r < 0)
                return r;
        free(d->in.identity);
        d->in.identity = TAKE_PTR(apart);
        return others > INT_MAX ? INT_MAX : (int) others;
}

/* How many present block devices with a medium an earlier radaemon would have kept under old. */
static size_t count_old_identity(Manager *m, const char *old) {
        size_t n = 0;

        for (size_t i = 0; i < m->n_disks; i++) {
                _cleanup_free_ char *o = NULL;

                if (ra_kind_is_block(m->disks[i]->kind) && m->disks[i]->in.attrs.size_bytes > 0 &&
                    ra_device_old_identity(&m->disks[i]->in.attrs, &o) > 0 && ra_streq(o, old))
                        n++;
        }
        return n;
}

/*
 * What an earlier radaemon kept under d's old identity (a WWN alone, a dm
 * device's kernel name) moves to its identity, once. An old entry never
 * said which model or size it was for: it moves only while one present
 * device reports the old key, and into nothing stored (ra_state_carry_over()):
 * while several report it, none takes it, then or later.
 */
static void carry_over(Manager *m, RaDisk *d) {
        _cleanup_free_ char *old = NULL;
        size_t n;
        int r;

        r = ra_device_old_identity(&d->in.attrs, &old);
        if (r <= 0 || ra_store_entry(m, d->in.identity) || !ra_store_entry(m, old))
                goto finish;

        n = count_old_identity(m, old);
        if (n > 1) {
                log_notice("%s: %zu present devices report %s, which an earlier radaemon kept values under: "
                           "none of them takes them.",
                           d->name, n, old);
                return;
        }
        r = ra_store_carry_over(m, d);
        if (r > 0)
                log_info("%s: what was stored under %s is kept under %s from now on.", d->name, old,
                         d->in.identity);
finish:
        if (r < 0)
                log_warning_errno(r, "%s: cannot carry over what was stored under its old identity: %m",
                                  d->name);
}

/*
 * d's identity, once every disk of the batch is in the registry, so that
 * two present devices reporting one identity are seen whatever their
 * order: each is kept apart (the ones already known are named in
 * *partners, to be decided again), and neither takes the other's state.
 */
void ra_identify(Manager *m, RaDisk *d, const char *previous, char ***partners) {
        const RaStateEntry *shared, *e;
        int r;

        r = keep_apart(m, d, partners);
        if (r < 0)
                log_warning_errno(r, "%s: cannot keep it apart from devices reporting %s: %m", d->name,
                                  d->reported_identity);
        else if (r > 0) {
                log_notice("%s: %d other present device%s report%s %s: kept apart as %s; none of them takes "
                           "what is stored under it.",
                           d->name, r, r == 1 ? "" : "s", r == 1 ? "s" : "", d->reported_identity,
                           d->in.identity);
                /* Its original is known already, where it was managed under the shared identity. */
                shared = ra_store_entry(m, d->reported_identity);
                if (ra_streq(previous, d->reported_identity) && shared && shared->has_original &&
                    (!(e = ra_store_entry(m, d->in.identity)) || !e->has_original))
                        ra_store_set_original(m, d->in.identity, shared->original_kb);
        } else
                /* Before anything is stored under the new identity, or the old entry would never move. */
                carry_over(m, d);
}
