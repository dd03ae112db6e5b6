/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <string.h>

#include "ra-policy.h"
#include "test-helpers.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)
#define GB UINT64_C(1000000000)
#define TB (GB * 1000)

static const RaBounds default_bounds = { .min_kb = 4, .max_kb = 8192 };

/* One sentence: starts with a capital or a digit, ends with a period, no inner ". ". */
static void assert_one_sentence(const char *reason) {
        size_t len = strlen(reason);

        ck_assert_msg(len > 10, "reason too short: '%s'", reason);
        ck_assert_msg(reason[len - 1] == '.', "reason does not end a sentence: '%s'", reason);
        ck_assert_msg(!strstr(reason, ". "), "reason has two sentences: '%s'", reason);
}

START_TEST(test_size_cap) {
        static const struct {
                uint64_t size;
                uint32_t cap;
        } cases[] = {
                { 0, 4 },
                { 505 * KiB, 4 },
                { 2 * MiB, 4 },
                { 8 * MiB - 1, 4 },
                { 8 * MiB, 8 },
                { 2 * GiB, 128 },
                { 8 * GiB, 256 },
                { 32 * GiB, 512 },
                { 128 * GiB, 1024 },
                { 2048 * GiB, 4096 },
                { UINT64_MAX, RA_KB_LIMIT },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(ra_policy_size_cap_kb(cases[i].size) == cases[i].cap,
                              "size %llu: cap %u, want %u", (unsigned long long) cases[i].size,
                              ra_policy_size_cap_kb(cases[i].size), cases[i].cap);
}
END_TEST

/* What the kernel resets a dm or md device to when it stacks its limits again. */
START_TEST(test_kernel_kb) {
        ck_assert_uint_eq(ra_policy_kernel_kb(0), 128);         /* md raid1, linear LV */
        ck_assert_uint_eq(ra_policy_kernel_kb(64 * 1024), 128); /* 2 × 64 KiB is below the floor */
        ck_assert_uint_eq(ra_policy_kernel_kb(1024 * 1024),
                          2048);                                  /* md raid5, 512 KiB chunk, 2 data disks */
        ck_assert_uint_eq(ra_policy_kernel_kb(16u << 20), 32768); /* a loop device claiming 16 MiB */
}
END_TEST

/* The devices of docs/design.md, as the prior sees them. */
START_TEST(test_prior_table) {
        static const struct {
                const char *what;
                RaDeviceAttrs a;
                uint32_t min_kb, max_kb; /* the range the value must fall in */
        } cases[] = {
                { "505 KiB USB stick",
                  { .size_bytes = 505 * KiB, .rotational = true, .removable = true, .transport = "usb" },
                  4,
                  8 },
                { "8 GiB USB stick",
                  { .size_bytes = 8 * GiB, .rotational = true, .removable = true, .transport = "usb" },
                  64,
                  256 },
                { "22 GB SSD behind a SATA controller",
                  { .size_bytes = 22 * GB, .rotational = false, .transport = "ata" },
                  128,
                  256 },
                { "4 TB HDD", { .size_bytes = 4 * TB, .rotational = true, .transport = "ata" }, 512, 1024 },
                { "64 GiB rotational loop device",
                  { .size_bytes = 64 * GiB, .rotational = true, .transport = "loop" },
                  512,
                  1024 },
                { "1 TB NVMe with a 512 KiB optimal I/O size",
                  { .size_bytes = TB, .optimal_io_bytes = 512 * 1024, .transport = "nvme" },
                  1024,
                  1024 },
                /* As the kernel does: twice io_opt only where that is more than the default. */
                { "1 TB NVMe with a 4 KiB optimal I/O size",
                  { .size_bytes = TB, .optimal_io_bytes = 4096, .transport = "nvme" },
                  128,
                  128 },
                { "2 GiB NVMe namespace with a huge optimal I/O size",
                  { .size_bytes = 2 * GiB, .optimal_io_bytes = 64 * 1024 * 1024, .transport = "nvme" },
                  128,
                  128 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                RaDecision d;

                ra_policy_prior(&cases[i].a, default_bounds, &d);
                ck_assert_msg(d.kb >= cases[i].min_kb && d.kb <= cases[i].max_kb, "%s: %u KiB, want %u..%u",
                              cases[i].what, d.kb, cases[i].min_kb, cases[i].max_kb);
                ck_assert_uint_eq(d.kb % 4, 0);
                ck_assert_int_eq(d.source, RA_SOURCE_PRIOR);
                assert_one_sentence(d.reason);
        }
}
END_TEST

START_TEST(test_prior_no_medium) {
        RaDeviceAttrs a = { .size_bytes = 0, .rotational = true, .transport = "usb" };
        RaDecision d;

        ra_policy_prior(&a, default_bounds, &d);
        ck_assert_uint_eq(d.kb, 0);
        ck_assert_ptr_nonnull(strstr(d.reason, "No medium"));
        assert_one_sentence(d.reason);
}
END_TEST

/* A rotational or large device starts higher than a tiny one; size is a cap. */
/* zram and brd are memory: the smallest window, whatever their size, within the bounds. */
START_TEST(test_prior_ram_disks) {
        RaDeviceAttrs a = { .name = (char *) "zram0", .size_bytes = UINT64_C(8) << 30, .transport = "zram" };
        RaDecision d;

        ra_policy_prior(&a, (RaBounds){ .min_kb = 4, .max_kb = 8192 }, &d);
        ck_assert_uint_eq(d.kb, 4);
        ck_assert_ptr_nonnull(strstr(d.reason, "RAM disk"));
        a.transport = "ram";
        ra_policy_prior(&a, (RaBounds){ .min_kb = 16, .max_kb = 8192 }, &d);
        ck_assert_uint_eq(d.kb, 16);
}
END_TEST

START_TEST(test_prior_orders) {
        RaDeviceAttrs tiny = { .size_bytes = 505 * KiB, .rotational = true, .transport = "loop" };
        RaDeviceAttrs big = { .size_bytes = 64 * GiB, .rotational = true, .transport = "loop" };
        RaDeviceAttrs below_cap = { .size_bytes = 16 * GiB, .optimal_io_bytes = 64 * 1024 };
        RaDecision dt, db, ds;

        ra_policy_prior(&tiny, default_bounds, &dt);
        ra_policy_prior(&big, default_bounds, &db);
        ra_policy_prior(&below_cap, default_bounds, &ds);
        ck_assert_uint_le(dt.kb, 8);
        ck_assert_uint_gt(db.kb, dt.kb);
        ck_assert_ptr_nonnull(strstr(dt.reason, "capped at 4 KiB"));
        /* Size is a cap, not the value: below its cap a device gets its own value. */
        ck_assert_uint_lt(ds.kb, ra_policy_size_cap_kb(below_cap.size_bytes));
        ck_assert_uint_eq(ds.kb, 128);
}
END_TEST

/* Never 0, always whole pages, always inside the bounds: for every size. */
START_TEST(test_prior_never_zero) {
        const RaBounds bounds[] = { { 4, 8192 }, { 64, 128 }, { 512, 512 } };

        for (size_t b = 0; b < ELEMENTSOF(bounds); b++)
                for (uint64_t size = 512; size < UINT64_MAX / 3; size = size * 3 + 512)
                        for (int rot = 0; rot < 2; rot++) {
                                RaDeviceAttrs a = { .size_bytes = size, .rotational = rot };
                                RaDecision d;

                                ra_policy_prior(&a, bounds[b], &d);
                                ck_assert_uint_ge(d.kb, bounds[b].min_kb);
                                ck_assert_uint_le(d.kb, bounds[b].max_kb);
                                ck_assert_uint_eq(d.kb % 4, 0);
                        }
}
END_TEST

START_TEST(test_prior_bounds_reason) {
        RaDeviceAttrs a = { .size_bytes = 505 * KiB, .transport = "usb" };
        RaDecision d;

        ra_policy_prior(&a, (RaBounds){ 256, 8192 }, &d);
        ck_assert_uint_eq(d.kb, 256);
        ck_assert_ptr_nonnull(strstr(d.reason, "held within the configured"));
        assert_one_sentence(d.reason);
}
END_TEST

START_TEST(test_bounds_override) {
        RaBounds b = { 4, 8192 };

        ra_bounds_override(&b, 0, 64);
        ck_assert_uint_eq(b.min_kb, 4);
        ck_assert_uint_eq(b.max_kb, 64);

        /* The more specific source wins where the two would cross. */
        b = (RaBounds){ 128, 8192 };
        ra_bounds_override(&b, 0, 64);
        ck_assert_uint_eq(b.min_kb, 64);
        ck_assert_uint_eq(b.max_kb, 64);

        b = (RaBounds){ 4, 64 };
        ra_bounds_override(&b, 256, 0);
        ck_assert_uint_eq(b.min_kb, 256);
        ck_assert_uint_eq(b.max_kb, 256);
}
END_TEST

START_TEST(test_decide_precedence) {
        RaDeviceAttrs a = { .size_bytes = 4 * TB, .rotational = true, .transport = "ata" };
        RaSettings s = { .bounds = default_bounds };
        RaDecision d;

        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_PRIOR);
        ck_assert_uint_eq(d.kb, 1024);

        s.config_kb = 2048;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CONFIG);
        ck_assert_uint_eq(d.kb, 2048);
        assert_one_sentence(d.reason);

        a.pin_kb = 256;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_UDEV);
        ck_assert_uint_eq(d.kb, 256);
        assert_one_sentence(d.reason);

        s.pinned_kb = 64;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_PINNED);
        ck_assert_uint_eq(d.kb, 64);
        assert_one_sentence(d.reason);

        /* Yielding to someone else's value beats everything: it is what is there. */
        a.read_ahead_kb = 768;
        s.external = true;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_EXTERNAL);
        ck_assert_uint_eq(d.kb, 768);
        assert_one_sentence(d.reason);
}
END_TEST

