/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "ra-macro.h"

/*
 * Every string radaemon puts on D-Bus goes through here. D-Bus carries only
 * valid UTF-8, and sd-bus refuses anything else: one device name, mount
 * point or udev property with other bytes would fail the whole message (and
 * GetManagedObjects with it, for every client). Bytes that are not UTF-8 are
 * sent escaped as "\xNN" (ra_utf8_escape_invalid()); valid text as it is.
 */

/* Appends s as one "s"; NULL as "". */
int ra_bus_append_string(sd_bus_message *m, const char *s);
/* Appends l as one "as"; NULL as an empty array. */
int ra_bus_append_strv(sd_bus_message *m, char *const *l);

/* sd_bus_error_setf() for messages that may quote names, paths or other bytes. */
int ra_bus_error_setf(sd_bus_error *e, const char *name, const char *format, ...) _printf_(3, 4);

/*
 * Property getters for SD_BUS_PROPERTY: the field at userdata is a
 * `char *` (NULL as ""), a `const char *` alike, or a char array.
 */
int ra_bus_property_get_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error);
int ra_bus_property_get_strv(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error);
int ra_bus_property_get_char_array(sd_bus *bus, const char *path, const char *interface,
                                   const char *property, sd_bus_message *reply, void *userdata,
                                   sd_bus_error *error);
