/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "ra-bus-string.h"
#include "ra-util.h"

int ra_bus_append_string(sd_bus_message *m, const char *s) {
        _cleanup_free_ char *escaped = NULL;

        s = s ?: "";
        if (ra_utf8_is_valid(s))
                return sd_bus_message_append_basic(m, 's', s);

        escaped = ra_utf8_escape_invalid(s);
        if (!escaped)
                return -ENOMEM;
        return sd_bus_message_append_basic(m, 's', escaped);
}

int ra_bus_append_strv(sd_bus_message *m, char *const *l) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "s");
        for (size_t i = 0; r >= 0 && l && l[i]; i++)
                r = ra_bus_append_string(m, l[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int ra_bus_error_setf(sd_bus_error *e, const char *name, const char *format, ...) {
        _cleanup_free_ char *message = NULL, *escaped = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&message, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;

        if (!ra_utf8_is_valid(message)) {
                escaped = ra_utf8_escape_invalid(message);
                if (!escaped)
                        return -ENOMEM;
        }
        return sd_bus_error_set(e, name, escaped ?: message);
}

int ra_bus_property_get_string(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return ra_bus_append_string(reply, *(const char **) userdata);
}

int ra_bus_property_get_strv(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return ra_bus_append_strv(reply, *(char ***) userdata);
}

int ra_bus_property_get_char_array(sd_bus *bus, const char *path, const char *interface,
                                   const char *property, sd_bus_message *reply, void *userdata,
                                   sd_bus_error *error) {
        return ra_bus_append_string(reply, userdata);
}
