/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ra-macro.h"
#include "ra-trace.h"

/* The ring buffer's event header: a 5-bit type_len, then a 27-bit time delta. */
#define TYPE_PADDING 29
#define TYPE_TIME_EXTEND 30
#define TYPE_TIME_STAMP 31
#define TIME_DELTA_BITS 27
/* The low bits of a page's commit field are its length; the high ones flag lost events. */
#define COMMIT_LENGTH_MASK ((UINT64_C(1) << 27) - 1)
/* The kernel's RB_MISSED_EVENTS: events were overwritten before this page was read. */
#define COMMIT_MISSED_EVENTS (UINT64_C(1) << 31)

/*
 * One "\tfield:<declaration>;\toffset:N;\tsize:N;..." line: the name is the
 * declaration's last word, without an array suffix ("char rwbs[10]").
 */
static bool parse_field_line(const char *line, char name[static 64], RaTraceField *ret) {
        const char *decl, *semi, *end, *start;
        unsigned offset, size;

        decl = strstr(line, "field:");
        if (!decl)
                return false;
        decl += strlen("field:");
        semi = strchr(decl, ';');
        if (!semi || sscanf(semi, "; offset:%u; size:%u;", &offset, &size) != 2 || offset > UINT16_MAX ||
            size > UINT16_MAX)
                return false;

        end = semi;
        if (end > decl && end[-1] == ']')
                while (end > decl && *end != '[')
                        end--;
        start = end;
        while (start > decl && (isalnum((unsigned char) start[-1]) || start[-1] == '_'))
                start--;
        if (start == end || (size_t) (end - start) >= 64)
                return false;

        memcpy(name, start, (size_t) (end - start));
        name[end - start] = '\0';
        *ret = (RaTraceField){ .offset = (uint16_t) offset, .size = (uint16_t) size };
        return true;
}

void ra_trace_fields_scan(const char *text, RaTraceFieldFn found, void *userdata) {
        const char *nl;

        for (const char *line = text; *line; line = *nl ? nl + 1 : nl) {
                char buf[256], name[64];
                size_t len;
                RaTraceField f;

                nl = strchrnul(line, '\n');
                len = (size_t) (nl - line);

                if (len >= sizeof(buf))
                        continue;
                memcpy(buf, line, len);
                buf[len] = '\0';
                if (parse_field_line(buf, name, &f))
                        found(userdata, name, f);
        }
}

/* The page header's fields this reads. */
typedef struct HeaderFields {
        RaTraceField commit, data;
} HeaderFields;

static void found_header(void *userdata, const char *name, RaTraceField f) {
        HeaderFields *h = userdata;

        if (strcmp(name, "commit") == 0)
                h->commit = f;
        else if (strcmp(name, "data") == 0)
                h->data = f;
}

static void found_event(void *userdata, const char *name, RaTraceField f) {
        RaTraceFormat *format = userdata;

        if (strcmp(name, "dev") == 0)
                format->dev = f;
        else if (strcmp(name, "sector") == 0)
                format->sector = f;
        else if (strcmp(name, "nr_sector") == 0)
                format->nr_sector = f;
        else if (strcmp(name, "rwbs") == 0)
                format->rwbs = f;
}

int ra_trace_header_parse(const char *header_page, RaTracePage *ret) {
        HeaderFields h = {};

        /* A field not found keeps size 0, which the check below refuses. */
        ra_trace_fields_scan(header_page, found_header, &h);

        /* What the page reader can read: a 4- or 8-byte commit before the data. */
        if ((h.commit.size != 4 && h.commit.size != 8) || h.commit.offset != 8 ||
            h.data.offset < h.commit.offset + h.commit.size)
                return -EINVAL;
        *ret = (RaTracePage){ .commit_size = h.commit.size, .data_offset = h.data.offset };
        return 0;
}

int ra_trace_event_id(const char *event_format, uint16_t *ret) {
        const char *id;
        unsigned n;

        /* "ID: N" on a line of its own, the second as the kernel writes it. */
        id = strncmp(event_format, "ID: ", 4) == 0 ? event_format : strstr(event_format, "\nID: ");
        if (id && *id == '\n')
                id++;
        if (!id || sscanf(id + 4, "%u", &n) != 1 || n == 0 || n > UINT16_MAX)
                return -EINVAL;
        *ret = (uint16_t) n;
        return 0;
}

