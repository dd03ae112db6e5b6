/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a task may hold: its memory cgroup's limits, v1 and v2, read from a fake /proc and /sys/fs/cgroup. */
#include "config.h"

#include <check.h>
#include <errno.h>

#include "ra-memlimit.h"
#include "test-helpers.h"

START_TEST(test_parse_cgroup) {
        char path[64];
        bool v1;

        /* cgroup v1 (this machine's hybrid): the memory controller's line, not the unified one. */
        ck_assert_int_eq(ra_memlimit_parse_cgroup("12:pids:/a\n4:cpu,cpuacct:/b\n3:memory:/bench/m1\n"
                                                  "1:name=systemd:/c\n0::/d\n",
                                                  &v1, path, sizeof(path)),
                         0);
        ck_assert(v1);
        ck_assert_str_eq(path, "/bench/m1");
        ck_assert_int_eq(ra_memlimit_parse_cgroup("2:cpuset,memory:/x\n", &v1, path, sizeof(path)), 0);
        ck_assert_str_eq(path, "/x");

        /* v2 only. */
        ck_assert_int_eq(ra_memlimit_parse_cgroup("0::/system.slice/job.service\n", &v1, path, sizeof(path)),
                         0);
        ck_assert(!v1);
        ck_assert_str_eq(path, "/system.slice/job.service");

        /* A name that only begins like "memory" is not it. */
        ck_assert_int_eq(ra_memlimit_parse_cgroup("3:memoryx:/y\n", &v1, path, sizeof(path)), -ENOENT);
        ck_assert_int_eq(ra_memlimit_parse_cgroup("", &v1, path, sizeof(path)), -ENOENT);
        ck_assert_int_eq(ra_memlimit_parse_cgroup("0::relative\n", &v1, path, sizeof(path)), -EINVAL);
        ck_assert_int_eq(ra_memlimit_parse_cgroup("0::/a/../b\n", &v1, path, sizeof(path)), -EINVAL);
        ck_assert_int_eq(ra_memlimit_parse_cgroup("0::/a/..\n", &v1, path, sizeof(path)), -EINVAL);
        ck_assert_int_eq(
                ra_memlimit_parse_cgroup(
                        "0::/a-much-longer-path-than-the-sixty-four-bytes-this-test-gives-the-buffer\n", &v1,
                        path, sizeof(path)),
                -EINVAL);
}
END_TEST

START_TEST(test_parse_limit) {
        uint64_t b;

        ck_assert_int_eq(ra_memlimit_parse_limit("max", &b), 0);
        ck_assert_uint_eq(b, UINT64_MAX);
        ck_assert_int_eq(ra_memlimit_parse_limit("9223372036854771712", &b), 0);
        ck_assert_uint_eq(b, UINT64_MAX);
        ck_assert_int_eq(ra_memlimit_parse_limit("67108864", &b), 0);
        ck_assert_uint_eq(b, 67108864);
        ck_assert_int_lt(ra_memlimit_parse_limit("64M", &b), 0);
        ck_assert_int_lt(ra_memlimit_parse_limit("", &b), 0);
}
END_TEST

/* The tightest of the cgroup and those above it, and never more than the machine has. */
START_TEST(test_task_kb) {
        char *root = test_mkdtemp();
        uint64_t kb;

        test_write(root, "proc/meminfo", "MemTotal:       24000000 kB\nMemFree:  1 kB\n");
        test_write(root, "proc/10/cgroup", "3:memory:/outer/inner\n0::/\n");
        test_write(root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
        test_write(root, "sys/fs/cgroup/memory/outer/memory.limit_in_bytes", "67108864\n");
        test_write(root, "sys/fs/cgroup/memory/outer/inner/memory.limit_in_bytes", "268435456\n");
        ck_assert_int_eq(ra_memlimit_task_kb(root, 10, &kb), 0);
        ck_assert_uint_eq(kb, 64 * 1024);

        test_write(root, "proc/11/cgroup", "0::/system.slice/a.service\n");
        test_write(root, "sys/fs/cgroup/system.slice/memory.max", "max\n");
        test_write(root, "sys/fs/cgroup/system.slice/a.service/memory.max", "1073741824\n");
        ck_assert_int_eq(ra_memlimit_task_kb(root, 11, &kb), 0);
        ck_assert_uint_eq(kb, 1024 * 1024);

        /* No limit anywhere: the machine's memory. */
        test_write(root, "proc/12/cgroup", "0::/user.slice\n");
        ck_assert_int_eq(ra_memlimit_task_kb(root, 12, &kb), 0);
        ck_assert_uint_eq(kb, 24000000);

        /* Gone (or hidden by ProtectProc=invisible). */
        ck_assert_int_eq(ra_memlimit_task_kb(root, 13, &kb), -ENOENT);
        test_rm_rf(root);
        free(root);
}
END_TEST

static Suite *memlimit_suite(void) {
        Suite *s = suite_create("memlimit");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse_cgroup);
        tcase_add_test(tc, test_parse_limit);
        tcase_add_test(tc, test_task_kb);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run(memlimit_suite());
}
