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

/*
 * Whether hwdb finds a record with match m for key: sd-hwdb compares bytes
 * up to the record's first '*', '?' or '[', and from there on matches the
 * rest with fnmatch(), flags 0. Checked against systemd-hwdb itself in
 * tests/fleet.sh.
 */
static bool hwdb_matches(const char *m, const char *key) {
        size_t n = strcspn(m, "*?[");

        return strncmp(m, key, n) == 0 && (m[n] ? fnmatch(m + n, key + n, 0) == 0 : key[n] == '\0');
}

/* A match hwdb can take: no '#' (a comment), no control characters. */
static void assert_valid_match(const char *m) {
        ck_assert_msg(strncmp(m, RA_FLEET_PREFIX, strlen(RA_FLEET_PREFIX)) == 0, "'%s'", m);
        for (const unsigned char *p = (const unsigned char *) m; *p; p++)
                ck_assert_msg(*p != '#' && *p >= ' ' && *p != 0x7f, "'%s' has byte %#x", m, *p);
}

/* The record m must not match the key with field f of v[] made s. */
static void assert_not_near(const char *m, const char *v[static 3], size_t f, const char *s) {
        const char *w[3] = { v[0], v[1], v[2] };
        _cleanup_free_ char *k = NULL;

        w[f] = s;
        k = lookup_key(w[0], w[1], w[2]);
        ck_assert_msg(!hwdb_matches(m, k), "'%s' matches '%s' too", m, k);
}

/*
 * The record for one model matches its key and none of its neighbours': the
 * vendor, model or revision with any one byte changed, added or left out.
 */
static void assert_exact(const char *vendor, const char *model, const char *revision) {
        static const char others[] = { 'x', '*', '?', '\\', ' ', (char) 0xc3, (char) 0xff };
        const char *v[3] = { vendor, model, revision };
        _cleanup_free_ char *m = NULL, *key = NULL, *want = lookup_key(vendor, model, revision);

        ck_assert_int_eq(ra_fleet_match(vendor, model, revision, true, &m), 0);
        assert_valid_match(m);
        ck_assert_int_eq(ra_fleet_key(vendor, model, revision, &key), 0);
        ck_assert_str_eq(key, want);
        ck_assert_msg(hwdb_matches(m, key), "'%s' does not match '%s'", m, key);

        for (size_t f = 0; f < 3; f++) {
                size_t len = strlen(v[f]);
                char near[256];

                ck_assert_uint_lt(len + 2, sizeof(near));
                for (size_t i = 0; i <= len; i++) {
                        for (size_t o = 0; o < ELEMENTSOF(others); o++) {
                                memcpy(near, v[f], i);
                                near[i] = others[o];
                                strcpy(near + i + 1, v[f] + i); /* others[o] added at i */
                                assert_not_near(m, v, f, near);
                                if (i < len && v[f][i] != others[o]) {
                                        strcpy(near + i + 1, v[f] + i + 1); /* byte i made others[o] */
                                        assert_not_near(m, v, f, near);
                                }
                        }
                        if (i < len) {
                                memcpy(near, v[f], i);
                                strcpy(near + i, v[f] + i + 1); /* byte i left out */
                                assert_not_near(m, v, f, near);
                        }
                }
        }
}

START_TEST(test_match_plain) {
        _cleanup_free_ char *m = NULL, *key = lookup_key("ATA", "Samsung_SSD_860_EVO_500GB", "RVT04B6Q");

        ck_assert_int_eq(ra_fleet_match("ATA", "Samsung_SSD_860_EVO_500GB", "RVT04B6Q", true, &m), 0);
        ck_assert_str_eq(m, "radaemon:vATA:mSamsung_SSD_860_EVO_500GB:rRVT04B6Q:*");
        assert_valid_match(m);
        ck_assert(hwdb_matches(m, key));
}
END_TEST

