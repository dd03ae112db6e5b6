/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ra-device.h"
#include "ra-state.h"
#include "ra-swap.h"
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

/*
 * A model from traced requests: on the "more" line (the release before
 * version 2 drops a device line with a key it does not know), the model
 * where no calibration ran, and a calibration before it.
 */
START_TEST(test_traced) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *back = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = NULL;
        const char *more = "more wwn:0x5 traced=1764150000:262:261120:0:4/14234,16/50176\n";
        const RaCalib *c;

        s = parse(more, 0, &errors);
        ck_assert_ptr_null(ra_state_calib(s, "wwn:0x5"));
        c = ra_state_cost_model(s, "wwn:0x5");
        ck_assert_ptr_nonnull(c);
        ck_assert_int_eq(c->source, RA_CALIB_TRACED);
        ck_assert_uint_eq(c->command_us, 262);
        ck_assert_uint_eq(c->n_points, 2);
        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_msg(strstr(text, "\ndevice wwn:0x5\n"), "%s", text);
        ck_assert_msg(strstr(text, more), "%s", text);
        back = parse(text, 0, &errors);
        ck_assert_mem_eq(ra_state_cost_model(back, "wwn:0x5"), c, sizeof(*c));

        ra_state_free(TAKE_PTR(s));
        s = parse("device wwn:0x5 calibrated=1764150001:250:263671:0:4/15723\n"
                  "more wwn:0x5 traced=1764150000:262:261120:0:4/14234,16/50176\n",
                  0, &errors);
        ck_assert_int_eq(ra_state_cost_model(s, "wwn:0x5")->source, RA_CALIB_CALIBRATED);
        ck_assert_uint_eq(ra_state_cost_model(s, "wwn:0x5")->command_us, 250);
        ck_assert_ptr_null(ra_state_cost_model(s, "wwn:0x6"));
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

/* What a later release writes is kept and written back, on the line it was on, through a save. */
START_TEST(test_unknown_kept) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *back = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = NULL, *dir = test_mkdtemp();
        const char *in = "version 3\n"
                         "device serial:A original=128 pin=1024 colour=blue\n"
                         "more serial:A seen=1764150000 weight=3\n"
                         "swap pin=2 tide=high\n"
                         "frobnicate all\tdisks\n";

        s = parse(in, 0, &errors);
        ck_assert_ptr_null(errors);
        ck_assert_uint_eq(s->version, 3);
        ck_assert_uint_eq(ra_state_pin(s, "serial:A"), 1024);
        ck_assert_int_eq(ra_state_swap_pin(s), 2);
        ck_assert_int_eq(ra_state_save(s, dir, NULL), 0);

        ck_assert_int_eq(ra_state_new(&back), 0);
        ck_assert_int_eq(ra_state_load(back, dir, &errors), 0);
        ck_assert_int_eq(ra_state_format(back, &text), 0);
        ck_assert_msg(strstr(text, "\ndevice serial:A original=128 pin=1024 colour=blue\n"), "%s", text);
        ck_assert_msg(strstr(text, "\nmore serial:A seen=1764150000 weight=3\n"), "%s", text);
        ck_assert_msg(strstr(text, "\nswap pin=2 tide=high\n"), "%s", text);
        ck_assert_msg(strstr(text, "\nfrobnicate all\tdisks\n"), "%s", text);
        /* This release writes its own version. */
        ck_assert_msg(strstr(text, "\nversion 2\n"), "%s", text);
        test_rm_rf(dir);
}
END_TEST

START_TEST(test_version) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *bad = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_str_eq(text, "# radaemon state: original, pinned and learned values per device identity.\n"
                               "version 2\n");
        ra_state_free(TAKE_PTR(s));
        s = parse(text, 0, &errors);
        ck_assert_uint_eq(s->version, RA_STATE_VERSION);

        bad = parse("version\nversion two\nversion 0\nversion 2 3\n", -EINVAL, &errors);
        ck_assert_uint_eq(ra_strv_length(errors), 4);
        ck_assert_uint_eq(bad->version, 0);
}
END_TEST

/*
 * What the release before the format version (c544f82) keeps of a line: a
 * "device" line whose every key it knows (a value it refuses cost it the
 * line, but this release writes only values it takes), a "swap" line
 * likewise, "restored" and comments. Any other line it skips with a
 * warning, and it writes back only what it kept.
 */
