/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

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
        /* btrfs too, measured: an aged flat directory 2.6x faster than in directory order. */
        ck_assert_int_eq(ra_prefetch_fs_from_magic(0x9123683E)->order, RA_PREFETCH_ORDER_INODE);
        ck_assert_int_eq(ra_prefetch_fs_from_magic(0xF2F52010)->order, RA_PREFETCH_ORDER_DIRECTORY);
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

START_TEST(test_walk_in_order) {
        RaPrefetchEntry fresh[100], hashed[100];
        uint64_t pairs = 0, descents = 0;

        /* Files written where they stay: getdents64 lists them as their inodes were allocated. */
        for (uint32_t i = 0; i < 100; i++)
                fresh[i] = entry(1000 + i, i);
        ra_prefetch_count_descents(fresh, 100, &pairs, &descents);
        ck_assert_uint_eq(pairs, 99);
        ck_assert_uint_eq(descents, 0);
        ck_assert(ra_prefetch_walk_in_order(pairs, descents));

        /* A second directory elsewhere on the disk: the jump between them is no pair. */
        for (uint32_t i = 0; i < 100; i++)
                fresh[i] = entry(10 + i, i);
        ra_prefetch_count_descents(fresh, 100, &pairs, &descents);
        ck_assert_uint_eq(pairs, 198);
        ck_assert_uint_eq(descents, 0);

        /* Hash order (ext4) or files renamed into place: about every other pair jumps back. */
        for (uint32_t i = 0; i < 100; i++)
                hashed[i] = entry((i * 37) % 100, i);
        ra_prefetch_count_descents(hashed, 100, &pairs, &descents);
        ck_assert_uint_gt(descents, 198 / 16);
        ck_assert(!ra_prefetch_walk_in_order(pairs, descents));

        /* One jump back in 16 is still in order, one more is not. */
        ck_assert(ra_prefetch_walk_in_order(160, 10));
        ck_assert(!ra_prefetch_walk_in_order(160, 11));
        /* Too few to tell: a few small directories say nothing. */
        ck_assert(!ra_prefetch_walk_in_order(63, 0));
        ra_prefetch_count_descents(NULL, 0, &pairs, &descents);
        ra_prefetch_count_descents(fresh, 1, &pairs, &descents);
}
END_TEST

START_TEST(test_may_leave) {
        /* A rotational disk, nothing read ahead from it, nothing asked: the walk may be left alone. */
        ck_assert(ra_prefetch_may_leave(1, false, false, false));
        /* Not rotational, or not known to be: many lookups in flight beat a walk. */
        ck_assert(!ra_prefetch_may_leave(0, false, false, false));
        ck_assert(!ra_prefetch_may_leave(-1, false, false, false));
        /* ext4 read ahead from the device, --always, --data: the lookups are done. */
        ck_assert(!ra_prefetch_may_leave(1, true, false, false));
        ck_assert(!ra_prefetch_may_leave(1, false, true, false));
        ck_assert(!ra_prefetch_may_leave(1, false, false, true));
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

static void put16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) v;
        p[1] = (uint8_t) (v >> 8);
}

static void put32(uint8_t *p, uint32_t v) {
        put16(p, (uint16_t) v);
        put16(p + 2, (uint16_t) (v >> 16));
}

/* A superblock as mkfs.ext4 writes one: 4 KiB blocks, 256-byte inodes, 64-bit descriptors. */
static void make_superblock(uint8_t sb[static RA_EXT4_SUPERBLOCK_SIZE], uint32_t blocks, bool is_64bit) {
        memset(sb, 0, RA_EXT4_SUPERBLOCK_SIZE);
        put32(sb + 4, blocks);
        put32(sb + 20, 0);     /* first data block */
        put32(sb + 24, 2);     /* 1024 << 2 */
        put32(sb + 32, 32768); /* blocks per group */
        put32(sb + 40, 8192);  /* inodes per group */
        put16(sb + 56, 0xEF53);
        put32(sb + 76, 1);
        put16(sb + 88, 256);
        if (is_64bit) {
                put32(sb + 96, 0x80);
                put16(sb + 254, 64);
        }
}

