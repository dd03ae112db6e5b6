/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "ra-stack.h"
#include "ra-util.h"

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
