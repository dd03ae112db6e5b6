/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ra-trace.h"

#define EVENT_TAG " block_rq_issue: "

int ra_trace_parse_line(const char *line, RaTraceEvent *ret) {
        unsigned major, minor, nr;
        unsigned long long sector;
        char rwbs[16];
        const char *p;
        int n = 0;

        p = strstr(line, EVENT_TAG);
        if (!p)
                return -EINVAL;

        /* "<maj>,<min> <rwbs> <bytes> (<cmd>) <sector> + <nr>"; cmd is often empty, which %[ cannot match.
         */
        p += strlen(EVENT_TAG);
        if (sscanf(p, "%u,%u %15s %*u (%n", &major, &minor, rwbs, &n) != 3 || n == 0)
                return -EINVAL;
        p = strchr(p + n, ')');
        if (!p || sscanf(p + 1, " %llu + %u", &sector, &nr) != 2)
                return -EINVAL;
        if (nr == 0 || major > 4095 || minor > (1u << 20) - 1)
                return -EINVAL;

        *ret = (RaTraceEvent){
                .major = major,
                .minor = minor,
                .read = strchr(rwbs, 'R') != NULL,
                .readahead = strchr(rwbs, 'A') != NULL,
                .sector = sector,
                .nr_sectors = nr,
        };
        return 0;
}

static unsigned size_bucket(uint64_t bytes) {
        unsigned b = 0;

        while (b + 1 < RA_TRACE_SIZE_BUCKETS && bytes > (UINT64_C(4096) << b))
                b++;
        return b;
}

void ra_trace_account_add(RaTraceAccount *a, const RaTraceEvent *e, uint32_t window_kb) {
        uint64_t bytes = (uint64_t) e->nr_sectors * 512;
        RaTraceStream *s = NULL, *stalest = &a->streams[0];

        if (!e->read)
                return;

        a->clock++;
        a->now.requests++;
        a->now.bytes += bytes;
        a->now.readahead += e->readahead;
        a->size_bytes[size_bucket(bytes)] += bytes;
        a->size_count[size_bucket(bytes)]++;

        for (size_t i = 0; i < RA_TRACE_STREAMS; i++) {
                RaTraceStream *t = &a->streams[i];

                if (t->used && t->next_sector == e->sector) {
                        s = t;
                        break;
                }
                if (!t->used || (stalest->used && t->last_seen < stalest->last_seen))
                        stalest = t;
        }

        /* A jump starts a stream, which reads with the window it found at its start. */
        if (!s) {
                a->now.jumps++;
                s = stalest;
                *s = (RaTraceStream){ .used = true, .window_kb = window_kb };
        }
        s->next_sector = e->sector + e->nr_sectors;
        s->last_seen = a->clock;

        if (s->window_kb == window_kb)
                a->now.window_bytes += bytes;
}

void ra_trace_account_take(RaTraceAccount *a, RaTraceSummary *ret) {
        uint64_t best = 0;

        *ret = a->now;
        for (unsigned b = 0; b < RA_TRACE_SIZE_BUCKETS; b++)
                if (a->size_bytes[b] > best) {
                        best = a->size_bytes[b];
                        ret->request_kb = (uint32_t) (a->size_bytes[b] / a->size_count[b] / 1024);
                }

        a->now = (RaTraceSummary){};
        memset(a->size_bytes, 0, sizeof(a->size_bytes));
        memset(a->size_count, 0, sizeof(a->size_count));
}
