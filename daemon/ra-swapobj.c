/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ra-swapobj.h"

char *ra_swapobj_describe_areas(const RaSwapWatch *w) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t i = 0; i < w->n_areas; i++)
                fprintf(f, "%s\t%d\t%s\t%s\t%" PRIu64 "\t%" PRIu64 "\n", w->areas[i].filename,
                        w->areas[i].priority, ra_swap_class_to_string(w->areas[i].class),
                        w->areas[i].device ?: "", w->areas[i].size_kb, w->areas[i].used_kb);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

void ra_swapobj_snapshot(const RaSwapWatch *w, RaSwapSnapshot *ret) {
        *ret = (RaSwapSnapshot){
                .current = w->current,
                .decision = w->decision,
                .devices = ra_swapobj_describe_areas(w),
                .active = w->active,
                .swapin_pages_per_sec = w->swapin_pages_per_sec,
                .hit_percent = w->hit_percent,
                .avg_read_request_bytes = w->avg_read_request_bytes,
        };
}

void ra_swapobj_snapshot_clear(RaSwapSnapshot *s) {
        free(s->devices);
        *s = (RaSwapSnapshot){};
}
