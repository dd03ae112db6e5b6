/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "ra-log.h"
#include "ra-registry.h"
#include "ra-state.h"
#include "ra-store.h"
#include "ra-tune.h"
#include "ra-util.h"

void ra_registry_changed(Manager *m) {
        if (m->on_disks_changed)
                m->on_disks_changed(m);
}

RaDisk *ra_registry_find(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (strcmp(m->disks[i]->name, name) == 0)
                        return m->disks[i];
        return NULL;
}

int ra_registry_add(Manager *m, RaKind kind, const char *name, RaDisk **ret) {
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
        ra_registry_changed(m);
        ra_registry_notify_status(m);
        *ret = TAKE_PTR(d);
        return 0;
}

void ra_registry_remove(Manager *m, RaDisk *d) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i] == d) {
                        m->disks[i] = m->disks[--m->n_disks];
                        break;
                }
        ra_registry_changed(m);
        ra_disk_free(d);
        ra_registry_notify_status(m);
}

/* What comes after a part of a list with left parts still to come: "a, b and c". */
static const char *separator(size_t left) {
        if (left == 0)
                return "";
        return left == 1 ? " and " : ", ";
}

void ra_registry_describe(const Manager *m, char *buf, size_t size) {
        static const char *const one[_RA_KIND_MAX] = { "disk", "bdi", "stacked device" };
        size_t count[_RA_KIND_MAX] = {}, off = 0, parts = 0, left;
        /* The order they are said in: disks always, then stacks and bdis when there are any. */
        static const RaKind order[] = { RA_KIND_DISK, RA_KIND_STACK, RA_KIND_BDI };

        for (size_t i = 0; i < m->n_disks; i++)
                count[m->disks[i]->kind]++;
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                parts += order[i] == RA_KIND_DISK || count[order[i]] > 0;
        left = parts;
        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(order) && off < size; i++) {
                RaKind k = order[i];
                int n;

                if (k != RA_KIND_DISK && count[k] == 0)
                        continue;
                left--;
                n = snprintf(buf + off, size - off, "%zu %s%s%s", count[k], one[k], count[k] == 1 ? "" : "s",
                             separator(left));
                if (n < 0)
                        break;
                off += (size_t) n;
        }
}

/* "loop12" is "loop" and 12; false for a name that does not end in a number. */
static bool split_name(const char *name, size_t *ret_prefix, unsigned long *ret_n) {
        size_t len = strlen(name), p = len;

        while (p > 0 && name[p - 1] >= '0' && name[p - 1] <= '9')
                p--;
        if (p == len || len - p > 9)
                return false;
        *ret_prefix = p;
        *ret_n = strtoul(name + p, NULL, 10);
        return true;
}

/* loop2 before loop10: the numbers of one kind of device in their order. */
static int compare_names(const void *a, const void *b) {
        const char *x = *(const char *const *) a, *y = *(const char *const *) b;
        unsigned long nx, ny;
        size_t px, py;

        if (!split_name(x, &px, &nx) || !split_name(y, &py, &ny) || px != py || strncmp(x, y, px) != 0)
                return strcmp(x, y);
        return nx < ny ? -1 : nx > ny;
}

/* Whether b is the device after a: loop7 after loop6. */
static bool follows(const char *a, const char *b) {
        unsigned long na, nb;
        size_t pa, pb;

        return split_name(a, &pa, &na) && split_name(b, &pb, &nb) && pa == pb && strncmp(a, b, pa) == 0 &&
               nb == na + 1;
}

static void append(char *buf, size_t size, size_t *off, const char *separator, const char *name) {
        int n;

        if (*off >= size)
                return;
        n = snprintf(buf + *off, size - *off, "%s%s", separator, name);
        *off = n < 0 ? size : *off + (size_t) n;
}

size_t ra_registry_describe_empty(const Manager *m, char *buf, size_t size) {
        _cleanup_free_ const char **names = NULL;
        size_t n = 0, off = 0;

        buf[0] = '\0';
        names = calloc(m->n_disks + 1, sizeof(char *));
        for (size_t i = 0; i < m->n_disks; i++)
                if (ra_kind_is_block(m->disks[i]->kind) && m->disks[i]->attrs.size_bytes == 0) {
                        if (names)
                                names[n] = m->disks[i]->name;
                        n++;
                }
        /* Without memory for the names, the count alone. */
        if (!names || n == 0)
                return n;

        qsort(names, n, sizeof(char *), compare_names);
        for (size_t i = 0, j; i < n; i = j + 1) {
                /* A run of consecutive names is said as its ends: loop0-loop99. */
                for (j = i; j + 1 < n && follows(names[j], names[j + 1]);)
                        j++;
                append(buf, size, &off, i > 0 ? ", " : "", names[i]);
                if (j > i)
                        append(buf, size, &off, j > i + 1 ? "-" : ", ", names[j]);
        }
        /* Too many runs for the line: it ends in ", ..." rather than in half a name. */
        if (off >= size && size > 6) {
                char *cut = buf + size - 6;

                while (cut > buf && *cut != ',')
                        cut--;
                if (cut > buf)
                        strcpy(cut, ", ...");
                else
                        strcpy(buf + size - 4, "...");
        }
        return n;
}

