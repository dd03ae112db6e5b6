/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <string.h>

#include "ra-config.h"
#include "ra-util.h"
#include "test-helpers.h"

/* Parses contents as one file; returns the result and hands out the errors. */
static int parse_text(const char *contents, RaConfig **ret_config, char ***ret_errors) {
        _cleanup_free_ char *dir = test_mkdtemp();
        char path[4200];
        RaConfig *c = NULL;
        int r;

        test_write_n(dir, "radaemon.conf", contents, strlen(contents));
        snprintf(path, sizeof(path), "%s/radaemon.conf", dir);

        ck_assert_int_eq(ra_config_new(&c), 0);
        *ret_errors = NULL;
        r = ra_config_parse_file(c, path, ret_errors);
        test_rm_rf(dir);

        *ret_config = c;
        return r;
}

/* Every error must be "<path>:<line>: ..." for the lines given, in order. */
static void assert_error_lines(char **errors, const unsigned *lines, size_t n) {
        ck_assert_msg(ra_strv_length(errors) == n, "%zu errors, want %zu (first: %s)",
                      ra_strv_length(errors), n, errors && errors[0] ? errors[0] : "none");

        for (size_t i = 0; i < n; i++) {
                char want[32];
                const char *colon = strstr(errors[i], "radaemon.conf:");

                ck_assert_msg(colon, "no file name in '%s'", errors[i]);
                snprintf(want, sizeof(want), "radaemon.conf:%u: ", lines[i]);
                ck_assert_msg(strncmp(colon, want, strlen(want)) == 0, "'%s' is not at line %u", errors[i],
                              lines[i]);
        }
}

START_TEST(test_defaults) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;

        ck_assert_int_eq(ra_config_new(&c), 0);
        ck_assert_uint_eq(ra_strv_length(c->devices), 1);
        ck_assert_str_eq(c->devices[0], "*");
        ck_assert_str_eq(c->ignore[0], "ram*");
        ck_assert_str_eq(c->ignore[1], "zram*");
        ck_assert_int_eq(c->mode, RA_MODE_AUTO);
        ck_assert_uint_eq(c->interval_ms, 1000);
        ck_assert_str_eq(c->state_dir, LOCALSTATEDIR "/lib/radaemon");
        ck_assert_uint_eq(c->bounds.min_kb, 4);
        ck_assert_uint_eq(c->bounds.max_kb, 8192);
        ck_assert(!c->restore_on_exit);
        ck_assert_uint_eq(c->forget_after_days, 365);
        ck_assert_int_eq(c->external, RA_EXTERNAL_YIELD);

        ck_assert(ra_config_manages(c, "sda"));
        ck_assert(!ra_config_manages(c, "zram0"));
        ck_assert(!ra_config_manages(c, "ram3"));
}
END_TEST

START_TEST(test_good_file) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        RaSettings s;
        int r;

        r = parse_text("# a comment\n"
                       "; another\n"
                       "\n"
                       "[daemon]\n"
                       "devices = sd* nvme*   # the real disks\n"
                       "  ignore = sdz\n"
                       "mode = observe ; inline\n"
                       "interval_ms = 250\n"
                       "state_dir = /tmp/ra-state\n"
                       "restore_on_exit = yes\n"
                       "forget_after_days = 0\n"
                       "\n"
                       "[policy]\n"
                       "min_kb = 16\n"
                       "max_kb = 4096\n"
                       "external_changes = reassert\n"
                       "open_files = leave\n"
                       "[device:sd*]\n"
                       "max_kb = 1024\n"
                       "[device:sdb]\n"
                       "read_ahead_kb = 64\n"
                       "open_files = follow\n",
                       &c, &errors);
        ck_assert_msg(r == 0, "parse failed: %s", errors && errors[0] ? errors[0] : "?");
        ck_assert_uint_eq(ra_strv_length(c->devices), 2);
        ck_assert_str_eq(c->devices[1], "nvme*");
        ck_assert_str_eq(c->ignore[0], "sdz");
        ck_assert_int_eq(c->mode, RA_MODE_OBSERVE);
        ck_assert_uint_eq(c->interval_ms, 250);
        ck_assert_str_eq(c->state_dir, "/tmp/ra-state");
        ck_assert(c->restore_on_exit);
        ck_assert_uint_eq(c->forget_after_days, 0);
        ck_assert_int_eq(c->external, RA_EXTERNAL_REASSERT);

        ck_assert(ra_config_manages(c, "sda"));
        ck_assert(!ra_config_manages(c, "sdz"));
        ck_assert(!ra_config_manages(c, "vda"));

        ra_config_device_settings(c, "sda", &s);
        ck_assert_uint_eq(s.bounds.min_kb, 16);
        ck_assert_uint_eq(s.bounds.max_kb, 1024);
        ck_assert_uint_eq(s.config_kb, 0);

        ck_assert(s.leave_open_files);

        ra_config_device_settings(c, "sdb", &s);
        ck_assert_uint_eq(s.config_kb, 64);
        ck_assert(!s.leave_open_files);

        ra_config_device_settings(c, "nvme0n1", &s);
        ck_assert_uint_eq(s.bounds.max_kb, 4096);
}
END_TEST

