/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <libudev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ra-fleet.h"
#include "ra-util.h"
#include "radaemon-udev-fleet.h"

/*
 * The helper looks the key up itself rather than the rule through udev's
 * hwdb builtin: a rule can pass a property to a builtin only inside its
 * command line, which udev splits at spaces and ends at a quote, and whose
 * first word the builtin takes for an option when it starts with '-'. udev
 * hands the helper the properties in its environment, byte for byte, and
 * libudev's hwdb matches as the builtin does (both are sd-hwdb).
 */
int radaemon_udev_fleet_lookup(const RaDeviceAttrs *a, uint32_t *ret_kb) {
        _cleanup_free_ char *key = NULL;
        struct udev_list_entry *e;
        struct udev_hwdb *hwdb;
        struct udev *udev;
        const char *value = NULL;
        uint32_t kb = 0;
        int r;

        *ret_kb = 0;
        r = ra_fleet_key(a->vendor, a->model, a->revision, &key);
        if (r == -EINVAL || r == -EILSEQ)
                return 0; /* no model, or one that no record matches exactly */
        if (r < 0)
                return r;

        udev = udev_new();
        if (!udev)
                return -ENOMEM;
        hwdb = udev_hwdb_new(udev);
        if (!hwdb) {
                /* No hwdb.bin, as on a machine that never ran "systemd-hwdb update": no record. */
                udev_unref(udev);
                return 0;
        }
        udev_list_entry_foreach (e, udev_hwdb_get_properties_list_entry(hwdb, key, 0))
                if (strcmp(udev_list_entry_get_name(e), "RADAEMON_FLEET_KB") == 0)
                        value = udev_list_entry_get_value(e);
        if (value && ra_parse_u32(value, &kb) >= 0 && ra_kb_is_valid(kb))
                *ret_kb = kb;
        else if (value)
                fprintf(stderr,
                        "radaemon-udev: %s: ignoring RADAEMON_FLEET_KB=%s from hwdb (%s): not a multiple of 4 "
                        "from %u to %u (KiB).\n",
                        a->name, value, key, RA_KB_MIN, RA_KB_LIMIT);
        udev_hwdb_unref(hwdb);
        udev_unref(udev);
        return 0;
}

int radaemon_udev_fleet(RaDeviceAttrs *a) {
        int r;

        if (*(getenv("RADAEMON_FLEET_KB") ?: ""))
                return 0;
        r = radaemon_udev_fleet_lookup(a, &a->fleet_kb);
        if (r >= 0 && a->fleet_kb > 0)
                printf("RADAEMON_FLEET_KB=%" PRIu32 "\n", a->fleet_kb);
        return r;
}
