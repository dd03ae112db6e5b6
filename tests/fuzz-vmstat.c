/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc/vmstat parser, and the learning fed with what it returns. */
#include "config.h"

#include "fuzz.h"
#include "ra-swap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        RaVmSwapStat s;
        RaSwapModel m;
        RaSwapObservation o;

        if (ra_swap_parse_vmstat((const char *) data, size, &s) < 0)
                return 0;

        /* Counters as one interval's deltas: any value must give a value in range, or none. */
        o = (RaSwapObservation){ .seconds = 1,
                                 .pswpin = s.pswpin,
                                 .swap_ra = s.swap_ra,
                                 .swap_ra_hit = s.swap_ra_hit,
                                 .has_ra = s.has_ra,
                                 .read_ios = s.pswpout,
                                 .read_sectors = s.pswpout * 8,
                                 .io_ticks_ms = s.swap_ra_hit };
        ra_swap_model_reset(&m, RA_SWAP_CLASS_ROT, -1);
        for (int pc = 0; pc <= RA_SWAP_LEARN_MAX; pc++)
                for (int i = 0; i < 3; i++)
                        if (ra_swap_learn(&m, pc, &o) > 0 && !ra_swap_page_cluster_is_valid(m.learned))
                                __builtin_trap();
        return 0;
}
