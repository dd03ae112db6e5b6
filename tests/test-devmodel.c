/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>

#include "dm-cost.h"
#include "dm-params.h"
#include "ra-macro.h"
#include "test-helpers.h"

#define MS 1000000u
#define US 1000u
#define KiB 1024u
#define MiB (1024u * 1024u)

static const char disk_conf[] = "[device]\n"
                                "emulates = a test disk\n"
                                "size = 1000000000000\n"
                                "rotational = 1\n"
                                "command_us = 50\n"
                                "bus_mb_s = 600\n"
                                "[disk]\n"
                                "rpm = 7200\n"
                                "track_seek_ms = 1.0\n"
                                "average_seek_ms = 8.5\n"
                                "full_seek_ms = 20.0\n"
                                "outer_mb_s = 200\n"
                                "inner_mb_s = 100\n"
                                "cache_segments = 4\n"
                                "cache_segment_kb = 1024\n"
                                "[source]\n"
                                "seek = a data sheet\n";

static const char flash_conf[] = "[device]\n"
                                 "size = 8589934592\n"
                                 "queue = 4\n"
                                 "command_us = 250\n"
                                 "bus_mb_s = 300\n"
                                 "[flash]\n"
                                 "read_mb_s = 250\n";

static int parse(const char *text, const char *name, DmParams *p, char *err, size_t errlen) {
        FILE *f = fmemopen((void *) text, strlen(text), "r");
        int r;

        ck_assert_ptr_nonnull(f);
        r = dm_params_parse(f, name, p, err, errlen);
        fclose(f);
        return r;
}

static void parse_ok(const char *text, DmParams *p) {
        char err[512] = "";

        ck_assert_msg(parse(text, "classes/test.conf", p, err, sizeof(err)) == 0, "refused: %s", err);
}

START_TEST(test_params) {
        DmParams p;

        parse_ok(disk_conf, &p);
        ck_assert_str_eq(p.name, "test");
        ck_assert_str_eq(p.emulates, "a test disk");
        ck_assert_int_eq(p.kind, DM_KIND_DISK);
        ck_assert(p.rotational);
        ck_assert_uint_eq(p.size, 1000000000000u);
        ck_assert_uint_eq(p.queue, 1);
        ck_assert_uint_eq(p.max_sectors_kb, 1024);
        ck_assert_uint_eq(p.cache_segments, 4);
        ck_assert_uint_eq(p.n_sources, 1);
        ck_assert_str_eq(p.sources[0], "seek: a data sheet");

        parse_ok(flash_conf, &p);
        ck_assert_int_eq(p.kind, DM_KIND_FLASH);
        ck_assert_uint_eq(p.queue, 4);
        ck_assert_double_eq(p.write_mb_s, 250); /* defaults to the read rate */
}
END_TEST

START_TEST(test_params_bad) {
        static const struct {
                const char *text, *message;
        } bad[] = {
                { "[device]\nsize = 1000\n", "classes/test.conf:2: size must be" },
                { "[device]\nsize = 4096\nbus_mb_s = fast\n",
                  "classes/test.conf:3: bus_mb_s must be a number" },
                { "[device]\nsize = 4096\nbus_mb_s = 1\nspeed = 3\n",
                  "classes/test.conf:4: unknown key 'speed'" },
                { "[devices]\nsize = 4096\n", "classes/test.conf:1: unknown section [devices]" },
                { "[device]\nsize = 4096\nbus_mb_s = 1\n",
                  "classes/test.conf: no [disk] or [flash] section" },
                { "[device]\nsize = 4096\nbus_mb_s = 1\nqueue = 0\n", "classes/test.conf:4: queue must be" },
                { "[device]\nsize = 4096\nbus_mb_s = 1\n[flash]\n",
                  "classes/test.conf: [flash] read_mb_s is missing" },
                { "[device]\nsize = 4096\nbus_mb_s = 1\n[flash]\nread_mb_s = -1\n",
                  "classes/test.conf:5: read_mb_s" },
                { "[device]\nsize = 4096\nbus_mb_s = 1\n[disk]\nrpm = 7200\ntrack_seek_ms = 9\n"
                  "average_seek_ms = 8\nfull_seek_ms = 20\nouter_mb_s = 1\ninner_mb_s = 1\n",
                  "classes/test.conf: [disk] seeks must grow" },
                { "[device]\nsize = 4096\nbus_mb_s = 1\n[disk]\nrpm = 7200\ntrack_seek_ms = 1\n"
                  "average_seek_ms = 8\nfull_seek_ms = 20\nouter_mb_s = 1\ninner_mb_s = 2\n",
                  "classes/test.conf: [disk] inner_mb_s is larger" },
                { "[device]\nsize = 4096\nbus_mb_s = 1\n[flash]\nread_mb_s = 1\n[disk]\n",
                  "classes/test.conf: a class is a [disk] or [flash], not both" },
                { "[device]\nsize = 4096\nrotational = yes\n",
                  "classes/test.conf:3: rotational must be 0 or 1" },
                { "garbage\n", "classes/test.conf:1: not a key = value line" },
        };
        char err[512];
        DmParams p;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                err[0] = '\0';
                ck_assert_msg(parse(bad[i].text, "classes/test.conf", &p, err, sizeof(err)) == -EINVAL,
                              "accepted case %zu", i);
                ck_assert_msg(strncmp(err, bad[i].message, strlen(bad[i].message)) == 0,
                              "case %zu said '%s'", i, err);
        }
        ck_assert_int_eq(parse(flash_conf, ".conf", &p, err, sizeof(err)), -EINVAL);
}
END_TEST