/* The file we ship must parse and must say what the defaults are. */
START_TEST(test_shipped_file) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL, *defaults = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        int r;

        ck_assert_int_eq(ra_config_new(&c), 0);
        ck_assert_int_eq(ra_config_new(&defaults), 0);
        r = ra_config_parse_file(c, ABS_TOP_BUILDDIR "/etc/radaemon.conf", &errors);
        ck_assert_msg(r == 0, "shipped file: %s", errors && errors[0] ? errors[0] : "?");

        ck_assert_uint_eq(c->interval_ms, defaults->interval_ms);
        ck_assert_int_eq(c->mode, defaults->mode);
        ck_assert_uint_eq(c->bounds.min_kb, defaults->bounds.min_kb);
        ck_assert_uint_eq(c->bounds.max_kb, defaults->bounds.max_kb);
        ck_assert_int_eq(c->restore_on_exit, defaults->restore_on_exit);
        ck_assert_uint_eq(c->forget_after_days, defaults->forget_after_days);
        ck_assert_int_eq(c->external, defaults->external);
        ck_assert_int_eq(c->open_files, defaults->open_files);
        ck_assert_uint_eq(ra_strv_length(c->ignore), ra_strv_length(defaults->ignore));
        ck_assert_uint_eq(ra_strv_length(c->bdis), 1);
        ck_assert_str_eq(c->bdis[0], defaults->bdis[0]);
        ck_assert_str_eq(c->state_dir, defaults->state_dir);
        ck_assert_uint_eq(c->n_sections, 0);
}
END_TEST

START_TEST(test_bad_lines) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        /* Line 16 sits in the unknown section, reported once at its header. */
        const unsigned lines[] = { 1, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 17, 19 };
        int r;

        r = parse_text("early = 1\n"                 /* 1: outside a section */
                       "[daemon]\n"                  /* 2 */
                       "mode = fast\n"               /* 3 */
                       "interval_ms = 10\n"          /* 4: too short */
                       "interval_ms = soon\n"        /* 5 */
                       "state_dir = relative/path\n" /* 6 */
                       "devices =\n"                 /* 7 */
                       "colour = blue\n"             /* 8: unknown key */
                       "just some words\n"           /* 9: no '=' */
                       "[policy\n"                   /* 10: unclosed */
                       "[policy]\n"                  /* 11 */
                       "min_kb = 3\n"                /* 12: not whole pages */
                       "max_kb = 8192\n"             /* 13 */
                       "max_kb = 0\n"                /* 14 */
                       "[extras]\n"                  /* 15: unknown section */
                       "anything = goes\n"           /* 16: reported at the header */
                       "[device:]\n"                 /* 17: no glob */
                       "[device:sd*]\n"              /* 18 */
                       "speed = 1\n",                /* 19: unknown key */
                       &c, &errors);
        ck_assert_int_eq(r, -EINVAL);
        assert_error_lines(errors, lines, ELEMENTSOF(lines));

        /* The messages say what is wrong, not only where. */
        ck_assert_ptr_nonnull(strstr(errors[1], "mode must be 'auto' or 'observe', not 'fast'"));
        ck_assert_ptr_nonnull(strstr(errors[9], "min_kb must be a multiple of 4"));
        ck_assert_ptr_nonnull(strstr(errors[11], "unknown section [extras]"));
}
END_TEST

START_TEST(test_long_line) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        char text[1024];
        const unsigned lines[] = { 2 };

        snprintf(text, sizeof(text), "[daemon]\ndevices = %0500d\nmode = auto\n", 7);
        ck_assert_int_eq(parse_text(text, &c, &errors), -EINVAL);
        assert_error_lines(errors, lines, 1);
        ck_assert_ptr_nonnull(strstr(errors[0], "longer than"));
        /* What follows the long line is still read, on its own line. */
        ck_assert_int_eq(c->mode, RA_MODE_AUTO);
}
END_TEST

