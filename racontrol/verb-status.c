/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ra-util.h"
#include "racontrol.h"

static void print_table(const RcDevice *devices, size_t n, const char *mode, const char *state_error,
                        const char *learning_off) {
        int width = (int) strlen("DEVICE");

        /* Above the table: the values below are then priors, pins and stored ones only. */
        if (learning_off[0])
                printf("Learning is off: %s\n\n", learning_off);

        for (size_t i = 0; i < n; i++)
                if ((int) strlen(devices[i].name ?: "") > width)
                        width = (int) strlen(devices[i].name);

        printf("%-*s %-7s %10s %3s %7s %7s %-10s %s\n", width, "DEVICE", "KIND", "SIZE", "ROT", "SYSFS",
               "TARGET", "SOURCE", "REASON");
        for (size_t i = 0; i < n; i++) {
                const RcDevice *d = &devices[i];
                char size[RA_SIZE_MAX] = "-", target[16] = "-";
                /* A bdi by its file system's kind ("btrfs", "fuse", "nfs"), with its mount point below. */
                bool bdi = ra_streq(d->kind, "bdi");
                const char *kind = bdi ? d->transport ?: "bdi" : d->kind ?: "disk";

                if (d->target_kb > 0)
                        (void) snprintf(target, sizeof(target), "%" PRIu32, d->target_kb);
                if (d->size_bytes != UINT64_MAX)
                        (void) ra_format_size(d->size_bytes, size);
                printf("%-*s %-7s %10s %3s %7" PRIu32 " %7s %-10s %s\n", width, d->name, kind, size,
                       d->rotational ? "yes" : "no", d->read_ahead_kb, target, d->source ?: "",
                       d->reason ?: "");
                if (bdi)
                        printf("%-*s   on %s\n", width, "", d->mount_point ?: "");
        }

        if (n == 0)
                printf("(radaemon manages no disk and no bdi)\n");
        if (strcmp(mode, "observe") == 0)
                printf("\nradaemon is in observe mode: it decides and reports, but writes nothing.\n");
        if (state_error[0])
                printf("\nWarning: %s; radaemon keeps its state in memory until it can write it.\n",
                       state_error);
}

/*
 * The stored pins of devices that are not there (radaemon never forgets
 * them), after the table or as a JSON array. A radaemon without AbsentPins
 * has none to tell.
 */
static int print_absent_pins(RcContext *c, bool json) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *identity;
        uint32_t kb;
        size_t n = 0;
        int r;

        r = sd_bus_get_property(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE, "AbsentPins",
                                &error, &reply, "a(su)");
        if (r < 0 && !sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_PROPERTY))
                return rc_report_error("reading the pins of absent devices", &error, r);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(su)");
        if (json)
                putchar('[');
        while (r >= 0 && (r = sd_bus_message_read(reply, "(su)", &identity, &kb)) > 0) {
                if (json) {
                        fputs(n > 0 ? ",{\"identity\":" : "{\"identity\":", stdout);
                        rc_json_string(identity);
                        printf(",\"pin_kb\":%" PRIu32 "}", kb);
                } else {
                        printf("%s  ", n == 0 ? "\nPinned, not present:\n" : "");
                        rc_print_text(identity);
                        printf(": %" PRIu32 " KiB\n", kb);
                }
                n++;
        }
        if (json)
                putchar(']');
        if (r < 0 && reply)
                return rc_report_error("reading the pins of absent devices", &error, r);
        /* radaemon tells them to root only: an empty list says nothing to anyone else. */
        if (!json && n == 0 && geteuid() != 0)
                printf("\nPins of devices not present are shown to root only.\n");
        return 0;
}

int verb_status(RcContext *c, char **args) {
        _cleanup_free_ char *version = NULL, *mode = NULL, *state_error = NULL, *evidence = NULL,
                            *learning_off = NULL;
        RcDevice *devices = NULL;
        size_t n = 0;
        int r;

        r = rc_get_manager(c, &version, &mode, &state_error);
        if (r != 0)
                return r;
        r = rc_get_learning(c, &evidence, &learning_off);
        if (r != 0)
                return r;
        r = rc_get_devices(c, &devices, &n);
        if (r != 0)
                return r;

        if (c->json) {
                fputs("{\"version\":", stdout);
                rc_json_string(version);
                fputs(",\"mode\":", stdout);
                rc_json_string(mode);
                fputs(",\"state_error\":", stdout);
                rc_json_string(state_error);
                fputs(",\"evidence\":", stdout);
                rc_json_string(evidence);
                fputs(",\"learning_off\":", stdout);
                rc_json_string(learning_off);
                fputs(",\"absent_pins\":", stdout);
                r = print_absent_pins(c, true);
                fputs(",\"devices\":[", stdout);
                for (size_t i = 0; i < n; i++) {
                        if (i > 0)
                                putchar(',');
                        rc_json_device(&devices[i]);
                }
                fputs("],\"swap\":", stdout);
                if (rc_swap_status(c, true) != 0)
                        r = RC_EXIT_FAILURE;
                fputs("}\n", stdout);
        } else {
                for (size_t i = 0; r >= 0 && i < n; i++)
                        r = rc_device_escape_text(&devices[i]);
                if (r >= 0)
                        r = rc_text_escape(&state_error);
                if (r >= 0)
                        r = rc_text_escape(&learning_off);
                if (r < 0) {
                        for (size_t i = 0; i < n; i++)
                                rc_device_clear(&devices[i]);
                        free(devices);
                        return rc_report_error("status", NULL, r);
                }
                print_table(devices, n, mode, state_error, learning_off);
                r = print_absent_pins(c, false);
                if (rc_swap_status(c, false) != 0)
                        r = RC_EXIT_FAILURE;
        }

        for (size_t i = 0; i < n; i++)
                rc_device_clear(&devices[i]);
        free(devices);
        return r;
}
