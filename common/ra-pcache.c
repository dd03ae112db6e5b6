/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ra-macro.h"
#include "ra-pcache.h"

static const char *const evidence_names[_RA_EVIDENCE_MAX] = {
        [RA_EVIDENCE_NONE] = "none",
        [RA_EVIDENCE_BLOCK] = "block",
        [RA_EVIDENCE_FILEMAP] = "page-cache",
        [RA_EVIDENCE_READAHEAD] = "readahead",
};

const char *ra_evidence_to_string(RaEvidence e) {
        return e >= 0 && e < _RA_EVIDENCE_MAX ? evidence_names[e] : NULL;
}

static const char *const kind_paths[_RA_PCACHE_KIND_MAX] = {
        [RA_PCACHE_SYNC] = "readahead/page_cache_sync_ra",
        [RA_PCACHE_ASYNC] = "readahead/page_cache_async_ra",
        [RA_PCACHE_ORDER] = "readahead/page_cache_ra_order",
        [RA_PCACHE_UNBOUNDED] = "readahead/page_cache_ra_unbounded",
        [RA_PCACHE_FAULT] = "filemap/mm_filemap_fault",
        [RA_PCACHE_ADD] = "filemap/mm_filemap_add_to_page_cache",
};

const char *ra_pcache_kind_path(RaPcacheKind k) {
        return k >= 0 && k < _RA_PCACHE_KIND_MAX ? kind_paths[k] : NULL;
}

static void found_field(void *userdata, const char *name, RaTraceField f) {
        RaPcacheEventFormat *e = userdata;
        static const struct {
                const char *name;
                size_t offset;
        } fields[] = {
                { "i_ino", offsetof(RaPcacheEventFormat, i_ino) },
                { "s_dev", offsetof(RaPcacheEventFormat, s_dev) },
                { "index", offsetof(RaPcacheEventFormat, index) },
                { "size", offsetof(RaPcacheEventFormat, size) },
                { "async_size", offsetof(RaPcacheEventFormat, async_size) },
                { "ra_pages", offsetof(RaPcacheEventFormat, ra_pages) },
                { "mmap_miss", offsetof(RaPcacheEventFormat, mmap_miss) },
                { "prev_pos", offsetof(RaPcacheEventFormat, prev_pos) },
                { "req_count", offsetof(RaPcacheEventFormat, req_count) },
                { "nr_to_read", offsetof(RaPcacheEventFormat, nr_to_read) },
                { "order", offsetof(RaPcacheEventFormat, order) },
        };

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (strcmp(name, fields[i].name) == 0) {
                        memcpy((uint8_t *) e + fields[i].offset, &f, sizeof(f));
                        return;
                }
}

/* Integers this reads: native, of 1, 2, 4 or 8 bytes; size 0 is a field not there. */
static bool int_size_ok(RaTraceField f, bool required) {
        return f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8 || (!required && f.size == 0);
}

int ra_pcache_event_format_parse(RaPcacheKind k, const char *text, RaPcacheEventFormat *ret) {
        RaPcacheEventFormat f = {};
        bool ok;
        int r;

        if (!text || k < 0 || k >= _RA_PCACHE_KIND_MAX)
                return -EINVAL;
        r = ra_trace_event_id(text, &f.id);
        if (r < 0)
                return r;
        ra_trace_fields_scan(text, found_field, &f);

        /* Every event names its file; what else each must say, the model needs. */
        ok = int_size_ok(f.i_ino, true) && f.s_dev.size == 4 && int_size_ok(f.index, true);
        switch (k) {
        case RA_PCACHE_SYNC:
        case RA_PCACHE_ASYNC:
                ok = ok && int_size_ok(f.ra_pages, true) && f.prev_pos.size == 8 &&
                     int_size_ok(f.req_count, true) && int_size_ok(f.size, false) &&
                     int_size_ok(f.async_size, false) && int_size_ok(f.mmap_miss, false);
                break;
        case RA_PCACHE_ORDER:
                ok = ok && int_size_ok(f.size, true) && int_size_ok(f.ra_pages, true);
                break;
        case RA_PCACHE_UNBOUNDED:
                ok = ok && int_size_ok(f.nr_to_read, true);
                break;
        case RA_PCACHE_ADD:
                ok = ok && int_size_ok(f.order, false);
                break;
        default:
                break;
        }
        if (!ok)
                return -EINVAL;
        *ret = f;
        return 0;
}