/* The curve's mean over seek lengths weighted as a data sheet weighs them
 * is the data sheet's average seek. */
START_TEST(test_seek_curve) {
        DmParams p;
        double sum = 0, weight = 0, last = 0;
        const int n = 20000;

        parse_ok(disk_conf, &p);
        ck_assert_double_eq(dm_model_seek_ns(&p, 0), 0);
        ck_assert_double_eq_tol(dm_model_seek_ns(&p, 1), 1.0 * MS, 0.01 * MS);
        ck_assert_double_eq_tol(dm_model_seek_ns(&p, p.size), 20.0 * MS, 1);
        for (int i = 1; i <= n; i++) {
                double t = dm_model_seek_ns(&p, (uint64_t) ((double) p.size * i / n));

                ck_assert(t >= last); /* grows with distance */
                last = t;
                sum += (double) (n + 1 - i) * t;
                weight += n + 1 - i;
        }
        ck_assert_double_eq_tol(sum / weight, 8.5 * MS, 0.05 * MS);
}
END_TEST

START_TEST(test_disk_sequential_and_cache) {
        _cleanup_(dm_model_freep) DmModel *m = NULL;
        DmParams p;
        uint64_t t, done;

        parse_ok(disk_conf, &p);
        m = dm_model_new(&p);
        ck_assert_ptr_nonnull(m);

        /* The first command seeks (the head rests at 0), the next continues. */
        done = dm_model_read(m, 0, 100 * MiB, 128 * KiB);
        ck_assert_uint_eq(dm_model_stats(m)->seeks, 1);
        ck_assert(done > 4 * MS);
        t = dm_model_read(m, done, 100 * MiB + 128 * KiB, 128 * KiB);
        ck_assert_uint_eq(dm_model_stats(m)->seeks, 1);
        ck_assert(t - done < 2 * MS); /* no seek, no rotation */

        /* Idle for 10 ms: the drive reads ahead; the next 4 KiB are in its cache. */
        done = dm_model_read(m, t + 10 * MS, 100 * MiB + 256 * KiB, 4 * KiB);
        ck_assert_uint_eq(dm_model_stats(m)->cache_hits, 1);
        ck_assert_uint_le(done - (t + 10 * MS), 50 * US + 7 * US + 1);

        /* A read of what it has read ahead (a segment's worth) is a hit too. */
        t = dm_model_read(m, done, 100 * MiB + 900 * KiB, 4 * KiB);
        ck_assert_uint_eq(dm_model_stats(m)->cache_hits, 2);
        ck_assert_uint_eq(dm_model_stats(m)->seeks, 1);

        /* A short skip forward within a track passes under the head. */
        done = dm_model_read(m, t, 100 * MiB + 5 * MiB / 2, 4 * KiB);
        ck_assert_uint_eq(dm_model_stats(m)->skips, 1);
        ck_assert(done - t < 8 * MS);

        /* Far away: a seek, and half a turn. */
        t = dm_model_read(m, done, (uint64_t) 500000 * MiB, 4 * KiB);
        ck_assert_uint_eq(dm_model_stats(m)->seeks, 2);
        ck_assert_msg(t - done > dm_model_seek_ns(&p, 500000 * (uint64_t) MiB) + 4 * MS, "%lu vs %f",
                      (unsigned long) (t - done), dm_model_seek_ns(&p, 500000 * (uint64_t) MiB));
}
END_TEST

START_TEST(test_disk_one_at_a_time) {
        _cleanup_(dm_model_freep) DmModel *m = NULL;
        DmParams p;
        uint64_t a, b;

        parse_ok(disk_conf, &p);
        m = dm_model_new(&p);
        /* Two commands arriving together: the second starts when the first ends. */
        a = dm_model_read(m, 0, 0, 64 * KiB);
        b = dm_model_read(m, 0, 200000 * (uint64_t) MiB, 64 * KiB);
        ck_assert(b > a + 5 * MS);
}
END_TEST

