/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>

#include "ra-macro.h"
#include "ra-trace.h"
#include "test-helpers.h"

START_TEST(test_parse) {
        RaTraceEvent e;

        ck_assert_int_eq(
                ra_trace_parse_line("              dd-3339    [001] .....  2146.234009: block_rq_issue: "
                                    "7,1900 RA 131072 () 807680 + 256 be,0,4 [dd]",
                                    &e),
                0);
        ck_assert_uint_eq(e.major, 7);
        ck_assert_uint_eq(e.minor, 1900);
        ck_assert(e.read);
        ck_assert(e.readahead);
        ck_assert_uint_eq(e.sector, 807680);
        ck_assert_uint_eq(e.nr_sectors, 256);

        /* A command in the parentheses, and no readahead flag. */
        ck_assert_int_eq(
                ra_trace_parse_line("fio-1 [000] d..1. 1.5: block_rq_issue: 259,0 R 4096 (28 00 00) 8 + 8 "
                                    "none,0,0 [fio]",
                                    &e),
                0);
        ck_assert_uint_eq(e.major, 259);
        ck_assert(!e.readahead);

        ck_assert_int_eq(
                ra_trace_parse_line("kworker [000] 1.5: block_rq_issue: 8,0 WS 4096 () 8 + 8 [k]", &e), 0);
        ck_assert(!e.read);
}
END_TEST

START_TEST(test_parse_bad) {
        static const char *const bad[] = {
                "",
                "CPU:1 [LOST 42 EVENTS]",
                "dd-1 [000] 1.0: block_rq_complete: 7,0 R () 8 + 8 [0]",
                "dd-1 [000] 1.0: block_rq_issue: 7,0 R 4096 () 8 + 0 [dd]",
                "dd-1 [000] 1.0: block_rq_issue: 7,0 R 4096 (",
                "dd-1 [000] 1.0: block_rq_issue: 7 R 4096 () 8 + 8 [dd]",
                "dd-1 [000] 1.0: block_rq_issue: x,y R 4096 () 8 + 8 [dd]",
                "dd-1 [000] 1.0: block_rq_issue: 7,0 R 4096 () eight + 8 [dd]",
                "dd-1 [000] 1.0: block_rq_issue: 99999,0 R 4096 () 8 + 8 [dd]",
        };
        RaTraceEvent e;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(ra_trace_parse_line(bad[i], &e) == -EINVAL, "accepted '%s'", bad[i]);
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

        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_parse_bad);
        tcase_add_test(tc, test_streams);
        tcase_add_test(tc, test_interleaved);
        tcase_add_test(tc, test_random);
        tcase_add_test(tc, test_window_attribution);
        suite_add_tcase(s, tc);

        return test_run(s);
}
