/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
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

/* A disk's settings, by its kernel name and identity (NULL: none). */
static void for_device(const RaConfig *c, const RaState *s, const char *name, const char *identity,
                       RaSettings *ret) {
        const RaDeviceAttrs a = { .name = (char *) name };

        ra_settings_build(
                c, s,
                &(RaSettingsInput){
                        .kind = RA_SETTINGS_DISK, .attrs = &a, .identity = identity, .name = name },
                ret);
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

        for_device(c, s, "sda", "serial:ABC", &st);
        ck_assert_uint_eq(st.bounds.min_kb, 8);
        ck_assert_uint_eq(st.bounds.max_kb, 1024);
        ck_assert_uint_eq(st.config_kb, 0);
        ck_assert_uint_eq(st.pinned_kb, 256);

        /* The pin follows the identity, not the name. */
        for_device(c, s, "sdb", "serial:XYZ", &st);
        ck_assert_uint_eq(st.config_kb, 64);
        ck_assert_uint_eq(st.pinned_kb, 0);
}
END_TEST

/* Without a state or an identity there is no stored pin, and nothing breaks. */
START_TEST(test_no_state) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[daemon]\ndevices = *\n");
        _cleanup_(ra_state_freep) RaState *s = state_from("device name:sda pin=64\n");
        RaSettings st;

        for_device(c, NULL, "sda", "name:sda", &st);
        ck_assert_uint_eq(st.pinned_kb, 0);
        for_device(c, s, "sda", NULL, &st);
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

        for_device(c, s, "loop7", "loop:/srv/disk.img", &st);
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_int_eq(d.source, RA_SOURCE_PINNED);

        for_device(c, s, "loop7", "loop:/srv/other.img", &st);
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, 128);
        ck_assert_int_eq(d.source, RA_SOURCE_UDEV);
}
END_TEST

/* A stack of two disks at the bottom, as test-stack.c builds them: an md RAID0 of 1 TiB each. */
static RaStack *raid0_of_two(void) {
        RaStack *s = calloc(1, sizeof(RaStack));

        ck_assert_ptr_nonnull(s);
        s->devices = calloc(3, sizeof(RaStackDevice));
        s->leaves = calloc(2, sizeof(size_t));
        ck_assert(s->devices && s->leaves);
        s->n_devices = 3;
        s->devices[0] = (RaStackDevice){ .name = strdup("md127"),
                                         .kind = RA_STACK_MD,
                                         .md_level = RA_MD_LEVEL_RAID0,
                                         .md_raid_disks = 2,
                                         .md_data_disks = 2,
                                         .size_bytes = UINT64_C(1) << 41 };
        s->devices[0].slaves = calloc(2, sizeof(RaStackSlave));
        ck_assert_ptr_nonnull(s->devices[0].slaves);
        s->devices[0].n_slaves = 2;
        for (size_t i = 0; i < 2; i++) {
                char name[16];

                snprintf(name, sizeof(name), "d%zu", i);
                s->devices[i + 1] = (RaStackDevice){ .name = strdup(name), .size_bytes = UINT64_C(1) << 40 };
                s->devices[0].slaves[i] = (RaStackSlave){ .name = strdup(name), .device = i + 1 };
                s->leaves[s->n_leaves++] = i + 1;
        }
        return s;
}

static const RaDeviceAttrs disk_attrs = { .name = (char *) "sda", .size_bytes = UINT64_C(1) << 40 };

/* A disk: its own attributes; what this run learned and yields to is newer than the store. */
START_TEST(test_build_disk) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[device:sd*]\nmax_kb = 2048\n");
        _cleanup_(ra_state_freep) RaState *s = state_from("device serial:A learned=512\n");
        RaSettingsRun run = { .learned_kb = 256, .learned_reason = "Reads in order.", .external = true };
        RaSettingsInput in = {
                .kind = RA_SETTINGS_DISK, .attrs = &disk_attrs, .identity = "serial:A", .name = "sda"
        };
        RaSettings st;
        RaDecision d;

        /* The udev helper: what the store keeps. */
        ra_settings_build(c, s, &in, &st);
        ck_assert_uint_eq(st.bounds.max_kb, 2048);
        ck_assert_uint_eq(st.learned_kb, 512);
        ck_assert(!st.external);
        ck_assert(!st.has_prior);
        ra_policy_decide(&disk_attrs, &st, &d);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_int_eq(d.source, RA_SOURCE_LEARNED);

        /* The daemon: this run's, even when it has learned nothing (another medium behind the name). */
        in.run = &run;
        ra_settings_build(c, s, &in, &st);
        ck_assert_uint_eq(st.learned_kb, 256);
        ck_assert_str_eq(st.learned_reason, "Reads in order.");
        ck_assert(st.external);
        run = (RaSettingsRun){};
        ra_settings_build(c, s, &in, &st);
        ck_assert_uint_eq(st.learned_kb, 0);
}
END_TEST

