/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <fnmatch.h>
#include <string.h>

#include "ra-fleet.h"
#include "ra-util.h"
#include "test-helpers.h"

/* The key 60-radaemon.rules looks up, as udev builds it from the properties. */
static char *lookup_key(const char *vendor, const char *model, const char *revision) {
        char *key;

        ck_assert_int_ge(asprintf(&key, "radaemon:v%s:m%s:r%s:", vendor, model, revision), 0);
        return key;
}

/* A match hwdb can take: no '#' (a comment), no '\' (an escape its lookup ignores), no space at the ends. */
static void assert_valid_match(const char *m) {
        size_t len = strlen(m);

        ck_assert_msg(strncmp(m, RA_FLEET_PREFIX, strlen(RA_FLEET_PREFIX)) == 0, "'%s'", m);
        ck_assert_msg(!strpbrk(m, "#\\\n\t'\""), "'%s' has a character hwdb or udev would misread", m);
        ck_assert_msg(m[len - 1] != ' ', "'%s' ends in a space", m);
        for (const unsigned char *p = (const unsigned char *) m; *p; p++)
                ck_assert_msg(*p > ' ' && *p < 0x7f, "'%s' has byte %#x", m, *p);
}

START_TEST(test_match_plain) {
        _cleanup_free_ char *m = NULL, *key = lookup_key("ATA", "Samsung_SSD_860_EVO_500GB", "RVT04B6Q");

        ck_assert_int_eq(ra_fleet_match("ATA", "Samsung_SSD_860_EVO_500GB", "RVT04B6Q", true, &m), 0);
        ck_assert_str_eq(m, "radaemon:vATA:mSamsung_SSD_860_EVO_500GB:rRVT04B6Q:*");
        assert_valid_match(m);
        ck_assert_int_eq(fnmatch(m, key, 0), 0);
}
END_TEST

/* NVMe's ID_MODEL keeps its spaces; anything odd becomes a '?' that matches it. */
START_TEST(test_match_odd_models) {
        static const struct {
                const char *vendor, *model, *revision;
        } cases[] = {
                { "", "Samsung SSD 970 EVO Plus 1TB", "2B2QEXM7" },
                { "Weird*Co", "Model #1 [beta]?", "1.0" },
                { "Back\\slash", "it's \"quoted\"", "a:b:c" },
                { "", "Ünïcödé Disk", "" },
                { "tab\there", "new\nline", "x" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *m = NULL,
                                    *key = lookup_key(cases[i].vendor, cases[i].model, cases[i].revision);

                ck_assert_int_eq(
                        ra_fleet_match(cases[i].vendor, cases[i].model, cases[i].revision, true, &m), 0);
                assert_valid_match(m);
                ck_assert_msg(fnmatch(m, key, 0) == 0, "'%s' does not match '%s'", m, key);
        }
}
END_TEST

START_TEST(test_match_other_models) {
        _cleanup_free_ char *m = NULL, *other = lookup_key("ATA", "Samsung_SSD_860_EVO_1TB", "RVT04B6Q"),
                            *firmware = lookup_key("ATA", "Samsung_SSD_860_EVO_500GB", "RVT05B6Q");
        _cleanup_free_ char *any = NULL;

        ck_assert_int_eq(ra_fleet_match("ATA", "Samsung_SSD_860_EVO_500GB", "RVT04B6Q", true, &m), 0);
        ck_assert_int_ne(fnmatch(m, other, 0), 0);
        ck_assert_int_ne(fnmatch(m, firmware, 0), 0);

        /* Without the revision, every firmware of the model. */
        ck_assert_int_eq(ra_fleet_match("ATA", "Samsung_SSD_860_EVO_500GB", "RVT04B6Q", false, &any), 0);
        ck_assert_str_eq(any, "radaemon:vATA:mSamsung_SSD_860_EVO_500GB:r*:*");
        ck_assert_int_eq(fnmatch(any, firmware, 0), 0);
        ck_assert_int_ne(fnmatch(any, other, 0), 0);
}
END_TEST

START_TEST(test_match_needs_model) {
        char *m = NULL;

        ck_assert_int_eq(ra_fleet_match("Linux", NULL, "1", true, &m), -EINVAL);
        ck_assert_int_eq(ra_fleet_match("Linux", "", "1", true, &m), -EINVAL);
        ck_assert_ptr_null(m);
}
END_TEST

START_TEST(test_format_entry) {
        RaFleetEntry e = {
                .name = "sdb",
                .identity = "serial:S3Z9",
                .vendor = "ATA",
                .model = "Fast Disk #2",
                .revision = "1.0",
                .kb = 2048,
                .reason = "Learned 2048 KiB:\nsequential reads were faster.",
        };
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(ra_fleet_format_entry(&e, true, "host1", "2026-11-26 12:00 UTC", &text), 0);
        ck_assert_str_eq(text, "# sdb (serial:S3Z9) on host1, exported 2026-11-26 12:00 UTC: 2048 KiB. "
                               "Learned 2048 KiB: sequential reads were faster.\n"
                               "radaemon:vATA:mFast?Disk??2:r1.0:*\n"
                               " RADAEMON_FLEET_KB=2048\n"
                               "\n");

        e.kb = 0;
        ck_assert_int_eq(ra_fleet_format_entry(&e, true, "host1", "now", &text), -EINVAL);
        e.kb = 6;
        ck_assert_int_eq(ra_fleet_format_entry(&e, true, "host1", "now", &text), -EINVAL);
        e.kb = 64;
        e.model = NULL;
        ck_assert_int_eq(ra_fleet_format_entry(&e, true, "host1", "now", &text), -EINVAL);
}
END_TEST

START_TEST(test_comment_text) {
        _cleanup_free_ char *t = ra_fleet_comment_text("a\nb\rc\td");

        ck_assert_str_eq(t, "a b c d");
}
END_TEST

int main(void) {
        Suite *s = suite_create("fleet");
        TCase *tc = tcase_create("hwdb");

        tcase_add_test(tc, test_match_plain);
        tcase_add_test(tc, test_match_odd_models);
        tcase_add_test(tc, test_match_other_models);
        tcase_add_test(tc, test_match_needs_model);
        tcase_add_test(tc, test_format_entry);
        tcase_add_test(tc, test_comment_text);
        suite_add_tcase(s, tc);

        return test_run(s);
}