START_TEST(test_bad_choices) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        const unsigned lines[] = { 2, 4, 6, 7, 9 };

        ck_assert_int_eq(parse_text("[daemon]\n"
                                    "restore_on_exit = maybe\n"
                                    "[policy]\n"
                                    "external_changes = fight\n"
                                    "[daemon]\nforget_after_days = 36501\n"
                                    "forget_after_days = -1\n"
                                    "[device:sd*]\nopen_files = always\n",
                                    &c, &errors),
                         -EINVAL);
        assert_error_lines(errors, lines, ELEMENTSOF(lines));
        ck_assert_ptr_nonnull(
                strstr(errors[0], "restore_on_exit must be a boolean (yes or no), not 'maybe'"));
        ck_assert_ptr_nonnull(
                strstr(errors[1], "external_changes must be 'yield' or 'reassert', not 'fight'"));
        ck_assert_ptr_nonnull(
                strstr(errors[2], "forget_after_days must be a number of days from 0 (never) to 36500"));
        ck_assert_ptr_nonnull(strstr(errors[4], "open_files must be 'follow' or 'leave', not 'always'"));
        ck_assert_uint_eq(c->forget_after_days, 365);
        ck_assert_str_eq(ra_external_to_string(RA_EXTERNAL_REASSERT), "reassert");
}
END_TEST

/* Long lists of devices continue on indented lines; other keys do not. */
START_TEST(test_continuation) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL, *d = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL, **errors2 = NULL;
        const unsigned lines[] = { 3, 5 };

        ck_assert_int_eq(parse_text("[daemon]\n"
                                    "devices = loop1 loop2\n"
                                    "    loop3 loop4   # more\n"
                                    "\tloop5\n"
                                    "ignore = loop2\n",
                                    &c, &errors),
                         0);
        ck_assert_uint_eq(ra_strv_length(c->devices), 5);
        ck_assert_str_eq(c->devices[4], "loop5");
        ck_assert(ra_config_manages(c, "loop4"));
        ck_assert(!ra_config_manages(c, "loop2"));

        ck_assert_int_eq(parse_text("[policy]\n"
                                    "min_kb = 8\n"
                                    "    16\n" /* 3: min_kb takes one value */
                                    "\n"
                                    "    loop9\n", /* 5: nothing to continue after a blank line */
                                    &d, &errors2),
                         -EINVAL);
        assert_error_lines(errors2, lines, ELEMENTSOF(lines));
        ck_assert_ptr_nonnull(strstr(errors2[0], "only devices, ignore and bdis continue"));
        ck_assert_uint_eq(d->bounds.min_kb, 8);
}
END_TEST

/* bdis= and [bdi:GLOB] match a bdi's name, mount point or file system type; [device:…] never does. */
START_TEST(test_bdi_sections) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL, *d = NULL, *e = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL, **errors2 = NULL;
        const char *media[] = { "btrfs-7", "/srv/media", "btrfs", NULL };
        const char *sshfs[] = { "0:52", "/home/me/remote", "fuse.sshfs", NULL };
        const char *other[] = { "0:60", "/mnt/x", "nfs4", NULL };
        RaSettings s;

        ck_assert_int_eq(parse_text("[daemon]\n"
                                    "bdis = /srv/* fuse.*\n"
                                    "[device:btrfs*]\n"
                                    "read_ahead_kb = 8\n"
                                    "[bdi:/srv/media]\n"
                                    "read_ahead_kb = 2048\n"
                                    "[bdi:fuse.*]\n"
                                    "max_kb = 512\n",
                                    &c, &errors),
                         0);
        ck_assert(ra_config_manages_bdi(c, media));
        ck_assert(ra_config_manages_bdi(c, sshfs));
        ck_assert(!ra_config_manages_bdi(c, other));

        ra_config_bdi_settings(c, media, &s);
        ck_assert_uint_eq(s.config_kb, 2048);
        ra_config_bdi_settings(c, sshfs, &s);
        ck_assert_uint_eq(s.config_kb, 0);
        ck_assert_uint_eq(s.bounds.max_kb, 512);
        /* A disk's sections are the disks': "btrfs*" above is on kernel names. */
        ra_config_device_settings(c, "btrfs-7", &s);
        ck_assert_uint_eq(s.config_kb, 8);
        ra_config_device_settings(c, "sda", &s);
        ck_assert_uint_eq(s.config_kb, 0);

        /* Every bdi by default; none with an empty list. */
        ck_assert_int_eq(parse_text("[daemon]\nbdis =\n", &d, &errors2), 0);
        ck_assert(!ra_config_manages_bdi(d, media));
        ck_assert_int_eq(parse_text("", &e, &errors2), 0);
        ck_assert(ra_config_manages_bdi(e, other));

        ra_strv_free(errors2);
        errors2 = NULL;
        ra_config_free(d);
        d = NULL;
        ck_assert_int_eq(parse_text("[bdi:]\n"
                                    "read_ahead_kb = 64\n"
                                    "[bdi:x]\n"
                                    "size = 3\n",
                                    &d, &errors2),
                         -EINVAL);
        ck_assert_uint_eq(ra_strv_length(errors2), 2);
        ck_assert_ptr_nonnull(strstr(errors2[0], "[bdi:GLOB] needs a glob"));
        ck_assert_ptr_nonnull(strstr(errors2[1], "unknown key 'size' in [bdi:x]"));
}
END_TEST