static bool previous_release_keeps(const char *line) {
        static const char *const device_keys[] = { "pin=", "original=", "learned=", "calibrated=" };
        static const char *const swap_keys[] = { "pin=", "original=", "learned-" };
        _cleanup_free_ char *copy = strdup(line);
        char *word, *save = NULL;
        bool device;

        ck_assert_ptr_nonnull(copy);
        word = strtok_r(copy, " \t", &save);
        if (!word || word[0] == '#' || strcmp(word, "restored") == 0)
                return true;
        device = strcmp(word, "device") == 0;
        if (!device && strcmp(word, "swap") != 0)
                return false;
        if (device && !strtok_r(NULL, " \t", &save))
                return false;
        while ((word = strtok_r(NULL, " \t", &save))) {
                const char *const *keys = device ? device_keys : swap_keys;
                size_t n = device ? ELEMENTSOF(device_keys) : ELEMENTSOF(swap_keys);
                bool known = false;

                for (size_t i = 0; i < n; i++)
                        known = known || strncmp(word, keys[i], strlen(keys[i])) == 0;
                if (!known)
                        return false;
        }
        return true;
}

/*
 * A downgrade to the previous release, then an upgrade back: no pin,
 * original, learned value nor calibration is lost on the way, only seen=.
 */
START_TEST(test_downgrade_upgrade) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *old = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = NULL, *kept = NULL;
        size_t size = 0, expired, dropped;
        char *line, *save = NULL;
        RaStateEntry *e;
        FILE *f;

        s = parse("device wwn:0x5 original=256 pin=1024 "
                  "calibrated=1764150000:250:263671:0:4/15723,16/45120\n"
                  "device serial:B original=128 learned=2048\n"
                  "device fuse:sshfs:host:/srv@/home/u/mnt original=0\n"
                  "swap original=3 pin=0 learned-rotational=5\n"
                  "restored\n",
                  0, &errors);
        ck_assert_int_eq(ra_state_touch(s, "wwn:0x5", 1764150000), 1);
        ck_assert_int_eq(ra_state_touch(s, "serial:B", 1764150000), 1);
        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_msg(strstr(text, "\nmore serial:B seen=1764150000\n"), "%s", text);

        /* The previous release reads it and saves what it kept. */
        f = open_memstream(&kept, &size);
        ck_assert_ptr_nonnull(f);
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                if (previous_release_keeps(line))
                        fprintf(f, "%s\n", line);
                else
                        ck_assert_msg(strncmp(line, "more ", 5) == 0 || strncmp(line, "version ", 8) == 0,
                                      "the previous release loses: %s", line);
        ck_assert_int_eq(fclose(f), 0);

        /* This release reads that back: everything but seen=, which counts from now. */
        old = parse(kept, 0, &errors);
        ck_assert_uint_eq(old->n_entries, 3);
        e = ra_state_find(old, "wwn:0x5");
        ck_assert(e && e->has_original && e->original_kb == 256 && e->pin_kb == 1024);
        ck_assert_mem_eq(&e->calib, ra_state_calib(s, "wwn:0x5"), sizeof(e->calib));
        e = ra_state_find(old, "serial:B");
        ck_assert(e && e->has_original && e->original_kb == 128 && e->learned_kb == 2048 && e->seen == 0);
        e = ra_state_find(old, "fuse:sshfs:host:/srv@/home/u/mnt");
        ck_assert(e && e->has_original && e->original_kb == 0);
        ck_assert_int_eq(old->swap.original, 3);
        ck_assert_int_eq(old->swap.pin, 0);
        ck_assert_int_eq(old->swap.learned[RA_SWAP_CLASS_ROT], 5);
        ck_assert(old->restored);

        ra_state_forget(old, 1764150000 + 1000 * 86400ull, 86400, RA_STATE_MAX_ENTRIES, &expired, &dropped);
        ck_assert_uint_eq(expired, 0);
        ck_assert_uint_eq(old->n_entries, 3);
}
END_TEST

