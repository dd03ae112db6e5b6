/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ra-macro.h"
#include "ra-trace.h"
#include "test-helpers.h"
#include "trace-format.h"

START_TEST(test_format) {
        RaTraceFormat f;

        ck_assert_int_eq(ra_trace_format_parse(header_page, event_format, &f), 0);
        ck_assert_uint_eq(f.id, 2104);
        ck_assert_uint_eq(f.dev.offset, 8);
        ck_assert_uint_eq(f.sector.offset, 16);
        ck_assert_uint_eq(f.nr_sector.offset, 24);
        ck_assert_uint_eq(f.rwbs.offset, 34);
        ck_assert_uint_eq(f.rwbs.size, 10);
        ck_assert_uint_eq(f.commit_size, 8);
        ck_assert_uint_eq(f.data_offset, 16);
        ck_assert(!f.bio);
}
END_TEST

/* block_bio_queue has the same fields elsewhere, and its name says it is bios. */
START_TEST(test_format_bio) {
        RaTraceFormat f;
        char *renamed;

        ck_assert_int_eq(ra_trace_format_parse(header_page, bio_event_format, &f), 0);
        ck_assert(f.bio);
        ck_assert_uint_eq(f.id, 2097);
        ck_assert_uint_eq(f.dev.offset, 8);
        ck_assert_uint_eq(f.sector.offset, 16);
        ck_assert_uint_eq(f.nr_sector.offset, 24);
        ck_assert_uint_eq(f.rwbs.offset, 28);
        ck_assert_uint_eq(f.rwbs.size, 10);

        /* Another event of that layout is not bios. */
        ck_assert_ptr_nonnull(renamed = malloc(strlen(bio_event_format) + 8));
        strcpy(renamed, "name: block_bio_queued");
        strcat(renamed, strchr(bio_event_format, '\n'));
        ck_assert_int_eq(ra_trace_format_parse(header_page, renamed, &f), 0);
        ck_assert(!f.bio);
        free(renamed);
}
END_TEST

/* Formats this cannot read are refused, not guessed at. */
START_TEST(test_format_bad) {
        RaTraceFormat f;
        char *broken;

        ck_assert_int_eq(ra_trace_format_parse("", event_format, &f), -EINVAL);
        ck_assert_int_eq(ra_trace_format_parse(header_page, "", &f), -EINVAL);

        /* No ID. */
        broken = strdup(event_format);
        memcpy(strstr(broken, "ID:"), "XX:", 3);
        ck_assert_int_eq(ra_trace_format_parse(header_page, broken, &f), -EINVAL);
        free(broken);

        /* A 32-bit sector. */
        broken = strdup(event_format);
        memcpy(strstr(broken, "offset:16;\tsize:8"), "offset:16;\tsize:4", 17);
        ck_assert_int_eq(ra_trace_format_parse(header_page, broken, &f), -EINVAL);
        free(broken);

        /* No rwbs. */
        broken = strdup(event_format);
        memcpy(strstr(broken, "rwbs["), "rwxx[", 5);
        ck_assert_int_eq(ra_trace_format_parse(header_page, broken, &f), -EINVAL);
        free(broken);
}
END_TEST

/* A ring-buffer page, written as the kernel writes one. */
typedef struct Page {
        uint8_t bytes[4096];
        size_t len; /* of the data after the 16-byte header */
} Page;

static void put32(Page *p, uint32_t v) {
        memcpy(p->bytes + 16 + p->len, &v, 4);
        p->len += 4;
}

static void put_bytes(Page *p, uint32_t delta, const uint8_t *rec, size_t size, bool long_form) {
        if (long_form) {
                /* type_len 0: the length (counting itself) in the next word. */
                put32(p, delta << 5);
                put32(p, (uint32_t) size + 4);
        } else
                put32(p, delta << 5 | (uint32_t) size / 4);
        memcpy(p->bytes + 16 + p->len, rec, size);
        p->len += size;
}