void ra_registry_notify_status(Manager *m) {
        char managed[64];

        /* Coldplug would say it once for each disk found. */
        if (!m->ready)
                return;
        ra_registry_describe(m, managed, sizeof(managed));
        (void) sd_notifyf(false, "STATUS=Managing %s%s.", managed,
                          ra_context_observing(m) ? " in observe mode" : "");
}

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
        if (!d->reported_identity || d->attrs.size_bytes == 0)
                return 0;
        for (size_t i = 0; i < m->n_disks; i++) {
                RaDisk *o = m->disks[i];

                if (o == d || !ra_kind_is_block(o->kind) || o->attrs.size_bytes == 0 ||
                    !ra_streq(o->reported_identity, d->reported_identity))
                        continue;
                others++;
                /* Still under the shared identity: it must move apart too. */
                if (ra_streq(o->identity, o->reported_identity) && !ra_strv_contains(*partners, o->name)) {
                        r = ra_strv_push(partners, o->name);
                        if (r < 0)
                                return r;
                }
        }
        if (others == 0)
                return 0;

        r = ra_device_identity_apart(&d->attrs, d->reported_identity, &apart);
        if (r < 0)
                return r;
        free(d->identity);
        d->identity = TAKE_PTR(apart);
        return others > INT_MAX ? INT_MAX : (int) others;
}

/* How many present block devices with a medium an earlier radaemon would have kept under old. */
static size_t count_old_identity(Manager *m, const char *old) {
        size_t n = 0;

        for (size_t i = 0; i < m->n_disks; i++) {
                _cleanup_free_ char *o = NULL;

                if (ra_kind_is_block(m->disks[i]->kind) && m->disks[i]->attrs.size_bytes > 0 &&
                    ra_device_old_identity(&m->disks[i]->attrs, &o) > 0 && ra_streq(o, old))
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

        r = ra_device_old_identity(&d->attrs, &old);
        if (r <= 0 || ra_state_find(m->state, d->identity) || !ra_state_find(m->state, old))
                goto finish;

        n = count_old_identity(m, old);
        if (n > 1) {
                log_notice("%s: %zu present devices report %s, which an earlier radaemon kept values under: "
                           "none of them takes them.",
                           d->name, n, old);
                return;
        }
        r = ra_state_carry_over(m->state, &d->attrs, d->identity);
        if (r > 0) {
                log_info("%s: what was stored under %s is kept under %s from now on.", d->name, old,
                         d->identity);
                m->state_dirty = true;
        }
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
void ra_registry_identify(Manager *m, RaDisk *d, const char *previous, char ***partners) {
        RaStateEntry *shared, *e;
        int r;

        r = keep_apart(m, d, partners);
        if (r < 0)
                log_warning_errno(r, "%s: cannot keep it apart from devices reporting %s: %m", d->name,
                                  d->reported_identity);
        else if (r > 0) {
                log_notice("%s: %d other present device%s report%s %s: kept apart as %s; none of them takes "
                           "what is stored under it.",
                           d->name, r, r == 1 ? "" : "s", r == 1 ? "s" : "", d->reported_identity,
                           d->identity);
                /* Its original is known already, where it was managed under the shared identity. */
                shared = ra_state_find(m->state, d->reported_identity);
                if (ra_streq(previous, d->reported_identity) && shared && shared->has_original &&
                    (!(e = ra_state_find(m->state, d->identity)) || !e->has_original))
                        ra_store_set_original(m, d->identity, shared->original_kb);
        } else
                /* Before anything is stored under the new identity, or the old entry would never move. */
                carry_over(m, d);

        ra_tune_identified(m, d, previous);
}

/* Devices known before, now sharing their identity with one that came: apart too, decided again. */
void ra_registry_keep_partners_apart(Manager *m, char **partners) {
        for (size_t i = 0; partners && partners[i]; i++) {
                _cleanup_(ra_strv_freep) char **more = NULL;
                _cleanup_free_ char *previous = NULL;
                RaDisk *d = ra_registry_find(m, partners[i]);
                RaTune t;

                if (!d || !ra_streq(d->identity, d->reported_identity))
                        continue;
                previous = strdup(d->identity);
                if (!previous || ra_tune_begin(d, &t) < 0) {
                        (void) log_oom();
                        continue;
                }
                /* Every other device reporting it is in the registry already: none is named again. */
                ra_registry_identify(m, d, previous, &more);
                ra_tune_commit(m, &t, "identity clash");
        }
}