/* Unseen for max_age: forgotten, unless pinned; a file without seen= counts from now. */
START_TEST(test_forget_expired) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        const uint64_t day = 86400, now = 1764150000;
        size_t expired, dropped;

        s = parse("device serial:old original=128\nmore serial:old seen=1700000000\n"
                  "device serial:pinned pin=64\nmore serial:pinned seen=1700000000\n"
                  "device serial:recent learned=256\nmore serial:recent seen=1764000000\n"
                  "device serial:unknown original=4\n",
                  0, NULL);

        ra_state_forget(s, now, 365 * day, RA_STATE_MAX_ENTRIES, &expired, &dropped);
        ck_assert_uint_eq(expired, 1);
        ck_assert_uint_eq(dropped, 0);
        ck_assert_ptr_null(ra_state_find(s, "serial:old"));
        ck_assert_uint_eq(ra_state_pin(s, "serial:pinned"), 64);
        ck_assert_uint_eq(ra_state_learned(s, "serial:recent"), 256);
        ck_assert_uint_eq(ra_state_find(s, "serial:unknown")->seen, now);

        /* 0: kept however old. */
        ra_state_forget(s, now + 100000 * day, 0, RA_STATE_MAX_ENTRIES, &expired, &dropped);
        ck_assert_uint_eq(expired, 0);
        ck_assert_uint_eq(s->n_entries, 3);

        /* A clock set back makes nothing older, nor changes what was seen. */
        ra_state_forget(s, now - 1000 * day, day, RA_STATE_MAX_ENTRIES, &expired, &dropped);
        ck_assert_uint_eq(expired, 0);
        ck_assert_uint_eq(ra_state_find(s, "serial:unknown")->seen, now);

        /* A day's difference is worth a save; less is not. */
        ck_assert_int_eq(ra_state_touch(s, "serial:recent", now), 1);
        ck_assert_int_eq(ra_state_touch(s, "serial:recent", now + day - 1), 0);
        ck_assert_int_eq(ra_state_touch(s, "serial:recent", now + 2 * day), 1);
}
END_TEST

/* Past the cap, the oldest unpinned go first; pins stay even past it. */
START_TEST(test_forget_cap) {
        /* Entry i was seen at 1000 + (i * 7) % 10; i % 3 == 0 is pinned. */
        static const bool kept_at_6[10] = { 1, 0, 0, 1, 1, 0, 1, 1, 0, 1 };
        _cleanup_(ra_state_freep) RaState *s = NULL;
        size_t expired, dropped;
        RaStateEntry *e;
        char id[32];

        ck_assert_int_eq(ra_state_new(&s), 0);
        for (unsigned i = 0; i < 10; i++) {
                snprintf(id, sizeof(id), "serial:%u", i);
                ck_assert_int_eq(ra_state_ensure(s, id, &e), 0);
                e->has_original = true;
                e->seen = 1000 + (i * 7) % 10;
                e->pin_kb = i % 3 == 0 ? 64 : 0;
        }

        ra_state_forget(s, 2000, 0, 6, &expired, &dropped);
        ck_assert_uint_eq(expired, 0);
        ck_assert_uint_eq(dropped, 4);
        ck_assert_uint_eq(s->n_entries, 6);
        for (unsigned i = 0; i < 10; i++) {
                snprintf(id, sizeof(id), "serial:%u", i);
                ck_assert_msg(!!ra_state_find(s, id) == kept_at_6[i], "%s", id);
        }

        ra_state_forget(s, 2000, 0, 2, &expired, &dropped);
        ck_assert_uint_eq(dropped, 2);
        ck_assert_uint_eq(s->n_entries, 4);
        for (unsigned i = 0; i < 10; i += 3) {
                snprintf(id, sizeof(id), "serial:%u", i);
                ck_assert_uint_eq(ra_state_pin(s, id), 64);
        }
}
END_TEST