/* A block_rq_issue record, or with rwbs_offset 28 and 56 bytes a block_bio_queue one. */
static void put_event(Page *p, uint32_t delta, uint16_t id, uint32_t dev, uint64_t sector, uint32_t nr,
                      const char *rwbs, size_t rwbs_offset, size_t size, bool long_form) {
        uint8_t rec[68] = {};

        memcpy(rec, &id, 2);
        memcpy(rec + 8, &dev, 4);
        memcpy(rec + 16, &sector, 8);
        memcpy(rec + 24, &nr, 4);
        memcpy(rec + rwbs_offset, rwbs, strlen(rwbs));
        put_bytes(p, delta, rec, size, long_form);
}

static void put_record(Page *p, uint32_t delta, uint16_t id, uint32_t dev, uint64_t sector, uint32_t nr,
                       const char *rwbs, bool long_form) {
        put_event(p, delta, id, dev, sector, nr, rwbs, 34, 68, long_form);
}

static void put_bio(Page *p, uint32_t delta, uint16_t id, uint32_t dev, uint64_t sector, uint32_t nr,
                    const char *rwbs) {
        put_event(p, delta, id, dev, sector, nr, rwbs, 28, 56, false);
}

static void finish(Page *p, uint64_t timestamp, uint64_t flags) {
        uint64_t commit = p->len | flags;

        memcpy(p->bytes, &timestamp, 8);
        memcpy(p->bytes + 8, &commit, 8);
}

static RaTraceEvent seen[16];
static size_t n_seen;

static void record(void *userdata, const RaTraceEvent *e) {
        (void) userdata;
        if (n_seen < ELEMENTSOF(seen))
                seen[n_seen++] = *e;
}

static int parse(const Page *p, size_t size) {
        RaTraceFormat f;

        ck_assert_int_eq(ra_trace_format_parse(header_page, event_format, &f), 0);
        n_seen = 0;
        return ra_trace_page_parse(&f, 1, p->bytes, size, record, NULL);
}

/* With block_bio_queue's records too, as the tracer reads while a bio-based device is managed. */
static int parse_with_bios(const Page *p) {
        RaTraceFormat f[2];

        ck_assert_int_eq(ra_trace_format_parse(header_page, event_format, &f[0]), 0);
        ck_assert_int_eq(ra_trace_format_parse(header_page, bio_event_format, &f[1]), 0);
        n_seen = 0;
        return ra_trace_page_parse(f, 2, p->bytes, sizeof(p->bytes), record, NULL);
}

START_TEST(test_page) {
        Page p = {};

        put_record(&p, 10, 2104, 7u << 20 | 1900, 807680, 256, "RA", false);
        /* A record our filter discarded: padding, its length (counting that word) in the next word. */
        put32(&p, 5u << 5 | 29);
        put32(&p, 68);
        p.len += 64;
        /* A time extend: 1 << 27 ns more. */
        put32(&p, 0u << 5 | 30);
        put32(&p, 1);
        put_record(&p, 3, 2104, 259u << 20, 8, 8, "R", true);
        put_record(&p, 1, 2104, 8u << 20, 8, 8, "WS", false);
        put_record(&p, 1, 999, 8u << 20, 8, 8, "R", false); /* another event */
        finish(&p, 1000, UINT64_C(1) << 31 /* events were lost before this page */);

        ck_assert_int_eq(parse(&p, sizeof(p.bytes)), 3);
        ck_assert_uint_eq(seen[0].major, 7);
        ck_assert_uint_eq(seen[0].minor, 1900);
        ck_assert(seen[0].read);
        ck_assert(seen[0].readahead);
        ck_assert_uint_eq(seen[0].sector, 807680);
        ck_assert_uint_eq(seen[0].nr_sectors, 256);
        ck_assert_uint_eq(seen[0].time_ns, 1010);

        ck_assert_uint_eq(seen[1].major, 259);
        ck_assert(seen[1].read);
        ck_assert(!seen[1].readahead);
        ck_assert_uint_eq(seen[1].time_ns, 1010 + 5 + (UINT64_C(1) << 27) + 3);

        ck_assert_uint_eq(seen[2].major, 8);
        ck_assert(!seen[2].read);
}
END_TEST

