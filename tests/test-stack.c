/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>

#include "ra-calib.h"
#include "ra-config.h"
#include "ra-policy.h"
#include "ra-settings.h"
#include "ra-stack.h"
#include "ra-state.h"
#include "ra-util.h"
#include "sysfs-tree.h"
#include "test-helpers.h"

#define RAID1_SDA "devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
#define RAID1_SDB "devices/pci0000:00/0000:00:17.0/ata2/host1/target1:0:0/1:0:0:0/block/sdb"
#define RAID0_SD(n, x)                                                                                      \
        "devices/pci0000:00/0000:00:17.0/ata" #n "/host" #x "/target" #x ":0:0/" #x ":0:0:0/block/"

static RaStack *read_ok(const char *root, const char *name) {
        _cleanup_free_ char *bad = NULL;
        RaStack *s = NULL;
        int r;

        r = ra_stack_read(root, name, &s, &bad);
        ck_assert_msg(r == 0, "reading %s: %s (at %s)", name, strerror(-r), bad ? bad : "-");
        ck_assert_ptr_null(bad);
        return s;
}

/* Reads and expects error, with bad_path (NULL: any) named. */
static void read_fails(const char *root, const char *name, int error, const char *bad_path) {
        _cleanup_free_ char *bad = NULL;
        RaStack *s = NULL;
        int r;

        r = ra_stack_read(root, name, &s, &bad);
        ck_assert_msg(r == error, "reading %s: %s, expected %s (at %s)", name, strerror(-r),
                      strerror(-error), bad ? bad : "-");
        ck_assert_ptr_null(s);
        if (bad_path)
                ck_assert_str_eq(bad ? bad : "(none)", bad_path);
}

static size_t find_device(const RaStack *s, const char *name) {
        for (size_t i = 0; i < s->n_devices; i++)
                if (ra_streq(s->devices[i].name, name))
                        return i;
        ck_abort_msg("no device %s in the stack", name);
        return SIZE_MAX;
}

static void assert_strv(char *const *l, const char *expected) {
        char joined[512] = "";

        for (size_t i = 0; l && l[i]; i++) {
                if (i > 0)
                        strcat(joined, " ");
                strcat(joined, l[i]);
        }
        ck_assert_str_eq(joined, expected);
}

START_TEST(test_luks_lvm_raid1) {
        _cleanup_free_ char *root = test_tree_load("luks-lvm-raid1");
        _cleanup_(ra_stack_freep) RaStack *s = read_ok(root, "dm-1");
        char text[RA_STACK_DESCRIBE_MAX];
        const RaStackDevice *top = ra_stack_top(s), *lv, *md;

        ck_assert_uint_eq(s->n_devices, 5);
        ck_assert_str_eq(top->name, "dm-1");
        ck_assert_int_eq(top->kind, RA_STACK_DM_CRYPT);
        ck_assert_str_eq(top->dm_name, "luks-6f0f3c1e-8c2b-4a8e-9d5f-2b7a1c9e4d30");
        ck_assert(strncmp(top->dm_uuid, "CRYPT-LUKS2-", 12) == 0);
        ck_assert_uint_eq(top->size_bytes, UINT64_C(1048543232) * 512);
        ck_assert_uint_eq(top->optimal_io_bytes, 16 * 1024 * 1024);
        ck_assert_uint_eq(top->read_ahead_kb, 32768);
        ck_assert_uint_eq(top->n_slaves, 1);
        ck_assert_str_eq(top->slaves[0].name, "dm-0");
        assert_strv(top->holders, "");

        lv = &s->devices[top->slaves[0].device];
        ck_assert_str_eq(lv->name, "dm-0");
        ck_assert_int_eq(lv->kind, RA_STACK_DM_LVM);
        ck_assert_str_eq(lv->dm_name, "vg0-home");
        assert_strv(lv->holders, "dm-1");

        md = &s->devices[lv->slaves[0].device];
        ck_assert_str_eq(md->name, "md0");
        ck_assert_int_eq(md->kind, RA_STACK_MD);
        ck_assert_int_eq(md->md_level, RA_MD_LEVEL_RAID1);
        ck_assert_uint_eq(md->md_raid_disks, 2);
        ck_assert_uint_eq(md->md_data_disks, 1);
        ck_assert_ptr_null(md->dm_name);
        assert_strv(md->holders, "dm-0");

        /* Two layers down, through partitions, to their disks. */
        ck_assert_uint_eq(md->n_slaves, 2);
        ck_assert_str_eq(md->slaves[0].name, "sda2");
        ck_assert_str_eq(s->devices[md->slaves[0].device].name, "sda");
        ck_assert_str_eq(md->slaves[1].name, "sdb2");
        ck_assert_str_eq(s->devices[md->slaves[1].device].name, "sdb");

        ck_assert_uint_eq(s->n_leaves, 2);
        for (size_t i = 0; i < 2; i++) {
                const RaStackDevice *leaf = ra_stack_leaf(s, i);

                ck_assert_str_eq(leaf->name, i == 0 ? "sda" : "sdb");
                ck_assert_int_eq(leaf->kind, RA_STACK_DISK);
                ck_assert(leaf->rotational);
                ck_assert(!leaf->removable);
                ck_assert_uint_eq(leaf->size_bytes, UINT64_C(1953525168) * 512);
                ck_assert_uint_eq(leaf->optimal_io_bytes, 16 * 1024 * 1024);
                ck_assert_uint_eq(leaf->max_sectors_kb, 1280);
                /* A disk's partitions are held, not the disk: the holder counts for the disk. */
                assert_strv(leaf->holders, "md0");
                ck_assert_uint_eq(leaf->n_slaves, 0);
        }

        ck_assert_str_eq(ra_stack_describe(s, text),
                         "dm-1 (LUKS) on dm-0 (LVM) on md0 (raid1) on sda2, sdb2");

        test_rm_rf(root);
}
END_TEST