/* A file system at a temporary mount point: its original is not written, unless pinned or learned. */
START_TEST(test_temporary_mounts) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_free_ char *text = NULL;
        static const char *const temporary[] = {
                "fuse:fuse.Foo.AppImage:Foo.AppImage@/tmp/.mount_Foo1a2b3c",
                "bdi:tmpfs:none@/tmp",
                "fuse:sshfs:h:/@/run/user/1000/gvfs",
                "bdi:ext4:/dev/loop7@/var/tmp/x",
                "fuse:fuse:a@b@/dev/shm/c",
        };
        static const char *const lasting[] = {
                "fuse:sshfs:h:/srv@/home/u/mnt",
                "bdi:ext4:/dev/sdb1@/tmpfoo",
                "fuse:ntfs:/tmp/x@/mnt/x",
                "serial:/tmp/x",
        };
        RaStateEntry *e;

        ck_assert_int_eq(ra_state_new(&s), 0);
        for (size_t i = 0; i < ELEMENTSOF(temporary); i++)
                ck_assert_int_eq(ra_state_remember_original(s, temporary[i], 128), 1);
        for (size_t i = 0; i < ELEMENTSOF(lasting); i++)
                ck_assert_int_eq(ra_state_remember_original(s, lasting[i], 128), 1);
        ck_assert_int_eq(ra_state_ensure(s, "fuse:sshfs:h:/@/tmp/pinned", &e), 0);
        e->pin_kb = 64;
        ck_assert_int_eq(ra_state_ensure(s, "fuse:sshfs:h:/@/tmp/learned", &e), 0);
        e->learned_kb = 256;
        /* Kept for this run: Restore() puts it back. */
        ck_assert(ra_state_find(s, temporary[0])->has_original);
        ck_assert_int_eq(ra_state_touch(s, temporary[0], 1764150000), 0);

        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_msg(!strstr(text, "/tmp/.mount_") && !strstr(text, "@/tmp\n") &&
                              !strstr(text, "/run/user") && !strstr(text, "/var/tmp") &&
                              !strstr(text, "/dev/shm"),
                      "%s", text);
        for (size_t i = 0; i < ELEMENTSOF(lasting); i++)
                ck_assert_msg(strstr(text, lasting[i]), "%s not in %s", lasting[i], text);
        ck_assert_msg(strstr(text, "\ndevice fuse:sshfs:h:/@/tmp/pinned pin=64\n"), "%s", text);
        ck_assert_msg(strstr(text, "\ndevice fuse:sshfs:h:/@/tmp/learned learned=256\n"), "%s", text);
}
END_TEST

static char *many_entries(unsigned n) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        for (unsigned i = 0; i < n; i++)
                fprintf(f,
                        "device fuse:fuse.App%u.AppImage:App%u.AppImage@/home/user/Applications/AppImages/.mount_%06u original=128%s\n"
                        "more fuse:fuse.App%u.AppImage:App%u.AppImage@/home/user/Applications/AppImages/.mount_%06u seen=%u\n",
                        i, i, i, i == n / 2 ? " pin=1024" : "", i, i, i, 1700000000 + i);
        fputs("swap pin=3\n", f);
        ck_assert_int_eq(fclose(f), 0);
        return text;
}

/* Built with AddressSanitizer (run-tests' second build, by clang). */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static double seconds_since(const struct timespec *start) {
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (double) (now.tv_sec - start->tv_sec) + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
}

/*
 * 100,000 entries (years of AppImage launches before the cap), 20 MiB, load
 * in linear time: a bound only a quadratic parse crosses (c544f82 took 1.2 s
 * for 10,000, 37 s for 40,000, over 4 minutes for 100,000).
 */
START_TEST(test_many_entries) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *text = many_entries(100000), *dir = test_mkdtemp();
        size_t expired, dropped;
        struct timespec start;
        double took;

        /* Past the 16 MiB c544f82 refused, moving the file aside with every pin. */
        ck_assert_uint_gt(strlen(text), 20 * 1024 * 1024);
        test_write_n(dir, RA_STATE_FILE, text, strlen(text));
        ck_assert_int_eq(ra_state_new(&s), 0);
        clock_gettime(CLOCK_MONOTONIC, &start);
        ck_assert_int_eq(ra_state_load(s, dir, &errors), 0);
        took = seconds_since(&start);
        test_rm_rf(dir);
        /*
         * Valgrind runs it some 30 times slower; AddressSanitizer 4 times (1.2 s
         * alone, 2.5 s beside a make -j2 check on 2 cores): still far below the
         * minutes of a quadratic parse.
         */
        ck_assert_msg(took < (ra_streq(getenv("RA_VALGRIND"), "1") ? 120.0
                              : SANITIZED                          ? 10.0
                                                                   : 2.0),
                      "100,000 entries took %.2f s", took);
        ck_assert_uint_eq(s->n_entries, 100000);
        ck_assert_uint_eq(
                ra_state_pin(
                        s,
                        "fuse:fuse.App50000.AppImage:App50000.AppImage@/home/user/Applications/AppImages/.mount_050000"),
                1024);

        ra_state_forget(s, 1700000000 + 100000, 0, RA_STATE_MAX_ENTRIES, &expired, &dropped);
        ck_assert_uint_eq(dropped, 100000 - RA_STATE_MAX_ENTRIES);
        ck_assert_uint_eq(s->n_entries, RA_STATE_MAX_ENTRIES);
        /* The pin stays, with the newest. */
        ck_assert_uint_eq(
                ra_state_pin(
                        s,
                        "fuse:fuse.App50000.AppImage:App50000.AppImage@/home/user/Applications/AppImages/.mount_050000"),
                1024);
        ck_assert_ptr_nonnull(ra_state_find(
                s,
                "fuse:fuse.App99999.AppImage:App99999.AppImage@/home/user/Applications/AppImages/.mount_099999"));
        ck_assert_ptr_null(ra_state_find(
                s,
                "fuse:fuse.App89999.AppImage:App89999.AppImage@/home/user/Applications/AppImages/.mount_089999"));
}
END_TEST