/*
 * Requests and bios on one page: each record is read with its own event's
 * layout, and says which it was. Without block_bio_queue's format (no
 * bio-based device managed) its records are another event's, passed over.
 */
START_TEST(test_page_bios) {
        Page p = {};

        put_bio(&p, 2, 2097, 252u << 20 | 1, 4096, 256, "RA");
        put_record(&p, 1, 2104, 8u << 20, 2048, 8, "R", false);
        put_bio(&p, 1, 2097, 252u << 20 | 1, 4352, 8, "R");
        put_bio(&p, 1, 2097, 252u << 20 | 1, 0, 8, "W");
        put_bio(&p, 1, 2097, 252u << 20 | 1, 0, 0, "R"); /* no sectors: no read */
        finish(&p, 100, 0);

        ck_assert_int_eq(parse_with_bios(&p), 4);
        ck_assert(seen[0].bio);
        ck_assert_uint_eq(seen[0].major, 252);
        ck_assert_uint_eq(seen[0].minor, 1);
        ck_assert_uint_eq(seen[0].sector, 4096);
        ck_assert_uint_eq(seen[0].nr_sectors, 256);
        ck_assert(seen[0].read);
        ck_assert(seen[0].readahead);
        ck_assert_uint_eq(seen[0].time_ns, 102);

        ck_assert(!seen[1].bio);
        ck_assert_uint_eq(seen[1].major, 8);
        ck_assert_uint_eq(seen[1].sector, 2048);
        ck_assert(seen[1].read);

        ck_assert(seen[2].bio);
        ck_assert_uint_eq(seen[2].sector, 4352);
        ck_assert(seen[2].read);
        ck_assert(!seen[2].readahead);
        ck_assert_uint_eq(seen[2].time_ns, 104);

        ck_assert(seen[3].bio);
        ck_assert(!seen[3].read);

        ck_assert_int_eq(parse(&p, sizeof(p.bytes)), 1);
        ck_assert(!seen[0].bio);
        ck_assert_uint_eq(seen[0].major, 8);
}
END_TEST

/*
 * The kernel flags the first page read after it overwrote events. Its commit
 * is a long: Linux 6.18 adds the flag (an int, 1 << 31) sign-extended, as
 * read from a page on this kernel (0xffffffff80000ff0 for a full page).
 */
START_TEST(test_page_missed) {
        RaTracePage layout;
        Page p = {};

        ck_assert_int_eq(ra_trace_header_parse(header_page, &layout), 0);
        put_record(&p, 1, 2104, 7u << 20, 0, 8, "R", false);
        finish(&p, 0, 0);
        ck_assert(!ra_trace_page_missed(&layout, p.bytes, sizeof(p.bytes)));

        finish(&p, 0, UINT64_C(0xffffffff80000000));
        ck_assert(ra_trace_page_missed(&layout, p.bytes, sizeof(p.bytes)));
        ck_assert_int_eq(parse(&p, sizeof(p.bytes)), 1);

        /* The count stored after the data (RB_MISSED_STORED, 1 << 30) is not needed for the flag. */
        finish(&p, 0, UINT64_C(1) << 31 | UINT64_C(1) << 30);
        ck_assert(ra_trace_page_missed(&layout, p.bytes, sizeof(p.bytes)));

        /* A kernel with a 4-byte commit has the flag in its top bit. */
        layout.commit_size = 4;
        memcpy(p.bytes + 8, &(uint32_t){ 72u | UINT32_C(1) << 31 }, 4);
        ck_assert(ra_trace_page_missed(&layout, p.bytes, sizeof(p.bytes)));
        memcpy(p.bytes + 8, &(uint32_t){ 72u }, 4);
        ck_assert(!ra_trace_page_missed(&layout, p.bytes, sizeof(p.bytes)));

        /* Too short for a header: nothing to say. */
        ck_assert(!ra_trace_page_missed(&layout, p.bytes, 10));
}
END_TEST