int ra_pcache_format_parse(const char *header_page, const char *const texts[_RA_PCACHE_KIND_MAX],
                           RaPcacheFormat *ret) {
        RaPcacheFormat f = {};
        int r;

        r = ra_trace_header_parse(header_page, &f.page);
        if (r < 0)
                return r;

        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX; k++)
                if (!texts[k] || ra_pcache_event_format_parse(k, texts[k], &f.events[k]) < 0)
                        f.events[k] = (RaPcacheEventFormat){};

        /* Two events with one ID would be read as each other. */
        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX; k++)
                for (RaPcacheKind j = k + 1; j < _RA_PCACHE_KIND_MAX; j++)
                        if (f.events[k].id != 0 && f.events[k].id == f.events[j].id)
                                return -EINVAL;

        if (f.events[RA_PCACHE_SYNC].id && f.events[RA_PCACHE_ASYNC].id && f.events[RA_PCACHE_ORDER].id) {
                /* The fallback's flood of per-page events is not wanted beside them. */
                f.events[RA_PCACHE_ADD] = (RaPcacheEventFormat){};
                f.evidence = RA_EVIDENCE_READAHEAD;
        } else if (f.events[RA_PCACHE_ADD].id) {
                RaPcacheEventFormat add = f.events[RA_PCACHE_ADD];

                memset(f.events, 0, sizeof(f.events));
                f.events[RA_PCACHE_ADD] = add;
                f.evidence = RA_EVIDENCE_FILEMAP;
        } else
                return -ENOENT;

        *ret = f;
        return 0;
}

static uint64_t read_uint(const uint8_t *rec, RaTraceField f) {
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;

        switch (f.size) {
        case 1:
                memcpy(&u8, rec + f.offset, 1);
                return u8;
        case 2:
                memcpy(&u16, rec + f.offset, 2);
                return u16;
        case 4:
                memcpy(&u32, rec + f.offset, 4);
                return u32;
        case 8:
                memcpy(&u64, rec + f.offset, 8);
                return u64;
        default:
                return 0;
        }
}

static bool fits(RaTraceField f, size_t length) {
        return (size_t) f.offset + f.size <= length;
}

static bool parse_record(const RaPcacheEventFormat *f, RaPcacheKind k, const uint8_t *rec, size_t length,
                         uint64_t time_ns, RaPcacheEvent *ret) {
        const RaTraceField all[] = { f->i_ino,      f->s_dev,      f->index,     f->size,
                                     f->async_size, f->ra_pages,   f->mmap_miss, f->prev_pos,
                                     f->req_count,  f->nr_to_read, f->order };

        for (size_t i = 0; i < ELEMENTSOF(all); i++)
                if (!fits(all[i], length))
                        return false;

        *ret = (RaPcacheEvent){
                .time_ns = time_ns,
                .kind = k,
                .s_dev = (uint32_t) read_uint(rec, f->s_dev),
                .ino = read_uint(rec, f->i_ino),
                .index = read_uint(rec, f->index),
                .size = (uint32_t) read_uint(rec, f->size),
                .async_size = (uint32_t) read_uint(rec, f->async_size),
                .ra_pages = (uint32_t) read_uint(rec, f->ra_pages),
                .mmap_miss = (uint32_t) read_uint(rec, f->mmap_miss),
                .prev_pos = f->prev_pos.size == 8 ? (int64_t) read_uint(rec, f->prev_pos) : -1,
                .req_count = read_uint(rec, f->req_count),
        };

        switch (k) {
        case RA_PCACHE_ORDER:
                ret->nr = ret->size;
                break;
        case RA_PCACHE_UNBOUNDED:
                ret->nr = read_uint(rec, f->nr_to_read);
                break;
        case RA_PCACHE_ADD: {
                uint64_t order = read_uint(rec, f->order);

                ret->nr = order < 20 ? UINT64_C(1) << order : 1;
                break;
        }
        default:
                break;
        }
        return true;
}

typedef struct PageParse {
        const RaPcacheFormat *format;
        RaPcacheEventFn fn;
        void *userdata;
        int n;
} PageParse;

static void parse_one(void *userdata, uint64_t time_ns, const uint8_t *rec, size_t length) {
        PageParse *pp = userdata;
        RaPcacheEvent e;
        uint16_t type;

        if (length < sizeof(type))
                return;
        memcpy(&type, rec, sizeof(type));
        if (type == 0)
                return;

        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX; k++)
                if (pp->format->events[k].id == type) {
                        if (parse_record(&pp->format->events[k], k, rec, length, time_ns, &e)) {
                                pp->fn(pp->userdata, &e);
                                pp->n++;
                        }
                        return;
                }
}

int ra_pcache_page_parse(const RaPcacheFormat *f, const void *page, size_t size, RaPcacheEventFn fn,
                         void *userdata) {
        PageParse pp = { .format = f, .fn = fn, .userdata = userdata };
        int r;

        r = ra_trace_page_walk(&f->page, page, size, parse_one, &pp);
        return r < 0 ? r : pp.n;
}

/* --- the stream model --------------------------------------------------------- */

static uint64_t page_bytes(const RaPcacheAccount *a) {
        return (uint64_t) (a->page_kb ? a->page_kb : 4) * 1024;
}

