/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-device.h"
#include "ra-state.h"

/*
 * The identity radaemon keeps a under, decided as the daemon decides it
 * among the disks present (daemon/ra-registry.c), here from udev's
 * database, for the udev helper, which sees one disk at a time: apart
 * (ra_device_identity_apart()) where another present disk reports a's WWN
 * or serial identity; otherwise what was kept under a's old identity moved
 * to it in s, unless another present disk reports that old one too.
 * Returns 0, or a negative errno.
 */
int ra_device_identify_udev(RaState *s, const RaDeviceAttrs *a, char **ret_identity);

/*
 * The identities whose state ra_device_identify_udev() may give a: its own,
 * its own kept apart from a twin, and the old one carried over. The udev
 * helper reads only their lines of a state file of thousands of devices.
 */
int ra_device_candidate_identities(const RaDeviceAttrs *a, char ***ret);

/*
 * The same for the disks at the bottom of a stack (names, as
 * ra_stack_read_priors() gave them), read from udev's database
 * (ra_stack_read_leaf_udev()): their candidate identities added to
 * *candidates, for the one read of the state file; then, with that state,
 * the identity each is kept under, one per name in order, "" where a disk
 * cannot be read (its calibration is then not known). userdata is a
 * struct udev *. Negative errno on failure.
 */
int ra_device_leaf_candidates_udev(void *userdata, char *const *names, char ***candidates);
int ra_device_identify_leaves_udev(void *userdata, RaState *s, char *const *names, char ***ret);
