/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dm-cost.h"

#define NS_PER_MS 1000000.0
#define MAX_SEGMENTS 64
#define MAX_QUEUE 64

typedef struct Segment {
        uint64_t start, end; /* bytes of the disk the segment holds */
        uint64_t used;       /* LRU stamp; 0: empty */
} Segment;

struct DmModel {
        DmParams p;
        DmStats stats;
        uint64_t free_at[MAX_QUEUE]; /* when each command slot is free again */
        uint64_t stamp;

        /* disk */
        Segment seg[MAX_SEGMENTS];
        uint64_t head;     /* byte under the head */
        uint64_t head_at;  /* time the head got there */
        int reading;       /* segment the drive is reading ahead into, or -1 */
        uint64_t ra_limit; /* where its read-ahead stops */
};

DmModel *dm_model_new(const DmParams *params) {
        DmModel *m = calloc(1, sizeof(*m));

        if (!m)
                return NULL;
        m->p = *params;
        m->reading = -1;
        return m;
}

DmModel *dm_model_free(DmModel *m) {
        free(m);
        return NULL;
}

const DmStats *dm_model_stats(const DmModel *m) {
        return &m->stats;
}

/* Bytes per ns at byte offset o: the outer zone (LBA 0) is the fastest. */
static double media_rate(const DmParams *p, uint64_t o) {
        double x = (double) o / (double) p->size;

        return (p->outer_mb_s - (p->outer_mb_s - p->inner_mb_s) * x) * 1e-3;
}

static double bus_ns(const DmParams *p, uint64_t len) {
        return (double) len / (p->bus_mb_s * 1e-3);
}

static double rotation_ns(const DmParams *p) {
        return 60.0 * 1e9 / p->rpm;
}

double dm_model_seek_ns(const DmParams *p, uint64_t distance) {
        double x;

        if (distance == 0)
                return 0;
        x = fmin(1.0, (double) distance / (double) p->size);
        return (p->track_seek_ms + (p->full_seek_ms - p->track_seek_ms) * pow(x, p->seek_exponent)) *
               NS_PER_MS;
}

/* A slot for the next command: the one free first. */
static unsigned pick_slot(const DmModel *m) {
        unsigned best = 0;

        for (unsigned i = 1; i < m->p.queue; i++)
                if (m->free_at[i] < m->free_at[best])
                        best = i;
        return best;
}

/* Brings the drive's read-ahead up to time t: the head moves on from where it
 * was at the media rate until it reaches the segment's limit. */
static void read_ahead_until(DmModel *m, uint64_t t) {
        Segment *s;
        double can;
        uint64_t end;

        if (m->reading < 0 || t <= m->head_at)
                return;
        s = &m->seg[m->reading];
        can = (double) (t - m->head_at) * media_rate(&m->p, m->head);
        end = m->head + (uint64_t) can;
        if (end >= m->ra_limit || end >= m->p.size) {
                end = m->ra_limit < m->p.size ? m->ra_limit : m->p.size;
                m->reading = -1; /* the segment is full: the drive rests */
        }
        m->stats.media_bytes += end - m->head;
        m->head = end;
        m->head_at = t;
        s->end = end;
}

static int find_segment(const DmModel *m, uint64_t offset, uint64_t end) {
        for (unsigned i = 0; i < m->p.cache_segments; i++)
                if (m->seg[i].used && m->seg[i].start <= offset && end <= m->seg[i].end)
                        return (int) i;
        return -1;
}

static int lru_segment(const DmModel *m) {
        unsigned best = 0;

        for (unsigned i = 1; i < m->p.cache_segments; i++)
                if (m->seg[i].used < m->seg[best].used)
                        best = i;
        return (int) best;
}

/* The drive reads ahead into a segment until it holds a segment's worth from
 * what the host last asked for; what the host asked for before that may go,
 * as in a drive whose segment is a ring for a stream. */
static void keep_reading_ahead(DmModel *m, int segment, uint64_t asked_from, uint64_t t) {
        Segment *s = &m->seg[segment];

        if (m->p.cache_segments == 0)
                return;
        if (m->reading != segment) {
                m->reading = segment;
                m->head_at = t;
        }
        if (asked_from > s->start)
                s->start = asked_from;
        m->ra_limit = s->start + (uint64_t) m->p.cache_segment_kb * 1024;
        s->used = ++m->stamp;
}