START_TEST(test_bounds_crossed) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL, *d = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL, **errors2 = NULL;
        const unsigned line3[] = { 3 };

        ck_assert_int_eq(parse_text("[policy]\nmax_kb = 64\nmin_kb = 128\n", &c, &errors), -EINVAL);
        assert_error_lines(errors, line3, 1);
        ck_assert_ptr_nonnull(strstr(errors[0], "min_kb 128 is larger than max_kb 64"));

        ck_assert_int_eq(parse_text("[device:sd*]\nmin_kb = 128\nmax_kb = 64\n", &d, &errors2), -EINVAL);
        assert_error_lines(errors2, line3, 1);
}
END_TEST

/* ra_config_read_lenient() of contents as one file. */
static int read_lenient(const char *contents, RaConfig **ret, char ***errors, char ***dropped) {
        _cleanup_free_ char *dir = test_mkdtemp();
        char path[4200];
        int r;

        test_write_n(dir, "radaemon.conf", contents, strlen(contents));
        snprintf(path, sizeof(path), "%s/radaemon.conf", dir);
        *errors = *dropped = NULL;
        r = ra_config_read_lenient(path, ret, errors, dropped);
        test_rm_rf(dir);
        return r;
}

/* At start a bad line costs its section: a bad object section is left out, a bad global key observes. */
START_TEST(test_lenient) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL, **dropped = NULL;

        ck_assert_int_eq(read_lenient("[daemon]\ndevices = sd*\n"
                                      "[device:sda]\nread_ahead_kb = 5\n"
                                      "[bdi:btrfs-*]\nmax_kb = 512\n"
                                      "[path:/srv]\nspeed = 8\n"
                                      "[device:]\nread_ahead_kb = 64\n"
                                      "[device:sdb]\nread_ahead_kb = 64\n",
                                      &c, &errors, &dropped),
                         1);
        ck_assert_uint_eq(ra_strv_length(errors), 3);
        ck_assert_uint_eq(ra_strv_length(dropped), 2);
        ck_assert_str_eq(dropped[0], "[device:sda]");
        ck_assert_str_eq(dropped[1], "[path:/srv]");
        /* The good sections in their order; the global ones as written, so it tunes. */
        ck_assert_uint_eq(c->n_sections, 2);
        ck_assert_str_eq(c->sections[0].glob, "btrfs-*");
        ck_assert_str_eq(c->sections[1].glob, "sdb");
        ck_assert_uint_eq(c->sections[1].read_ahead_kb, 64);
        ck_assert(!c->invalid_global);
        ck_assert_int_eq(c->mode, RA_MODE_AUTO);
        c = ra_config_free(c);
        errors = ra_strv_free(errors);
        dropped = ra_strv_free(dropped);

        /* A bad global key: its default, and observe mode, sections kept. */
        ck_assert_int_eq(read_lenient("[daemon]\ndevices = sd*\ninterval_ms = often\n"
                                      "[device:sdb]\nread_ahead_kb = 64\n",
                                      &c, &errors, &dropped),
                         1);
        ck_assert(c->invalid_global);
        ck_assert_int_eq(c->mode, RA_MODE_OBSERVE);
        ck_assert_uint_eq(c->n_sections, 1);
        ck_assert_ptr_null(dropped);
        c = ra_config_free(c);
        errors = ra_strv_free(errors);

        /* min above max: a global error too. */
        ck_assert_int_eq(read_lenient("[policy]\nmin_kb = 512\nmax_kb = 256\n", &c, &errors, &dropped), 1);
        ck_assert_int_eq(c->mode, RA_MODE_OBSERVE);
        c = ra_config_free(c);
        errors = ra_strv_free(errors);

        /* A clean file: 0, nothing dropped. */
        ck_assert_int_eq(read_lenient("[daemon]\ndevices = sd*\n", &c, &errors, &dropped), 0);
        ck_assert_ptr_null(errors);
        ck_assert_int_eq(c->mode, RA_MODE_AUTO);
}
END_TEST