START_TEST(test_lvm_nvme) {
        _cleanup_free_ char *root = test_tree_load("lvm-nvme");
        _cleanup_(ra_stack_freep) RaStack *s = read_ok(root, "dm-0"), *disk = NULL;
        _cleanup_(ra_strv_freep) char **tops = NULL;
        char text[RA_STACK_DESCRIBE_MAX];

        ck_assert_int_eq(ra_stack_top(s)->kind, RA_STACK_DM_LVM);
        ck_assert_str_eq(ra_stack_top(s)->dm_name, "vg0-root");
        ck_assert_uint_eq(s->n_devices, 2);
        ck_assert_uint_eq(s->n_leaves, 1);
        ck_assert_str_eq(ra_stack_leaf(s, 0)->name, "nvme0n1");
        ck_assert(!ra_stack_leaf(s, 0)->rotational);
        ck_assert_uint_eq(ra_stack_leaf(s, 0)->max_sectors_kb, 128);
        ck_assert_str_eq(ra_stack_describe(s, text), "dm-0 (LVM) on nvme0n1p3");

        /* Two volumes on one partition: both hold the disk, and both are tops. */
        assert_strv(ra_stack_leaf(s, 0)->holders, "dm-0 dm-1");
        ck_assert_int_eq(ra_stack_find_tops(root, "nvme0n1", &tops, NULL), 0);
        assert_strv(tops, "dm-0 dm-1");

        /* The disk alone is a stack of one. */
        disk = read_ok(root, "nvme0n1");
        ck_assert_uint_eq(disk->n_devices, 1);
        ck_assert_uint_eq(disk->n_leaves, 1);
        ck_assert_int_eq(ra_stack_top(disk)->kind, RA_STACK_DISK);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_md_raid0) {
        _cleanup_free_ char *root = test_tree_load("md-raid0");
        RaStack *s = read_ok(root, "md0");
        _cleanup_(ra_strv_freep) char **tops = NULL;
        char text[RA_STACK_DESCRIBE_MAX];
        const RaStackDevice *md = ra_stack_top(s);

        ck_assert_int_eq(md->kind, RA_STACK_MD);
        ck_assert_int_eq(md->md_level, RA_MD_LEVEL_RAID0);
        ck_assert_uint_eq(md->md_raid_disks, 3);
        ck_assert_uint_eq(md->md_data_disks, 3);
        ck_assert_uint_eq(md->md_chunk_bytes, 512 * 1024);
        ck_assert_uint_eq(s->n_leaves, 3);
        ck_assert_str_eq(ra_stack_leaf(s, 2)->name, "sdd");
        /* Whole disks, held themselves. */
        assert_strv(ra_stack_leaf(s, 0)->holders, "md0");
        ck_assert_str_eq(ra_stack_describe(s, text), "md0 (raid0) on sdb, sdc, sdd");
        ck_assert_int_eq(ra_stack_find_tops(root, "sdc", &tops, NULL), 0);
        assert_strv(tops, "md0");

        s = ra_stack_free(s);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_plain_disk) {
        _cleanup_free_ char *root = test_tree_load("plain-vda");
        _cleanup_(ra_stack_freep) RaStack *s = read_ok(root, "vda");
        _cleanup_(ra_strv_freep) char **tops = NULL;
        char text[RA_STACK_DESCRIBE_MAX];

        ck_assert_uint_eq(s->n_devices, 1);
        ck_assert_int_eq(ra_stack_top(s)->kind, RA_STACK_DISK);
        ck_assert_uint_eq(ra_stack_top(s)->n_slaves, 0);
        assert_strv(ra_stack_top(s)->holders, "");
        ck_assert_uint_eq(s->n_leaves, 1);
        ck_assert_uint_eq(s->leaves[0], 0);
        ck_assert_str_eq(ra_stack_describe(s, text), "vda");
        ck_assert_int_eq(ra_stack_find_tops(root, "vda", &tops, NULL), 0);
        assert_strv(tops, "vda");

        test_rm_rf(root);
}
END_TEST

START_TEST(test_vanished) {
        _cleanup_free_ char *root = test_tree_load("luks-lvm-raid1");
        _cleanup_free_ char *bad = NULL;
        char **tops = NULL;
        char path[4200];

        read_fails(root, "sdz", -ENODEV, "block/sdz");
        ck_assert_int_eq(ra_stack_find_tops(root, "sdz", &tops, &bad), -ENODEV);
        ck_assert_ptr_null(tops);

        /* A partition's disk goes away under md0: the link in slaves/ leads nowhere. */
        snprintf(path, sizeof(path), "%s/%s", root, RAID1_SDB);
        test_rm_rf(path);
        read_fails(root, "dm-1", -ENODEV, "block/md0/slaves/sdb2");

        /* md0 itself, while the volume above still lists it. */
        snprintf(path, sizeof(path), "%s/devices/virtual/block/md0", root);
        test_rm_rf(path);
        read_fails(root, "dm-1", -ENODEV, "block/dm-0/slaves/md0");

        /* A block device without its size is on its way out. */
        snprintf(path, sizeof(path), "%s/devices/virtual/block/dm-0/size", root);
        ck_assert_int_eq(unlink(path), 0);
        read_fails(root, "dm-0", -ENODEV, "block/dm-0/size");

        /* A root that is not sysfs at all is the caller's error, not a device's. */
        read_fails("/nonexistent", "sda", -ENOENT, NULL);

        test_rm_rf(root);
}
END_TEST

/* A chain of n LVM volumes, dm-0 on dm-1 ... on sda. */
static char *chain(unsigned n) {
        char *root = test_mkdtemp();

        for (unsigned i = 0; i <= n; i++) {
                char name[16], below[16], text[1024];

                if (i < n)
                        snprintf(name, sizeof(name), "dm-%u", i);
                else
                        strcpy(name, "sda");
                if (i + 1 < n)
                        snprintf(below, sizeof(below), "dm-%u", i + 1);
                else
                        strcpy(below, "sda");
                snprintf(text, sizeof(text),
                         "l block/%1$s ../devices/virtual/block/%1$s\n"
                         "f devices/virtual/block/%1$s/size 2048\n"
                         "f devices/virtual/block/%1$s/queue/read_ahead_kb 128\n",
                         name);
                test_tree_apply(root, text);
                if (i == n)
                        break;
                snprintf(text, sizeof(text),
                         "f devices/virtual/block/%1$s/dm/uuid LVM-%1$s\n"
                         "l devices/virtual/block/%1$s/slaves/%2$s ../../%2$s\n",
                         name, below);
                test_tree_apply(root, text);
        }
        return root;
}

START_TEST(test_depth) {
        char *root;
        RaStack *s;

        /* As deep as allowed: the top, RA_STACK_DEPTH_MAX - 2 volumes between, the disk. */
        root = chain(RA_STACK_DEPTH_MAX - 1);
        s = read_ok(root, "dm-0");
        ck_assert_uint_eq(s->n_devices, RA_STACK_DEPTH_MAX);
        ck_assert_str_eq(ra_stack_leaf(s, 0)->name, "sda");
        s = ra_stack_free(s);
        test_rm_rf(root);
        free(root);

        root = chain(RA_STACK_DEPTH_MAX);
        read_fails(root, "dm-0", -ELOOP, "block/sda");
        test_rm_rf(root);
        free(root);
}
END_TEST

