/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <string.h>

#include "ra-calib.h"
#include "test-helpers.h"

#define MB 1000000.0
#define MIB 1048576.0
static const RaBounds bounds = { .min_kb = 4, .max_kb = 8192 };

/* A read of kb on a device costing command_us a command and mb_s MB/s, as the calibration times it. */
static RaCalibSample flash_read(uint32_t kb, double command_us, double mb_s) {
        return (RaCalibSample){ .kb = kb,
                                .nsec = (uint64_t) (command_us * 1000 + kb * 1024.0 / (mb_s * MB) * 1e9) };
}

/* Five passes of every size, as the daemon reads them. */
static size_t passes(RaCalibSample *s, uint32_t max_kb, double command_us, double mb_s) {
        uint32_t sizes[RA_CALIB_POINTS_MAX];
        size_t n = 0, m = ra_calib_sizes(max_kb, sizes);

        for (int pass = 0; pass < 5; pass++)
                for (size_t i = 0; i < m; i++)
                        s[n++] = flash_read(sizes[i], command_us, mb_s);
        return n;
}

static RaDeviceAttrs device(uint64_t size, bool rotational) {
        return (RaDeviceAttrs){ .size_bytes = size, .rotational = rotational, .read_ahead_kb = 128 };
}

START_TEST(test_sizes) {
        uint32_t s[RA_CALIB_POINTS_MAX];

        ck_assert_uint_eq(ra_calib_sizes(1024, s), 5);
        ck_assert_uint_eq(s[0], 4);
        ck_assert_uint_eq(s[4], 1024);
        /* A USB stick's 120 KiB commands: the largest read is one command. */
        ck_assert_uint_eq(ra_calib_sizes(120, s), 4);
        ck_assert_uint_eq(s[3], 120);
        /* Never above 1 MiB, whatever a queue allows. */
        ck_assert_uint_eq(ra_calib_sizes(32767, s), 5);
        ck_assert_uint_eq(s[4], 1024);
}
END_TEST

/* Seed 004's SSD behind a heavy controller, as the ssd-ctrl class models it: 250 us a command, 270 MB/s. */
START_TEST(test_fit_ssd_ctrl) {
        RaCalibSample s[RA_CALIB_SAMPLES_MAX];
        size_t n = passes(s, 1024, 250, 270);
        RaDeviceAttrs a = device(22 * 1000 * MB, false);
        RaCalib c;
        RaDecision d;
        uint64_t bytes = 0, nsec = 0;

        for (size_t i = 0; i < n; i++) {
                bytes += s[i].kb * 1024ULL;
                nsec += s[i].nsec;
        }
        ck_assert_uint_le(bytes, RA_CALIB_BYTES_MAX);
        ck_assert_uint_le(nsec, RA_CALIB_NSEC_MAX);

        ck_assert_int_eq(ra_calib_fit(s, n, 1764150000, &c), 0);
        ck_assert_uint_eq(c.n_points, 5);
        ck_assert_uint_ge(c.command_us, 245);
        ck_assert_uint_le(c.command_us, 255);
        ck_assert_uint_ge(c.bandwidth_kb_s, 270 * MB / 1024 * 0.98);
        ck_assert_uint_le(c.bandwidth_kb_s, 270 * MB / 1024 * 1.02);
        ck_assert_uint_eq(c.jump_us, 0);

        /* 19 x 250 us x 263671 KiB/s = 1252 KiB: one stream needs 2 MiB windows for 95 % of it. */
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_uint_eq(d.kb, 2048);
        ck_assert_msg(strstr(d.reason, "250 us a command"), "reason: %s", d.reason);

        /* Another process slowed some reads (a loaded machine): the fastest of each size still fits. */
        for (size_t i = 0; i < n; i += 3)
                s[i].nsec *= 2;
        ck_assert_int_eq(ra_calib_fit(s, n, 1764150000, &c), 0);
        ck_assert_uint_ge(c.command_us, 245);
        ck_assert_uint_le(c.command_us, 255);
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 2048);
}
END_TEST

/*
 * Seed 004's own table, read one window at a time: 64 KiB 125 MB/s, 128 KiB
 * 183, 256 KiB 216, 512 KiB 216, 1 MiB 251. Fitted, it still says 1 MiB.
 */
