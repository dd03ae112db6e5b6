/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <string.h>

#include "ra-device.h"
#include "ra-state.h"
#include "ra-util.h"

void ra_state_swap_init(RaStateSwap *w) {
        *w = (RaStateSwap){ .pin = -1, .runtime_pin = -1, .original = -1 };
        for (size_t i = 0; i < ELEMENTSOF(w->learned); i++)
                w->learned[i] = -1;
}

int ra_state_new(RaState **ret) {
        *ret = calloc(1, sizeof(RaState));
        if (!*ret)
                return -ENOMEM;
        ra_state_swap_init(&(*ret)->swap);
        return 0;
}

static void entry_done(RaStateEntry *e) {
        free(e->identity);
        free(e->unknown);
        free(e->unknown_more);
}

RaState *ra_state_free(RaState *s) {
        if (!s)
                return NULL;

        for (size_t i = 0; i < s->n_entries; i++)
                entry_done(&s->entries[i]);
        free(s->entries);
        free(s->index);
        free(s->unknown_swap);
        ra_strv_free(s->unknown_lines);
        free(s);
        return NULL;
}

/*
 * The index: open addressing with linear probing, in a table at most half
 * full. Our own rather than hsearch_r(), which can neither grow nor forget a
 * key: entries come with every new device and go when forgotten. A removal
 * or a renaming builds the table again, which they are rare enough for.
 */
static size_t hash(const char *identity) {
        uint64_t h = 14695981039346656037ull; /* FNV-1a */

        for (const unsigned char *p = (const unsigned char *) identity; *p; p++)
                h = (h ^ *p) * 1099511628211ull;
        return (size_t) h;
}

static void index_put(RaState *s, size_t i) {
        size_t mask = s->index_size - 1, slot = hash(s->entries[i].identity) & mask;

        while (s->index[slot] != 0)
                slot = (slot + 1) & mask;
        s->index[slot] = i + 1;
}

/* After a removal or a renaming; the table is no fuller than it was. */
static void index_refill(RaState *s) {
        memset(s->index, 0, s->index_size * sizeof(size_t));
        for (size_t i = 0; i < s->n_entries; i++)
                index_put(s, i);
}

/*
 * Twice the room, for the entries and the table alike (the entries' array
 * holds half as many as the table), so that n entries cost O(n) copies.
 */
static int grow(RaState *s) {
        size_t size = s->index_size > 0 ? 2 * s->index_size : 64, *index;
        RaStateEntry *entries;

        entries = realloc(s->entries, size / 2 * sizeof(RaStateEntry));
        if (!entries)
                return -ENOMEM;
        s->entries = entries;

        index = calloc(size, sizeof(size_t));
        if (!index)
                return -ENOMEM;
        free(s->index);
        s->index = index;
        s->index_size = size;
        index_refill(s);
        return 0;
}

RaStateEntry *ra_state_find(const RaState *s, const char *identity) {
        size_t mask = s->index_size - 1;

        if (s->index_size == 0)
                return NULL;
        for (size_t slot = hash(identity) & mask; s->index[slot] != 0; slot = (slot + 1) & mask) {
                RaStateEntry *e = &s->entries[s->index[slot] - 1];

                if (strcmp(e->identity, identity) == 0)
                        return e;
        }
        return NULL;
}

int ra_state_ensure(RaState *s, const char *identity, RaStateEntry **ret) {
        RaStateEntry *e;
        char *copy;
        int r;

        e = ra_state_find(s, identity);
        if (e) {
                *ret = e;
                return 0;
        }

        if (2 * (s->n_entries + 1) > s->index_size) {
                r = grow(s);
                if (r < 0)
                        return r;
        }

        copy = strdup(identity);
        if (!copy)
                return -ENOMEM;
        e = &s->entries[s->n_entries++];
        *e = (RaStateEntry){ .identity = copy };
        index_put(s, s->n_entries - 1);
        *ret = e;
        return 0;
}

uint32_t ra_state_pin(const RaState *s, const char *identity) {
        const RaStateEntry *e = identity ? ra_state_find(s, identity) : NULL;

        if (!e)
                return 0;
        return e->runtime_pin_kb > 0 ? e->runtime_pin_kb : e->pin_kb;
}

uint32_t ra_state_learned(const RaState *s, const char *identity) {
        const RaStateEntry *e = identity ? ra_state_find(s, identity) : NULL;

        return e ? e->learned_kb : 0;
}

const RaCalib *ra_state_calib(const RaState *s, const char *identity) {
        const RaStateEntry *e = ra_state_find(s, identity);

        return e && e->calib.when > 0 ? &e->calib : NULL;
}

const RaCalib *ra_state_cost_model(const RaState *s, const char *identity) {
        const RaStateEntry *e = ra_state_find(s, identity);

        if (!e)
                return NULL;
        return e->calib.when > 0 ? &e->calib : e->traced.when > 0 ? &e->traced : NULL;
}

int ra_state_remember_original(RaState *s, const char *identity, uint32_t kb) {
        RaStateEntry *e;
        int r;

        r = ra_state_ensure(s, identity, &e);
        if (r < 0)
                return r;
        if (e->has_original)
                return 0;

        e->original_kb = kb;
        e->has_original = true;
        return 1;
}

#define DAY_SECONDS (24 * 60 * 60)

