/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * The counters of /sys/block/<dev>/stat (Documentation/block/stat.rst) that
 * radaemon uses. The kernel writes 11, 15 or 17 fields depending on its age;
 * the first 11 are always there.
 */
typedef struct RaDiskStat {
        uint64_t read_ios;
        uint64_t read_merges;
        uint64_t read_sectors;
        uint64_t read_ticks_ms;
        uint64_t write_ios;
        uint64_t write_merges;
        uint64_t write_sectors;
        uint64_t write_ticks_ms;
        uint64_t in_flight;
        uint64_t io_ticks_ms;
        uint64_t time_in_queue_ms;
} RaDiskStat;

/* Parses the text of a stat file: at least 11 decimal fields, nothing else. */
int ra_diskstat_parse(const char *text, RaDiskStat *ret);

/* Reads and parses the stat file of a block device's sysfs directory; -ENODEV when it is gone. */
int ra_diskstat_read_at(int sysfd, RaDiskStat *ret);

/*
 * now - before for every counter. Counters are unsigned long in the kernel,
 * so on 32-bit kernels they wrap at 2^32: a counter that went back from
 * below 2^32 by less than half of that is taken as wrapped. Any other step
 * back means the counters were reset (a new device behind the same name):
 * then there is no delta and this returns -ERANGE.
 */
int ra_diskstat_delta(const RaDiskStat *before, const RaDiskStat *now, RaDiskStat *ret);

/* What one sampling interval shows about a device's reads. */
typedef struct RaRates {
        double seconds;
        double read_iops;
        double read_bytes_per_sec;
        double avg_read_request_bytes; /* 0 without reads */
        double read_merge_ratio;       /* merges per completed read */
        double utilization;            /* share of the interval with I/O in flight, 0..1 */
        double avg_read_latency_ms;    /* 0 without reads */
} RaRates;

void ra_diskstat_rates(const RaDiskStat *delta, double seconds, RaRates *ret);