static double disk_read(DmModel *m, uint64_t t, uint64_t offset, uint64_t len) {
        const DmParams *p = &m->p;
        uint64_t end = offset + len;
        double cost, position;
        int s;

        read_ahead_until(m, t);

        s = find_segment(m, offset, end);
        if (s >= 0) {
                m->stats.cache_hits++;
                /* A hit on the stream the drive reads ahead keeps it going; so
                 * does one on a full segment whose end the head rests at. */
                if (s == m->reading || (m->reading < 0 && m->head == m->seg[s].end))
                        keep_reading_ahead(m, s, offset, t);
                else
                        m->seg[s].used = ++m->stamp;
                return p->command_us * 1e3 + bus_ns(p, len);
        }

        if (m->reading >= 0 && m->seg[m->reading].start <= offset && offset <= m->head) {
                /* The head is on its way there already: wait for it. */
                m->stats.continued++;
                cost = p->command_us * 1e3 + (double) (end - m->head) / media_rate(p, m->head);
                m->stats.media_bytes += end - m->head;
                m->head = end;
                m->head_at = t + (uint64_t) cost;
                m->seg[m->reading].end = end;
                keep_reading_ahead(m, m->reading, offset, m->head_at);
                return cost;
        }

        if (offset == m->head)
                position = 0, m->stats.continued++;
        else if (offset > m->head && (double) (offset - m->head) < media_rate(p, m->head) * rotation_ns(p)) {
                /* Within a track ahead: the gap passes under the head. */
                position = (double) (offset - m->head) / media_rate(p, m->head);
                m->stats.skips++;
        } else {
                position = dm_model_seek_ns(p, offset > m->head ? offset - m->head : m->head - offset) +
                           rotation_ns(p) / 2;
                m->stats.seeks++;
        }
        cost = p->command_us * 1e3 + position + (double) len / media_rate(p, offset);
        m->stats.media_bytes += len;
        m->head = end;
        m->head_at = t + (uint64_t) cost;
        if (p->cache_segments > 0) {
                s = lru_segment(m);
                m->seg[s] = (Segment){ .start = offset, .end = end };
                m->reading = -1;
                keep_reading_ahead(m, s, offset, m->head_at);
        }
        return cost;
}

const DmWaiting *dm_next_command(const DmWaiting *waiting, uint64_t window_ns) {
        const DmWaiting *first = waiting, *best;

        for (const DmWaiting *w = waiting; w; w = w->next)
                if (w->arrival_ns < first->arrival_ns)
                        first = w;
        best = first;
        for (const DmWaiting *w = waiting; w; w = w->next)
                if (w->arrival_ns <= first->arrival_ns + window_ns && w->offset < best->offset)
                        best = w;
        return best;
}

uint64_t dm_model_free_at(const DmModel *m) {
        return m->free_at[pick_slot(m)];
}

uint64_t dm_model_read(DmModel *m, uint64_t now_ns, uint64_t offset, uint64_t len) {
        unsigned slot = pick_slot(m);
        uint64_t start = now_ns > m->free_at[slot] ? now_ns : m->free_at[slot];
        double cost;

        if (offset >= m->p.size)
                len = 0;
        else if (len > m->p.size - offset)
                len = m->p.size - offset;

        if (m->p.kind == DM_KIND_DISK)
                cost = disk_read(m, start, offset, len);
        else
                cost = m->p.command_us * 1e3 + (double) len / (m->p.read_mb_s * 1e-3);

        m->stats.reads++;
        m->stats.read_bytes += len;
        m->stats.busy_ns += (uint64_t) cost;
        m->free_at[slot] = start + (uint64_t) cost;
        return m->free_at[slot];
}

uint64_t dm_model_write(DmModel *m, uint64_t now_ns, uint64_t offset, uint64_t len) {
        unsigned slot = pick_slot(m);
        uint64_t start = now_ns > m->free_at[slot] ? now_ns : m->free_at[slot];
        uint64_t end = offset + len;
        double cost;

        if (m->p.kind == DM_KIND_DISK) {
                /* The drive's write cache takes it at the bus rate; what it
                 * held of those bytes is stale and is dropped. */
                read_ahead_until(m, start);
                cost = m->p.command_us * 1e3 + bus_ns(&m->p, len);
                for (unsigned i = 0; i < m->p.cache_segments; i++)
                        if (m->seg[i].used && m->seg[i].start < end && offset < m->seg[i].end) {
                                m->seg[i] = (Segment){};
                                if ((int) i == m->reading)
                                        m->reading = -1;
                        }
        } else
                cost = m->p.command_us * 1e3 + (double) len / (m->p.write_mb_s * 1e-3);

        m->stats.writes++;
        m->stats.write_bytes += len;
        m->stats.busy_ns += (uint64_t) cost;
        m->free_at[slot] = start + (uint64_t) cost;
        return m->free_at[slot];
}