static RaPcacheStream *stream_get(RaPcacheAccount *a, const RaPcacheEvent *e) {
        RaPcacheStream *stalest = &a->streams[0];

        for (size_t i = 0; i < RA_PCACHE_STREAMS; i++) {
                RaPcacheStream *s = &a->streams[i];

                if (s->used && s->s_dev == e->s_dev && s->ino == e->ino)
                        return s;
                if (!s->used || (stalest->used && s->last_seen < stalest->last_seen))
                        stalest = s;
        }

        /* A file not seen lately: nothing is known of where it was read. */
        *stalest = (RaPcacheStream){
                .used = true, .s_dev = e->s_dev, .ino = e->ino, .next = UINT64_MAX, .epoch = a->epoch
        };
        return stalest;
}

static void count_request(RaPcacheAccount *a, uint64_t pages) {
        unsigned b = 0;

        if (pages == 0)
                return;
        while (b + 1 < RA_PCACHE_REQ_BUCKETS && pages > (UINT64_C(1) << b))
                b++;
        a->req_reads[b]++;
        a->req_pages[b] += pages;
}

/* Sequential pages read under a file's window, for the credit and stream_kb. */
static void count_window(RaPcacheAccount *a, uint32_t ra_pages, uint64_t pages) {
        for (size_t i = 0; i < ELEMENTSOF(a->window_seq); i++)
                if (a->window_seq[i][1] == 0 || a->window_seq[i][0] == ra_pages) {
                        a->window_seq[i][0] = ra_pages;
                        a->window_seq[i][1] += pages;
                        return;
                }
}

/* Sequential bytes of s read under the window in force. */
static void count_in_window(RaPcacheAccount *a, RaPcacheStream *s, uint64_t bytes) {
        a->now.window_bytes += bytes;
        if (s->credited != a->interval + 1) {
                s->credited = a->interval + 1;
                a->now.window_files++;
        }
}

/* A window was read for s: credit it to what caused it. */
static void window_read(RaPcacheAccount *a, RaPcacheStream *s, uint64_t index, uint64_t pages,
                        uint32_t ra_pages, uint32_t window_kb) {
        uint64_t bytes = pages * page_bytes(a), asked;

        if (ra_pages > 0)
                s->ra_pages = ra_pages;

        switch (s->pending) {
        case RA_CAUSE_SEQUENTIAL:
                a->now.seq_reads++;
                a->now.seq_bytes += bytes;
                /* The window limits this file: a larger one would read more at once. */
                if (s->ra_pages > 0 && pages * 10 >= (uint64_t) s->ra_pages * 9)
                        a->now.full_bytes += bytes;
                if ((uint64_t) s->ra_pages * (page_bytes(a) / 1024) == window_kb)
                        count_in_window(a, s, bytes);
                count_window(a, s->ra_pages, pages);
                break;
        case RA_CAUSE_FAULT_FIRST:
                a->now.random_bytes += bytes;
                break;
        case RA_CAUSE_RANDOM:
        case RA_CAUSE_FAULT_RANDOM:
                /* A fault asks for one page; a read for what it asked. */
                asked = s->pending == RA_CAUSE_FAULT_RANDOM ? 1 : s->req_count;
                a->now.random_bytes += bytes;
                if (pages > asked)
                        a->now.waste_bytes += (pages - asked) * page_bytes(a);
                break;
        default:
                return;
        }

        s->start = index;
        s->next = index + pages;
        s->pending = RA_CAUSE_NONE;
}

/* Without the readahead events: pages that follow the file's last ones continue its stream. */
static void page_added(RaPcacheAccount *a, RaPcacheStream *s, const RaPcacheEvent *e, uint32_t window_kb) {
        uint64_t window_pages = window_kb / (page_bytes(a) / 1024), bytes = e->nr * page_bytes(a);
        bool follows = s->next == e->index;

        if (!follows) {
                /* A jump ends a run; one about a window long was read around a random access. */
                if (!s->run_from_start && s->run > 1 && s->run * 2 >= window_pages &&
                    s->run <= 2 * window_pages)
                        a->now.waste_bytes += (s->run - 1) * page_bytes(a);
                /* A file read from its start begins a stream, not a jump: opened again, as a rule. */
                s->run_from_start = e->index == 0;
                if (s->run_from_start)
                        s->epoch = a->epoch;
                if (!s->run_from_start)
                        a->now.random_reads++;
                s->run = 0;
        }

        /* Pages right after the file's last ones, and right after them in time: the same readahead. */
        if (!follows || s->batch == 0 || e->time_ns < s->batch_ns ||
            e->time_ns - s->batch_ns > RA_PCACHE_BATCH_GAP_NS)
                s->batch = s->batch_seq = 0;
        s->batch += e->nr;
        s->batch_ns = e->time_ns;
        if (s->batch > s->batch_max)
                s->batch_max = s->batch;
        s->run += e->nr;
        s->next = e->index + e->nr;

        if (!s->run_from_start && s->run <= window_pages) {
                a->now.random_bytes += bytes;
                return;
        }

        if (s->batch_seq == 0)
                a->now.seq_reads++;
        a->now.seq_bytes += bytes;
        /*
         * A readahead larger than the window: the file took a larger one at its open. One
         * seen before the window took its value may have taken a smaller one: see the header.
         */
        if (s->batch_max <= window_pages && s->epoch == a->epoch)
                count_in_window(a, s, bytes);
        /*
         * A readahead as large as the window allows: the stream would read more at once
         * with a larger one. Its pages before it got that far count once it does.
         */
        if (window_pages > 0 && s->batch_max <= window_pages && s->batch * 10 >= window_pages * 9) {
                if ((s->batch - e->nr) * 10 < window_pages * 9)
                        a->now.full_bytes += s->batch_seq * page_bytes(a);
                a->now.full_bytes += bytes;
        }
        s->batch_seq += e->nr;
}

