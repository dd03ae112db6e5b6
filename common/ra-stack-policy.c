/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "ra-stack.h"
#include "ra-util.h"

#define KiB UINT64_C(1024)

/* The kernel's VM_READAHEAD_PAGES, for a stack whose disks gave no prior. */
#define KERNEL_DEFAULT_KB 128u

/* What one device of a stack asks of a window, from the disks beneath it up. */
typedef struct Width {
        uint64_t need_kb;  /* what its layout needs: the disks' priors, times the stripes */
        uint64_t could_kb; /* the most it could use, were every dm table beneath striped */
        uint64_t stripes;  /* disks a read is striped over, as md says */
} Width;

static uint64_t saturate(uint64_t kb) {
        return kb > RA_KB_LIMIT ? RA_KB_LIMIT : kb;
}

static uint32_t leaf_prior(const RaStack *s, const uint32_t *leaf_prior_kb, size_t index) {
        for (size_t i = 0; i < s->n_leaves; i++)
                if (s->leaves[i] == index)
                        return leaf_prior_kb[i];
        return 0;
}

static Width width_of(const RaStack *s, const uint32_t *leaf_prior_kb, size_t index, unsigned depth,
                      Width memo[], bool done[]);

/* A device with slaves: what they ask, combined as the device spreads a read over them. */
static Width width_over_slaves(const RaStack *s, const uint32_t *leaf_prior_kb, const RaStackDevice *d,
                               unsigned depth, Width memo[], bool done[]) {
        uint64_t need = 0, could = 0, could_sum = 0, stripes = 1, data, chunk_kb;

        for (size_t i = 0; i < d->n_slaves; i++) {
                Width c = width_of(s, leaf_prior_kb, d->slaves[i].device, depth + 1, memo, done);

                need = need > c.need_kb ? need : c.need_kb;
                could = could > c.could_kb ? could : c.could_kb;
                could_sum = saturate(could_sum + c.could_kb);
                stripes = stripes > c.stripes ? stripes : c.stripes;
        }

        data = d->kind == RA_STACK_MD && d->md_data_disks > 1 ? d->md_data_disks : 1;
        if (data > 1) {
                /* Each data disk gets its share, and at least a whole chunk, or the window misses disks. */
                chunk_kb = d->md_chunk_bytes / KiB;
                return (Width){
                        .need_kb = saturate(data * (need > chunk_kb ? need : chunk_kb)),
                        .could_kb = saturate(data * (could > chunk_kb ? could : chunk_kb)),
                        .stripes = saturate(data * stripes),
                };
        }
        if (IN_SET(d->kind, RA_STACK_DM_LVM, RA_STACK_DM_OTHER))
                /* A table may stripe over its devices (lvcreate -i): sysfs does not show it. */
                return (Width){ .need_kb = need, .could_kb = could_sum, .stripes = stripes };
        /* raid1, linear, crypt, multipath: a read goes to one device beneath at a time. */
        return (Width){ .need_kb = need, .could_kb = could, .stripes = stripes };
}

static Width width_of(const RaStack *s, const uint32_t *leaf_prior_kb, size_t index, unsigned depth,
                      Width memo[], bool done[]) {
        const RaStackDevice *d = &s->devices[index];

        if (!done[index]) {
                /* A stack built by hand may loop; the reader's never does. */
                if (d->n_slaves > 0 && depth >= RA_STACK_DEPTH_MAX)
                        return (Width){ .stripes = 1 };

                if (d->n_slaves == 0) {
                        uint32_t kb = leaf_prior(s, leaf_prior_kb, index);

                        memo[index] = (Width){ .need_kb = kb, .could_kb = kb, .stripes = 1 };
                } else
                        memo[index] = width_over_slaves(s, leaf_prior_kb, d, depth, memo, done);
                done[index] = true;
        }
        return memo[index];
}

/* Where a disk beneath reports an optimal I/O size the top's is a multiple of, the top merely inherited it.
 */
static bool io_opt_is_inherited(const RaStack *s) {
        uint32_t top = ra_stack_top(s)->optimal_io_bytes;

        for (size_t i = 0; i < s->n_leaves; i++) {
                uint32_t leaf = ra_stack_leaf(s, i)->optimal_io_bytes;

                if (leaf > 0 && top % leaf == 0)
                        return true;
        }
        return false;
}

