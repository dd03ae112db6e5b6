/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers the Check unit tests share: temporary trees and a runner. */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static inline char *test_mkdtemp(void) {
        char *dir = strdup("/tmp/radaemon-test-XXXXXX");

        ck_assert_ptr_nonnull(dir);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        return dir;
}

/* Writes len bytes of contents (which may hold NULs) to dir/name, making parents. */
static inline void test_write_n(const char *dir, const char *name, const char *contents, size_t len) {
        char path[4096], *slash;
        FILE *f;

        ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", dir, name), (int) sizeof(path));
        for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                (void) mkdir(path, 0755);
                *slash = '/';
        }

        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(contents, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
}

#define test_write(dir, name, literal) test_write_n(dir, name, literal, sizeof(literal) - 1)

static inline void test_rm_rf(const char *dir) {
        char cmd[4200];

        ck_assert_int_lt(snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir), (int) sizeof(cmd));
        ck_assert_int_eq(system(cmd), 0);
}

static inline int test_run(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
