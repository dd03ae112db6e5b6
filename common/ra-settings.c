/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "ra-settings.h"

void ra_settings_for_device(const RaConfig *c, const RaState *s, const char *name, const char *identity,
                            RaSettings *ret) {
        ra_config_device_settings(c, name, ret);

        /* Whatever else the state store keeps per device belongs here, for both users. */
        ret->pinned_kb = s && identity ? ra_state_pin(s, identity) : 0;
        ret->learned_kb = s && identity ? ra_state_learned(s, identity) : 0;
}

void ra_settings_for_bdi(const RaConfig *c, const RaState *s, const char *const *keys, const char *identity,
                         RaSettings *ret) {
        ra_config_bdi_settings(c, keys, ret);
        ret->pinned_kb = s && identity ? ra_state_pin(s, identity) : 0;
        ret->learned_kb = s && identity ? ra_state_learned(s, identity) : 0;
}