/* radaemon and its helper take a block device's kind from its stack read alike. */
START_TEST(test_block_kind) {
        ck_assert_int_eq(ra_settings_block_kind(1), RA_SETTINGS_STACK);
        ck_assert_int_eq(ra_settings_block_kind(-EAGAIN), RA_SETTINGS_STACK);
        ck_assert_int_eq(ra_settings_block_kind(0), RA_SETTINGS_DISK);
        ck_assert_int_eq(ra_settings_block_kind(-ELOOP), RA_SETTINGS_DISK);
}
END_TEST

/* A stacked device: its leaves' prior when the stack is settled, nothing while it is not. */
START_TEST(test_build_stack) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[daemon]\ndevices = *\n");
        _cleanup_(ra_stack_freep) RaStack *stack = raid0_of_two();
        const RaDeviceAttrs a = { .name = (char *) "md127", .size_bytes = UINT64_C(1) << 41 };
        uint32_t leaf_kb[2] = { 512, 512 };
        RaSettingsInput in = { .kind = RA_SETTINGS_STACK,
                               .attrs = &a,
                               .identity = "md:X",
                               .name = "md127",
                               .stack_read = 1,
                               .stack = stack,
                               .leaf_kb = leaf_kb };
        RaSettings st;
        RaDecision d;

        ra_settings_build(c, NULL, &in, &st);
        ck_assert(st.has_prior);
        ck_assert_uint_gt(st.prior.kb, 0);
        ck_assert_int_eq(st.prior.source, RA_SOURCE_PRIOR);
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, st.prior.kb);

        /* Being built or torn down: nothing is written until an event brings it settled. */
        in.stack_read = -EAGAIN;
        in.stack = NULL;
        ra_settings_build(c, NULL, &in, &st);
        ck_assert(st.has_prior);
        ck_assert_uint_eq(st.prior.kb, 0);

        /* A stack that cannot be read: the device's own attributes. */
        in.stack_read = -ELOOP;
        ra_settings_build(c, NULL, &in, &st);
        ck_assert(!st.has_prior);
}
END_TEST

/* A stored pin and the configuration's bounds apply to a stack as to a disk, in the helper as in radaemon.
 */
START_TEST(test_build_stack_pin) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[device:md*]\nmax_kb = 64\n");
        _cleanup_(ra_state_freep) RaState *s = state_from("device md:X pin=1024\n");
        _cleanup_(ra_stack_freep) RaStack *stack = raid0_of_two();
        const RaDeviceAttrs a = { .name = (char *) "md127", .size_bytes = UINT64_C(1) << 41 };
        uint32_t leaf_kb[2] = { 512, 512 };
        RaSettingsInput in = { .kind = RA_SETTINGS_STACK,
                               .attrs = &a,
                               .identity = "md:X",
                               .name = "md127",
                               .stack_read = 1,
                               .stack = stack,
                               .leaf_kb = leaf_kb };
        RaSettings st;
        RaDecision d;

        ra_settings_build(c, s, &in, &st);
        ck_assert(st.has_prior);
        ck_assert_uint_le(st.prior.kb, 64);
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, 1024);
        ck_assert_int_eq(d.source, RA_SOURCE_PINNED);

        ra_settings_build(c, NULL, &in, &st);
        ra_policy_decide(&a, &st, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_PRIOR);
        ck_assert_uint_le(d.kb, 64);
}
END_TEST

/* A bdi: [bdi:GLOB] by name, mount point or type; its prior from its kind, within udev's bounds. */
START_TEST(test_build_bdi) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[bdi:/srv/media]\nmax_kb = 8192\n"
                                                             "[device:*]\nmax_kb = 16\n");
        RaBdi nfs = { .name = (char *) "0:52",
                      .kind = RA_BDI_NFS,
                      .fs_type = (char *) "nfs4",
                      .mountpoint = (char *) "/srv/media",
                      .rsize_kb = 64 };
        RaBdi fuse = { .name = (char *) "0:60",
                       .kind = RA_BDI_FUSE,
                       .fs_type = (char *) "fuse.sshfs",
                       .mountpoint = (char *) "/mnt/remote" };
        RaDeviceAttrs a = { .name = (char *) "0:52" };
        RaSettingsInput in = {
                .kind = RA_SETTINGS_BDI, .attrs = &a, .identity = "nfs:x", .bdi = &nfs, .server_kb = 128
        };
        RaSettings st;

        ra_settings_build(c, NULL, &in, &st);
        /* [device:*] is never a bdi's. */
        ck_assert_uint_eq(st.bounds.max_kb, 8192);
        ck_assert(st.has_prior);
        ck_assert_uint_eq(st.prior.kb, 15 * 64);

        /* RADAEMON_MAX_KB from udev bounds the bdi's prior too. */
        a.max_kb = 256;
        ra_settings_build(c, NULL, &in, &st);
        ck_assert_uint_eq(st.prior.kb, 256);

        /* FUSE: what its server left. */
        a.max_kb = 0;
        in.bdi = &fuse;
        in.server_kb = 32;
        ra_settings_build(c, NULL, &in, &st);
        ck_assert_uint_eq(st.bounds.max_kb, c->bounds.max_kb);
        ck_assert_uint_eq(st.prior.kb, 32);
}
END_TEST

/* The udev helper's btrfs, being mounted: named and typed as radaemon names it, so the same sections match.
 */
