/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>
#include <systemd/sd-bus.h>

/* Access control for the D-Bus API's methods that change settings (polkit). */

/*
 * Root may change settings; so may a caller polkit authorizes, where polkit
 * runs. Returns 1 when allowed (with the caller's uid), or a negative errno
 * with error set. Returns 0 while polkit is asked: the method returns 1
 * (handled) without a reply, and runs again from the start with polkit's
 * answer.
 */
int ra_bus_check_authorized(sd_bus_message *msg, uid_t *ret_uid, sd_bus_error *error);

/* Forgets every check and answer: their calls are gone with the connection. */
void ra_bus_access_close(void);
