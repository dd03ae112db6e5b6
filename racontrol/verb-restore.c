/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>

#include "racontrol.h"

int verb_restore(RcContext *c, char **args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t n;
        int r;

        r = rc_connect(c);
        if (r != 0)
                return r;

        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE, "Restore", &error,
                               &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_read(reply, "u", &n);
        if (r < 0)
                return rc_report_error("restore", &error, r);

        if (c->json)
                printf("{\"restored\":%u}\n", n);
        else
                printf("Put %u disk%s back to their values before radaemon; radaemon now observes and writes "
                       "nothing until 'racontrol reload'.\n",
                       n, n == 1 ? "" : "s");
        return 0;
}