/* A bio-based device's bios make streams and jumps as requests do. */
START_TEST(test_bio_streams) {
        RaTraceAccount a = {};
        RaTraceSummary s;
        Page p = {};

        for (uint64_t i = 0; i < 8; i++)
                put_bio(&p, 1, 2097, 252u << 20, 1000 + i * 256, 256, "RA");
        for (uint64_t i = 0; i < 8; i++)
                put_bio(&p, 1, 2097, 252u << 20, (i * 7919 % 1000) * 10000 + 5000000, 8, "R");
        finish(&p, 0, 0);

        ck_assert_int_eq(parse_with_bios(&p), 16);
        for (size_t i = 0; i < n_seen; i++)
                ra_trace_account_add(&a, &seen[i], 128);
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.requests, 16);
        ck_assert_uint_eq(s.readahead, 8);
        ck_assert_uint_eq(s.jumps, 1 + 8);
        ck_assert_uint_eq(s.request_kb, 128);
}
END_TEST

/* Padding without a time delta ends a page; what a cut page holds before the cut is kept. */
START_TEST(test_page_bad) {
        Page p = {};

        put_record(&p, 1, 2104, 7u << 20, 0, 8, "R", false);
        put32(&p, 29);
        put32(&p, 4000);
        finish(&p, 0, 0);
        ck_assert_int_eq(parse(&p, sizeof(p.bytes)), 1);

        /* A record running past the commit. */
        p = (Page){};
        put_record(&p, 1, 2104, 7u << 20, 0, 8, "R", false);
        put_record(&p, 1, 2104, 7u << 20, 8, 8, "R", false);
        finish(&p, 0, 0);
        memcpy(p.bytes + 8, &(uint64_t){ 68 + 4 + 30 }, 8);
        ck_assert_int_eq(parse(&p, sizeof(p.bytes)), -EINVAL);
        ck_assert_uint_eq(n_seen, 1);

        /* A commit beyond the page, and a page shorter than its header. */
        p = (Page){};
        finish(&p, 0, 0);
        memcpy(p.bytes + 8, &(uint64_t){ 5000 }, 8);
        ck_assert_int_eq(parse(&p, sizeof(p.bytes)), -EINVAL);
        ck_assert_int_eq(parse(&p, 10), -EINVAL);

        /* A long-form record whose length does not count itself. */
        p = (Page){};
        put32(&p, 1u << 5);
        put32(&p, 2);
        finish(&p, 0, 0);
        ck_assert_int_eq(parse(&p, sizeof(p.bytes)), -EINVAL);

        /* Zero sectors is no request. */
        p = (Page){};
        put_record(&p, 1, 2104, 7u << 20, 0, 0, "R", false);
        finish(&p, 0, 0);
        ck_assert_int_eq(parse(&p, sizeof(p.bytes)), 0);
}
END_TEST

static void add(RaTraceAccount *a, uint64_t sector, uint32_t nr, uint32_t window_kb) {
        RaTraceEvent e = { .major = 7, .read = true, .readahead = true, .sector = sector, .nr_sectors = nr };

        ra_trace_account_add(a, &e, window_kb);
}

