/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The superblock map built from a mountinfo and a sysfs tree of our own. */
#include "config.h"

#include <check.h>
#include <sys/sysmacros.h>

#include "ra-mounts.h"
#include "test-helpers.h"

START_TEST(test_build) {
        char *dir = test_mkdtemp(), mountinfo[4200], sys[4200];
        dev_t disks[] = { makedev(8, 0) }, knob;
        RaSbMap m = {};

        test_write(dir, "sys/dev/block/8:0/sda1/partition", "1\n");
        test_write(dir, "sys/dev/block/8:0/sda1/dev", "8:1\n");
        test_write(dir, "sys/dev/block/8:0/sda2/partition", "2\n");
        test_write(dir, "sys/dev/block/8:0/sda2/dev", "8:2\n");
        /* Not a partition: the disk's queue directory. */
        test_write(dir, "sys/dev/block/8:0/queue/dev", "1:1\n");
        test_write(dir, "mountinfo",
                   "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                   "23 22 0:25 / /tmp rw,nosuid - tmpfs tmpfs rw\n"
                   "24 22 8:16 / /data rw - xfs /dev/sdb rw\n"
                   "25 22 8:1 /home /home rw - ext4 /dev/sda1 rw\n");
        (void) snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", dir);
        (void) snprintf(sys, sizeof(sys), "%s/sys", dir);

        ck_assert_int_eq(ra_mounts_build(mountinfo, sys, disks, 1, &m), 0);
        /* sda, sda1 and sda2 raw; the file system on sda1 once for its two mounts. */
        ck_assert_uint_eq(m.n, 4);
        ck_assert_uint_eq(m.n_anon, 1);
        ck_assert(ra_sbmap_lookup(&m, ra_kdev(makedev(8, 1)), 12, &knob));
        ck_assert_uint_eq(knob, makedev(8, 0));
        ck_assert(ra_sbmap_lookup(&m, 3, ra_kdev(makedev(8, 2)), &knob));
        ck_assert_uint_eq(knob, makedev(8, 0));
        /* sdb is not managed; tmpfs inodes are not devices. */
        ck_assert(!ra_sbmap_lookup(&m, ra_kdev(makedev(8, 16)), 12, &knob));
        ck_assert(!ra_sbmap_lookup(&m, 25, ra_kdev(makedev(8, 0)), &knob));

        /* A mountinfo that cannot be read leaves the map as it was. */
        ck_assert_int_lt(ra_mounts_build("/nonexistent/mountinfo", sys, disks, 1, &m), 0);
        ck_assert_uint_eq(m.n, 4);

        ra_sbmap_clear(&m);
        test_rm_rf(dir);
        free(dir);
}
END_TEST

int main(void) {
        Suite *s = suite_create("mounts");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_build);
        suite_add_tcase(s, tc);
        return test_run(s);
}