/* The window from the disks' priors and the stripes, and the clause that says so. */
static uint64_t layout_window(const RaStack *s, const uint32_t *leaf_prior_kb, Width top, char *why,
                              size_t size) {
        uint32_t largest = 0;

        for (size_t i = 0; i < s->n_leaves; i++)
                largest = leaf_prior_kb[i] > largest ? leaf_prior_kb[i] : largest;

        if (top.need_kb == 0) {
                (void) snprintf(why, size, "%u KiB, the kernel default, as the disks beneath have no prior",
                                KERNEL_DEFAULT_KB);
                return KERNEL_DEFAULT_KB;
        }

        if (ra_stack_top(s)->n_slaves == 0)
                (void) snprintf(why, size, "%" PRIu64 " KiB, its own prior, as nothing lies beneath it",
                                top.need_kb);
        else if (top.stripes == 1 && top.need_kb == largest) {
                if (s->n_leaves == 1)
                        (void) snprintf(why, size, "%" PRIu64 " KiB, the prior of %s beneath it",
                                        top.need_kb, ra_stack_leaf(s, 0)->name);
                else
                        (void) snprintf(why, size,
                                        "%" PRIu64 " KiB, the largest prior of the %zu disks beneath, "
                                        "as a read goes to one at a time",
                                        top.need_kb, s->n_leaves);
        } else if (top.need_kb == (uint64_t) largest * top.stripes)
                (void) snprintf(why, size,
                                "%" PRIu64 " x %" PRIu32 " KiB, the largest prior of the disks beneath "
                                "times the %" PRIu64 " disks a read is striped over",
                                top.stripes, largest, top.stripes);
        else if (top.need_kb > (uint64_t) largest * top.stripes)
                (void) snprintf(why, size,
                                "%" PRIu64 " KiB, a whole chunk for each of the %" PRIu64
                                " disks a read is striped over, or a window would miss some",
                                top.need_kb, top.stripes);
        else
                (void) snprintf(why, size,
                                "%" PRIu64 " KiB, what the disks beneath ask for, each as often as a read "
                                "is striped over it",
                                top.need_kb);
        return top.need_kb;
}

/*
 * The optimal I/O size: taken only where a dm table's layout could explain it
 * and no disk handed it up, within what the disks could use. Adds its clause
 * to why.
 */
static uint64_t io_opt_hint(const RaStack *s, Width top, uint64_t kb, char *why, size_t size) {
        const RaStackDevice *d = ra_stack_top(s);
        uint64_t hint_kb = 2 * (uint64_t) d->optimal_io_bytes / KiB, allowed;
        char io_opt[RA_SIZE_MAX], kernel[RA_SIZE_MAX];
        size_t len = strlen(why);

        if (hint_kb <= kb)
                return kb;

        (void) ra_format_size(d->optimal_io_bytes, io_opt);
        (void) ra_format_size(hint_kb * KiB, kernel);

        if (io_opt_is_inherited(s)) {
                (void) snprintf(why + len, size - len,
                                "; its %s optimal I/O size (the kernel's %s) is ignored, as the disks "
                                "beneath report it",
                                io_opt, kernel);
                return kb;
        }

        allowed = top.could_kb < RA_STACK_HINT_CAP_KB ? top.could_kb : RA_STACK_HINT_CAP_KB;
        if (allowed <= kb) {
                (void) snprintf(why + len, size - len,
                                "; its %s optimal I/O size (the kernel's %s) is ignored, as its layout "
                                "cannot use that much",
                                io_opt, kernel);
                return kb;
        }

        if (hint_kb <= allowed) {
                (void) snprintf(why + len, size - len,
                                "; raised to twice its %s optimal I/O size, as a table striped over its %zu "
                                "disks would ask",
                                io_opt, s->n_leaves);
                return hint_kb;
        }
        if (allowed < top.could_kb)
                (void) snprintf(why + len, size - len,
                                "; raised to %" PRIu64
                                " KiB for its %s optimal I/O size, as far as that size "
                                "alone may take a window",
                                allowed, io_opt);
        else
                (void) snprintf(why + len, size - len,
                                "; raised to %" PRIu64 " KiB for its %s optimal I/O size, the most a table "
                                "striped over its %zu disks could use",
                                allowed, io_opt, s->n_leaves);
        return allowed;
}

