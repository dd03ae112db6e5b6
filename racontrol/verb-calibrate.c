/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "racontrol.h"

/* The reads take about a second; radaemon answers when they are done. */
#define CALIBRATE_TIMEOUT_USEC (30 * UINT64_C(1000000))

int verb_calibrate(RcContext *c, char **args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        const char *figures = NULL;
        RcDevice d;
        int r;

        if (strcmp(args[0], RC_SWAP_NAME) == 0) {
                fprintf(stderr, "racontrol: calibrate measures a disk; swap has nothing to measure.\n");
                return RC_EXIT_USAGE;
        }

        r = rc_get_device(c, args[0], &d);
        if (r != 0)
                return r;
        r = sd_bus_message_new_method_call(c->bus, &call, RA_BUS_NAME, d.path, RA_BUS_DEVICE_INTERFACE,
                                           "Calibrate");
        if (r >= 0)
                r = sd_bus_call(c->bus, call, CALIBRATE_TIMEOUT_USEC, &error, &reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &figures);
        rc_device_clear(&d);
        if (r < 0)
                return rc_report_error(args[0], &error, r);

        if (c->json)
                return verb_show(c, args);

        r = rc_get_device(c, args[0], &d);
        if (r != 0)
                return r;
        r = rc_device_escape_text(&d);
        if (r < 0) {
                rc_device_clear(&d);
                return rc_report_error(args[0], NULL, r);
        }
        printf("%s: %s\n%s: %" PRIu32 " KiB (%s): %s\n", args[0], figures, args[0], d.target_kb,
               d.source ?: "", d.reason ?: "");
        rc_device_clear(&d);
        return 0;
}