/* One stream continues; a read at another place jumps; writes do not count. */
START_TEST(test_streams) {
        RaTraceAccount a = {};
        RaTraceSummary s;
        RaTraceEvent w = { .major = 7, .read = false, .sector = 1, .nr_sectors = 8 };

        for (uint64_t i = 0; i < 10; i++)
                add(&a, 1000 + i * 256, 256, 128);
        ra_trace_account_add(&a, &w, 128);
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.requests, 10);
        ck_assert_uint_eq(s.jumps, 1); /* the stream's start */
        ck_assert_uint_eq(s.switches, 0);
        ck_assert_uint_eq(s.bytes, 10 * 256 * 512);
        ck_assert_uint_eq(s.readahead, 10);
        ck_assert_uint_eq(s.request_kb, 128);
        ck_assert_uint_eq(s.window_bytes, s.bytes);

        /* The stream goes on in the next interval without a jump. */
        add(&a, 1000 + 10 * 256, 256, 128);
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.jumps, 0);
        ck_assert_uint_eq(s.requests, 1);
}
END_TEST

/* Interleaved streams are followed apart: up to RA_TRACE_STREAMS of them. */
START_TEST(test_interleaved) {
        RaTraceAccount a = {};
        RaTraceSummary s;

        for (uint64_t i = 0; i < 20; i++)
                for (uint64_t stream = 0; stream < 4; stream++)
                        add(&a, stream * 1000000 + i * 64, 64, 32);
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.requests, 80);
        ck_assert_uint_eq(s.jumps, 4);
        /*
         * Each request after the first five goes back to a stream right after
         * another stream's request; the fifth follows the fourth stream's start, a jump.
         */
        ck_assert_uint_eq(s.switches, 75);
}
END_TEST

/* A stream issued a little out of order is still one stream. */
START_TEST(test_reordered) {
        RaTraceAccount a = {};
        RaTraceSummary s;

        /* 240-sector requests of a 2048 KiB window, each pair swapped. */
        for (uint64_t i = 0; i < 20; i += 2) {
                add(&a, 1000 + (i + 1) * 240, 240, 2048);
                add(&a, 1000 + i * 240, 240, 2048);
        }
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.requests, 20);
        ck_assert_uint_eq(s.jumps, 1);
        ck_assert_uint_eq(s.switches, 0);

        /* Far from it, a read is a jump. */
        add(&a, 1000 + 20 * 240 + 4096 * 2 + 1, 8, 2048);
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.jumps, 1);

        /* The stream going on after it took no turn: the jump did. */
        add(&a, 1000 + 20 * 240, 240, 2048);
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.jumps, 0);
        ck_assert_uint_eq(s.switches, 0);
}
END_TEST

/* Random reads jump at every request. */
START_TEST(test_random) {
        RaTraceAccount a = {};
        RaTraceSummary s;

        for (uint64_t i = 0; i < 50; i++)
                add(&a, (i * 7919 % 1000) * 10000, 8, 128);
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.jumps, 50);
        ck_assert_uint_eq(s.request_kb, 4);
}
END_TEST

/*
 * A stream keeps the window it started with: after the window changed, bytes
 * count for it only from streams that started since. (The daemon changes the
 * window between intervals, so one interval sees one window.)
 */
START_TEST(test_window_attribution) {
        RaTraceAccount a = {};
        RaTraceSummary s;

        add(&a, 0, 256, 128);
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.window_bytes, 256 * 512);

        add(&a, 256, 256, 512);
        add(&a, 5000000, 1024, 512);
        ra_trace_account_take(&a, &s);
        ck_assert_uint_eq(s.bytes, (256 + 1024) * 512);
        ck_assert_uint_eq(s.window_bytes, 1024 * 512);
}
END_TEST

int main(void) {
        Suite *s = suite_create("trace");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_format);
        tcase_add_test(tc, test_format_bio);
        tcase_add_test(tc, test_format_bad);
        tcase_add_test(tc, test_page);
        tcase_add_test(tc, test_page_bios);
        tcase_add_test(tc, test_bio_streams);
        tcase_add_test(tc, test_page_bad);
        tcase_add_test(tc, test_page_missed);
        tcase_add_test(tc, test_streams);
        tcase_add_test(tc, test_interleaved);
        tcase_add_test(tc, test_reordered);
        tcase_add_test(tc, test_random);
        tcase_add_test(tc, test_window_attribution);
        suite_add_tcase(s, tc);

        return test_run(s);
}