/* What was learned beats the prior, a pin beats what was learned, bounds hold it. */
START_TEST(test_decide_learned) {
        RaDeviceAttrs a = { .size_bytes = 22 * GB, .transport = "ata" };
        RaSettings s = { .bounds = default_bounds,
                         .learned_kb = 2048,
                         .learned_reason = "Measured faster." };
        RaDecision d;

        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_LEARNED);
        ck_assert_uint_eq(d.kb, 2048);
        ck_assert_str_eq(d.reason, "Measured faster.");

        /* Above the prior's size cap (256 KiB for 22 GB): size is not a cap for learning. */
        ck_assert_uint_gt(d.kb, ra_policy_size_cap_kb(a.size_bytes));

        a.max_kb = 1024;
        ra_policy_decide(&a, &s, &d);
        ck_assert_uint_eq(d.kb, 1024);
        ck_assert_ptr_nonnull(strstr(d.reason, "held within 4 to 1024 KiB"));
        assert_one_sentence(d.reason);

        s.config_kb = 64;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CONFIG);

        /* No medium: nothing to decide, whatever was learned. */
        a = (RaDeviceAttrs){ .size_bytes = 0 };
        s.config_kb = 0;
        ra_policy_decide(&a, &s, &d);
        ck_assert_uint_eq(d.kb, 0);
}
END_TEST