START_TEST(test_fit_seed_004_table) {
        static const struct {
                uint32_t kb;
                double mb_s;
        } rows[] = { { 64, 125 }, { 128, 183 }, { 256, 216 }, { 512, 216 }, { 1024, 251 } };
        RaCalibSample s[ELEMENTSOF(rows)];
        RaDeviceAttrs a = device(22 * 1000 * MB, false);
        RaCalib c;
        RaDecision d;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                s[i] = flash_read(rows[i].kb, 0, rows[i].mb_s);
        ck_assert_int_eq(ra_calib_fit(s, ELEMENTSOF(s), 1, &c), 0);
        ck_assert_uint_ge(c.command_us, 200);
        ck_assert_uint_le(c.command_us, 400);
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_ge(d.kb, 1024);
}
END_TEST

/*
 * What the sanitizer build's model of that device gave in CI: the 4 KiB to
 * 256 KiB reads on the model's curve, the 1 MiB read a third slower (the
 * model's server, slowed by the sanitizers, copying 1 MiB). Plain least
 * squares said 157 us a command; the 4 KiB reads alone take 266.
 */
START_TEST(test_fit_one_slow_large_read) {
        static const struct {
                uint32_t kb;
                double mib_s;
        } rows[] = { { 4, 14.7 }, { 16, 50.1 }, { 64, 124.6 }, { 256, 194.2 }, { 1024, 178.4 } };
        RaCalibSample s[ELEMENTSOF(rows)];
        RaCalib c;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                s[i] = flash_read(rows[i].kb, 0, rows[i].mib_s * MIB / MB);
        ck_assert_int_eq(ra_calib_fit(s, ELEMENTSOF(s), 1, &c), 0);
        ck_assert_uint_ge(c.command_us, 225);
        ck_assert_uint_le(c.command_us, 265);
        ck_assert_uint_ge(c.bandwidth_kb_s, 200 * 1024);
}
END_TEST

/* The hdd-7200 class: 50 us a command, about 150 MB/s in the middle, 8.5 ms seeks and half a turn. */
START_TEST(test_fit_hdd) {
        RaCalibSample s[RA_CALIB_SAMPLES_MAX];
        size_t n = passes(s, 1024, 50, 150);
        RaDeviceAttrs a = device(1000 * 1000 * MB, true);
        RaCalib c;
        RaDecision d, prior;

        ck_assert_uint_le(n + 8, RA_CALIB_SAMPLES_MAX);
        for (int i = 0; i < 8; i++) {
                s[n] = flash_read(4, 50 + 8500 + 4170 + (i % 3) * 500, 150);
                s[n++].jump = true;
        }
        ck_assert_int_eq(ra_calib_fit(s, n, 1, &c), 0);
        ck_assert_uint_ge(c.jump_us, 12600);
        ck_assert_uint_le(c.jump_us, 13300);

        /* 13.1 ms at 143 MiB/s reads 1.9 MiB: more than its prior's 512 KiB, which stands. */
        ra_calib_prior(&c, &a, bounds, &d);
        ra_policy_prior(&a, bounds, &prior);
        ck_assert_uint_eq(d.kb, prior.kb);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_msg(strstr(d.reason, "a jump costs 13.1 ms") && strstr(d.reason, "the prior stands"),
                      "reason: %s", d.reason);

        /* A disk whose jumps read less than its prior (3 ms at 143 MiB/s: 439 KiB): the window of one jump.
         */
        c.jump_us = 3000;
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 512);
        c.jump_us = 1500;
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 256);
        ck_assert_msg(strstr(d.reason, "a jump costs only 1.5 ms"), "reason: %s", d.reason);

        /* It says it is rotational, but jumps for the price of a command: flash, 19 x 50 us x 146484 KiB/s.
         */
        c.jump_us = 100;
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 256);
        ck_assert_msg(strstr(d.reason, "no head moves"), "reason: %s", d.reason);
}
END_TEST

