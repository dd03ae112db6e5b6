/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>

#include "ra-macro.h"
#include "ra-prefetch.h"
#include "test-helpers.h"

START_TEST(test_fs_order) {
        /* The file systems the issue names: inode order where numbers follow the disk. */
        ck_assert_str_eq(ra_prefetch_fs_from_magic(0xEF53)->name, "ext4");
        ck_assert_int_eq(ra_prefetch_fs_from_magic(0xEF53)->order, RA_PREFETCH_ORDER_INODE);
        ck_assert_str_eq(ra_prefetch_fs_from_magic(0x58465342)->name, "xfs");
        ck_assert_int_eq(ra_prefetch_fs_from_magic(0x58465342)->order, RA_PREFETCH_ORDER_INODE);
        ck_assert_str_eq(ra_prefetch_fs_from_magic(0x9123683E)->name, "btrfs");
        ck_assert_int_eq(ra_prefetch_fs_from_magic(0x9123683E)->order, RA_PREFETCH_ORDER_DIRECTORY);
        /* Unknown: the directory's own order, never a guess. */
        ck_assert_str_eq(ra_prefetch_fs_from_magic(0x12345678)->name, "unknown");
        ck_assert_int_eq(ra_prefetch_fs_from_magic(0x12345678)->order, RA_PREFETCH_ORDER_DIRECTORY);
        ck_assert_ptr_nonnull(ra_prefetch_fs_from_magic(0)->reason);
        ck_assert_str_eq(ra_prefetch_order_to_string(RA_PREFETCH_ORDER_INODE), "inode");
        ck_assert_str_eq(ra_prefetch_order_to_string(RA_PREFETCH_ORDER_DIRECTORY), "directory");
}
END_TEST

static RaPrefetchEntry entry(uint64_t ino, uint32_t index) {
        return (RaPrefetchEntry){ .ino = ino, .index = index, .type = DT_REG };
}

START_TEST(test_sort_entries) {
        RaPrefetchEntry e[] = { entry(50, 0), entry(7, 1), entry(7000, 2), entry(7, 3), entry(1, 4) };
        static const uint64_t by_inode[] = { 1, 7, 7, 50, 7000 };
        static const uint32_t by_inode_index[] = { 4, 1, 3, 0, 2 };

        ra_prefetch_sort_entries(e, ELEMENTSOF(e), RA_PREFETCH_ORDER_INODE);
        for (size_t i = 0; i < ELEMENTSOF(e); i++) {
                ck_assert_uint_eq(e[i].ino, by_inode[i]);
                /* Equal numbers (hard links) keep the directory's order. */
                ck_assert_uint_eq(e[i].index, by_inode_index[i]);
        }

        ra_prefetch_sort_entries(e, ELEMENTSOF(e), RA_PREFETCH_ORDER_DIRECTORY);
        for (size_t i = 0; i < ELEMENTSOF(e); i++)
                ck_assert_uint_eq(e[i].index, i);

        ra_prefetch_sort_entries(e, 0, RA_PREFETCH_ORDER_INODE);
        ra_prefetch_sort_entries(NULL, 0, RA_PREFETCH_ORDER_DIRECTORY);
}
END_TEST

START_TEST(test_plan) {
        RaPrefetchFile f[] = {
                { .physical = 9000, .size = 100, .id = 0 },
                { .physical = UINT64_MAX, .size = 10, .id = 1 },
                { .physical = 100, .size = 500, .id = 2 },
                { .physical = 5000, .size = 300, .id = 3 },
                { .physical = UINT64_MAX, .size = 10, .id = 4 },
        };
        uint64_t bytes;
        size_t n;

        /* Physical order, files of unknown place last in walk order. */
        n = ra_prefetch_plan(f, ELEMENTSOF(f), 10000, &bytes);
        ck_assert_uint_eq(n, 5);
        ck_assert_uint_eq(bytes, 920);
        ck_assert_uint_eq(f[0].id, 2);
        ck_assert_uint_eq(f[1].id, 3);
        ck_assert_uint_eq(f[2].id, 0);
        ck_assert_uint_eq(f[3].id, 1);
        ck_assert_uint_eq(f[4].id, 4);

        /* 600 bytes: the 500 fits, the 300 does not, the 100 and both 10s still do. */
        n = ra_prefetch_plan(f, ELEMENTSOF(f), 620, &bytes);
        ck_assert_uint_eq(n, 4);
        ck_assert_uint_eq(bytes, 620);
        ck_assert(f[0].selected);
        ck_assert(!f[1].selected);
        ck_assert(f[2].selected && f[3].selected && f[4].selected);

        /* A budget of 0 selects nothing; an empty list is fine. */
        ck_assert_uint_eq(ra_prefetch_plan(f, ELEMENTSOF(f), 0, &bytes), 0);
        ck_assert_uint_eq(bytes, 0);
        ck_assert_uint_eq(ra_prefetch_plan(NULL, 0, 100, &bytes), 0);

        /* Sizes near the top of uint64_t do not overflow the sum. */
        RaPrefetchFile big[] = { { .physical = 1, .size = UINT64_MAX - 5, .id = 0 },
                                 { .physical = 2, .size = 10, .id = 1 } };
        ck_assert_uint_eq(ra_prefetch_plan(big, 2, UINT64_MAX, &bytes), 1);
        ck_assert_uint_eq(bytes, UINT64_MAX - 5);
}
END_TEST

