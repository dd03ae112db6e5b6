/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>

#include "ra-bdi.h"
#include "ra-config.h"
#include "ra-policy.h"
#include "ra-stack.h"
#include "ra-state.h"
#include "ra-swap.h"

/* What an object's prior comes from: each kind has its own. */
typedef enum RaSettingsKind {
        RA_SETTINGS_DISK,  /* its own attributes (ra_policy_prior()) */
        RA_SETTINGS_STACK, /* dm, md: the disks at the bottom of its stack (ra_stack_decide()) */
        RA_SETTINGS_BDI,   /* btrfs, FUSE, NFS: what lies beneath it, or its server (ra_bdi_prior()) */
} RaSettingsKind;

/*
 * A block device's kind from what ra_stack_read_priors() said of it: a stack
 * when one was read or is being set up (decided when it settles), its own
 * attributes when there is none or it cannot be read. radaemon and its
 * helper both ask this.
 */
static inline RaSettingsKind ra_settings_block_kind(int stack_read) {
        return stack_read > 0 || stack_read == -EAGAIN ? RA_SETTINGS_STACK : RA_SETTINGS_DISK;
}

/*
 * What the daemon knows newer than the state store: what it learned in this
 * run (possibly nothing, after another medium came behind the name) and
 * whether it yields to somebody else's value. The udev helper has none.
 */
typedef struct RaSettingsRun {
        uint32_t learned_kb;
        const char *learned_reason;
        bool external;
} RaSettingsRun;

/* Everything about one object that its settings are built from; pointers are borrowed. */
typedef struct RaSettingsInput {
        RaSettingsKind kind;
        const RaDeviceAttrs *attrs; /* its RADAEMON_MIN_KB and RADAEMON_MAX_KB bound the kind's prior */
        const char *identity;       /* NULL: nothing stored applies */
        const char *name;           /* disk, stack: the kernel name [device:GLOB] sections match */

        /*
         * RA_SETTINGS_STACK: what ra_stack_read_priors() returned, the stack and its leaves' priors,
         * and the identity each leaf is kept under (one per leaf, NULL where none is known; the
         * array NULL for none): their calibrations compose the stack's (ra_stack_calibrated()).
         */
        int stack_read;
        const RaStack *stack;
        const uint32_t *leaf_kb;
        char *const *leaf_identities;

        /* RA_SETTINGS_BDI: the bdi, the priors of what lies beneath it, and the value it was given. */
        const RaBdi *bdi;
        const uint32_t *beneath_kb;
        uint32_t server_kb;

        const RaSettingsRun *run; /* NULL: the stored learned value, not yielding */
} RaSettingsInput;

/*
 * The complete settings for one disk, stacked device or bdi: configuration,
 * stored state, the kind's prior, learned and external. What
 * ra_policy_decide() needs besides the attributes; the one way to build it,
 * so that radaemon and its udev helper always decide alike. The bounds and
 * pin come from [policy] and every [device:GLOB] section matching the
 * kernel name (a bdi: [bdi:GLOB] sections matching any of its keys, see
 * ra_bdi_keys()); the pin and learned value from what the state store keeps
 * for the identity. s and in->identity may be NULL (no state).
 */
void ra_settings_build(const RaConfig *c, const RaState *s, const RaSettingsInput *in, RaSettings *ret);

/* What the daemon knows of swap newer than the store, and what the sysctl holds. */
typedef struct RaSwapRun {
        int learned; /* for the active class; -1 when nothing was learned */
        const char *learned_reason;
        bool external;
        int current; /* vm.page-cluster now; -1 when it cannot be read */
} RaSwapRun;

/* The same for vm.page-cluster: [swap], the pin in force, what was learned. */
void ra_settings_build_swap(const RaConfig *c, const RaState *s, const RaSwapRun *run, RaSwapSettings *ret);