/* A reader of one device gets its entry, the swap line and "restored", and nothing else. */
START_TEST(test_load_only) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *dir = test_mkdtemp();
        const char *const only[] = { "loop:/srv/a b.img", "name:dm-0", NULL };
        const char text[] = "device serial:X pin=64\n"
                            "restored\n"
                            "device loop:/srv/a\\x20b.img pin=128\n"
                            "more loop:/srv/a\\x20b.img seen=1764150000\n"
                            "device name:dm-0 learned=512\n"
                            "device name:dm-00 pin=8\n"
                            "device name:dm-0\\x30 pin=8\n"
                            "swap pin=4\n"
                            "device serial:Y pin=3\n";

        test_write_n(dir, RA_STATE_FILE, text, sizeof(text) - 1);
        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_load_only(s, dir, only, &errors), 0);
        ck_assert_uint_eq(s->n_entries, 2);
        ck_assert_uint_eq(ra_state_pin(s, "loop:/srv/a b.img"), 128);
        ck_assert_uint_eq(ra_state_find(s, "loop:/srv/a b.img")->seen, 1764150000);
        ck_assert_uint_eq(ra_state_learned(s, "name:dm-0"), 512);
        ck_assert_int_eq(ra_state_swap_pin(s), 4);
        ck_assert(s->restored);
        test_rm_rf(dir);
}
END_TEST

/* What a crash during a save left goes; a file readable by all becomes its owner's. */
START_TEST(test_tidy) {
        _cleanup_free_ char *dir = test_mkdtemp();
        char path[4200];
        struct stat st;

        test_write_n(dir, RA_STATE_FILE, "device serial:X pin=64\n", 23);
        test_write_n(dir, ".state.a1B2c3", "device serial:X pin=8\n", 22);
        test_write_n(dir, ".state.keep", "", 0);
        snprintf(path, sizeof(path), "%s/%s", dir, RA_STATE_FILE);
        ck_assert_int_eq(chmod(path, 0644), 0);

        ck_assert_int_eq(ra_state_tidy(dir), 0);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 0777, 0600);
        snprintf(path, sizeof(path), "%s/.state.a1B2c3", dir);
        ck_assert_int_eq(access(path, F_OK), -1);
        snprintf(path, sizeof(path), "%s/.state.keep", dir);
        ck_assert_int_eq(access(path, F_OK), 0);

        /* A save removes them too. */
        test_write_n(dir, ".state.d4E5f6", "", 0);
        {
                _cleanup_(ra_state_freep) RaState *s = NULL;

                ck_assert_int_eq(ra_state_new(&s), 0);
                ck_assert_int_eq(ra_state_save(s, dir, NULL), 0);
        }
        snprintf(path, sizeof(path), "%s/.state.d4E5f6", dir);
        ck_assert_int_eq(access(path, F_OK), -1);
        ck_assert_int_eq(ra_state_tidy("/nonexistent/radaemon"), 0);
        test_rm_rf(dir);
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
        tcase_add_test(tc, test_traced);
        tcase_add_test(tc, test_nul_and_no_newline);
        tcase_add_test(tc, test_save_load);
        tcase_add_test(tc, test_save_fails_cleanly);
        tcase_add_test(tc, test_carry_over);
        tcase_add_test(tc, test_unknown_kept);
        tcase_add_test(tc, test_version);
        tcase_add_test(tc, test_downgrade_upgrade);
        tcase_add_test(tc, test_forget_expired);
        tcase_add_test(tc, test_forget_cap);
        tcase_add_test(tc, test_temporary_mounts);
        tcase_add_test(tc, test_many_entries);
        tcase_add_test(tc, test_load_only);
        tcase_add_test(tc, test_tidy);
        suite_add_tcase(s, tc);

        return test_run(s);
}