void ra_stack_prior(const RaStack *s, const uint32_t *leaf_prior_kb, RaBounds bounds, RaDecision *ret) {
        Width memo[RA_STACK_DEVICES_MAX];
        bool done[RA_STACK_DEVICES_MAX] = {};
        char size[RA_SIZE_MAX], why[RA_REASON_MAX];
        const RaStackDevice *top;
        const char *what;
        uint64_t kb, cap;
        Width w;

        *ret = (RaDecision){ .source = RA_SOURCE_PRIOR };

        if (!s || s->n_devices == 0 || s->n_devices > RA_STACK_DEVICES_MAX) {
                ra_reason_format(ret->reason, "No stack to decide for.");
                return;
        }
        top = ra_stack_top(s);
        if (top->size_bytes == 0) {
                ra_reason_format(
                        ret->reason,
                        "Size 0 (an array not running, or a table not loaded), so there is nothing to "
                        "read ahead yet.");
                return;
        }
        (void) ra_format_size(top->size_bytes, size);
        what = top->n_slaves > 0 ? "stack" : "device";

        w = width_of(s, leaf_prior_kb, 0, 0, memo, done);
        kb = layout_window(s, leaf_prior_kb, w, why, sizeof(why));
        kb = io_opt_hint(s, w, kb, why, sizeof(why));

        /* Then as for any disk: a small device never reads a large share of itself ahead. */
        cap = ra_policy_size_cap_kb(top->size_bytes);
        ret->kb = ra_policy_clamp_kb((uint32_t) (kb < cap ? kb : cap), bounds);

        if (ret->kb != (kb < cap ? kb : cap))
                ra_reason_format(ret->reason,
                                 "%s %s: %s, held within the configured %" PRIu32 " to %" PRIu32 " KiB.",
                                 size, what, why, bounds.min_kb, bounds.max_kb);
        else if (cap < kb)
                ra_reason_format(ret->reason, "%s %s: %s, capped at %" PRIu64 " KiB by its size.", size,
                                 what, why, cap);
        else
                ra_reason_format(ret->reason, "%s %s: %s.", size, what, why);
}

int ra_stack_read_priors(const char *sysfs_root, const char *name, RaStackLeafReader read_leaf,
                         void *userdata, RaStack **ret_stack, uint32_t **ret_leaf_kb, char ***ret_leaf_names,
                         char **ret_bad_path) {
        const RaBounds any = { .min_kb = RA_KB_MIN, .max_kb = RA_KB_LIMIT };
        _cleanup_(ra_stack_freep) RaStack *s = NULL;
        _cleanup_(ra_strv_freep) char **names = NULL;
        _cleanup_free_ uint32_t *kb = NULL;
        int r;

        *ret_stack = NULL;
        *ret_leaf_kb = NULL;
        if (ret_leaf_names)
                *ret_leaf_names = NULL;

        /* Gone beneath: a stack being built or torn down, which its next event shows settled. */
        r = ra_stack_read(sysfs_root, name, &s, ret_bad_path);
        if (r == -ENODEV)
                return -EAGAIN;
        if (r < 0)
                return r;
        if (ra_stack_top(s)->n_slaves == 0)
                return 0;

        kb = calloc(s->n_leaves + 1, sizeof(uint32_t));
        if (!kb)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_leaves; i++) {
                _cleanup_(ra_device_attrs_clear) RaDeviceAttrs a = {};
                RaDecision prior;

                /*
                 * Deciding without it would give the others' prior, or the
                 * kernel's default, depending on the moment: rather nothing,
                 * until the leaf's own event re-decides the devices above it.
                 */
                r = read_leaf(userdata, ra_stack_leaf(s, i)->name, &a);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (ret_bad_path &&
                            asprintf(ret_bad_path, "block/%s", ra_stack_leaf(s, i)->name) < 0)
                                *ret_bad_path = NULL;
                        return -EAGAIN;
                }
                ra_policy_prior(&a, any, &prior);
                kb[i] = prior.kb;
                if (ra_strv_push(&names, a.name) < 0)
                        return -ENOMEM;
        }

        *ret_stack = TAKE_PTR(s);
        *ret_leaf_kb = TAKE_PTR(kb);
        if (ret_leaf_names)
                *ret_leaf_names = TAKE_PTR(names);
        return 1;
}

bool ra_stack_decide(int read, const RaStack *s, const uint32_t *leaf_kb, RaBounds bounds, RaDecision *ret) {
        if (read == -EAGAIN) {
                *ret = (RaDecision){ .source = RA_SOURCE_PRIOR };
                ra_reason_format(ret->reason,
                                 "Its stack is not settled (a device in it is being set up or going away), "
                                 "so it is decided when it is.");
                return true;
        }
        if (read <= 0 || !s)
                return false;
        ra_stack_prior(s, leaf_kb, bounds, ret);
        return true;
}
