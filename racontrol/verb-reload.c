/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>

#include "racontrol.h"

int verb_reload(RcContext *c, char **args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = rc_connect(c);
        if (r != 0)
                return r;

        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE, "Reload", &error,
                               NULL, NULL);
        if (r < 0)
                return rc_report_error("reload", &error, r);

        if (c->json)
                puts("{\"reloaded\":true}");
        else
                puts("Configuration reloaded.");
        return 0;
}