/* The "name: N" line, the first as the kernel writes it: is it event's? */
static bool is_event(const char *event_format, const char *event) {
        const char *name =
                strncmp(event_format, "name: ", 6) == 0 ? event_format : strstr(event_format, "\nname: ");
        size_t len = strlen(event);

        if (name && *name == '\n')
                name++;
        return name && strncmp(name + 6, event, len) == 0 && IN_SET(name[6 + len], '\n', '\0');
}

int ra_trace_format_parse(const char *header_page, const char *event_format, RaTraceFormat *ret) {
        RaTraceFormat f = {};
        RaTracePage page;
        int r;

        r = ra_trace_header_parse(header_page, &page);
        if (r < 0)
                return r;
        r = ra_trace_event_id(event_format, &f.id);
        if (r < 0)
                return r;
        f.bio = is_event(event_format, "block_bio_queue");
        f.complete = is_event(event_format, "block_rq_complete");

        /* A field not found keeps size 0, which the checks below refuse; native integers only. */
        ra_trace_fields_scan(event_format, found_event, &f);
        if (f.dev.size != 4 || f.sector.size != 8 || f.nr_sector.size != 4 || f.rwbs.size == 0)
                return -EINVAL;

        f.commit_size = page.commit_size;
        f.data_offset = page.data_offset;
        *ret = f;
        return 0;
}

