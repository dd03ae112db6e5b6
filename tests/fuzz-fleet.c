/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fleet key and hwdb record of a disk, from a vendor, model and revision
 * a device reports (a USB bridge says what its maker likes): the input is
 * the three, a NUL after each; what is left names the host.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ra-fleet.h"

/* The next NUL-ended string of the input, copied; NULL when none is left. */
static char *next(const uint8_t **data, size_t *size) {
        const uint8_t *end = memchr(*data, 0, *size);
        size_t n = end ? (size_t) (end - *data) : *size;
        char *s = strndup((const char *) *data, n);

        *data += end ? n + 1 : n;
        *size -= end ? n + 1 : n;
        return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *vendor = next(&data, &size), *model = next(&data, &size), *revision = next(&data, &size),
             *host = next(&data, &size), *key = NULL, *match = NULL, *record = NULL, *comment;
        RaFleetEntry e = {
                .name = "sdb",
                .identity = "serial:x",
                .vendor = vendor,
                .model = model,
                .revision = revision,
                .kb = 1024,
                .reason = "Calibrated.",
        };

        if (vendor && model && revision && host) {
                (void) ra_fleet_key(vendor, model, revision, &key);
                (void) ra_fleet_match(vendor, model, revision, true, &match);
                free(match);
                match = NULL;
                (void) ra_fleet_match(vendor, model, revision, false, &match);
                (void) ra_fleet_format_entry(&e, true, host, "2026-12-07", &record);
                comment = ra_fleet_comment_text(host);
                free(comment);
        }
        free(key);
        free(match);
        free(record);
        free(vendor);
        free(model);
        free(revision);
        free(host);
        return 0;
}