START_TEST(test_ext4_layout) {
        uint8_t sb[RA_EXT4_SUPERBLOCK_SIZE], gdt[4 * 64] = {};
        RaExt4Layout l = {};
        uint64_t off;

        make_superblock(sb, 100000, true); /* 4 groups, the last one short */
        ck_assert_int_eq(ra_ext4_layout_parse(sb, sizeof(sb), &l), 0);
        ck_assert_uint_eq(l.block_size, 4096);
        ck_assert_uint_eq(l.inode_size, 256);
        ck_assert_uint_eq(l.desc_size, 64);
        ck_assert_uint_eq(l.n_groups, 4);
        ck_assert_uint_eq(l.gdt_offset, 4096);
        /* No inode before the descriptors are read. */
        ck_assert_int_eq(ra_ext4_inode_offset(&l, 1, &off), -EINVAL);

        for (unsigned g = 0; g < 4; g++)
                put32(gdt + g * 64 + 8, 100 + g * 512); /* flex_bg: tables side by side */
        put32(gdt + 3 * 64 + 40, 1);                    /* the last table above 2^32 blocks */
        ck_assert_int_eq(ra_ext4_layout_set_gdt(&l, gdt, sizeof(gdt) - 1), -EINVAL);
        ck_assert_int_eq(ra_ext4_layout_set_gdt(&l, gdt, sizeof(gdt)), 0);

        ck_assert_int_eq(ra_ext4_inode_offset(&l, 1, &off), 0);
        ck_assert_uint_eq(off, 100 * 4096);
        ck_assert_int_eq(ra_ext4_inode_offset(&l, 17, &off), 0); /* the second block of the table */
        ck_assert_uint_eq(off, 101 * 4096);
        ck_assert_int_eq(ra_ext4_inode_offset(&l, 8193, &off), 0); /* group 1's first */
        ck_assert_uint_eq(off, 612 * 4096);
        ck_assert_int_eq(ra_ext4_inode_offset(&l, 3 * 8192 + 2, &off), 0);
        ck_assert_uint_eq(off, ((1ULL << 32) + 100 + 3 * 512) * 4096 + 256);
        ck_assert_int_eq(ra_ext4_inode_offset(&l, 0, &off), -EINVAL);
        ck_assert_int_eq(ra_ext4_inode_offset(&l, 4 * 8192 + 1, &off), -EINVAL);
        ra_ext4_layout_clear(&l);
        ck_assert_ptr_null(l.inode_table);

        /* 32-byte descriptors without the 64-bit feature: the high half is not read. */
        make_superblock(sb, 100000, false);
        ck_assert_int_eq(ra_ext4_layout_parse(sb, sizeof(sb), &l), 0);
        ck_assert_uint_eq(l.desc_size, 32);
        memset(gdt, 0xff, sizeof(gdt));
        for (unsigned g = 0; g < 4; g++)
                put32(gdt + g * 32 + 8, 7 + g);
        ck_assert_int_eq(ra_ext4_layout_set_gdt(&l, gdt, 4 * 32), 0);
        ck_assert_int_eq(ra_ext4_inode_offset(&l, 8192 * 2 + 1, &off), 0);
        ck_assert_uint_eq(off, 9 * 4096);
        ra_ext4_layout_clear(&l);

        /* What is not ext4 as this code knows it. */
        make_superblock(sb, 100000, true);
        put16(sb + 56, 0x1234);
        ck_assert_int_eq(ra_ext4_layout_parse(sb, sizeof(sb), &l), -EINVAL);
        make_superblock(sb, 100000, true);
        put32(sb + 96, 0x80 | 0x10); /* meta_bg */
        ck_assert_int_eq(ra_ext4_layout_parse(sb, sizeof(sb), &l), -EOPNOTSUPP);
        make_superblock(sb, 100000, true);
        put32(sb + 40, 0);
        ck_assert_int_eq(ra_ext4_layout_parse(sb, sizeof(sb), &l), -EINVAL);
        make_superblock(sb, 100000, true);
        put16(sb + 88, 300);
        ck_assert_int_eq(ra_ext4_layout_parse(sb, sizeof(sb), &l), -EINVAL);
        make_superblock(sb, 100000, true);
        put32(sb + 24, 40);
        ck_assert_int_eq(ra_ext4_layout_parse(sb, sizeof(sb), &l), -EINVAL);
        ck_assert_int_eq(ra_ext4_layout_parse(sb, 100, &l), -EINVAL);
}
END_TEST

START_TEST(test_coalesce) {
        RaPrefetchRange r[] = {
                { 10 << 20, 4096 },       /* far away: alone */
                { 8192, 4096 },           /* after a small gap */
                { 0, 4096 },              /* the first */
                { 4096, 4096 },           /* adjacent */
                { 4096, 4096 },           /* the same block twice */
                { 8192 + 100000, 4096 },  /* a gap under 1 MiB */
                { (10 << 20) + 100, 10 }, /* inside an earlier one */
        };
        size_t n = ra_prefetch_coalesce(r, ELEMENTSOF(r), 1 << 20);

        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(r[0].offset, 0);
        ck_assert_uint_eq(r[0].length, 8192 + 100000 + 4096);
        ck_assert_uint_eq(r[1].offset, 10 << 20);
        ck_assert_uint_eq(r[1].length, 4096);

        /* Without gaps allowed, only touching ranges merge. */
        RaPrefetchRange s[] = { { 0, 4096 }, { 8192, 4096 }, { 4096, 4096 }, { 20000, 1 } };
        ck_assert_uint_eq(ra_prefetch_coalesce(s, ELEMENTSOF(s), 0), 2);
        ck_assert_uint_eq(s[0].length, 12288);
        ck_assert_uint_eq(ra_prefetch_coalesce(NULL, 0, 0), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("prefetch");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_fs_order);
        tcase_add_test(tc, test_sort_entries);
        tcase_add_test(tc, test_walk_in_order);
        tcase_add_test(tc, test_may_leave);
        tcase_add_test(tc, test_plan);
        tcase_add_test(tc, test_budget_from_meminfo);
        tcase_add_test(tc, test_parse_size);
        tcase_add_test(tc, test_seconds_left);
        tcase_add_test(tc, test_ext4_layout);
        tcase_add_test(tc, test_coalesce);
        suite_add_tcase(s, tc);

        return test_run(s);
}
