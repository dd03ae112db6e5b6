/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-context.h"

/*
 * d's identity, once every disk of a batch of udev events is in the
 * registry, so that two present devices reporting one identity are seen
 * whatever their order: each is kept apart (ra_device_identity_apart();
 * the ones known before are added to *partners), neither takes the other's
 * state, and the log says so. Otherwise what an earlier radaemon kept
 * under its old identity moves to it. previous: its identity before the
 * event, NULL for a new one. The tuning path calls it (ra-tune-batch.c), and
 * decides again for the partners.
 */
void ra_identify(Manager *m, RaDisk *d, const char *previous, char ***partners);