START_TEST(test_cycle) {
        static const char cycle[] = "l block/dm-0 ../devices/virtual/block/dm-0\n"
                                    "l block/dm-1 ../devices/virtual/block/dm-1\n"
                                    "f devices/virtual/block/dm-0/size 2048\n"
                                    "f devices/virtual/block/dm-0/queue/read_ahead_kb 128\n"
                                    "f devices/virtual/block/dm-0/dm/uuid LVM-a\n"
                                    "l devices/virtual/block/dm-0/slaves/dm-1 ../../dm-1\n"
                                    "l devices/virtual/block/dm-0/holders/dm-1 ../../dm-1\n"
                                    "f devices/virtual/block/dm-1/size 2048\n"
                                    "f devices/virtual/block/dm-1/queue/read_ahead_kb 128\n"
                                    "f devices/virtual/block/dm-1/dm/uuid LVM-b\n"
                                    "l devices/virtual/block/dm-1/slaves/dm-0 ../../dm-0\n"
                                    "l devices/virtual/block/dm-1/holders/dm-0 ../../dm-0\n";
        _cleanup_free_ char *root = test_mkdtemp(), *bad = NULL;
        char **tops = NULL;

        test_tree_apply(root, cycle);
        read_fails(root, "dm-0", -ELOOP, "block/dm-0");
        ck_assert_int_eq(ra_stack_find_tops(root, "dm-1", &tops, &bad), -ELOOP);
        ck_assert_str_eq(bad, "block/dm-1");
        ck_assert_ptr_null(tops);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_diamond) {
        /* Two devices on sda1 and sda2 under one more: sda once. */
        static const char diamond[] =
                "l block/sda ../devices/pci0000:00/block/sda\n"
                "f devices/pci0000:00/block/sda/size 4096\n"
                "f devices/pci0000:00/block/sda/queue/read_ahead_kb 128\n"
                "f devices/pci0000:00/block/sda/sda1/partition 1\n"
                "l devices/pci0000:00/block/sda/sda1/holders/dm-1 ../../../../virtual/block/dm-1\n"
                "f devices/pci0000:00/block/sda/sda2/partition 2\n"
                "l devices/pci0000:00/block/sda/sda2/holders/bcache0 ../../../../virtual/block/bcache0\n"
                "l block/dm-0 ../devices/virtual/block/dm-0\n"
                "f devices/virtual/block/dm-0/size 2048\n"
                "f devices/virtual/block/dm-0/queue/read_ahead_kb 128\n"
                "f devices/virtual/block/dm-0/dm/uuid mpath-x\n"
                "l devices/virtual/block/dm-0/slaves/dm-1 ../../dm-1\n"
                "l devices/virtual/block/dm-0/slaves/bcache0 ../../bcache0\n"
                "l block/dm-1 ../devices/virtual/block/dm-1\n"
                "f devices/virtual/block/dm-1/size 1024\n"
                "f devices/virtual/block/dm-1/queue/read_ahead_kb 128\n"
                "f devices/virtual/block/dm-1/dm/uuid\n"
                "l devices/virtual/block/dm-1/slaves/sda1 ../../../../pci0000:00/block/sda/sda1\n"
                "l devices/virtual/block/dm-1/holders/dm-0 ../../dm-0\n"
                "l block/bcache0 ../devices/virtual/block/bcache0\n"
                "f devices/virtual/block/bcache0/size 1024\n"
                "f devices/virtual/block/bcache0/queue/read_ahead_kb 128\n"
                "l devices/virtual/block/bcache0/slaves/sda2 ../../../../pci0000:00/block/sda/sda2\n"
                "l devices/virtual/block/bcache0/holders/dm-0 ../../dm-0\n";
        _cleanup_free_ char *root = test_mkdtemp();
        _cleanup_(ra_strv_freep) char **tops = NULL;
        char text[RA_STACK_DESCRIBE_MAX];
        RaStack *s;

        test_tree_apply(root, diamond);
        s = read_ok(root, "dm-0");
        ck_assert_uint_eq(s->n_devices, 4);
        ck_assert_uint_eq(s->n_leaves, 1);
        ck_assert_int_eq(ra_stack_top(s)->kind, RA_STACK_DM_MULTIPATH);
        /* An empty uuid is none; a device with slaves that is neither dm nor md (bcache) is a disk. */
        ck_assert_int_eq(s->devices[find_device(s, "dm-1")].kind, RA_STACK_DM_OTHER);
        ck_assert_ptr_null(s->devices[find_device(s, "dm-1")].dm_uuid);
        ck_assert_int_eq(s->devices[find_device(s, "bcache0")].kind, RA_STACK_DISK);
        assert_strv(s->devices[find_device(s, "sda")].holders, "bcache0 dm-1");
        ck_assert_str_eq(ra_stack_describe(s, text),
                         "dm-0 (multipath) on [bcache0 on sda2], [dm-1 (dm) on sda1]");
        ck_assert_int_eq(ra_stack_find_tops(root, "sda", &tops, NULL), 0);
        assert_strv(tops, "dm-0");
        ra_stack_free(s);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_garbage) {
        static const struct {
                const char *path; /* below devices/virtual/block/md0 of md-raid0 */
                const char *contents;
                int error;
                const char *bad; /* NULL: the attribute itself */
        } cases[] = {
                { "md/raid_disks", "3x\n", -EINVAL, NULL },
                { "md/raid_disks", "-3\n", -EINVAL, NULL },
                { "md/raid_disks", "\n", -EINVAL, NULL },
                { "md/raid_disks", "99999\n", -ERANGE, "block/md0/md/raid_disks" },
                { "md/raid_disks", "4 (3\n", -EINVAL, NULL },
                { "md/raid_disks", "4 3\n", -EINVAL, NULL },
                { "md/level", "RAID0\n", -EINVAL, NULL },
                { "md/level", "raid 0\n", -EINVAL, NULL },
                { "md/level", "raid0raid0raid0raid0\n", -ERANGE, NULL },
                { "md/chunk_size", "512K\n", -EINVAL, NULL },
                { "size", "1e9\n", -EINVAL, NULL },
                { "size", "99999999999999999999\n", -ERANGE, NULL },
                { "size", "36028797018963968\n", -ERANGE, NULL }, /* bytes past 2^64 */
                { "queue/rotational", "2\n", -EINVAL, NULL },
                { "queue/read_ahead_kb", "4294967296\n", -ERANGE, NULL },
                { "queue/read_ahead_kb", "128\n\n", -EINVAL, NULL },
                { "queue/optimal_io_size", "0x100000\n", -EINVAL, NULL },
                { "removable", " 0\n", -EINVAL, NULL },
                /* Read as a disk's are (ra_device_attrs_read_sysfs()): what a disk's read rejects, so does a
                   stack's. */
                { "queue/logical_block_size", "512x\n", -EINVAL, NULL },
                { "diskseq", "-1\n", -EINVAL, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *root = test_tree_load("md-raid0");
                char path[512], bad[512];

                snprintf(path, sizeof(path), "devices/virtual/block/md0/%s", cases[i].path);
                test_write_n(root, path, cases[i].contents, strlen(cases[i].contents));
                snprintf(bad, sizeof(bad), "block/md0/%s", cases[i].path);
                read_fails(root, "md0", cases[i].error, cases[i].bad ? cases[i].bad : bad);
                test_rm_rf(root);
        }
}
END_TEST

START_TEST(test_garbage_shapes) {
        _cleanup_free_ char *root = NULL;
        char path[4200];

        /* A dm uuid with a control character in it. */
        root = test_tree_load("luks-lvm-raid1");
        test_write(root, "devices/virtual/block/dm-0/dm/uuid", "LVM-\x1b[2J\n");
        read_fails(root, "dm-1", -EINVAL, "block/dm-0/dm/uuid");
        test_rm_rf(root);
        root = mfree(root);

        /* A slave link into something that is not a partition. */
        root = test_tree_load("luks-lvm-raid1");
        snprintf(path, sizeof(path), "%s/%s/sdb2/partition", root, RAID1_SDB);
        ck_assert_int_eq(unlink(path), 0);
        read_fails(root, "dm-1", -EINVAL, "block/sdb/sdb2/partition");
        test_rm_rf(root);
        root = mfree(root);

        /* Parity levels need more disks than parity; raid10 needs its copies. */
        root = test_tree_load("md-raid0");
        test_write(root, "devices/virtual/block/md0/md/level", "raid6\n");
        test_write(root, "devices/virtual/block/md0/md/raid_disks", "2\n");
        read_fails(root, "md0", -EINVAL, "block/md0/md/raid_disks");
        test_write(root, "devices/virtual/block/md0/md/level", "raid10\n");
        test_write(root, "devices/virtual/block/md0/md/layout", "0\n");
        read_fails(root, "md0", -EINVAL, "block/md0/md/layout");
        test_rm_rf(root);
        root = mfree(root);

        /* A name no kernel gives. */
        root = test_tree_load("md-raid0");
        read_fails(root, "../md0", -EINVAL, "block/../md0");
        snprintf(path, sizeof(path), "%s/devices/virtual/block/md0/slaves/bad\tname", root);
        ck_assert_int_eq(symlink("../../sdb", path), 0);
        read_fails(root, "md0", -EINVAL, "block/md0/slaves");
        test_rm_rf(root);
}
END_TEST

START_TEST(test_md_levels) {
        static const struct {
                const char *level;
                const char *raid_disks;
                const char *layout;
                RaMdLevel expected;
                uint32_t data_disks;
                const char *describe;
        } cases[] = {
                { "raid5", "3", "2", RA_MD_LEVEL_RAID5, 2, "md0 (raid5) on sdb, sdc, sdd" },
                { "raid6", "4 (3)", "2", RA_MD_LEVEL_RAID6, 2,
                  "md0 (raid6) on sdb, sdc, sdd" }, /* reshaping */
                { "raid4", "3", "0", RA_MD_LEVEL_RAID4, 2, "md0 (raid4) on sdb, sdc, sdd" },
                { "raid10", "3", "258", RA_MD_LEVEL_RAID10, 3,
                  "md0 (raid10) on sdb, sdc, sdd" }, /* n2 over 3 */
                { "raid10", "4", "258", RA_MD_LEVEL_RAID10, 2,
                  "md0 (raid10) on sdb, sdc, sdd" }, /* n2 over 4 */
                { "raid10", "4", "513", RA_MD_LEVEL_RAID10, 4, "md0 (raid10) on sdb, sdc, sdd" }, /* f2 */
                { "linear", "3", "0", RA_MD_LEVEL_LINEAR, 1, "md0 (linear) on sdb, sdc, sdd" },
                { "container", "3", "0", RA_MD_LEVEL_OTHER, 1, "md0 (md) on sdb, sdc, sdd" },
                { "", "0", "0", RA_MD_LEVEL_NONE, 1, "md0 (md) on sdb, sdc, sdd" }, /* not running */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *root = test_tree_load("md-raid0");
                _cleanup_(ra_stack_freep) RaStack *s = NULL;
                char text[RA_STACK_DESCRIBE_MAX], buf[64];

                snprintf(buf, sizeof(buf), "%s\n", cases[i].level);
                test_write_n(root, "devices/virtual/block/md0/md/level", buf, strlen(buf));
                snprintf(buf, sizeof(buf), "%s\n", cases[i].raid_disks);
                test_write_n(root, "devices/virtual/block/md0/md/raid_disks", buf, strlen(buf));
                snprintf(buf, sizeof(buf), "%s\n", cases[i].layout);
                test_write_n(root, "devices/virtual/block/md0/md/layout", buf, strlen(buf));

                s = read_ok(root, "md0");
                ck_assert_int_eq(ra_stack_top(s)->md_level, cases[i].expected);
                ck_assert_msg(ra_stack_top(s)->md_data_disks == cases[i].data_disks,
                              "%s over %s: %u data disks", cases[i].level, cases[i].raid_disks,
                              ra_stack_top(s)->md_data_disks);
                ck_assert_str_eq(ra_stack_describe(s, text), cases[i].describe);
                test_rm_rf(root);
        }

        ck_assert_str_eq(ra_md_level_to_string(RA_MD_LEVEL_RAID10), "raid10");
        ck_assert_ptr_null(ra_md_level_to_string(_RA_MD_LEVEL_MAX));
        ck_assert_str_eq(ra_stack_kind_to_string(RA_STACK_DM_CRYPT), "dm-crypt");
        ck_assert_ptr_null(ra_stack_kind_to_string(_RA_STACK_KIND_MAX));
}
END_TEST

/* A stack built by hand: a raid0 over n disks named d0, d1, ... */
static RaStack *wide(size_t n) {
        RaStack *s = calloc(1, sizeof(RaStack));

        ck_assert_ptr_nonnull(s);
        s->devices = calloc(n + 1, sizeof(RaStackDevice));
        s->leaves = calloc(n, sizeof(size_t));
        ck_assert(s->devices && s->leaves);
        s->n_devices = n + 1;
        s->devices[0] = (RaStackDevice){ .name = strdup("md127"),
                                         .kind = RA_STACK_MD,
                                         .md_level = RA_MD_LEVEL_RAID0,
                                         .md_raid_disks = (uint32_t) n,
                                         .md_data_disks = (uint32_t) n,
                                         .size_bytes = UINT64_C(1) << 40 };
        s->devices[0].slaves = calloc(n, sizeof(RaStackSlave));
        ck_assert_ptr_nonnull(s->devices[0].slaves);
        s->devices[0].n_slaves = n;
        for (size_t i = 0; i < n; i++) {
                char name[16];

                snprintf(name, sizeof(name), "d%zu", i);
                s->devices[i + 1] = (RaStackDevice){ .name = strdup(name), .size_bytes = UINT64_C(1) << 40 };
                s->devices[0].slaves[i] = (RaStackSlave){ .name = strdup(name), .device = i + 1 };
                s->leaves[s->n_leaves++] = i + 1;
        }
        return s;
}

START_TEST(test_describe_cut) {
        _cleanup_(ra_stack_freep) RaStack *s = wide(100);
        char text[RA_STACK_DESCRIBE_MAX];

        ra_stack_describe(s, text);
        ck_assert_uint_lt(strlen(text), RA_STACK_DESCRIBE_MAX);
        ck_assert(strncmp(text, "md127 (raid0) on d0, d1, d2, ", 29) == 0);
        /* Cut between names, and said to be. */
        ck_assert_msg(strlen(text) > 5 && ra_streq(text + strlen(text) - 4, " ...") &&
                              text[strlen(text) - 5] >= '0' && text[strlen(text) - 5] <= '9',
                      "%s", text);
}
END_TEST

/* --- the policy ------------------------------------------------------------------------------------ */

static const RaBounds bounds = { .min_kb = 4, .max_kb = 8192 };

/* What the daemon does for each leaf: radaemon's prior for it as a disk of its own. */
static void leaf_priors(const RaStack *s, uint32_t *ret) {
        for (size_t i = 0; i < s->n_leaves; i++) {
                const RaStackDevice *leaf = ra_stack_leaf(s, i);
                RaDeviceAttrs a = {
                        .size_bytes = leaf->size_bytes,
                        .rotational = leaf->rotational,
                        .removable = leaf->removable,
                        .optimal_io_bytes = leaf->optimal_io_bytes,
                        .max_sectors_kb = leaf->max_sectors_kb,
                };
                RaDecision d;

                ra_policy_prior(&a, bounds, &d);
                ret[i] = d.kb;
        }
}

static void stack_prior(const RaStack *s, RaDecision *ret) {
        uint32_t priors[RA_STACK_DEVICES_MAX];

        leaf_priors(s, priors);
        ra_stack_prior(s, priors, bounds, ret);
        /* One sentence that fits, never cut. */
        ck_assert_uint_lt(strlen(ret->reason), RA_REASON_MAX - 1);
        ck_assert_int_eq(ret->source, RA_SOURCE_PRIOR);
}

START_TEST(test_prior_luks_lvm_raid1) {
        _cleanup_free_ char *root = test_tree_load("luks-lvm-raid1");
        RaStack *s = read_ok(root, "dm-1");
        RaDecision d;

        /* Mirrors: a read goes to one disk; the 16 MiB the disks report is not a reason for 32 MiB. */
        stack_prior(s, &d);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_str_eq(d.reason,
                         "499 GiB stack: 512 KiB, the largest prior of the 2 disks beneath, as a read "
                         "goes to one at a time; its 16 MiB optimal I/O size (the kernel's 32 MiB) is "
                         "ignored, as the disks beneath report it.");
        s = ra_stack_free(s);

        /* Said by the top alone, it is not taken either: a mirror cannot use it. */
        test_write(root, RAID1_SDA "/queue/optimal_io_size", "0\n");
        test_write(root, RAID1_SDB "/queue/optimal_io_size", "0\n");
        s = read_ok(root, "dm-1");
        stack_prior(s, &d);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_msg(strstr(d.reason,
                             "its 16 MiB optimal I/O size (the kernel's 32 MiB) is ignored, as its "
                             "layout cannot use that much."),
                      "%s", d.reason);
        s = ra_stack_free(s);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_prior_lvm_nvme) {
        _cleanup_free_ char *root = test_tree_load("lvm-nvme");
        _cleanup_(ra_stack_freep) RaStack *s = read_ok(root, "dm-0");
        RaDecision d;

        /* One disk beneath: its prior, whatever the volume. */
        stack_prior(s, &d);
        ck_assert_uint_eq(d.kb, 128);
        ck_assert_str_eq(d.reason, "100 GiB stack: 128 KiB, the prior of nvme0n1 beneath it.");

        test_rm_rf(root);
}
END_TEST

START_TEST(test_prior_md_raid0) {
        _cleanup_free_ char *root = test_tree_load("md-raid0");
        RaStack *s = read_ok(root, "md0");
        RaDecision d;

        /* 2 TB rotational disks have a prior of 1024 KiB; a read is striped over 3 of them. */
        stack_prior(s, &d);
        ck_assert_uint_eq(d.kb, 3 * 1024);
        ck_assert_str_eq(d.reason,
                         "5.4 TiB stack: 3 x 1024 KiB, the largest prior of the disks beneath times the "
                         "3 disks a read is striped over.");
        s = ra_stack_free(s);

        /* On SSDs (128 KiB each) one window must still reach a chunk of every disk: a stripe. */
        test_write(root, RAID0_SD(2, 1) "sdb/queue/rotational", "0\n");
        test_write(root, RAID0_SD(3, 2) "sdc/queue/rotational", "0\n");
        test_write(root, RAID0_SD(4, 3) "sdd/queue/rotational", "0\n");
        s = read_ok(root, "md0");
        stack_prior(s, &d);
        ck_assert_uint_eq(d.kb, 3 * 512);
        ck_assert_str_eq(d.reason,
                         "5.4 TiB stack: 1536 KiB, a whole chunk for each of the 3 disks a read is "
                         "striped over, or a window would miss some; its 1.5 MiB optimal I/O size "
                         "(the kernel's 3.0 MiB) is ignored, as its layout cannot use that much.");
        s = ra_stack_free(s);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_prior_raid5) {
        _cleanup_free_ char *root = test_tree_load("md-raid0");
        _cleanup_(ra_stack_freep) RaStack *s = NULL;
        RaDecision d;

        /* One disk's worth of every stripe is parity: two data disks of three. */
        test_write(root, "devices/virtual/block/md0/md/level", "raid5\n");
        s = read_ok(root, "md0");
        stack_prior(s, &d);
        ck_assert_uint_eq(d.kb, 2 * 1024);
        ck_assert_msg(strstr(d.reason, ": 2 x 1024 KiB,"), "%s", d.reason);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_prior_plain_disk) {
        _cleanup_free_ char *root = test_tree_load("plain-vda");
        _cleanup_(ra_stack_freep) RaStack *s = read_ok(root, "vda");
        RaDecision d;

        stack_prior(s, &d);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_str_eq(d.reason, "256 GiB device: 512 KiB, its own prior, as nothing lies beneath it.");

        test_rm_rf(root);
}
END_TEST

START_TEST(test_prior_io_opt_hint) {
        _cleanup_free_ char *root = test_tree_load("lvm-striped-nvme");
        _cleanup_(ra_stack_freep) RaStack *s = read_ok(root, "dm-0");
        uint32_t big[2] = { 3072, 3072 };
        RaDecision d;

        /* Only the optimal I/O size says it is striped: taken, as far as two disks' priors go. */
        stack_prior(s, &d);
        ck_assert_uint_eq(d.kb, 256);
        ck_assert_str_eq(d.reason,
                         "1.8 TiB stack: 128 KiB, the largest prior of the 2 disks beneath, as a read "
                         "goes to one at a time; raised to twice its 128 KiB optimal I/O size, "
                         "as a table striped over its 2 disks would ask.");

        /* A cloud-sized claim on the top alone reaches no further than the disks could use ... */
        s->devices[0].optimal_io_bytes = 16 * 1024 * 1024;
        stack_prior(s, &d);
        ck_assert_uint_eq(d.kb, 256);
        ck_assert_msg(strstr(d.reason, "raised to 256 KiB for its 16 MiB optimal I/O size, the most a table "
                                       "striped over its 2 disks could use"),
                      "%s", d.reason);

        /* ... nor past RA_STACK_HINT_CAP_KB, whatever the disks' priors (on a top too large to be capped).
         */
        s->devices[0].size_bytes = UINT64_C(64) << 40;
        ra_stack_prior(s, big, bounds, &d);
        ck_assert_uint_eq(d.kb, RA_STACK_HINT_CAP_KB);
        ck_assert_msg(strstr(d.reason,
                             "raised to 4096 KiB for its 16 MiB optimal I/O size, as far as that size "
                             "alone may take a window"),
                      "%s", d.reason);

        /* The bounds and the size cap still hold. */
        ra_stack_prior(s, big, (RaBounds){ .min_kb = 4, .max_kb = 1024 }, &d);
        ck_assert_uint_eq(d.kb, 1024);
        ck_assert_msg(strstr(d.reason, ", held within the configured 4 to 1024 KiB."), "%s", d.reason);
        s->devices[0].size_bytes = UINT64_C(128) << 20;
        ra_stack_prior(s, big, bounds, &d);
        ck_assert_uint_eq(d.kb, ra_policy_size_cap_kb(UINT64_C(128) << 20));
        ck_assert_msg(strstr(d.reason, "by its size."), "%s", d.reason);

        /* Nothing to read ahead on an empty top. */
        s->devices[0].size_bytes = 0;
        ra_stack_prior(s, big, bounds, &d);
        ck_assert_uint_eq(d.kb, 0);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_prior_no_leaf_prior) {
        _cleanup_(ra_stack_freep) RaStack *s = wide(2);
        uint32_t none[2] = { 0, 0 };
        RaDecision d;

        /* Disks without a prior (no medium) leave the kernel's default. */
        ra_stack_prior(s, none, bounds, &d);
        ck_assert_uint_eq(d.kb, 128);
        ck_assert_msg(strstr(d.reason, "the kernel default"), "%s", d.reason);
}
END_TEST

/* --- deciding, as radaemon and its udev helper both do ------------------------------------------------ */

/* Reads leaves from a recorded tree as radaemon reads disks; missing is a leaf that cannot be read yet. */
typedef struct TreeLeaves {
        const char *root;
        const char *missing;
} TreeLeaves;

static const char *no_property(void *userdata, const char *key) {
        return NULL;
}

static int read_tree_leaf(void *userdata, const char *name, RaDeviceAttrs *ret) {
        const TreeLeaves *t = userdata;
        _cleanup_close_ int fd = -1;
        char link[4200], syspath[PATH_MAX];

        if (ra_streq(name, t->missing))
                return -ENODEV;
        snprintf(link, sizeof(link), "%s/block/%s", t->root, name);
        if (!realpath(link, syspath))
                return -ENODEV;
        fd = open(syspath, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -ENODEV;
        return ra_device_read(ret, name, fd, syspath, no_property, NULL, NULL, NULL);
}

/* Both steps; returns what ra_stack_read_priors() did, *ret_taken what ra_stack_decide() did. */
static int decide(const char *root, const char *name, const char *missing, char **ret_leaves,
                  RaDecision *ret, bool *ret_taken) {
        _cleanup_(ra_stack_freep) RaStack *s = NULL;
        _cleanup_(ra_strv_freep) char **names = NULL;
        _cleanup_free_ uint32_t *kb = NULL;
        _cleanup_free_ char *bad = NULL;
        TreeLeaves t = { .root = root, .missing = missing };
        int r;

        r = ra_stack_read_priors(root, name, read_tree_leaf, &t, &s, &kb, &names, &bad);
        *ret_taken = ra_stack_decide(r, s, kb, bounds, ret);
        if (ret_leaves) {
                char joined[256] = "";

                for (size_t i = 0; names && names[i]; i++)
                        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
                                 i > 0 ? " " : "", names[i]);
                *ret_leaves = strdup(joined);
        }
        return r;
}

START_TEST(test_decide_settled) {
        _cleanup_free_ char *root = test_tree_load("luks-lvm-raid1"), *raid0 = test_tree_load("md-raid0");
        _cleanup_free_ char *leaves = NULL;
        RaDecision d;
        bool taken;

        ck_assert_int_eq(decide(root, "dm-1", NULL, &leaves, &d, &taken), 1);
        ck_assert(taken);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_str_eq(leaves, "sda sdb");

        /*
         * The top's own rotational flag is what the kernel saw of the disks when
         * the array ran, maybe before a rule set theirs: the disks' own count.
         */
        test_write(raid0, "devices/virtual/block/md0/queue/rotational", "0\n");
        ck_assert_int_eq(decide(raid0, "md0", NULL, NULL, &d, &taken), 1);
        ck_assert_uint_eq(d.kb, 3 * 1024);
        test_write(raid0, RAID0_SD(2, 1) "sdb/queue/rotational", "0\n");
        test_write(raid0, RAID0_SD(3, 2) "sdc/queue/rotational", "0\n");
        test_write(raid0, RAID0_SD(4, 3) "sdd/queue/rotational", "0\n");
        test_write(raid0, "devices/virtual/block/md0/queue/rotational", "1\n");
        ck_assert_int_eq(decide(raid0, "md0", NULL, NULL, &d, &taken), 1);
        ck_assert_uint_eq(d.kb, 3 * 512);

        test_rm_rf(root);
        test_rm_rf(raid0);
}
END_TEST

START_TEST(test_decide_plain) {
        _cleanup_free_ char *root = test_tree_load("plain-vda");
        RaDecision d;
        bool taken;

        /* Nothing beneath: decided from its own attributes, as any disk. */
        ck_assert_int_eq(decide(root, "vda", NULL, NULL, &d, &taken), 0);
        ck_assert(!taken);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_decide_unsettled) {
        _cleanup_free_ char *root = test_tree_load("luks-lvm-raid1");
        char path[4200];
        RaDecision d;
        bool taken;

        /*
         * A disk beneath that cannot be read yet would leave the other's prior,
         * or the kernel default, depending on the moment: nothing is decided
         * until it can be.
         */
        ck_assert_int_eq(decide(root, "dm-1", "sdb", NULL, &d, &taken), -EAGAIN);
        ck_assert(taken);
        ck_assert_uint_eq(d.kb, 0);
        ck_assert_msg(strstr(d.reason, "not settled"), "%s", d.reason);

        /* Nor while a device in the stack is going or coming. */
        snprintf(path, sizeof(path), "%s/%s", root, RAID1_SDB);
        test_rm_rf(path);
        ck_assert_int_eq(decide(root, "dm-1", NULL, NULL, &d, &taken), -EAGAIN);
        ck_assert(taken);
        ck_assert_uint_eq(d.kb, 0);

        /* A stack this module refuses is decided from the device's own attributes, by both alike. */
        ck_assert_int_eq(decide("/nonexistent", "sda", NULL, NULL, &d, &taken), -ENOENT);
        ck_assert(!taken);

        test_rm_rf(root);
}
END_TEST

/* --- what a change beneath decides again ------------------------------------------------------------ */

static bool managed_except(void *userdata, const char *name) {
        return !ra_streq(name, userdata);
}

static void assert_tops_to_redecide(const char *root, const char *changed_words, const char *unmanaged,
                                    const char *expected) {
        _cleanup_(ra_strv_freep) char **changed = NULL, **tops = NULL;
        _cleanup_free_ char *words = strdup(changed_words);
        char *save = NULL;

        for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
                ck_assert_int_eq(ra_strv_push(&changed, w), 0);
        ck_assert_int_eq(ra_stack_tops_to_redecide(root, changed, managed_except, (void *) unmanaged, &tops),
                         0);
        assert_strv(tops, expected);
}

START_TEST(test_tops_to_redecide) {
        _cleanup_free_ char *root = test_tree_load("luks-lvm-raid1"), *raid0 = test_tree_load("md-raid0"),
                            *plain = test_tree_load("plain-vda");

        /* A disk at the bottom, or a device in the middle: the top decides from them. */
        assert_tops_to_redecide(root, "sda", "", "dm-1");
        assert_tops_to_redecide(root, "md0", "", "dm-1");
        /* Several beneath one top, in one burst: decided once. */
        assert_tops_to_redecide(root, "sdb md0 sda", "", "dm-1");
        assert_tops_to_redecide(raid0, "sdb sdc sdd", "", "md0");
        /* A top that had its own event in the burst was decided with it. */
        assert_tops_to_redecide(root, "sda dm-1", "", "");
        /* A disk is not its own top, and one radaemon does not manage is left alone. */
        assert_tops_to_redecide(plain, "vda", "", "");
        assert_tops_to_redecide(root, "sda", "dm-1", "");
        /* A disk gone by the time its event is handled has no tops to tell. */
        assert_tops_to_redecide(root, "sdz sda", "", "dm-1");

        test_rm_rf(root);
        test_rm_rf(raid0);
        test_rm_rf(plain);
}
END_TEST

/* --- the cost model composed from the leaves' calibrations ---------------------------------------- */

/* What one leaf measured: "sdb" at 100 us a command and 400 MiB/s. */
typedef struct LeafCalib {
        const char *name;
        uint32_t command_us;
        uint32_t kb_s;
        uint32_t jump_us;
} LeafCalib;

/*
 * As radaemon and its helper decide a stack: its leaves' priors and the
 * settings from a state that keeps calib (NULL-named end) under each leaf's
 * identity ("test:<name>"), every leaf's identity known.
 */
static void decide_from_state(const char *root, const char *name, const LeafCalib *calib, RaDecision *ret) {
        _cleanup_(ra_stack_freep) RaStack *s = NULL;
        _cleanup_(ra_strv_freep) char **names = NULL, **ids = NULL;
        _cleanup_(ra_state_freep) RaState *state = NULL;
        _cleanup_(ra_device_attrs_clear) RaDeviceAttrs top = {};
        _cleanup_free_ uint32_t *kb = NULL;
        _cleanup_free_ char *bad = NULL;
        TreeLeaves t = { .root = root };
        RaConfig *config = NULL;
        RaSettings settings;
        int r;

        ck_assert_int_eq(ra_config_new(&config), 0);
        ck_assert_int_eq(ra_state_new(&state), 0);
        for (const LeafCalib *c = calib; c && c->name; c++) {
                char id[64];
                RaStateEntry *e;

                snprintf(id, sizeof(id), "test:%s", c->name);
                ck_assert_int_eq(ra_state_ensure(state, id, &e), 0);
                e->calib = (RaCalib){ .when = 1,
                                      .command_us = c->command_us,
                                      .bandwidth_kb_s = c->kb_s,
                                      .jump_us = c->jump_us };
        }

        r = ra_stack_read_priors(root, name, read_tree_leaf, &t, &s, &kb, &names, &bad);
        ck_assert_int_eq(r, 1);
        for (size_t i = 0; names && names[i]; i++) {
                char id[64];

                snprintf(id, sizeof(id), "test:%s", names[i]);
                ck_assert_int_eq(ra_strv_push(&ids, id), 0);
        }
        ck_assert_int_eq(read_tree_leaf(&t, name, &top), 0);
        ra_settings_build(config, state,
                          &(RaSettingsInput){
                                  .kind = RA_SETTINGS_STACK,
                                  .attrs = &top,
                                  .name = name,
                                  .stack_read = r,
                                  .stack = s,
                                  .leaf_kb = kb,
                                  .leaf_identities = ids,
                          },
                          &settings);
        ra_policy_decide(&top, &settings, ret);
        ck_assert_uint_lt(strlen(ret->reason), RA_REASON_MAX - 1);
        ra_config_free(config);
}

/* d is what the rule of the priors alone decides (ra_stack_decide()), the value before calibrations. */
static void assert_as_before(const char *root, const char *name, const RaDecision *d) {
        RaDecision before;
        bool taken;

        ck_assert_int_eq(decide(root, name, NULL, NULL, &before, &taken), 1);
        ck_assert(taken);
        ck_assert_int_eq(d->source, RA_SOURCE_PRIOR);
        ck_assert_uint_eq(d->kb, before.kb);
        ck_assert_str_eq(d->reason, before.reason);
}

/* What the leaf's calibration alone gives it, as a disk of its own. */
static uint32_t leaf_window(const char *root, const char *name, const LeafCalib *c) {
        _cleanup_(ra_device_attrs_clear) RaDeviceAttrs a = {};
        TreeLeaves t = { .root = root };
        RaCalib calib = { .when = 1, .command_us = c->command_us, .bandwidth_kb_s = c->kb_s };
        RaDecision d;

        ck_assert_int_eq(read_tree_leaf(&t, name, &a), 0);
        ra_calib_prior(&calib, &a, bounds, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        return d.kb;
}

START_TEST(test_cost_luks_ssd) {
        _cleanup_free_ char *root = test_tree_load("lvm-nvme");
        /* Seed 004's SSD, and the 6.12 VM's disk beneath LUKS (185 us, 2.6 GB/s). */
        const LeafCalib ssd[] = { { "nvme0n1", 250, 263000, 0 }, {} },
                        fast[] = { { "nvme0n1", 185, 2539062, 0 }, {} };
        RaDecision d;

        /* LUKS straight on the SSD's partition, as every distribution installs it. */
        test_write(root, "devices/virtual/block/dm-0/dm/uuid",
                   "CRYPT-LUKS2-3f2a9c1e8b7d4e6fa0b1c2d3e4f5a6b7-luks-3f2a\n");
        decide_from_state(root, "dm-0", ssd, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_uint_ge(d.kb, leaf_window(root, "nvme0n1", &ssd[0]));
        ck_assert_uint_eq(d.kb, 2048);
        ck_assert_str_eq(
                d.reason,
                "From nvme0n1's calibration beneath it, plus dm-crypt's 1000 us of CPU a MiB: 375 us "
                "a command at 256 MiB/s: one stream reads at 95 % of that from 1873 KiB a window, so "
                "2048 KiB.");

        decide_from_state(root, "dm-0", fast, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_uint_eq(leaf_window(root, "nvme0n1", &fast[0]), 4096);
        ck_assert_uint_eq(d.kb, 4096);

        /* Nothing measured beneath: the prior of the disk, as before. */
        decide_from_state(root, "dm-0", NULL, &d);
        assert_as_before(root, "dm-0", &d);
        ck_assert_uint_eq(d.kb, 128);
        ck_assert_str_eq(d.reason, "100 GiB stack: 128 KiB, the prior of nvme0n1 beneath it.");

        test_rm_rf(root);
}
END_TEST

START_TEST(test_cost_raid0) {
        _cleanup_free_ char *root = test_tree_load("md-raid0");
        const LeafCalib equal[] = {
                { "sdb", 50, 409600, 0 }, { "sdc", 50, 409600, 0 }, { "sdd", 50, 409600, 0 }, {}
        };
        const LeafCalib slow[] = {
                { "sdb", 50, 409600, 0 }, { "sdc", 50, 409600, 0 }, { "sdd", 50, 102400, 0 }, {}
        };
        RaDecision d;

        test_write(root, RAID0_SD(2, 1) "sdb/queue/rotational", "0\n");
        test_write(root, RAID0_SD(3, 2) "sdc/queue/rotational", "0\n");
        test_write(root, RAID0_SD(4, 3) "sdd/queue/rotational", "0\n");

        /* One SSD fills at 512 KiB; three striped read three times its rate, which 2 MiB fills. */
        ck_assert_uint_eq(leaf_window(root, "sdb", &equal[0]), 512);
        decide_from_state(root, "md0", equal, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_uint_eq(d.kb, 2048);
        ck_assert_msg(strstr(d.reason,
                             "From the calibrations of sdb, sdc, sdd beneath it, striped over 3 data "
                             "disks: 50 us a command at 1200 MiB/s") == d.reason,
                      "%s", d.reason);

        /* The slowest paces a stripe; still a whole chunk of every disk. */
        decide_from_state(root, "md0", slow, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_uint_eq(d.kb, 3 * 512);
        ck_assert_msg(strstr(d.reason,
                             "; raised to 1536 KiB, a whole chunk of every disk a read is striped over."),
                      "%s", d.reason);

        /* One disk not measured yet: the rule of the priors, as before. */
        decide_from_state(root, "md0",
                          (const LeafCalib[]){ { "sdb", 50, 409600, 0 }, { "sdc", 50, 409600, 0 }, {} }, &d);
        assert_as_before(root, "md0", &d);
        ck_assert_uint_eq(d.kb, 3 * 512);

        test_rm_rf(root);
}
END_TEST

START_TEST(test_cost_raid1) {
        _cleanup_free_ char *root = test_tree_load("luks-lvm-raid1");
        const LeafCalib mirror[] = { { "sda", 200, 204800, 0 }, { "sdb", 100, 819200, 0 }, {} };
        RaDecision d;

        test_write(root, RAID1_SDA "/queue/rotational", "0\n");
        test_write(root, RAID1_SDB "/queue/rotational", "0\n");

        /* md reads a stream from one disk: the faster one's model, not the larger prior. */
        decide_from_state(root, "md0", mirror, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_uint_eq(d.kb, leaf_window(root, "sdb", &mirror[1]));
        ck_assert_uint_eq(d.kb, 2048);
        ck_assert_msg(strstr(d.reason,
                             "From the calibrations of sda, sdb beneath it, a mirror read from its "
                             "fastest: 100 us a command at 800 MiB/s") == d.reason,
                      "%s", d.reason);

        /* LUKS on LVM on it: the mirror's model, and a bio's decryption to wait for. */
        decide_from_state(root, "dm-1", mirror, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_uint_eq(d.kb, 4096);

        /* On disks whose heads move, LUKS on the mirror is decided by the jump, as the mirror is. */
        test_write(root, RAID1_SDA "/queue/rotational", "1\n");
        test_write(root, RAID1_SDB "/queue/rotational", "1\n");
        decide_from_state(
                root, "dm-1",
                (const LeafCalib[]){ { "sda", 200, 153600, 3000 }, { "sdb", 200, 153600, 3000 }, {} }, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_msg(strstr(d.reason, ": a jump costs only 3.0 ms, in which it reads 460 KiB"), "%s",
                      d.reason);

        /* Neither measured: the largest prior of the two, as before. */
        decide_from_state(root, "md0", NULL, &d);
        assert_as_before(root, "md0", &d);

        test_rm_rf(root);
}
END_TEST

static Suite *stack_suite(void) {
        Suite *s = suite_create("stack");
        TCase *tc = tcase_create("read");

        tcase_add_test(tc, test_luks_lvm_raid1);
        tcase_add_test(tc, test_lvm_nvme);
        tcase_add_test(tc, test_md_raid0);
        tcase_add_test(tc, test_plain_disk);
        tcase_add_test(tc, test_vanished);
        tcase_add_test(tc, test_depth);
        tcase_add_test(tc, test_cycle);
        tcase_add_test(tc, test_diamond);
        tcase_add_test(tc, test_garbage);
        tcase_add_test(tc, test_garbage_shapes);
        tcase_add_test(tc, test_md_levels);
        tcase_add_test(tc, test_describe_cut);
        suite_add_tcase(s, tc);

        tc = tcase_create("policy");
        tcase_add_test(tc, test_prior_luks_lvm_raid1);
        tcase_add_test(tc, test_prior_lvm_nvme);
        tcase_add_test(tc, test_prior_md_raid0);
        tcase_add_test(tc, test_prior_raid5);
        tcase_add_test(tc, test_prior_plain_disk);
        tcase_add_test(tc, test_prior_io_opt_hint);
        tcase_add_test(tc, test_prior_no_leaf_prior);
        suite_add_tcase(s, tc);

        tc = tcase_create("decide");
        tcase_add_test(tc, test_decide_settled);
        tcase_add_test(tc, test_decide_plain);
        tcase_add_test(tc, test_decide_unsettled);
        tcase_add_test(tc, test_tops_to_redecide);
        suite_add_tcase(s, tc);

        tc = tcase_create("cost");
        tcase_add_test(tc, test_cost_luks_ssd);
        tcase_add_test(tc, test_cost_raid0);
        tcase_add_test(tc, test_cost_raid1);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run(stack_suite());
}
