/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "ra-device.h"
#include "ra-state.h"
#include "ra-util.h"
#include "test-helpers.h"

static RaState *parse(const char *text, int want, char ***errors) {
        RaState *s = NULL;

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_parse(s, text, strlen(text), errors), want);
        return s;
}

START_TEST(test_round_trip) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *back = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = NULL;
        const char *odd = "loop:/srv/my disk\\tone\x7f\xc3\xa9.img";
        RaStateEntry *e;

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_ensure(s, "wwn:0x5000c500a1b2c3d4", &e), 0);
        e->pin_kb = 1024;
        ck_assert_int_eq(ra_state_ensure(s, odd, &e), 0);
        e->pin_kb = 64;
        e->learned_kb = 2048;
        /* Learned only: stored too, for the next plug. */
        ck_assert_int_eq(ra_state_ensure(s, "serial:learned-only", &e), 0);
        e->learned_kb = 512;
        /* Runtime pins and entries without a pin are not written. */
        ck_assert_int_eq(ra_state_ensure(s, "serial:runtime-only", &e), 0);
        e->runtime_pin_kb = 256;

        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "device wwn:0x5000c500a1b2c3d4 pin=1024\n"));
        ck_assert_ptr_nonnull(strstr(
                text, "device loop:/srv/my\\x20disk\\x5ctone\\x7f\\xc3\\xa9.img pin=64 learned=2048\n"));
        ck_assert_ptr_nonnull(strstr(text, "device serial:learned-only learned=512\n"));
        ck_assert_ptr_null(strstr(text, "runtime-only"));

        back = parse(text, 0, &errors);
        ck_assert_uint_eq(back->n_entries, 3);
        ck_assert_uint_eq(ra_state_pin(back, "wwn:0x5000c500a1b2c3d4"), 1024);
        ck_assert_uint_eq(ra_state_pin(back, odd), 64);
        ck_assert_uint_eq(ra_state_learned(back, odd), 2048);
        ck_assert_uint_eq(ra_state_learned(back, "serial:learned-only"), 512);
        ck_assert_uint_eq(ra_state_pin(back, "serial:learned-only"), 0);
        ck_assert_uint_eq(ra_state_pin(back, "serial:runtime-only"), 0);
}
END_TEST

/* The first value seen is the original, kept for good; 0 is a value too. */
START_TEST(test_original) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *back = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = NULL;
        RaStateEntry *e;

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_remember_original(s, "name:sdb", 0), 1);
        ck_assert_int_eq(ra_state_remember_original(s, "name:sdb", 2560), 0);
        ck_assert_int_eq(ra_state_remember_original(s, "name:sdc", 2560), 1);
        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "device name:sdb original=0\n"));
        ck_assert_ptr_nonnull(strstr(text, "device name:sdc original=2560\n"));

        back = parse(text, 0, &errors);
        e = ra_state_find(back, "name:sdb");
        ck_assert_ptr_nonnull(e);
        ck_assert(e->has_original);
        ck_assert_uint_eq(e->original_kb, 0);
        ck_assert_int_eq(ra_state_remember_original(back, "name:sdc", 4), 0);
        ck_assert_uint_eq(ra_state_find(back, "name:sdc")->original_kb, 2560);

        ra_state_free(parse("device name:x original=99999999\n", -EINVAL, &errors));
}
END_TEST

START_TEST(test_restored) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *back = NULL, *bad = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(ra_state_new(&s), 0);
        s->restored = true;
        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "\nrestored\n"));
        back = parse(text, 0, &errors);
        ck_assert(back->restored);

        bad = parse("restored now\n", -EINVAL, &errors);
        ck_assert(!bad->restored);
}
END_TEST

START_TEST(test_runtime_pin_wins) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        RaStateEntry *e;

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_ensure(s, "name:sdb", &e), 0);
        e->pin_kb = 1024;
        ck_assert_uint_eq(ra_state_pin(s, "name:sdb"), 1024);
        e->runtime_pin_kb = 64;
        ck_assert_uint_eq(ra_state_pin(s, "name:sdb"), 64);
        ck_assert_uint_eq(ra_state_pin(s, NULL), 0);
}
END_TEST

/*
 * A bad value costs that value only, a line without an identity that line;
 * every error names its line. What a later release may write is no error.
 */
