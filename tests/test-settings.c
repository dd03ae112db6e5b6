/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <string.h>

#include "ra-settings.h"
#include "ra-util.h"
#include "test-helpers.h"

/* A configuration from text, through the parser the daemon uses. */
static RaConfig *config_from(const char *text) {
        _cleanup_free_ char *dir = test_mkdtemp();
        _cleanup_(ra_strv_freep) char **errors = NULL;
        char path[4200];
        RaConfig *c = NULL;

        test_write_n(dir, "radaemon.conf", text, strlen(text));
        snprintf(path, sizeof(path), "%s/radaemon.conf", dir);
        ck_assert_int_eq(ra_config_new(&c), 0);
        ck_assert_int_eq(ra_config_parse_file(c, path, &errors), 0);
        test_rm_rf(dir);
        return c;
}

static RaState *state_from(const char *text) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        RaState *s = NULL;

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_parse(s, text, strlen(text), &errors), 0);
        return s;
}

/* The configuration's bounds and pin by name, the stored pin by identity. */
START_TEST(test_config_and_state) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[policy]\n"
                                                             "min_kb = 8\n"
                                                             "[device:sd*]\n"
                                                             "max_kb = 1024\n"
                                                             "[device:sdb]\n"
                                                             "read_ahead_kb = 64\n");
        _cleanup_(ra_state_freep) RaState *s = state_from("device serial:ABC pin=256\n");
        RaSettings st;

        ra_settings_for_device(c, s, "sda", "serial:ABC", &st);
        ck_assert_uint_eq(st.bounds.min_kb, 8);
        ck_assert_uint_eq(st.bounds.max_kb, 1024);
        ck_assert_uint_eq(st.config_kb, 0);
        ck_assert_uint_eq(st.pinned_kb, 256);

        /* The pin follows the identity, not the name. */
        ra_settings_for_device(c, s, "sdb", "serial:XYZ", &st);
        ck_assert_uint_eq(st.config_kb, 64);
        ck_assert_uint_eq(st.pinned_kb, 0);
}
END_TEST

/* Without a state or an identity there is no stored pin, and nothing breaks. */
START_TEST(test_no_state) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[daemon]\ndevices = *\n");
        _cleanup_(ra_state_freep) RaState *s = state_from("device name:sda pin=64\n");
        RaSettings st;

        ra_settings_for_device(c, NULL, "sda", "name:sda", &st);
        ck_assert_uint_eq(st.pinned_kb, 0);
        ra_settings_for_device(c, s, "sda", NULL, &st);
        ck_assert_uint_eq(st.pinned_kb, 0);
        ck_assert_uint_eq(st.bounds.min_kb, 4);
        ck_assert_uint_eq(st.bounds.max_kb, 8192);
}
END_TEST

/* A stored pin wins over everything else, as the daemon and the helper both see it. */
START_TEST(test_decision_with_stored_pin) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[device:loop*]\nread_ahead_kb = 16\n");
        _cleanup_(ra_state_freep) RaState *s = state_from("device loop:/srv/disk.img pin=512\n");
        RaDeviceAttrs a = { .size_bytes = 505 * 1024, .transport = "loop", .pin_kb = 128 };
        RaSettings st;
        RaDecision d;

        ra_settings_for_device(c, s, "loop7", "loop:/srv/disk.img", &st);
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_int_eq(d.source, RA_SOURCE_PINNED);

        ra_settings_for_device(c, s, "loop7", "loop:/srv/other.img", &st);
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, 128);
        ck_assert_int_eq(d.source, RA_SOURCE_UDEV);
}
END_TEST

int main(void) {
        Suite *s = suite_create("settings");
        TCase *tc = tcase_create("gather");

        tcase_add_test(tc, test_config_and_state);
        tcase_add_test(tc, test_no_state);
        tcase_add_test(tc, test_decision_with_stored_pin);
        suite_add_tcase(s, tc);

        return test_run(s);
}
