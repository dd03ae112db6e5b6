/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "ra-device-udev.h"
#include "ra-inputs.h"
#include "ra-util.h"

/* The leaves of a stack that was read; NULL otherwise. */
static char *const *stack_leaves(const RaInputs *in) {
        return in->kind == RA_SETTINGS_STACK && in->stack_read > 0 ? in->leaf_names : NULL;
}

int ra_inputs_candidates_udev(RaInputs *in, void *userdata, char ***ret) {
        _cleanup_(ra_strv_freep) char **candidates = NULL;
        int r;

        if (in->kind == RA_SETTINGS_BDI) {
                r = ra_bdi_identity(&in->bdi, &in->identity);
                if (r >= 0)
                        r = ra_strv_push(&candidates, in->identity);
        } else {
                r = ra_device_candidate_identities(&in->attrs, &candidates);
                if (r >= 0 && stack_leaves(in))
                        r = ra_device_leaf_candidates_udev(userdata, stack_leaves(in), &candidates);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(candidates);
        return 0;
}

int ra_inputs_identify_udev(RaInputs *in, void *userdata, RaState *s) {
        int r;

        if (in->kind == RA_SETTINGS_BDI) {
                in->server_kb = ra_inputs_server_kb(&in->attrs, s, in->identity);
                return 0;
        }
        r = ra_device_identify_udev(s, &in->attrs, &in->identity);
        if (r >= 0 && stack_leaves(in))
                r = ra_device_identify_leaves_udev(userdata, s, stack_leaves(in), &in->leaf_identities);
        return r;
}