START_TEST(test_bad_lines) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = NULL;
        const char *in = "# comment\n"                                   /* 1 */
                         "device name:good1 pin=64\n"                    /* 2 */
                         "gadget name:x pin=64\n"                        /* 3: a later release's line */
                         "device\n"                                      /* 4: no identity */
                         "device name:bad1 original=128 pin=3\n"         /* 5: not whole pages */
                         "device name:bad2 pin= learned=64\n"            /* 6 */
                         "device name:bad3 pin=99999999999 original=0\n" /* 7 */
                         "device name:bad4 colour=blue pin=16\n"         /* 8: a later release's key */
                         "device bad\\x2 pin=64\n"                       /* 9: cut escape */
                         "device bad\\x00 pin=64\n"                      /* 10: escaped NUL */
                         "device name:good1 pin=128\n"                   /* 11: second line, same identity */
                         "\n"                                            /* 12 */
                         "   \t\n"                                       /* 13 */
                         "device name:good2 pin=8192\n";                 /* 14 */
        const unsigned lines[] = { 4, 5, 6, 7, 9, 10, 11 };
        const RaStateEntry *e;

        s = parse(in, -EINVAL, &errors);
        ck_assert_uint_eq(ra_strv_length(errors), ELEMENTSOF(lines));
        for (size_t i = 0; i < ELEMENTSOF(lines); i++) {
                char want[32];

                snprintf(want, sizeof(want), "line %u: ", lines[i]);
                ck_assert_msg(strncmp(errors[i], want, strlen(want)) == 0, "'%s' is not at line %u",
                              errors[i], lines[i]);
        }
        ck_assert_uint_eq(s->n_entries, 6);
        ck_assert_uint_eq(ra_state_pin(s, "name:good1"), 64);
        ck_assert_uint_eq(ra_state_pin(s, "name:good2"), 8192);

        /* The line stays, without its bad value. */
        e = ra_state_find(s, "name:bad1");
        ck_assert(e && e->has_original && e->original_kb == 128 && e->pin_kb == 0);
        ck_assert_uint_eq(ra_state_learned(s, "name:bad2"), 64);
        e = ra_state_find(s, "name:bad3");
        ck_assert(e && e->has_original && e->original_kb == 0 && e->pin_kb == 0);
        ck_assert_uint_eq(ra_state_pin(s, "name:bad4"), 16);

        /* What a later release wrote goes back as it was. */
        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_msg(strstr(text, "\ndevice name:bad4 pin=16 colour=blue\n"), "%s", text);
        ck_assert_msg(strstr(text, "\ngadget name:x pin=64\n"), "%s", text);
        ck_assert_msg(strstr(text, "\ndevice name:bad1 original=128\n"), "%s", text);
}
END_TEST

/* A calibration is kept with its curve, alone or beside the rest; a bad one is refused with its line. */
START_TEST(test_calibrated) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *back = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = NULL;
        const char *line =
                "device wwn:0x5 calibrated=1764150000:250:263671:0:4/15723,16/45120,1024/240000\n";
        const RaCalib *c;

        s = parse(line, 0, &errors);
        c = ra_state_calib(s, "wwn:0x5");
        ck_assert_ptr_nonnull(c);
        ck_assert_uint_eq(c->when, 1764150000);
        ck_assert_uint_eq(c->command_us, 250);
        ck_assert_uint_eq(c->n_points, 3);
        ck_assert_uint_eq(c->points[2].kb_s, 240000);
        ck_assert_ptr_null(ra_state_calib(s, "wwn:0x6"));

        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_msg(strstr(text, line), "%s", text);
        back = parse(text, 0, &errors);
        ck_assert_mem_eq(ra_state_calib(back, "wwn:0x5"), c, sizeof(*c));

        ra_state_free(TAKE_PTR(s));
        s = parse("device name:a calibrated=1:2\ndevice name:b learned=64 calibrated=1:250:1000:0:\n",
                  -EINVAL, &errors);
        ck_assert_str_eq(errors[0], "line 1: calibrated= is not WHEN:COMMAND_US:KB_S:JUMP_US:CURVE");
        ck_assert_uint_eq(ra_state_learned(s, "name:b"), 64);
        ck_assert_uint_eq(ra_state_calib(s, "name:b")->bandwidth_kb_s, 1000);
}
END_TEST

START_TEST(test_bad_learned) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;

        s = parse("device name:a learned=0\ndevice name:b learned=6\ndevice name:c learned=8 pin=64\n",
                  -EINVAL, &errors);
        ck_assert_uint_eq(ra_strv_length(errors), 2);
        ck_assert_str_eq(errors[0], "line 1: learned= is not a valid size in KiB");
        ck_assert_uint_eq(ra_state_learned(s, "name:c"), 8);
        ck_assert_uint_eq(ra_state_pin(s, "name:c"), 64);
}
END_TEST

START_TEST(test_nul_and_no_newline) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        const char text[] = "device name:a pin=64\ndevice name:b\0x pin=64\ndevice name:c pin=16";

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_parse(s, text, sizeof(text) - 1, &errors), -EINVAL);
        ck_assert_uint_eq(ra_strv_length(errors), 1);
        ck_assert_str_eq(errors[0], "line 2: a NUL byte");
        ck_assert_uint_eq(ra_state_pin(s, "name:a"), 64);
        ck_assert_uint_eq(ra_state_pin(s, "name:c"), 16);
}
END_TEST