/* RADAEMON_MAX_KB from a udev rule bounds the automatic value. */
START_TEST(test_decide_udev_bounds) {
        RaDeviceAttrs a = { .size_bytes = 4 * TB, .rotational = true, .max_kb = 64 };
        RaSettings s = { .bounds = default_bounds };
        RaDecision d;

        ra_policy_decide(&a, &s, &d);
        ck_assert_uint_eq(d.kb, 64);

        a.max_kb = 0;
        a.min_kb = 2048;
        ra_policy_decide(&a, &s, &d);
        ck_assert_uint_eq(d.kb, 2048);
}
END_TEST

/*
 * A fleet's value for the model (RADAEMON_FLEET_KB from udev's hwdb) is a
 * starting value: above the kind's prior, below what was learned here and
 * below every pin and the configuration; held within the bounds.
 */
START_TEST(test_decide_fleet) {
        RaDeviceAttrs a = { .size_bytes = 22 * GB, .transport = "ata", .fleet_kb = 2048 };
        RaSettings s = { .bounds = default_bounds };
        RaDecision d;

        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_FLEET);
        ck_assert_uint_eq(d.kb, 2048);
        ck_assert_ptr_nonnull(strstr(d.reason, "RADAEMON_FLEET_KB"));
        assert_one_sentence(d.reason);
        /* Not capped by size, as the prior is: the fleet measured this model. */
        ck_assert_uint_gt(d.kb, ra_policy_size_cap_kb(a.size_bytes));

        /* Bounds hold it, and the reason says so. */
        a.max_kb = 1024;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_FLEET);
        ck_assert_uint_eq(d.kb, 1024);
        ck_assert_ptr_nonnull(strstr(d.reason, "held within 4 to 1024 KiB"));
        assert_one_sentence(d.reason);
        a.max_kb = 0;
        a.min_kb = 4096;
        ra_policy_decide(&a, &s, &d);
        ck_assert_uint_eq(d.kb, 4096);
        a.min_kb = 0;
        s.bounds.max_kb = 512;
        ra_policy_decide(&a, &s, &d);
        ck_assert_uint_eq(d.kb, 512);
        s.bounds = default_bounds;

        /* Learned here wins over the fleet. */
        s.learned_kb = 256;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_LEARNED);
        ck_assert_uint_eq(d.kb, 256);

        /* Then the configuration, a udev pin and a D-Bus pin, each over the last. */
        s.config_kb = 128;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CONFIG);
        ck_assert_uint_eq(d.kb, 128);
        a.pin_kb = 64;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_UDEV);
        ck_assert_uint_eq(d.kb, 64);
        s.pinned_kb = 32;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_PINNED);
        ck_assert_uint_eq(d.kb, 32);

        /* Without the fleet's value, the kind's prior. */
        s = (RaSettings){ .bounds = default_bounds };
        a.pin_kb = 0;
        a.fleet_kb = 0;
        ra_policy_decide(&a, &s, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_PRIOR);
        ck_assert_str_eq(ra_source_to_string(RA_SOURCE_FLEET), "fleet");
}
END_TEST