START_TEST(test_build_btrfs_mounting) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[bdi:btrfs]\nread_ahead_kb = 2048\n");
        _cleanup_(ra_state_freep) RaState *s = state_from("device btrfs:U learned=1024\n");
        RaBdi b = { .name = (char *) "btrfs-3", .kind = RA_BDI_BTRFS, .fs_type = (char *) "btrfs" };
        RaDeviceAttrs a = { .name = (char *) "btrfs-3", .size_bytes = UINT64_C(1) << 30 };
        RaSettingsInput in = { .kind = RA_SETTINGS_BDI, .attrs = &a, .identity = "btrfs:U", .bdi = &b };
        RaSettings st;
        RaDecision d;

        ra_settings_build(c, s, &in, &st);
        ck_assert_uint_eq(st.config_kb, 2048);
        ck_assert_uint_eq(st.learned_kb, 1024);
        ck_assert(st.has_prior);
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, 2048);
        ck_assert_int_eq(d.source, RA_SOURCE_CONFIG);
}
END_TEST

/*
 * A disk's calibration: above its prior, below a fleet's value and what was
 * learned; the udev helper, which builds the same settings, decides alike.
 * A stacked device is decided from its leaves, never from a calibration.
 */
START_TEST(test_build_calibrated) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("");
        _cleanup_(ra_state_freep) RaState *s =
                state_from("device wwn:0x5 calibrated=1764150000:250:263671:0:4/15723,1024/240000\n"
                           "device wwn:0x6 learned=256 calibrated=1764150000:250:263671:0:4/15723\n");
        RaDeviceAttrs a = { .name = (char *) "sdb",
                            .size_bytes = UINT64_C(22000000000),
                            .read_ahead_kb = 128 };
        RaSettingsInput in = { .kind = RA_SETTINGS_DISK, .attrs = &a, .identity = "wwn:0x5" };
        RaSettings st;
        RaDecision d;

        ra_settings_build(c, s, &in, &st);
        ck_assert(st.has_calibrated);
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, 2048);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_msg(strncmp(d.reason, "Calibrated: 250 us a command", 28) == 0, "%s", d.reason);

        /* A fleet's value for the model comes first: it saw the work, the calibration only the device. */
        a.fleet_kb = 512;
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_int_eq(d.source, RA_SOURCE_FLEET);
        a.fleet_kb = 0;

        /* What this device learned comes before both. */
        in.identity = "wwn:0x6";
        ra_settings_build(c, s, &in, &st);
        ra_policy_decide(&a, &st, &d);
        ck_assert_uint_eq(d.kb, 256);
        ck_assert_int_eq(d.source, RA_SOURCE_LEARNED);

        /* Nothing stored: the prior. */
        in.identity = "wwn:0x7";
        ra_settings_build(c, s, &in, &st);
        ck_assert(!st.has_calibrated);
        ra_policy_decide(&a, &st, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_PRIOR);

        /* A stack under the same identity: its leaves decide. */
        in.identity = "wwn:0x5";
        in.kind = RA_SETTINGS_STACK;
        ra_settings_build(c, s, &in, &st);
        ck_assert(!st.has_calibrated);
}
END_TEST

/* Swap: [swap], the pin in force, and what this run knows. */
START_TEST(test_build_swap) {
        _cleanup_(ra_config_freep) RaConfig *c = config_from("[swap]\npage_cluster = 4\n");
        _cleanup_(ra_config_freep) RaConfig *none = config_from("[swap]\nmanage = no\n");
        _cleanup_(ra_state_freep) RaState *s = state_from("swap pin=2\n");
        RaSwapRun run = {
                .learned = 5, .learned_reason = "Swapped in in order.", .external = true, .current = 3
        };
        RaSwapSettings st;

        ra_settings_build_swap(c, s, &run, &st);
        ck_assert(st.manage);
        ck_assert_int_eq(st.config, 4);
        ck_assert_int_eq(st.pinned, 2);
        ck_assert_int_eq(st.learned, 5);
        ck_assert_str_eq(st.learned_reason, "Swapped in in order.");
        ck_assert(st.external);
        ck_assert_int_eq(st.current, 3);

        ra_settings_build_swap(none, NULL, &run, &st);
        ck_assert(!st.manage);
        ck_assert_int_eq(st.config, -1);
        ck_assert_int_eq(st.pinned, -1);
}
END_TEST

int main(void) {
        Suite *s = suite_create("settings");
        TCase *tc = tcase_create("gather");

        tcase_add_test(tc, test_config_and_state);
        tcase_add_test(tc, test_no_state);
        tcase_add_test(tc, test_decision_with_stored_pin);
        tcase_add_test(tc, test_build_disk);
        tcase_add_test(tc, test_block_kind);
        tcase_add_test(tc, test_build_stack);
        tcase_add_test(tc, test_build_stack_pin);
        tcase_add_test(tc, test_build_bdi);
        tcase_add_test(tc, test_build_btrfs_mounting);
        tcase_add_test(tc, test_build_calibrated);
        tcase_add_test(tc, test_build_swap);
        suite_add_tcase(s, tc);

        return test_run(s);
}