/* The tiny-stick class, 15 kB/s: one 4 KiB read (273 ms) and nothing more fits in a second. */
START_TEST(test_fit_tiny_stick) {
        RaCalibSample s[2];
        RaDeviceAttrs a = device(505 * 1024, false);
        RaCalib c;
        RaDecision d;

        s[0] = flash_read(4, 1000, 0.015);
        ck_assert(ra_calib_affordable(s, 0, 4));
        ck_assert(!ra_calib_affordable(s, 1, 16));
        ck_assert(ra_calib_affordable(s, 1, 4));
        s[1] = s[0];
        ck_assert(ra_calib_affordable(s, 2, 4));
        ck_assert_int_eq(ra_calib_fit(s, 2, 1, &c), 0);
        ck_assert_uint_eq(c.n_points, 1);
        ck_assert_uint_ge(c.bandwidth_kb_s, 13);
        ck_assert_uint_le(c.bandwidth_kb_s, 16);
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 4);
        ck_assert_msg(strstr(d.reason, "reads only"), "reason: %s", d.reason);
}
END_TEST

START_TEST(test_affordable_bytes) {
        RaCalibSample s[RA_CALIB_SAMPLES_MAX];
        size_t n = 0;

        /* A device fast enough for any time budget still stops at 64 MiB. */
        while (ra_calib_affordable(s, n, 1024) && n < 16)
                s[n++] = (RaCalibSample){ .kb = 1024, .nsec = 1000 };
        ck_assert_uint_eq(n, 16);
        for (size_t i = 0; i < n; i++)
                s[i].kb = 4096;
        ck_assert(!ra_calib_affordable(s, n, 1024));
        ck_assert(!ra_calib_affordable(s, RA_CALIB_SAMPLES_MAX, 4));
        ck_assert_int_eq(ra_calib_fit(s, 0, 1, &(RaCalib){}), -EINVAL);
}
END_TEST

START_TEST(test_format_parse) {
        RaCalibSample s[RA_CALIB_SAMPLES_MAX];
        size_t n = passes(s, 1024, 250, 270);
        RaCalib c, back;
        char buf[256], text[512];

        ck_assert_int_eq(ra_calib_fit(s, n, 1764150000, &c), 0);
        c.jump_us = 12700;
        ck_assert_int_eq(ra_calib_format(&c, buf, sizeof(buf)), 0);
        ck_assert_ptr_null(strpbrk(buf, " \t\n"));
        ck_assert_int_eq(ra_calib_parse(buf, &back), 0);
        ck_assert_mem_eq(&c, &back, sizeof(c));
        ra_calib_describe(&c, text, sizeof(text));
        ck_assert_msg(strstr(text, "250 us a command, 257.4 MiB/s; 4 KiB"), "%s", text);
        ck_assert_msg(strstr(text, "a jump 12.7 ms"), "%s", text);

        static const char *const bad[] = {
                "",
                "0:1:2:3:",
                "x:1:2:3:",
                "1:2:3",
                "1:2:3:4:5",
                "1:2:3:4:4/",
                "1:2:3:4:4/10,",
                "1:2:3:4:0/10",
                "1:2:3:4:4/10,,16/20",
                "1:2:99999999999:4:",
                "1:2:3:4:4/10 16/20",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(ra_calib_parse(bad[i], &back) == -EINVAL, "accepted '%s'", bad[i]);
        ck_assert_int_eq(ra_calib_parse("1:0:0:0:", &back), 0);
        ck_assert_uint_eq(back.n_points, 0);
        ck_assert_int_eq(ra_calib_format(&c, buf, 10), -ENOBUFS);
}
END_TEST

int main(void) {
        Suite *s = suite_create("calib");
        TCase *tc = tcase_create("calib");

        tcase_add_test(tc, test_sizes);
        tcase_add_test(tc, test_fit_ssd_ctrl);
        tcase_add_test(tc, test_fit_seed_004_table);
        tcase_add_test(tc, test_fit_one_slow_large_read);
        tcase_add_test(tc, test_fit_hdd);
        tcase_add_test(tc, test_fit_tiny_stick);
        tcase_add_test(tc, test_affordable_bytes);
        tcase_add_test(tc, test_format_parse);
        suite_add_tcase(s, tc);
        return test_run(s);
}
