/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ra-util.h"
#include "racontrol.h"

int verb_set(RcContext *c, char **args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *name = args[0];
        uint32_t kb;
        int r;

        if (strcmp(name, RC_SWAP_NAME) == 0)
                return rc_swap_set(c, args[1]);

        /* Not a number is a usage error; a number radaemon refuses is a bad value. */
        r = ra_parse_u32(args[1], &kb);
        if (r == -EINVAL) {
                fprintf(stderr, "racontrol: '%s' is not a size in KiB; see racontrol --help\n", args[1]);
                return RC_EXIT_USAGE;
        }
        if (r < 0) {
                fprintf(stderr, "racontrol: bad value: %s KiB is far too large\n", args[1]);
                return RC_EXIT_FAILURE;
        }

        r = rc_connect(c);
        if (r != 0)
                return r;

        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE, "SetReadAhead",
                               &error, NULL, "sub", name, kb, (int) !c->runtime);
        if (r < 0)
                return rc_report_error(name, &error, r);

        if (c->json)
                return verb_show(c, args);

        printf("%s: pinned to %" PRIu32 " KiB%s.\n", name, kb,
               c->runtime ? " until radaemon stops" : "; the pin survives restarts, re-plugs and remounts");
        return 0;
}