static uint32_t read_u32(const uint8_t *p) {
        uint32_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

static uint64_t read_u64(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

static bool field_fits(RaTraceField f, size_t length) {
        return (size_t) f.offset + f.size <= length;
}

/* One record; false if it is not a record of f's event this can read. */
static bool parse_record(const RaTraceFormat *f, const uint8_t *rec, size_t length, uint64_t time_ns,
                         RaTraceEvent *ret) {
        uint16_t type;
        uint32_t dev, nr;
        bool read = false, readahead = false;

        if (length < sizeof(type))
                return false;
        memcpy(&type, rec, sizeof(type));
        if (type != f->id || !field_fits(f->dev, length) || !field_fits(f->sector, length) ||
            !field_fits(f->nr_sector, length) || !field_fits(f->rwbs, length))
                return false;

        dev = read_u32(rec + f->dev.offset);
        nr = read_u32(rec + f->nr_sector.offset);
        if (nr == 0)
                return false;
        for (size_t i = 0; i < f->rwbs.size && rec[f->rwbs.offset + i]; i++) {
                read |= rec[f->rwbs.offset + i] == 'R';
                readahead |= rec[f->rwbs.offset + i] == 'A';
        }

        *ret = (RaTraceEvent){
                .time_ns = time_ns,
                .major = dev >> 20,
                .minor = dev & ((1u << 20) - 1),
                .bio = f->bio,
                .complete = f->complete,
                .read = read,
                .readahead = readahead,
                .sector = read_u64(rec + f->sector.offset),
                .nr_sectors = nr,
        };
        return true;
}

int ra_trace_page_walk(const RaTracePage *f, const void *page, size_t size, RaTraceRecordFn fn,
                       void *userdata) {
        const uint8_t *p = page, *end;
        uint64_t time_ns, length;
        int n = 0;

        if (size < f->data_offset)
                return -EINVAL;
        time_ns = read_u64(p);
        length = (f->commit_size == 8 ? read_u64(p + 8) : read_u32(p + 8)) & COMMIT_LENGTH_MASK;
        if (length > size - f->data_offset)
                return -EINVAL;

        end = p + f->data_offset + length;
        p += f->data_offset;
        while (end - p >= 4) {
                uint32_t header = read_u32(p), type_len = header & 0x1f, delta = header >> 5, extra;
                size_t record;

                p += 4;
                switch (type_len) {
                case TYPE_PADDING:
                        /*
                         * A record discarded (by our filter, say), its length in the next word;
                         * its time still counts. Without a delta, nothing follows on this page.
                         */
                        if (delta == 0 || end - p < 4)
                                return n;
                        extra = read_u32(p);
                        if (extra > (size_t) (end - p))
                                return -EINVAL;
                        time_ns += delta;
                        p += extra;
                        continue;
                case TYPE_TIME_EXTEND:
                case TYPE_TIME_STAMP:
                        if (end - p < 4)
                                return -EINVAL;
                        extra = read_u32(p);
                        p += 4;
                        if (type_len == TYPE_TIME_EXTEND)
                                time_ns += ((uint64_t) extra << TIME_DELTA_BITS) + delta;
                        else
                                time_ns = ((uint64_t) extra << TIME_DELTA_BITS) + delta;
                        continue;
                case 0:
                        /* The length is in the next word, which it counts. */
                        if (end - p < 4)
                                return -EINVAL;
                        extra = read_u32(p);
                        if (extra < 4)
                                return -EINVAL;
                        record = ((size_t) extra - 4 + 3) & ~(size_t) 3;
                        p += 4;
                        break;
                default:
                        record = (size_t) type_len * 4;
                        break;
                }

                if (record > (size_t) (end - p))
                        return -EINVAL;
                time_ns += delta;
                fn(userdata, time_ns, p, record);
                n++;
                p += record;
        }
        return n;
}

bool ra_trace_page_missed(const RaTracePage *f, const void *page, size_t size) {
        const uint8_t *p = page;

        if (size < f->data_offset)
                return false;
        /* A 4-byte commit has the flag as its top bit; an 8-byte one has it sign-extended above. */
        return ((f->commit_size == 8 ? read_u64(p + 8) : read_u32(p + 8)) & COMMIT_MISSED_EVENTS) != 0;
}

/* Hands the records of a page of the events asked for to the caller's function. */
typedef struct PageParse {
        const RaTraceFormat *formats;
        size_t n_formats;
        RaTraceEventFn fn;
        void *userdata;
        int n;
} PageParse;

static void parse_one(void *userdata, uint64_t time_ns, const uint8_t *rec, size_t length) {
        PageParse *pp = userdata;
        RaTraceEvent e;

        for (size_t i = 0; i < pp->n_formats; i++)
                if (parse_record(&pp->formats[i], rec, length, time_ns, &e)) {
                        pp->fn(pp->userdata, &e);
                        pp->n++;
                        return;
                }
}

int ra_trace_page_parse(const RaTraceFormat *formats, size_t n, const void *page, size_t size,
                        RaTraceEventFn fn, void *userdata) {
        RaTracePage layout = { .commit_size = formats[0].commit_size,
                               .data_offset = formats[0].data_offset };
        PageParse pp = { .formats = formats, .n_formats = n, .fn = fn, .userdata = userdata };
        int r;

        r = ra_trace_page_walk(&layout, page, size, parse_one, &pp);
        return r < 0 ? r : pp.n;
}

static unsigned size_bucket(uint64_t bytes) {
        unsigned b = 0;

        while (b + 1 < RA_TRACE_SIZE_BUCKETS && bytes > (UINT64_C(4096) << b))
                b++;
        return b;
}

void ra_trace_account_add(RaTraceAccount *a, const RaTraceEvent *e, uint32_t window_kb) {
        uint64_t bytes = (uint64_t) e->nr_sectors * 512, slack = (uint64_t) window_kb * 2;
        RaTraceStream *s = NULL, *stalest = &a->streams[0];

        if (!e->read)
                return;

        a->clock++;
        a->now.requests++;
        a->now.bytes += bytes;
        a->now.readahead += e->readahead;
        a->size_bytes[size_bucket(bytes)] += bytes;
        a->size_count[size_bucket(bytes)]++;

        /*
         * A stream's requests may be issued a little out of order (split at the
         * device's largest request, queued per CPU, held back by a throttle): a
         * request that starts within a window of where the stream stands goes
         * on with it. Random reads land that close to a stream rarely.
         */
        for (size_t i = 0; i < RA_TRACE_STREAMS; i++) {
                RaTraceStream *t = &a->streams[i];

                if (t->used && e->sector + slack >= t->next_sector && e->sector <= t->next_sector + slack) {
                        s = t;
                        break;
                }
                if (!t->used || (stalest->used && t->last_seen < stalest->last_seen))
                        stalest = t;
        }

        /*
         * A jump starts a stream, which reads with the window it found at its start.
         * Streams that take turns: the request before went on with another stream,
         * a turn a larger window makes rarer. One after a jump (a random read, a
         * file's metadata) is none: a larger window does not make those fewer.
         */
        if (!s) {
                a->now.jumps++;
                s = stalest;
                *s = (RaTraceStream){ .used = true, .window_kb = window_kb };
                a->went_on = false;
        } else {
                if (s->last_seen + 1 < a->clock && a->went_on)
                        a->now.switches++;
                a->went_on = true;
        }
        if (e->sector + e->nr_sectors > s->next_sector)
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
