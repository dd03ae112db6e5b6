/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>

#include "ra-adapt-cost.h"

/*
 * One fitted from one size only has no command cost and cannot tell what a window
 * costs: random read-around traced at 512 KiB on a loop device a cgroup throttles
 * (tests/learning.sh) fitted 2.6 GB/s and nothing a command, and called its windows
 * free. Nor can any flash device's traced fit that found no command cost: most
 * often what its requests measured was their queue (ra-calib.h), and a device
 * whose commands truly cost nothing (zram, a loop file in memory) is read for
 * free by any window. What its kind costs stands until a fit says more.
 */
static bool blind(const RaAdaptLimits *l) {
        return l->calib.bandwidth_kb_s == 0 || l->calib.n_points == 1 ||
               (l->calib.source == RA_CALIB_TRACED && !l->rotational && l->calib.command_us == 0);
}

void ra_adapt_cost_model(const RaAdaptLimits *l, RaCalib *ret) {
        if (!blind(l))
                *ret = l->calib;
        else
                ra_calib_assumed(l->rotational, ret);
}

bool ra_adapt_cost_sure(const RaAdaptLimits *l) {
        return l->calib.source != RA_CALIB_NONE && l->calib.n_points >= 2 && !blind(l);
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

/*
 * What a turn costs a disk whose head moves beyond the request's own
 * command and transfer (ra-adapt-cost.h), in us; 0 below RA_ADAPT_TURN_MIN_US
 * or where nothing says the head moves.
 */
static double turn_usec(const RaObservation *o, const RaAdaptLimits *l, const RaCalib *model) {
        const RaCalibTurns *t = &o->turns;
        double own, jump;

        if (!l->rotational || t->n == 0 || o->trace.switches == 0)
                return 0;
        /* A measured jump that is no seek (ra_calib_seeks()): the head does not move. */
        if (ra_adapt_cost_sure(l) && l->calib.jump_us > 0 && !ra_calib_seeks(&l->calib, true))
                return 0;
        own = (double) t->n * model->command_us + (double) t->kb * 1e6 / model->bandwidth_kb_s;
        jump = ((double) t->nsec / 1e3 - own) / (double) t->n;
        return jump >= RA_ADAPT_TURN_MIN_US ? jump : 0;
}

/* The interval's sequential reads as the device's time: their commands, transfer and turns. */
typedef struct Account {
        RaCalib model;
        double turn_us;       /* a turn's jump; 0: none */
        double turns;         /* the turns the sequential reads took, at most one a window */
        double per_window_us; /* a window's command, and its share of a turn */
        double busy_us;
} Account;

static bool account(const RaAdaptLimits *l, const RaObservation *o, uint64_t reads, uint64_t bytes,
                    uint32_t cur_kb, Account *ret) {
        double windows = (double) bytes / 1024 / (cur_kb > 0 ? cur_kb : 1);
        bool turns_tell;

        if (reads == 0 || o->rates.seconds <= 0)
                return false;
        ra_adapt_cost_model(l, &ret->model);
        ret->turn_us = turn_usec(o, l, &ret->model);
        ret->turns = (double) o->trace.switches < windows ? (double) o->trace.switches : windows;
        ret->per_window_us = ret->model.command_us + (windows > 0 ? ret->turns / windows * ret->turn_us : 0);
        ret->busy_us = busy_usec(&ret->model, reads, bytes) + ret->turns * ret->turn_us;
        /*
         * A model measured, or turns timed on the device's own requests that cost
         * the reads a share worth a window's growth: a few turns an interval on a
         * disk never calibrated leave it to a trial, as before.
         */
        turns_tell = ret->turns * ret->turn_us * 100 >= RA_ADAPT_GROW_PERCENT * ret->busy_us;
        return (ra_adapt_cost_sure(l) || (ret->turn_us > 0 && turns_tell)) &&
               ret->busy_us * 100 >= RA_ADAPT_GROW_BUSY_PERCENT * o->rates.seconds * 1e6;
}

bool ra_adapt_cost_tells(const RaAdaptLimits *l, const RaObservation *o, uint64_t reads, uint64_t bytes) {
        Account a;

        return account(l, o, reads, bytes, o->window_kb, &a);
}

uint32_t ra_adapt_cost_grow_kb(const RaAdaptLimits *l, const RaObservation *o, uint64_t reads,
                               uint64_t bytes, uint32_t cur_kb, uint32_t hi_kb,
                               char reason[static RA_REASON_MAX]) {
        double saved, fewer;
        uint32_t kb = cur_kb;
        Account a;

        /*
         * A read of a window split into several commands (beyond the largest
         * request) issues them together: the stream waits for one round trip a
         * window, as the calibration's rule counts it (ra_calib_prior()). A
         * turn is taken once a window at most: a larger window makes
         * proportionally fewer.
         */
        if (cur_kb == 0 || !account(l, o, reads, bytes, cur_kb, &a))
                return 0;
        while (kb < hi_kb && a.per_window_us * 100 >
                                     RA_ADAPT_GROW_PERCENT *
                                             (a.per_window_us + (double) kb * 1e6 / a.model.bandwidth_kb_s))
                kb = kb > hi_kb / 2 ? hi_kb : kb * 2;
        if (kb <= cur_kb)
                return 0;

        fewer = (double) reads - (double) bytes / 1024 / kb;
        saved = (fewer > 0 ? fewer * a.model.command_us : 0) +
                a.turns * (1 - (double) cur_kb / kb) * a.turn_us;
        if (saved * 100 < RA_ADAPT_GROW_PERCENT * a.busy_us)
                return 0;

        if (a.turns > 0 && a.turn_us > 0)
                ra_reason_format(
                        reason,
                        "Sequential streams take turns on the disk: %.0f times a second one goes on "
                        "after another, each turn a jump of %.1f ms (timed on its own requests), %.0f%% "
                        "of the %.0f ms a second they cost it: %" PRIu32 " KiB saves %.0f%%, so it is "
                        "taken without a trial.",
                        a.turns / o->rates.seconds, a.turn_us / 1e3, a.turns * a.turn_us * 100 / a.busy_us,
                        a.busy_us / o->rates.seconds / 1e3, kb, saved * 100 / a.busy_us);
        else
                ra_reason_format(
                        reason,
                        "Sequential reads cost the device %.0f ms a second, %.0f%% of it in commands of "
                        "%" PRIu32 " us (its %s model): %" PRIu32 " KiB saves %.0f%%, so it is taken "
                        "without a trial.",
                        a.busy_us / o->rates.seconds / 1e3,
                        (double) reads * a.model.command_us * 100 / a.busy_us, a.model.command_us,
                        ra_calib_source_to_string(a.model.source), kb, saved * 100 / a.busy_us);
        return kb;
}
