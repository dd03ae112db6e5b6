/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "racontrol.h"

int verb_auto(RcContext *c, char **args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        if (strcmp(args[0], RC_SWAP_NAME) == 0)
                return rc_swap_auto(c);

        r = rc_connect(c);
        if (r != 0)
                return r;

        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE, "ClearPin",
                               &error, NULL, "s", args[0]);
        if (r < 0)
                return rc_report_error(args[0], &error, r);

        if (c->json)
                return verb_show(c, args);

        printf("%s: no longer pinned; radaemon decides its value.\n", args[0]);
        return 0;
}