START_TEST(test_budget_from_meminfo) {
        uint64_t b = 0;

        ck_assert_int_eq(ra_prefetch_budget_from_meminfo("MemTotal:       24684548 kB\n"
                                                         "MemFree:        24000000 kB\n"
                                                         "MemAvailable:   20000000 kB\n"
                                                         "Buffers:            1000 kB\n",
                                                         &b),
                         0);
        ck_assert_uint_eq(b, 20000000ULL * 1024 / 2);
        ck_assert_int_eq(ra_prefetch_budget_from_meminfo("MemAvailable: 8 kB", &b), 0);
        ck_assert_uint_eq(b, 4096);

        ck_assert_int_eq(ra_prefetch_budget_from_meminfo("MemTotal: 100 kB\n", &b), -EINVAL);
        ck_assert_int_eq(ra_prefetch_budget_from_meminfo("", &b), -EINVAL);
        ck_assert_int_eq(ra_prefetch_budget_from_meminfo("MemAvailable: x kB\n", &b), -EINVAL);
        ck_assert_int_eq(ra_prefetch_budget_from_meminfo("MemAvailable: 12 MB\n", &b), -EINVAL);
        ck_assert_int_eq(ra_prefetch_budget_from_meminfo("MemAvailable: 99999999999999999999 kB\n", &b),
                         -EINVAL);
        ck_assert_int_eq(ra_prefetch_budget_from_meminfo("XMemAvailable: 12 kB\n", &b), -EINVAL);
}
END_TEST

START_TEST(test_parse_size) {
        uint64_t v = 0;

        ck_assert_int_eq(ra_prefetch_parse_size("4096", &v), 0);
        ck_assert_uint_eq(v, 4096);
        ck_assert_int_eq(ra_prefetch_parse_size("64M", &v), 0);
        ck_assert_uint_eq(v, 64ULL << 20);
        ck_assert_int_eq(ra_prefetch_parse_size("2G", &v), 0);
        ck_assert_uint_eq(v, 2ULL << 30);
        ck_assert_int_eq(ra_prefetch_parse_size("1K", &v), 0);
        ck_assert_uint_eq(v, 1024);
        ck_assert_int_eq(ra_prefetch_parse_size("0", &v), 0);
        ck_assert_uint_eq(v, 0);

        ck_assert_int_eq(ra_prefetch_parse_size("", &v), -EINVAL);
        ck_assert_int_eq(ra_prefetch_parse_size("M", &v), -EINVAL);
        ck_assert_int_eq(ra_prefetch_parse_size("12k", &v), -EINVAL);
        ck_assert_int_eq(ra_prefetch_parse_size("-1", &v), -EINVAL);
        ck_assert_int_eq(ra_prefetch_parse_size("1.5G", &v), -EINVAL);
        ck_assert_int_eq(ra_prefetch_parse_size("99999999999T", &v), -ERANGE);
        ck_assert_int_eq(ra_prefetch_parse_size(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_seconds_left) {
        ck_assert(ra_prefetch_seconds_left(0, 100, 1.0) < 0);
        ck_assert(ra_prefetch_seconds_left(10, 100, 0) < 0);
        ck_assert(ra_prefetch_seconds_left(200, 100, 1.0) < 0);
        ck_assert_double_eq_tol(ra_prefetch_seconds_left(25, 100, 2.0), 6.0, 1e-9);
        ck_assert_double_eq_tol(ra_prefetch_seconds_left(100, 100, 2.0), 0.0, 1e-9);
}
END_TEST

int main(void) {
        Suite *s = suite_create("prefetch");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_fs_order);
        tcase_add_test(tc, test_sort_entries);
        tcase_add_test(tc, test_plan);
        tcase_add_test(tc, test_budget_from_meminfo);
        tcase_add_test(tc, test_parse_size);
        tcase_add_test(tc, test_seconds_left);
        suite_add_tcase(s, tc);

        return test_run(s);
}