/* Save then load; a missing file is an empty state; nothing temporary stays. */
START_TEST(test_save_load) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *back = NULL, *empty = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *dir = test_mkdtemp();
        char path[4200];
        struct dirent *de;
        struct stat st;
        RaStateEntry *e;
        DIR *d;

        ck_assert_int_eq(ra_state_new(&empty), 0);
        ck_assert_int_eq(ra_state_load(empty, dir, &errors), 0);
        ck_assert_uint_eq(empty->n_entries, 0);

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_ensure(s, "path:pci-0000:00:1f.2-ata-1", &e), 0);
        e->pin_kb = 512;
        ck_assert_int_eq(ra_state_save(s, dir, NULL), 0);
        e->pin_kb = 256;
        ck_assert_int_eq(ra_state_save(s, dir, NULL), 0);

        ck_assert_int_eq(ra_state_new(&back), 0);
        ck_assert_int_eq(ra_state_load(back, dir, &errors), 0);
        ck_assert_uint_eq(ra_state_pin(back, "path:pci-0000:00:1f.2-ata-1"), 256);

        snprintf(path, sizeof(path), "%s/%s", dir, RA_STATE_FILE);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 0777, 0600);

        d = opendir(dir);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                ck_assert_msg(de->d_name[0] != '.' || strcmp(de->d_name, ".") == 0 ||
                                      strcmp(de->d_name, "..") == 0,
                              "left behind: %s", de->d_name);
        closedir(d);

        test_rm_rf(dir);
}
END_TEST

START_TEST(test_save_fails_cleanly) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        RaStateEntry *e;

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_ensure(s, "name:x", &e), 0);
        e->pin_kb = 64;
        bool replaced = true;

        ck_assert_int_eq(ra_state_save(s, "/nonexistent/radaemon", &replaced), -ENOENT);
        ck_assert(!replaced);
}
END_TEST

/* What an earlier radaemon kept under "name:dm-0" moves, once, to the device's new identity. */
START_TEST(test_carry_over) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_free_ char *text = NULL;
        RaDeviceAttrs lv = { .name = (char *) "dm-0", .dm_uuid = (char *) "LVM-aaaa" },
                      other = { .name = (char *) "dm-0", .dm_uuid = (char *) "LVM-bbbb" },
                      md = { .name = (char *) "md127", .md_uuid = (char *) "3a1b:5e6f" },
                      disk = { .name = (char *) "sdb" };
        const RaStateEntry *e;

        s = parse("device name:dm-0 original=32768 pin=1024 learned=2048\n"
                  "device name:md127 original=1024 learned=512\n"
                  "device md:3a1b:5e6f original=1024 learned=4096\n"
                  "device name:sdb original=128 pin=64\n",
                  0, NULL);

        ck_assert_int_eq(ra_state_carry_over(s, &lv, "dm:LVM-aaaa"), 1);
        e = ra_state_find(s, "dm:LVM-aaaa");
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(e->pin_kb, 1024);
        ck_assert_uint_eq(e->learned_kb, 2048);
        ck_assert(e->has_original);
        ck_assert_uint_eq(e->original_kb, 32768);
        ck_assert_ptr_null(ra_state_find(s, "name:dm-0"));

        /* Once: the next volume to be called dm-0 finds nothing under the old name. */
        ck_assert_int_eq(ra_state_carry_over(s, &other, "dm:LVM-bbbb"), 0);
        ck_assert_ptr_null(ra_state_find(s, "dm:LVM-bbbb"));
        ck_assert_int_eq(ra_state_carry_over(s, &lv, "dm:LVM-aaaa"), 0);

        /* What is stored under the new identity wins; the old entry is left alone. */
        ck_assert_int_eq(ra_state_carry_over(s, &md, "md:3a1b:5e6f"), 0);
        ck_assert_uint_eq(ra_state_learned(s, "md:3a1b:5e6f"), 4096);
        ck_assert_uint_eq(ra_state_learned(s, "name:md127"), 512);

        /* A plain disk's identity did not change. */
        ck_assert_int_eq(ra_state_carry_over(s, &disk, "name:sdb"), 0);
        ck_assert_uint_eq(ra_state_pin(s, "name:sdb"), 64);

        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_msg(strstr(text, "device dm:LVM-aaaa original=32768 pin=1024 learned=2048\n"), "%s", text);
        ck_assert_msg(!strstr(text, "name:dm-0"), "%s", text);
}
END_TEST

int main(void) {
        Suite *s = suite_create("state");
        TCase *tc = tcase_create("store");

        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_original);
        tcase_add_test(tc, test_restored);
        tcase_add_test(tc, test_runtime_pin_wins);
        tcase_add_test(tc, test_bad_lines);
        tcase_add_test(tc, test_bad_learned);
        tcase_add_test(tc, test_calibrated);
        tcase_add_test(tc, test_nul_and_no_newline);
        tcase_add_test(tc, test_save_load);
        tcase_add_test(tc, test_save_fails_cleanly);
        tcase_add_test(tc, test_carry_over);
        suite_add_tcase(s, tc);

        return test_run(s);
}