START_TEST(test_missing_file) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;

        ck_assert_int_eq(ra_config_new(&c), 0);
        ck_assert_int_eq(ra_config_parse_file(c, "/nonexistent/radaemon.conf", &errors), -ENOENT);
        ck_assert_uint_eq(ra_strv_length(errors), 1);
        ck_assert_str_eq(errors[0], "/nonexistent/radaemon.conf: No such file or directory");
}
END_TEST

/* Drop-ins are read in lexical order after the main file; later values win. */
START_TEST(test_dropins) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *dir = test_mkdtemp();
        char main_path[4200], dropins[4200];

        test_write(dir, "radaemon.conf", "[daemon]\ninterval_ms = 500\nmode = observe\n");
        test_write(dir, "radaemon.conf.d/20-b.conf", "[daemon]\ninterval_ms = 3000\n");
        test_write(dir, "radaemon.conf.d/10-a.conf", "[daemon]\ninterval_ms = 2000\nmode = auto\n");
        test_write(dir, "radaemon.conf.d/30-ignored.txt", "this is not a config file\n");
        snprintf(main_path, sizeof(main_path), "%s/radaemon.conf", dir);
        snprintf(dropins, sizeof(dropins), "%s/radaemon.conf.d", dir);

        ck_assert_int_eq(ra_config_new(&c), 0);
        ck_assert_int_eq(ra_config_load(c, main_path, dropins, &errors), 0);
        ck_assert_uint_eq(c->interval_ms, 3000);
        ck_assert_int_eq(c->mode, RA_MODE_AUTO);

        test_rm_rf(dir);
}
END_TEST

/* Min in one file, max in a later one: the crossing names the later line. */
START_TEST(test_dropin_bounds_crossed) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *dir = test_mkdtemp();
        char main_path[4200], dropins[4200];

        test_write(dir, "radaemon.conf", "[policy]\nmin_kb = 256\n");
        test_write(dir, "radaemon.conf.d/10-small.conf", "\n[policy]\nmax_kb = 64\n");
        snprintf(main_path, sizeof(main_path), "%s/radaemon.conf", dir);
        snprintf(dropins, sizeof(dropins), "%s/radaemon.conf.d", dir);

        ck_assert_int_eq(ra_config_new(&c), 0);
        ck_assert_int_eq(ra_config_load(c, main_path, dropins, &errors), -EINVAL);
        ck_assert_uint_eq(ra_strv_length(errors), 1);
        ck_assert_ptr_nonnull(strstr(errors[0], "10-small.conf:3: min_kb 256 is larger"));

        test_rm_rf(dir);
}
END_TEST

START_TEST(test_mode_names) {
        ck_assert_str_eq(ra_mode_to_string(RA_MODE_AUTO), "auto");
        ck_assert_str_eq(ra_mode_to_string(RA_MODE_OBSERVE), "observe");
        ck_assert_ptr_null(ra_mode_to_string(_RA_MODE_MAX));
}
END_TEST

int main(void) {
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_good_file);
        tcase_add_test(tc, test_shipped_file);
        tcase_add_test(tc, test_bad_lines);
        tcase_add_test(tc, test_long_line);
        tcase_add_test(tc, test_bad_choices);
        tcase_add_test(tc, test_continuation);
        tcase_add_test(tc, test_bdi_sections);
        tcase_add_test(tc, test_bounds_crossed);
        tcase_add_test(tc, test_missing_file);
        tcase_add_test(tc, test_lenient);
        tcase_add_test(tc, test_dropins);
        tcase_add_test(tc, test_dropin_bounds_crossed);
        tcase_add_test(tc, test_mode_names);
        suite_add_tcase(s, tc);

        return test_run(s);
}
