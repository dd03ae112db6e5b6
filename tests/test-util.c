/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include "ra-util.h"
#include "test-helpers.h"

START_TEST(test_parse_u64) {
        static const struct {
                const char *s;
                int r;
                uint64_t v;
        } cases[] = {
                { "0", 0, 0 },
                { "128", 0, 128 },
                { "18446744073709551615", 0, UINT64_MAX },
                { "18446744073709551616", -ERANGE, 0 },
                { "99999999999999999999999", -ERANGE, 0 },
                { "", -EINVAL, 0 },
                { " 1", -EINVAL, 0 },
                { "1 ", -EINVAL, 0 },
                { "-1", -EINVAL, 0 },
                { "+1", -EINVAL, 0 },
                { "0x10", -EINVAL, 0 },
                { "12abc", -EINVAL, 0 },
                { "1\n", -EINVAL, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t v = 4242;
                int r = ra_parse_u64(cases[i].s, &v);

                ck_assert_msg(r == cases[i].r, "'%s': got %d, want %d", cases[i].s, r, cases[i].r);
                ck_assert_uint_eq(v, r == 0 ? cases[i].v : 4242);
        }

        ck_assert_int_eq(ra_parse_u64(NULL, &(uint64_t){ 0 }), -EINVAL);
}
END_TEST

START_TEST(test_parse_u32) {
        uint32_t v;

        ck_assert_int_eq(ra_parse_u32("4294967295", &v), 0);
        ck_assert_uint_eq(v, UINT32_MAX);
        ck_assert_int_eq(ra_parse_u32("4294967296", &v), -ERANGE);
        ck_assert_int_eq(ra_parse_u32("x", &v), -EINVAL);
}
END_TEST

START_TEST(test_read_file_at) {
        _cleanup_free_ char *dir = test_mkdtemp();
        _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        char buf[8];

        test_write(dir, "plain", "128\n");
        ck_assert_int_eq(ra_read_file_at(dfd, "plain", buf, sizeof(buf)), 3);
        ck_assert_str_eq(buf, "128");

        test_write(dir, "empty", "");
        ck_assert_int_eq(ra_read_file_at(dfd, "empty", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "");

        /* Exactly full is a cut, not a value. */
        test_write(dir, "long", "12345678");
        ck_assert_int_eq(ra_read_file_at(dfd, "long", buf, sizeof(buf)), -EFBIG);

        test_write(dir, "nul", "1\0002\n");
        ck_assert_int_eq(ra_read_file_at(dfd, "nul", buf, sizeof(buf)), -EBADMSG);

        ck_assert_int_eq(ra_read_file_at(dfd, "missing", buf, sizeof(buf)), -ENOENT);

        test_rm_rf(dir);
}
END_TEST

START_TEST(test_strv_split) {
        _cleanup_(ra_strv_freep) char **l = ra_strv_split("  ram*\tzram*  loop[0-9]\n");
        _cleanup_(ra_strv_freep) char **none = ra_strv_split("   ");

        ck_assert_uint_eq(ra_strv_length(l), 3);
        ck_assert_str_eq(l[0], "ram*");
        ck_assert_str_eq(l[1], "zram*");
        ck_assert_str_eq(l[2], "loop[0-9]");
        ck_assert_ptr_nonnull(none);
        ck_assert_uint_eq(ra_strv_length(none), 0);

        ck_assert(ra_strv_contains(l, "zram*"));
        ck_assert(!ra_strv_contains(l, "zram"));
        ck_assert(!ra_strv_contains(none, "ram*"));
        ck_assert(!ra_strv_contains(NULL, "ram*"));
}
END_TEST

START_TEST(test_glob_match_any) {
        char *l[] = { "sd*", "loop1[0-9]", NULL };

        ck_assert(ra_glob_match_any(l, "sda"));
        ck_assert(ra_glob_match_any(l, "loop12"));
        ck_assert(!ra_glob_match_any(l, "loop1"));
        ck_assert(!ra_glob_match_any(l, "vda"));
        ck_assert(!ra_glob_match_any(NULL, "vda"));
}
END_TEST

START_TEST(test_format_size) {
        char buf[RA_SIZE_MAX];

        ck_assert_str_eq(ra_format_size(0, buf), "0 B");
        ck_assert_str_eq(ra_format_size(505 * 1024, buf), "505 KiB");
        ck_assert_str_eq(ra_format_size(UINT64_C(8) << 30, buf), "8.0 GiB");
        ck_assert_str_eq(ra_format_size(UINT64_C(22000000000), buf), "20 GiB");
        ck_assert_str_eq(ra_format_size(UINT64_C(3) << 29, buf), "1.5 GiB");
        ck_assert_str_eq(ra_format_size(UINT64_MAX, buf), "15 EiB");
}
END_TEST

START_TEST(test_device_name_is_valid) {
        ck_assert(ra_device_name_is_valid("sda"));
        ck_assert(ra_device_name_is_valid("nvme0n1"));
        ck_assert(!ra_device_name_is_valid(""));
        ck_assert(!ra_device_name_is_valid("."));
        ck_assert(!ra_device_name_is_valid(".."));
        ck_assert(!ra_device_name_is_valid("../../etc"));
        ck_assert(!ra_device_name_is_valid("sd a"));
        ck_assert(!ra_device_name_is_valid(NULL));
}
END_TEST

START_TEST(test_utf8_escape_invalid) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "", "" },
                { "/mnt/usb", "/mnt/usb" },
                /* Valid text stays as it is, backslashes and all. */
                { "Gr\u00fc\u00dfe \u20ac \U0001f4be a\\xff", "Gr\u00fc\u00dfe \u20ac \U0001f4be a\\xff" },
                { "/tmp/\xff\xfe.img", "/tmp/\\xff\\xfe.img" },
                /* Latin-1, not UTF-8. */
                { "caf\xe9", "caf\\xe9" },
                /* A sequence cut short, at the end and before another character. */
                { "x\xe2\x82", "x\\xe2\\x82" },
                { "\xe2\x82x", "\\xe2\\x82x" },
                { "\xc3", "\\xc3" },
                /* A lone continuation byte. */
                { "\x80/", "\\x80/" },
                /* '/' overlong, in two, three and four bytes. */
                { "\xc0\xaf", "\\xc0\\xaf" },
                { "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },
                { "\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf" },
                /* A UTF-16 surrogate, past U+10FFFF, and noncharacters: sd-bus refuses them all. */
                { "\xed\xa0\x80", "\\xed\\xa0\\x80" },
                { "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },
                { "\xef\xbf\xbe", "\\xef\\xbf\\xbe" },
                { "\xef\xb7\x90", "\\xef\\xb7\\x90" },
                { "\xf0\x9f\xbf\xbf", "\\xf0\\x9f\\xbf\\xbf" },
                /* The last characters that are fine. */
                { "\xef\xbf\xbd\xf4\x8f\xbf\xbd", "\xef\xbf\xbd\xf4\x8f\xbf\xbd" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = ra_utf8_escape_invalid(cases[i].in);

                ck_assert_ptr_nonnull(out);
                ck_assert_msg(strcmp(out, cases[i].out) == 0, "case %zu: got '%s', want '%s'", i, out,
                              cases[i].out);
                ck_assert(ra_utf8_is_valid(out));
                ck_assert(ra_utf8_is_valid(cases[i].in) == (strcmp(cases[i].in, cases[i].out) == 0));
        }
}
END_TEST

/* Returns 0 when s escapes well, else a line to fail on (Check's asserts are too slow for millions). */
static int escape_fails(const char *s) {
        _cleanup_free_ char *out = ra_utf8_escape_invalid(s), *again = NULL;

        if (!out || !ra_utf8_is_valid(out))
                return __LINE__;
        if (ra_utf8_is_valid(s) && strcmp(out, s) != 0)
                return __LINE__;
        /* Escaped once is escaped for good. */
        again = ra_utf8_escape_invalid(out);
        if (!again || strcmp(again, out) != 0)
                return __LINE__;
        return 0;
}

/*
 * Every string of two bytes, and of three where the first two may begin a
 * longer character (otherwise the third starts afresh, as in two).
 */
START_TEST(test_utf8_escape_any_bytes) {
        for (unsigned a = 1; a < 256; a++)
                for (unsigned b = 1; b < 256; b++) {
                        int line = escape_fails((const char[]){ (char) a, (char) b, '\0' });

                        for (unsigned c = 1; !line && a >= 0xe0 && (b & 0xc0) == 0x80 && c < 256; c++)
                                line = escape_fails((const char[]){ (char) a, (char) b, (char) c, '\0' });
                        ck_assert_msg(line == 0, "bytes %02x %02x...: fails at line %d", a, b, line);
                }
}
END_TEST

/* A line people read: controls escaped as well, so no name starts a line or moves the cursor. */
START_TEST(test_text_escape) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "", "" },
                { "/mnt/usb \u20ac", "/mnt/usb \u20ac" },
                /* A mount point forging a journal line of its own, at the emergency level. */
                { "/home/u/x\n<0>FORGED radaemon: sda is failing",
                  "/home/u/x\\x0a<0>FORGED radaemon: sda is failing" },
                /* An escape sequence that would clear root's terminal; a carriage return; a tab; DEL. */
                { "\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H" },
                { "a\rb\tc\x7f", "a\\x0db\\x09c\\x7f" },
                /* And what is not UTF-8, as before. */
                { "caf\xe9\x01", "caf\\xe9\\x01" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = ra_text_escape(cases[i].in);

                ck_assert_ptr_nonnull(out);
                ck_assert_msg(strcmp(out, cases[i].out) == 0, "case %zu: got '%s', want '%s'", i, out,
                              cases[i].out);
                ck_assert(ra_text_is_plain(out));
                ck_assert(ra_text_is_plain(cases[i].in) == (strcmp(cases[i].in, cases[i].out) == 0));
        }
        /* Every single byte: plain exactly when printable, and plain once escaped. */
        for (unsigned a = 1; a < 256; a++) {
                _cleanup_free_ char *out = ra_text_escape((const char[]){ (char) a, '\0' });

                ck_assert_ptr_nonnull(out);
                ck_assert(ra_text_is_plain(out));
                ck_assert(strchr(out, '\n') == NULL && strchr(out, '\x1b') == NULL);
                ck_assert((strlen(out) == 1) == (a >= 0x20 && a < 0x7f));
        }
}
END_TEST

int main(void) {
        Suite *s = suite_create("util");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse_u64);
        tcase_add_test(tc, test_parse_u32);
        tcase_add_test(tc, test_read_file_at);
        tcase_add_test(tc, test_strv_split);
        tcase_add_test(tc, test_glob_match_any);
        tcase_add_test(tc, test_format_size);
        tcase_add_test(tc, test_device_name_is_valid);
        tcase_add_test(tc, test_utf8_escape_invalid);
        tcase_add_test(tc, test_utf8_escape_any_bytes);
        tcase_add_test(tc, test_text_escape);
        suite_add_tcase(s, tc);

        return test_run(s);
}