void ra_pcache_account_add(RaPcacheAccount *a, const RaPcacheEvent *e, uint32_t window_kb) {
        uint64_t page = page_bytes(a), prev;
        RaPcacheStream *s;

        a->clock++;
        a->now.events++;
        if (window_kb != a->window_kb) {
                a->window_kb = window_kb;
                a->epoch++;
        }
        s = stream_get(a, e);
        s->last_seen = a->clock;
        if (s->interval != a->interval + 1) {
                s->interval = a->interval + 1;
                a->now.files++;
        }

        switch (e->kind) {
        case RA_PCACHE_SYNC:
                count_request(a, e->req_count);
                /*
                 * The kernel's own test: the file's start, a read larger than the
                 * window, or one that starts where the previous read ended.
                 * Where the last window ended goes on too: its mark was missed.
                 */
                prev = e->prev_pos < 0 ? UINT64_MAX : (uint64_t) e->prev_pos / page;
                if (e->index == 0 || (e->ra_pages > 0 && e->req_count > e->ra_pages) ||
                    (prev != UINT64_MAX && e->index >= prev && e->index - prev <= 1) ||
                    (s->next != UINT64_MAX && e->index >= s->start && e->index <= s->next))
                        s->pending = RA_CAUSE_SEQUENTIAL;
                else {
                        s->pending = RA_CAUSE_RANDOM;
                        a->now.random_reads++;
                }
                s->req_count = e->req_count;
                s->ra_pages = e->ra_pages;
                break;
        case RA_PCACHE_ASYNC:
                count_request(a, e->req_count);
                s->pending = RA_CAUSE_SEQUENTIAL;
                s->ra_pages = e->ra_pages;
                break;
        case RA_PCACHE_FAULT:
                /* Faults inside or right after what the file has read follow it. */
                if (s->next == UINT64_MAX)
                        s->pending = RA_CAUSE_FAULT_FIRST;
                else if (e->index >= s->start && e->index <= s->next + s->ra_pages)
                        s->pending = RA_CAUSE_SEQUENTIAL;
                else {
                        s->pending = RA_CAUSE_FAULT_RANDOM;
                        a->now.random_reads++;
                        a->now.random_faults++;
                }
                s->req_count = 1;
                break;
        case RA_PCACHE_ORDER:
        case RA_PCACHE_UNBOUNDED:
                /* An unbounded read after ra_order is that window's tail: counted already. */
                window_read(a, s, e->index, e->nr, e->kind == RA_PCACHE_ORDER ? e->ra_pages : 0, window_kb);
                break;
        case RA_PCACHE_ADD:
                page_added(a, s, e, window_kb);
                break;
        default:
                break;
        }
}

void ra_pcache_account_take(RaPcacheAccount *a, RaPcacheSummary *ret) {
        uint64_t best = 0;

        *ret = a->now;
        for (unsigned b = 0; b < RA_PCACHE_REQ_BUCKETS; b++)
                if (a->req_reads[b] > best) {
                        best = a->req_reads[b];
                        ret->req_kb = (uint32_t) (a->req_pages[b] * page_bytes(a) / a->req_reads[b] / 1024);
                }

        best = 0;
        for (size_t i = 0; i < ELEMENTSOF(a->window_seq); i++)
                if (a->window_seq[i][1] > best) {
                        best = a->window_seq[i][1];
                        ret->stream_kb = (uint32_t) (a->window_seq[i][0] * (page_bytes(a) / 1024));
                }

        a->now = (RaPcacheSummary){};
        a->interval++;
        memset(a->req_reads, 0, sizeof(a->req_reads));
        memset(a->req_pages, 0, sizeof(a->req_pages));
        memset(a->window_seq, 0, sizeof(a->window_seq));
}
