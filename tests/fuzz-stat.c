/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /sys/block/<dev>/stat parser, and the arithmetic on what it returns. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ra-diskstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        RaDiskStat a = {}, b, d;
        RaRates r;
        char *text;

        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';

        if (ra_diskstat_parse(text, &b) >= 0 && ra_diskstat_delta(&a, &b, &d) >= 0) {
                ra_diskstat_rates(&d, 1.0, &r);
                (void) ra_diskstat_delta(&b, &a, &d);
        }
        free(text);
        return 0;
}