START_TEST(test_disk_eviction) {
        _cleanup_(dm_model_freep) DmModel *m = NULL;
        DmParams p;
        uint64_t t = 0;

        parse_ok(disk_conf, &p);
        m = dm_model_new(&p);
        /* Five streams on four segments: the first stream's data is evicted. */
        for (unsigned i = 1; i <= 5; i++)
                t = dm_model_read(m, t, (uint64_t) i * 1000 * MiB, 64 * KiB) + 20 * MS;
        ck_assert_uint_eq(dm_model_stats(m)->seeks, 5);
        t = dm_model_read(m, t, 5000 * (uint64_t) MiB, 4 * KiB); /* the last: cached */
        ck_assert_uint_eq(dm_model_stats(m)->cache_hits, 1);
        t = dm_model_read(m, t, 2000 * (uint64_t) MiB, 4 * KiB); /* the second: cached */
        ck_assert_uint_eq(dm_model_stats(m)->cache_hits, 2);
        (void) dm_model_read(m, t, 1000 * (uint64_t) MiB, 4 * KiB); /* the first: gone */
        ck_assert_uint_eq(dm_model_stats(m)->cache_hits, 2);
        ck_assert_uint_eq(dm_model_stats(m)->seeks, 6);
}
END_TEST

START_TEST(test_disk_write_invalidates) {
        _cleanup_(dm_model_freep) DmModel *m = NULL;
        DmParams p;
        uint64_t t;

        parse_ok(disk_conf, &p);
        m = dm_model_new(&p);
        t = dm_model_read(m, 0, 0, 64 * KiB) + 20 * MS;
        t = dm_model_write(m, t, 0, 4 * KiB);
        ck_assert_uint_eq(dm_model_stats(m)->writes, 1);
        (void) dm_model_read(m, t, 0, 4 * KiB);
        ck_assert_uint_eq(dm_model_stats(m)->cache_hits, 0);
}
END_TEST

START_TEST(test_next_command) {
        /* Listed as they arrived at the server, last first. */
        DmWaiting c = { .arrival_ns = 1000 * US, .offset = 0 };
        DmWaiting b = { .arrival_ns = 30 * US, .offset = 1 * MiB, .next = &c };
        DmWaiting a = { .arrival_ns = 10 * US, .offset = 2 * MiB, .next = &b };
        DmWaiting solo = { .arrival_ns = 5 * US, .offset = 9 * MiB };

        ck_assert_ptr_eq(dm_next_command(&solo, 100 * US), &solo);
        /* Swapped on the way: the lower offset, 20 us later, goes first. */
        ck_assert_ptr_eq(dm_next_command(&a, 100 * US), &b);
        /* Outside the window, arrival order holds: c, lowest, came 1 ms later. */
        ck_assert_ptr_ne(dm_next_command(&a, 100 * US), &c);
        ck_assert_ptr_eq(dm_next_command(&a, 2000 * US), &c);
        /* With no window, the earliest arrival. */
        ck_assert_ptr_eq(dm_next_command(&a, 0), &a);
}
END_TEST

START_TEST(test_flash_channels) {
        _cleanup_(dm_model_freep) DmModel *m = NULL;
        DmParams p;
        uint64_t done[5];

        parse_ok(flash_conf, &p);
        m = dm_model_new(&p);
        /* 250 us + 128 KiB at 250 MB/s = 774 us; four at once, the fifth after. */
        for (unsigned i = 0; i < 5; i++)
                done[i] = dm_model_read(m, 0, (uint64_t) i * 7 * MiB, 128 * KiB);
        for (unsigned i = 0; i < 4; i++)
                ck_assert_uint_eq(done[i], 250 * US + 524288u);
        ck_assert_uint_eq(done[4], 2 * (250 * US + 524288u));
        /* Past the end of the device: nothing to transfer. */
        ck_assert_uint_eq(dm_model_read(m, 10 * MS, p.size, 4 * KiB), 10 * MS + 250 * US);
}
END_TEST

int main(void) {
        Suite *s = suite_create("devmodel");
        TCase *params = tcase_create("params");
        TCase *cost = tcase_create("cost");

        tcase_add_test(params, test_params);
        tcase_add_test(params, test_params_bad);
        suite_add_tcase(s, params);
        tcase_add_test(cost, test_seek_curve);
        tcase_add_test(cost, test_disk_sequential_and_cache);
        tcase_add_test(cost, test_disk_one_at_a_time);
        tcase_add_test(cost, test_disk_eviction);
        tcase_add_test(cost, test_disk_write_invalidates);
        tcase_add_test(cost, test_flash_channels);
        tcase_add_test(cost, test_next_command);
        suite_add_tcase(s, cost);

        return test_run(s);
}
