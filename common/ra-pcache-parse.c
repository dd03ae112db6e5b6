/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The page-cache tracepoints' formats and records; the stream model is in ra-pcache.c. */
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
                { "common_pid", offsetof(RaPcacheEventFormat, common_pid) },
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
        const RaTraceField all[] = { f->common_pid, f->i_ino,      f->s_dev,      f->index,
                                     f->size,       f->async_size, f->ra_pages,   f->mmap_miss,
                                     f->prev_pos,   f->req_count,  f->nr_to_read, f->order };

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
                .pid = f->common_pid.size == 4 ? (int32_t) read_uint(rec, f->common_pid) : 0,
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
