/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>

#include "ra-adapt-cost.h"

void ra_adapt_cost_model(const RaAdaptLimits *l, RaCalib *ret) {
        /*
         * One fitted from one size only has no command cost and cannot tell what a window
         * costs: random read-around traced at 512 KiB on a loop device a cgroup throttles
         * (tests/learning.sh) fitted 2.6 GB/s and nothing a command, and called its windows
         * free. What its kind costs stands until a second size is seen.
         */
        if (l->calib.bandwidth_kb_s > 0 && l->calib.n_points != 1)
                *ret = l->calib;
        else
                ra_calib_assumed(l->rotational, ret);
}

bool ra_adapt_cost_sure(const RaAdaptLimits *l) {
        return l->calib.source != RA_CALIB_NONE && l->calib.bandwidth_kb_s > 0 && l->calib.n_points >= 2;
}

/* The device's time for one read of kb, in as many commands as its largest request makes of it. */
static double read_usec(const RaCalib *model, double kb, uint32_t max_sectors_kb) {
        double t = 0;

        if (max_sectors_kb > 0)
                for (; kb > max_sectors_kb; kb -= max_sectors_kb)
                        t += ra_calib_read_usec(model, max_sectors_kb, false);
        return t + ra_calib_read_usec(model, (uint32_t) (kb + 0.5), false);
}

double ra_adapt_cost_random_waste_usec(const RaObservation *o, const RaAdaptLimits *l, uint32_t min_kb) {
        const RaPcacheSummary *p = &o->pcache;
        double n = (double) p->random_reads, read_kb, small_kb;
        RaCalib model;

        if (p->random_reads == 0 || p->waste_bytes > p->random_bytes)
                return 0;
        ra_adapt_cost_model(l, &model);
        read_kb = (double) p->random_bytes / 1024 / n;
        small_kb = (double) (p->random_bytes - p->waste_bytes) / 1024 / n;
        if (small_kb < min_kb)
                small_kb = min_kb;
        if (small_kb >= read_kb)
                return 0;
        return n * (read_usec(&model, read_kb, l->max_sectors_kb) -
                    read_usec(&model, small_kb, l->max_sectors_kb));
}

/* The device's time, by its model, for reads windows of bytes in all. */
static double busy_usec(const RaCalib *c, uint64_t reads, uint64_t bytes) {
        return (double) reads * c->command_us + (double) bytes / 1024 * 1e6 / c->bandwidth_kb_s;
}

bool ra_adapt_cost_tells(const RaAdaptLimits *l, uint64_t reads, uint64_t bytes, double seconds) {
        return ra_adapt_cost_sure(l) && reads > 0 && seconds > 0 &&
               busy_usec(&l->calib, reads, bytes) * 100 >= RA_ADAPT_GROW_BUSY_PERCENT * seconds * 1e6;
}

uint32_t ra_adapt_cost_grow_kb(const RaAdaptLimits *l, uint64_t reads, uint64_t bytes, double seconds,
                               uint32_t cur_kb, uint32_t hi_kb, char reason[static RA_REASON_MAX]) {
        const RaCalib *c = &l->calib;
        double busy, saved, fewer;
        uint32_t kb = cur_kb;

        /*
         * A read of a window split into several commands (beyond the largest
         * request) issues them together: the stream waits for one round trip a
         * window, as the calibration's rule counts it (ra_calib_prior()).
         */
        if (!ra_adapt_cost_tells(l, reads, bytes, seconds) || cur_kb == 0)
                return 0;
        while (kb < hi_kb && kb < ra_calib_stream_kb(c))
                kb = kb > hi_kb / 2 ? hi_kb : kb * 2;
        if (kb <= cur_kb)
                return 0;

        busy = busy_usec(c, reads, bytes);
        fewer = (double) reads - (double) bytes / 1024 / kb;
        saved = fewer > 0 ? fewer * c->command_us : 0;
        if (saved * 100 < RA_ADAPT_GROW_PERCENT * busy)
                return 0;

        ra_reason_format(reason,
                         "Sequential reads cost the device %.0f ms a second, %.0f%% of it in commands of "
                         "%" PRIu32 " us (its %s model): %" PRIu32 " KiB saves %.0f%%, so it is taken "
                         "without a trial.",
                         busy / seconds / 1e3, (double) reads * c->command_us * 100 / busy, c->command_us,
                         ra_calib_source_to_string(c->source), kb, saved * 100 / busy);
        return kb;
}
