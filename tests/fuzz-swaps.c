/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc/swaps parser, and the choice of the class in use from what it returns. */
#include "config.h"

#include "fuzz.h"
#include "ra-swap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        RaSwapArea *areas = NULL;
        size_t n = 0, n_in_use;

        if (ra_swap_parse_swaps((const char *) data, size, &areas, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++)
                areas[i].class = (RaSwapClass) (areas[i].priority & 3);
        (void) ra_swap_active_class(areas, n, &n_in_use);
        ra_swap_areas_free(areas, n);
        return 0;
}