START_TEST(test_source_names) {
        ck_assert_str_eq(ra_source_to_string(RA_SOURCE_PRIOR), "prior");
        ck_assert_str_eq(ra_source_to_string(RA_SOURCE_LEARNED), "learned");
        ck_assert_str_eq(ra_source_to_string(RA_SOURCE_PINNED), "pinned");
        ck_assert_str_eq(ra_source_to_string(RA_SOURCE_UDEV), "udev");
        ck_assert_str_eq(ra_source_to_string(RA_SOURCE_CONFIG), "config");
        ck_assert_str_eq(ra_source_to_string(RA_SOURCE_EXTERNAL), "external");
        ck_assert_ptr_null(ra_source_to_string(_RA_SOURCE_MAX));
}
END_TEST

/* Learning moves what radaemon chose itself, never a pin, a rule, the configuration or somebody's value. */
START_TEST(test_source_learnable) {
        ck_assert(ra_source_learnable(RA_SOURCE_PRIOR));
        ck_assert(ra_source_learnable(RA_SOURCE_CALIBRATED));
        ck_assert(ra_source_learnable(RA_SOURCE_FLEET));
        ck_assert(ra_source_learnable(RA_SOURCE_LEARNED));
        ck_assert(!ra_source_learnable(RA_SOURCE_PINNED));
        ck_assert(!ra_source_learnable(RA_SOURCE_UDEV));
        ck_assert(!ra_source_learnable(RA_SOURCE_CONFIG));
        ck_assert(!ra_source_learnable(RA_SOURCE_EXTERNAL));
}
END_TEST

int main(void) {
        Suite *s = suite_create("policy");
        TCase *tc = tcase_create("prior");

        tcase_add_test(tc, test_size_cap);
        tcase_add_test(tc, test_kernel_kb);
        tcase_add_test(tc, test_prior_table);
        tcase_add_test(tc, test_prior_no_medium);
        tcase_add_test(tc, test_prior_orders);
        tcase_add_test(tc, test_prior_ram_disks);
        tcase_add_test(tc, test_prior_never_zero);
        tcase_add_test(tc, test_prior_bounds_reason);
        tcase_add_test(tc, test_bounds_override);
        tcase_add_test(tc, test_decide_precedence);
        tcase_add_test(tc, test_decide_udev_bounds);
        tcase_add_test(tc, test_decide_learned);
        tcase_add_test(tc, test_decide_fleet);
        tcase_add_test(tc, test_source_names);
        tcase_add_test(tc, test_source_learnable);
        suite_add_tcase(s, tc);

        return test_run(s);
}
