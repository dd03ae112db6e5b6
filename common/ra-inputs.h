/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-bdi.h"
#include "ra-config.h"
#include "ra-device.h"
#include "ra-settings.h"
#include "ra-stack.h"
#include "ra-state.h"

/*
 * What a decision is made from, read once for radaemon and its udev helper
 * alike: a disk's attributes and properties, the stack beneath it and its
 * leaves' priors, a bdi and the devices beneath it. The one difference
 * between the two is where the object's own udev properties come from, so
 * that is the only parameter.
 */
typedef struct RaPropertySource {
        /* The object's own properties: the event's environment (the helper), udev's database (radaemon). */
        RaPropertyGetter get;
        void *userdata;
        /*
         * A device beneath the object (a stack's leaf, a bdi's disk), by kernel
         * name: its attributes, and its properties from udev's database in
         * both, as ra_stack_read_leaf_udev() reads them. The event's
         * environment is the object's, never theirs; the database has held
         * theirs since their own events. Always the database, so that both
         * read the same leaf and the same disk beneath a bdi.
         */
        RaStackLeafReader read_beneath;
        void *beneath_userdata;
} RaPropertySource;

/* Everything about one object that its settings are built from; all owned. */
typedef struct RaInputs {
        RaSettingsKind kind;
        RaDeviceAttrs attrs; /* a bdi's: its own value and properties, the size of what lies beneath */
        char *identity;      /* set by the caller, who knows the other devices present (NULL: none) */

        /* A disk or stack top: what ra_stack_read_priors() said, and why not where it could not. */
        int stack_read;
        RaStack *stack;
        uint32_t *leaf_kb;
        char **leaf_names;
        char **leaf_identities; /* one per leaf, "" where unknown; NULL: none known */
        char *stack_bad_path;
        bool bio_based; /* a queue without blk-mq (dm, md): its requests are traced as bios */

        /* A bdi: what lies beneath (a partition by its disk, each once) and the value it was given. */
        RaBdi bdi;
        uint32_t *beneath_kb;
        char **beneath_names;
        uint32_t server_kb;
} RaInputs;

void ra_inputs_clear(RaInputs *in);

/*
 * Reads the block disk <sysfs_root>/block/<name> and the stack beneath
 * it. Returns 1 when read, 0 when it is not a disk with a read_ahead_kb (a
 * partition, gone), or a negative errno with *ret_bad_attr naming what could
 * not be read. A RADAEMON_* property that is not valid is skipped, named in
 * *ret_bad_property, and the rest is read. A stack that cannot be read
 * leaves the device decided from its own attributes (stack_read says why).
 */
int ra_inputs_read_disk(RaInputs *in, const char *sysfs_root, const char *name, const RaPropertySource *src,
                        const char **ret_bad_attr, const char **ret_bad_property);

/*
 * The devices beneath a bdi (b->beneath), each read through read_beneath
 * (a partition stands for its disk): their priors in *ret_kb (one per
 * b->beneath, 0 where gone), the disks each once in *ret_names, their
 * sizes summed into a, rotational and removable if any is, max_sectors_kb
 * the least; b's stripes no more than its disks. -ENOMEM.
 */
int ra_inputs_read_beneath(RaDeviceAttrs *a, RaBdi *b, const char *sysfs_root,
                           RaStackLeafReader read_beneath, void *userdata, uint32_t **ret_kb,
                           char ***ret_names);

/*
 * A btrfs bdi <sysfs_root>/class/bdi/<name> being mounted, before mountinfo
 * shows it: its file system from <sysfs_root>/fs/btrfs, its value, its own
 * properties, what lies beneath. Returns 1 when read, 0 when there is no
 * such btrfs (yet) or nothing beneath it is left, a negative errno.
 */
int ra_inputs_read_btrfs(RaInputs *in, const char *sysfs_root, const char *name, const RaPropertySource *src,
                         const char **ret_bad_property);

/*
 * The value a bdi was given (NFS: the kernel's from rsize, or nfsrahead's):
 * what the helper recorded at the add, else what the store kept under
 * identity, else what it holds now.
 */
uint32_t ra_inputs_server_kb(const RaDeviceAttrs *a, const RaState *s, const char *identity);

/* The settings input of in: the one place it is filled from what was read. run may be NULL. */
void ra_inputs_settings_input(const RaInputs *in, const RaSettingsRun *run, RaSettingsInput *ret);

/* The decision radaemon makes for in, with the configuration and the state (may be NULL). */
void ra_inputs_decide(const RaConfig *c, const RaState *s, const RaInputs *in, const RaSettingsRun *run,
                      RaSettings *ret_settings, RaDecision *ret);

/*
 * The identity the object is kept under, as the udev helper finds it (it
 * sees one device at a time; radaemon tells twins apart among the devices
 * it tracks, daemon/ra-identify.c), in two steps around one read of the
 * state file: first the identities whose lines may apply, the object's and
 * its leaves' (a bdi's identity is set then); then, with that state, the
 * identity of the object and of each leaf, told apart from twins through
 * udev's database, and a bdi's server_kb. userdata is a struct udev *
 * (ra-inputs-udev.c). Negative errno.
 */
int ra_inputs_candidates_udev(RaInputs *in, void *userdata, char ***ret);
int ra_inputs_identify_udev(RaInputs *in, void *userdata, RaState *s);