int ra_state_touch(RaState *s, const char *identity, uint64_t now) {
        RaStateEntry *e;
        int r;

        r = ra_state_ensure(s, identity, &e);
        if (r < 0)
                return r;

        /* A day is fine enough for forget_after_days, and spares a save at every event. */
        if (e->seen > 0 && now < e->seen + DAY_SECONDS)
                return 0;
        e->seen = now;
        return ra_state_entry_is_stored(e);
}

static bool is_pinned(const RaStateEntry *e) {
        return e->pin_kb > 0 || e->runtime_pin_kb > 0;
}

/*
 * What the cap forgets first: what is not written to the file anyway, then
 * what users made (a user's mounts must not push out a disk's original),
 * each the oldest first; the rest stays in the order it had.
 */
static unsigned worth(const RaStateEntry *e) {
        return !ra_state_entry_is_stored(e) ? 0 : e->user_made ? 1 : 2;
}

static int compare_seen(const void *a, const void *b) {
        const RaStateEntry *x = *(RaStateEntry *const *) a, *y = *(RaStateEntry *const *) b;

        if (worth(x) != worth(y))
                return worth(x) < worth(y) ? -1 : 1;
        if (x->seen != y->seen)
                return x->seen < y->seen ? -1 : 1;
        return x < y ? -1 : x > y;
}

/* Drops the entries marked with a NULL identity, keeping the others' order. */
static void compact(RaState *s) {
        size_t kept = 0;

        for (size_t i = 0; i < s->n_entries; i++)
                if (s->entries[i].identity)
                        s->entries[kept++] = s->entries[i];
        s->n_entries = kept;
        index_refill(s);
}

static void forget(RaStateEntry *e) {
        entry_done(e);
        *e = (RaStateEntry){};
}

void ra_state_forget(RaState *s, uint64_t now, uint64_t max_age, size_t max_entries, size_t *ret_expired,
                     size_t *ret_dropped) {
        _cleanup_free_ RaStateEntry **unpinned = NULL;
        size_t expired = 0, dropped = 0, n_unpinned = 0;

        for (size_t i = 0; i < s->n_entries; i++) {
                RaStateEntry *e = &s->entries[i];

                if (e->seen == 0)
                        e->seen = now;
                /* Seen "later" than now, the clock was set back: that is no age. */
                if (!is_pinned(e) && max_age > 0 && now > e->seen && now - e->seen > max_age) {
                        forget(e);
                        expired++;
                }
        }

        if (s->n_entries - expired > max_entries) {
                unpinned = malloc(s->n_entries * sizeof(RaStateEntry *));
                /* Without memory, the entries stay for the next try. */
                for (size_t i = 0; unpinned && i < s->n_entries; i++)
                        if (s->entries[i].identity && !is_pinned(&s->entries[i]))
                                unpinned[n_unpinned++] = &s->entries[i];
                if (n_unpinned > 0)
                        qsort(unpinned, n_unpinned, sizeof(RaStateEntry *), compare_seen);
                for (size_t i = 0; i < n_unpinned && s->n_entries - expired - dropped > max_entries; i++) {
                        forget(unpinned[i]);
                        dropped++;
                }
        }

        if (expired + dropped > 0)
                compact(s);
        if (ret_expired)
                *ret_expired = expired;
        if (ret_dropped)
                *ret_dropped = dropped;
}

/* Mount points that come and go with a run or a user's session. */
static bool at_temporary_mount(const char *identity) {
        static const char *const temporary[] = { "/tmp", "/var/tmp", "/run/user", "/dev/shm" };
        const char *at;

        /* A bdi's identity ends with "@MOUNTPOINT" (ra_bdi_identity()). */
        if (strncmp(identity, "fuse:", 5) != 0 && strncmp(identity, "bdi:", 4) != 0)
                return false;
        for (at = strchr(identity, '@'); at; at = strchr(at + 1, '@'))
                for (size_t i = 0; i < ELEMENTSOF(temporary); i++) {
                        size_t n = strlen(temporary[i]);

                        if (strncmp(at + 1, temporary[i], n) == 0 && (at[1 + n] == '/' || at[1 + n] == '\0'))
                                return true;
                }
        return false;
}

bool ra_state_entry_is_stored(const RaStateEntry *e) {
        if (e->pin_kb > 0)
                return true;
        if (ra_state_escaped_length(e->identity) > RA_STATE_IDENTITY_MAX)
                return false;
        if (e->learned_kb > 0)
                return true;
        if (!e->has_original && e->calib.when == 0 && e->traced.when == 0 && !e->unknown && !e->unknown_more)
                return false;
        return !at_temporary_mount(e->identity);
}

int ra_state_carry_over(RaState *s, const RaDeviceAttrs *a, const char *identity) {
        _cleanup_free_ char *old = NULL;
        RaStateEntry *e;
        char *copy;
        int r;

        if (ra_state_find(s, identity))
                return 0;
        r = ra_device_old_identity(a, &old);
        if (r <= 0)
                return r;
        e = ra_state_find(s, old);
        if (!e)
                return 0;

        copy = strdup(identity);
        if (!copy)
                return -ENOMEM;
        free(e->identity);
        e->identity = copy;
        index_refill(s);
        return 1;
}

bool ra_state_swap_is_empty(const RaStateSwap *w) {
        bool any = w->has_original || w->pin >= 0;

        for (size_t i = 0; i < ELEMENTSOF(w->learned); i++)
                any = any || w->learned[i] >= 0;
        return !any;
}

int ra_state_swap_pin(const RaState *s) {
        return s->swap.runtime_pin >= 0 ? s->swap.runtime_pin : s->swap.pin;
}
