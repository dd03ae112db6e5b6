/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-config.h"
#include "ra-policy.h"
#include "ra-state.h"

/*
 * Everything but the device itself that a decision depends on, gathered in one
 * place so that radaemon and its udev helper always decide alike: the bounds
 * and pin of [policy] and every [device:GLOB] section matching the kernel
 * name, and what the state store keeps for the device's identity. s and
 * identity may be NULL (no state).
 */
void ra_settings_for_device(const RaConfig *c, const RaState *s, const char *name, const char *identity,
                            RaSettings *ret);

/* The same for a bdi, whose [bdi:GLOB] sections match any of keys (see ra_config_bdi_settings()). */
void ra_settings_for_bdi(const RaConfig *c, const RaState *s, const char *const *keys, const char *identity,
                         RaSettings *ret);
