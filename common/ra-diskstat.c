/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ra-diskstat.h"
#include "ra-util.h"

#define STAT_MIN_FIELDS 11
#define STAT_MAX_FIELDS 32

int ra_diskstat_parse(const char *text, RaDiskStat *ret) {
        uint64_t v[STAT_MAX_FIELDS];
        size_t n = 0;
        const char *p = text;

        for (;;) {
                char word[24];
                size_t len;

                p += strspn(p, " \t\n");
                if (!*p)
                        break;
                len = strcspn(p, " \t\n");
                if (len >= sizeof(word) || n == STAT_MAX_FIELDS)
                        return -EINVAL;
                memcpy(word, p, len);
                word[len] = '\0';
                if (ra_parse_u64(word, &v[n]) < 0)
                        return -EINVAL;
                n++;
                p += len;
        }

        if (n < STAT_MIN_FIELDS)
                return -EINVAL;

        *ret = (RaDiskStat){
                .read_ios = v[0],
                .read_merges = v[1],
                .read_sectors = v[2],
                .read_ticks_ms = v[3],
                .write_ios = v[4],
                .write_merges = v[5],
                .write_sectors = v[6],
                .write_ticks_ms = v[7],
                .in_flight = v[8],
                .io_ticks_ms = v[9],
                .time_in_queue_ms = v[10],
        };
        return 0;
}

static int delta_one(uint64_t before, uint64_t now, uint64_t *ret) {
        if (now >= before) {
                *ret = now - before;
                return 0;
        }
        if (before <= UINT32_MAX && before - now > (UINT64_C(1) << 31)) {
                *ret = now + (UINT64_C(1) << 32) - before;
                return 0;
        }
        return -ERANGE;
}

int ra_diskstat_delta(const RaDiskStat *before, const RaDiskStat *now, RaDiskStat *ret) {
        /* in_flight is a level, not a counter. */
        RaDiskStat d = { .in_flight = now->in_flight };

#define DELTA(field)                                                                                        \
        do {                                                                                                \
                if (delta_one(before->field, now->field, &d.field) < 0)                                     \
                        return -ERANGE;                                                                     \
        } while (false)

        DELTA(read_ios);
        DELTA(read_merges);
        DELTA(read_sectors);
        DELTA(read_ticks_ms);
        DELTA(write_ios);
        DELTA(write_merges);
        DELTA(write_sectors);
        DELTA(write_ticks_ms);
        DELTA(io_ticks_ms);
        DELTA(time_in_queue_ms);
#undef DELTA

        *ret = d;
        return 0;
}

void ra_diskstat_rates(const RaDiskStat *delta, double seconds, RaRates *ret) {
        double ios = (double) delta->read_ios;

        *ret = (RaRates){ .seconds = seconds };
        if (seconds <= 0)
                return;

        ret->read_iops = ios / seconds;
        ret->read_bytes_per_sec = (double) delta->read_sectors * 512 / seconds;
        ret->utilization = (double) delta->io_ticks_ms / (seconds * 1000);
        if (ret->utilization > 1)
                ret->utilization = 1;
        if (ios > 0) {
                ret->avg_read_request_bytes = (double) delta->read_sectors * 512 / ios;
                ret->read_merge_ratio = (double) delta->read_merges / ios;
                ret->avg_read_latency_ms = (double) delta->read_ticks_ms / ios;
        }
}

int ra_diskstat_read_at(int sysfd, RaDiskStat *ret) {
        char buf[512];
        int r;

        r = ra_read_file_at(sysfd, "stat", buf, sizeof(buf));
        if (r < 0)
                return r == -ENOENT ? -ENODEV : r;
        return ra_diskstat_parse(buf, ret);
}