/* NVMe's ID_MODEL keeps its spaces; a rule may set anything: every record matches its own model only. */
START_TEST(test_match_odd_models) {
        static const struct {
                const char *vendor, *model, *revision;
        } cases[] = {
                { "", "Samsung SSD 970 EVO Plus 1TB", "2B2QEXM7" },
                { "ACME", "\xc3\x84\xc3\x96", "1.00" },         /* "ÄÖ" */
                { "\xc3\x9c", "\xc3\x9f\xc3\xa9", "\xc3\xa8" }, /* all beyond ASCII */
                { "Bad", "\xff\xfe \x80", "\xc3" },             /* not UTF-8 */
                { "ACME", "it's \"quoted\"", "1.0" },
                { "ACME", "two  spaces ", " 1" },
                { "-v", "-leading dash", "-r" },
                { "Weird*Co", "Model [beta]? *", "1.0" },
                { "Back\\slash", "a\\*b\\?c\\[d]\\", "\\" },
                { "ACME", "]x[!a]y[^b]z[[=a=]][[.a.]]", "[" },
                { "ACME", "*\xc3\x84\xff", "*" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_exact(cases[i].vendor, cases[i].model, cases[i].revision);
}
END_TEST

/* "ÄÖ" was "*" on main: one record for every model of the vendor, or for every disk. */
START_TEST(test_match_non_ascii_not_wider) {
        _cleanup_free_ char *m = NULL, *all = NULL, *other = lookup_key("ACME", "Other", "1.00"),
                            *near = lookup_key("ACME", "\xc3\x84\xc3\x9c", "1.00"),
                            *plain = lookup_key("ATA", "Samsung_SSD_860_EVO_500GB", "RVT04B6Q"),
                            *vendor = lookup_key("\xc3\x9d", "\xc3\x9f", "\xc3\xa8");

        ck_assert_int_eq(ra_fleet_match("ACME", "\xc3\x84\xc3\x96", "1.00", true, &m), 0);
        ck_assert_str_eq(m, "radaemon:vACME:m\xc3\x84\xc3\x96:r1.00:*");
        ck_assert(!hwdb_matches(m, other));
        ck_assert(!hwdb_matches(m, near));

        ck_assert_int_eq(ra_fleet_match("\xc3\x9c", "\xc3\x9f", "\xc3\xa8", true, &all), 0);
        ck_assert(!hwdb_matches(all, plain));
        ck_assert(!hwdb_matches(all, vendor));
}
END_TEST

/* '#' ends a hwdb line, ':' splits the key, control characters end it or vanish: left out. */
START_TEST(test_match_unmatchable) {
        static const char *bad[] = { "Fleet #7", "a:b", "new\nline", "tab\there", "del\x7f" };
        char *m = NULL;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ck_assert_int_eq(ra_fleet_match("ACME", bad[i], "1", true, &m), -EILSEQ);
                ck_assert_int_eq(ra_fleet_match(bad[i], "Model", "1", true, &m), -EILSEQ);
                ck_assert_int_eq(ra_fleet_match("ACME", "Model", bad[i], true, &m), -EILSEQ);
                /* The revision counts without it too: its key is not looked up at all. */
                ck_assert_int_eq(ra_fleet_match("ACME", "Model", bad[i], false, &m), -EILSEQ);
                ck_assert_ptr_null(m);
        }

        /* The key refuses ':' and control characters only: a '#' is fine there. */
        ck_assert_int_eq(ra_fleet_key("ACME", "a:b", "1", &m), -EILSEQ);
        ck_assert_int_eq(ra_fleet_key("ACME", "new\nline", "1", &m), -EILSEQ);
        ck_assert_int_eq(ra_fleet_key("ACME", "", "1", &m), -EINVAL);
        ck_assert_ptr_null(m);
        ck_assert_int_eq(ra_fleet_key(NULL, "Fleet #7", NULL, &m), 0);
        ck_assert_str_eq(m, "radaemon:v:mFleet #7:r:");
        free(m);
}
END_TEST

START_TEST(test_match_other_models) {
        _cleanup_free_ char *m = NULL, *other = lookup_key("ATA", "Samsung_SSD_860_EVO_1TB", "RVT04B6Q"),
                            *firmware = lookup_key("ATA", "Samsung_SSD_860_EVO_500GB", "RVT05B6Q");
        _cleanup_free_ char *any = NULL;

        ck_assert_int_eq(ra_fleet_match("ATA", "Samsung_SSD_860_EVO_500GB", "RVT04B6Q", true, &m), 0);
        ck_assert(!hwdb_matches(m, other));
        ck_assert(!hwdb_matches(m, firmware));

        /* Without the revision, every firmware of the model. */
        ck_assert_int_eq(ra_fleet_match("ATA", "Samsung_SSD_860_EVO_500GB", "RVT04B6Q", false, &any), 0);
        ck_assert_str_eq(any, "radaemon:vATA:mSamsung_SSD_860_EVO_500GB:r*:*");
        ck_assert(hwdb_matches(any, firmware));
        ck_assert(!hwdb_matches(any, other));
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
                .model = "Fast Disk [2]",
                .revision = "1.0",
                .kb = 2048,
                .reason = "Learned 2048 KiB:\nsequential reads were faster.",
        };
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(ra_fleet_format_entry(&e, true, "host1", "2026-11-26 12:00 UTC", &text), 0);
        ck_assert_str_eq(text, "# sdb (serial:S3Z9) on host1, exported 2026-11-26 12:00 UTC: 2048 KiB. "
                               "Learned 2048 KiB: sequential reads were faster.\n"
                               "radaemon:vATA:mFast Disk [[]2]:r1.0:*\n"
                               " RADAEMON_FLEET_KB=2048\n"
                               "\n");

        e.kb = 0;
        ck_assert_int_eq(ra_fleet_format_entry(&e, true, "host1", "now", &text), -EINVAL);
        e.kb = 6;
        ck_assert_int_eq(ra_fleet_format_entry(&e, true, "host1", "now", &text), -EINVAL);
        e.kb = 64;
        e.model = "Fast Disk #2";
        ck_assert_int_eq(ra_fleet_format_entry(&e, true, "host1", "now", &text), -EILSEQ);
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
        tcase_add_test(tc, test_match_non_ascii_not_wider);
        tcase_add_test(tc, test_match_unmatchable);
        tcase_add_test(tc, test_match_other_models);
        tcase_add_test(tc, test_match_needs_model);
        tcase_add_test(tc, test_format_entry);
        tcase_add_test(tc, test_comment_text);
        suite_add_tcase(s, tc);

        return test_run(s);
}
