/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "ra-settings.h"

/* A settled stack whose every leaf was measured: the model composed from theirs, below learned. */
static void stack_calibrated(const RaState *s, const RaSettingsInput *in, RaSettings *ret) {
        const RaCalib *calib[RA_STACK_DEVICES_MAX] = {};

        if (!s || !in->leaf_identities || in->stack_read <= 0 || !in->stack ||
            in->stack->n_leaves > RA_STACK_DEVICES_MAX)
                return;
        for (size_t i = 0; i < in->stack->n_leaves; i++)
                calib[i] = in->leaf_identities[i] ? ra_state_calib(s, in->leaf_identities[i]) : NULL;
        ret->has_calibrated = ra_stack_calibrated(in->stack, calib, in->attrs,
                                                  ra_policy_bounds(in->attrs, ret), &ret->calibrated);
}

void ra_settings_build(const RaConfig *c, const RaState *s, const RaSettingsInput *in, RaSettings *ret) {
        const char *keys[4] = {};

        if (in->kind == RA_SETTINGS_BDI) {
                ra_bdi_keys(in->bdi, keys);
                ra_config_bdi_settings(c, keys, ret);
        } else
                ra_config_device_settings(c, in->name, ret);

        /* Whatever else the state store keeps per object belongs here, for both users. */
        ret->pinned_kb = s && in->identity ? ra_state_pin(s, in->identity) : 0;
        ret->learned_kb = s && in->identity ? ra_state_learned(s, in->identity) : 0;

        /* The kind's prior is bounded as the attributes' would be: by udev's properties too. */
        if (in->kind == RA_SETTINGS_BDI) {
                ra_bdi_prior(in->bdi, in->beneath_kb, in->server_kb, ra_policy_bounds(in->attrs, ret),
                             &ret->prior);
                ret->has_prior = true;
        } else if (in->kind == RA_SETTINGS_STACK) {
                /* A stack this module cannot read leaves the device to its own attributes. */
                ret->has_prior = ra_stack_decide(in->stack_read, in->stack, in->leaf_kb,
                                                 ra_policy_bounds(in->attrs, ret), &ret->prior);
                stack_calibrated(s, in, ret);
        }

        /* A disk measured once: what its calibration says, below learned and a fleet's value. */
        if (in->kind == RA_SETTINGS_DISK && s && in->identity && ra_state_calib(s, in->identity)) {
                ret->has_calibrated = true;
                ra_calib_prior(ra_state_calib(s, in->identity), in->attrs, ra_policy_bounds(in->attrs, ret),
                               &ret->calibrated);
        }

        /* What this run has learned, and whether it yields, are newer than the store. */
        if (in->run) {
                ret->learned_kb = in->run->learned_kb;
                ret->learned_reason = in->run->learned_reason;
                ret->external = in->run->external;
        }
}

void ra_settings_build_swap(const RaConfig *c, const RaState *s, const RaSwapRun *run, RaSwapSettings *ret) {
        *ret = (RaSwapSettings){
                .manage = c->swap_manage,
                .pinned = s ? ra_state_swap_pin(s) : -1,
                .config = c->swap_page_cluster,
                .learned = run->learned,
                .learned_reason = run->learned_reason,
                .external = run->external,
                .current = run->current,
        };
}
