/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <stdint.h>

#include "ra-diskstat.h"
#include "ra-macro.h"
#include "test-helpers.h"

/* As the kernel writes it: 17 fields, padded. */
static const char *const stat_17 =
        "    1000       10    20480     5000        3        0       24       12        0     "
        "4000     5012        0        0        0        0        7        1\n";

START_TEST(test_parse) {
        RaDiskStat s;

        ck_assert_int_eq(ra_diskstat_parse(stat_17, &s), 0);
        ck_assert_uint_eq(s.read_ios, 1000);
        ck_assert_uint_eq(s.read_merges, 10);
        ck_assert_uint_eq(s.read_sectors, 20480);
        ck_assert_uint_eq(s.read_ticks_ms, 5000);
        ck_assert_uint_eq(s.write_ios, 3);
        ck_assert_uint_eq(s.in_flight, 0);
        ck_assert_uint_eq(s.io_ticks_ms, 4000);
        ck_assert_uint_eq(s.time_in_queue_ms, 5012);

        /* Old kernels write 11 fields. */
        ck_assert_int_eq(ra_diskstat_parse("1 2 3 4 5 6 7 8 9 10 11", &s), 0);
        ck_assert_uint_eq(s.time_in_queue_ms, 11);
}
END_TEST

START_TEST(test_parse_bad) {
        static const char *const bad[] = {
                "",
                "\n",
                "1 2 3 4 5 6 7 8 9 10",                                                    /* too few */
                "1 2 3 4 5 6 7 8 9 10 x",                                                  /* not a number */
                "1 2 3 4 5 6 7 8 9 10 -11",                                                /* signed */
                "1 2 3 4 5 6 7 8 9 10 99999999999999999999",                               /* too large */
                "1 2 3 4 5 6 7 8 9 10 11 1 2 3 4 5 6 7 8 9 10 11 1 2 3 4 5 6 7 8 9 10 11", /* too many */
                "1,2 3 4 5 6 7 8 9 10 11 12",
        };
        RaDiskStat s;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(ra_diskstat_parse(bad[i], &s) == -EINVAL, "accepted '%s'", bad[i]);
}
END_TEST

START_TEST(test_delta) {
        RaDiskStat a = { .read_ios = 100, .read_sectors = 1000, .io_ticks_ms = 50, .in_flight = 3 };
        RaDiskStat b = { .read_ios = 150, .read_sectors = 3000, .io_ticks_ms = 550, .in_flight = 1 };
        RaDiskStat d;
        RaRates r;

        ck_assert_int_eq(ra_diskstat_delta(&a, &b, &d), 0);
        ck_assert_uint_eq(d.read_ios, 50);
        ck_assert_uint_eq(d.read_sectors, 2000);
        ck_assert_uint_eq(d.in_flight, 1);

        ra_diskstat_rates(&d, 0.5, &r);
        ck_assert_double_eq_tol(r.read_iops, 100, 1e-9);
        ck_assert_double_eq_tol(r.read_bytes_per_sec, 2000.0 * 512 / 0.5, 1e-6);
        ck_assert_double_eq_tol(r.avg_read_request_bytes, 2000.0 * 512 / 50, 1e-6);
        ck_assert_double_eq_tol(r.utilization, 1, 1e-9);
}
END_TEST

/* 32-bit kernels: counters wrap at 2^32. */
START_TEST(test_delta_wrap) {
        RaDiskStat a = { .read_ios = UINT32_MAX - 9, .read_sectors = UINT32_MAX - 99 };
        RaDiskStat b = { .read_ios = 10, .read_sectors = 100 };
        RaDiskStat d;

        ck_assert_int_eq(ra_diskstat_delta(&a, &b, &d), 0);
        ck_assert_uint_eq(d.read_ios, 20);
        ck_assert_uint_eq(d.read_sectors, 200);
}
END_TEST

/* Anything else that goes backwards is a reset: no delta. */
START_TEST(test_delta_reset) {
        RaDiskStat a = { .read_ios = 5000, .read_sectors = 90000 };
        RaDiskStat b = { .read_ios = 10, .read_sectors = 100 };
        RaDiskStat big = { .read_ios = UINT64_C(1) << 40 };
        RaDiskStat d;

        ck_assert_int_eq(ra_diskstat_delta(&a, &b, &d), -ERANGE);
        ck_assert_int_eq(ra_diskstat_delta(&big, &b, &d), -ERANGE);
}
END_TEST

START_TEST(test_rates_idle) {
        RaDiskStat d = {};
        RaRates r;

        ra_diskstat_rates(&d, 1, &r);
        ck_assert_double_eq(r.read_iops, 0);
        ck_assert_double_eq(r.avg_read_request_bytes, 0);
        ra_diskstat_rates(&d, 0, &r);
        ck_assert_double_eq(r.seconds, 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("stats");
        TCase *tc = tcase_create("stat");

        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_parse_bad);
        tcase_add_test(tc, test_delta);
        tcase_add_test(tc, test_delta_wrap);
        tcase_add_test(tc, test_delta_reset);
        tcase_add_test(tc, test_rates_idle);
        suite_add_tcase(s, tc);

        return test_run(s);
}
