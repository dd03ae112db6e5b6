/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of managed objects (daemon/ra-registry.c): added, found,
 * removed, dropped through the tuning path, the sampler told each time, and
 * what is managed said in a line.
 */
#include "config.h"

#include <check.h>
#include <syslog.h>

#include "ra-registry.h"
#include "ra-tune.h"
#include "sysfs-tree.h"
#include "test-core.h"

#define VDA "devices/pci0000:00/0000:00:02.0/virtio1/block/vda"

static TestCore core;
static unsigned changes;

static void count_changes(Manager *m) {
        ck_assert_ptr_eq(m, &core.m);
        changes++;
}

static void setup(void) {
        test_core_init(&core, "plain-vda");
        core.m.on_disks_changed = count_changes;
        changes = 0;
}

static void teardown(void) {
        test_core_done(&core);
}

/* An object without sysfs behind it: the registry needs only its name and kind. */
static RaDisk *add(RaKind kind, const char *name) {
        RaDisk *d;

        ck_assert_int_eq(ra_registry_add(&core.m, kind, name, &d), 0);
        ck_assert_str_eq(d->name, name);
        ck_assert_int_eq(d->kind, kind);
        ck_assert_ptr_eq(d->manager, &core.m);
        return d;
}

START_TEST(test_add_find_remove) {
        RaDisk *a = add(RA_KIND_DISK, "sda"), *b = add(RA_KIND_BDI, "btrfs-1"),
               *c = add(RA_KIND_STACK, "dm-0");

        ck_assert_uint_eq(core.m.n_disks, 3);
        ck_assert_uint_eq(changes, 3);
        ck_assert_ptr_eq(ra_registry_find(&core.m, "sda"), a);
        ck_assert_ptr_eq(ra_registry_find(&core.m, "btrfs-1"), b);
        ck_assert_ptr_eq(ra_registry_find(&core.m, "dm-0"), c);
        ck_assert_ptr_null(ra_registry_find(&core.m, "sdb"));
        ck_assert_ptr_null(ra_registry_find(&core.m, "sd"));

        /* The first out: the others are still found. */
        ra_registry_remove(&core.m, a);
        ck_assert_uint_eq(core.m.n_disks, 2);
        ck_assert_uint_eq(changes, 4);
        ck_assert_ptr_null(ra_registry_find(&core.m, "sda"));
        ck_assert_ptr_eq(ra_registry_find(&core.m, "btrfs-1"), b);
        ck_assert_ptr_eq(ra_registry_find(&core.m, "dm-0"), c);

        /* A name can come back (a re-plug). */
        a = add(RA_KIND_DISK, "sda");
        ck_assert_ptr_eq(ra_registry_find(&core.m, "sda"), a);
        ck_assert_uint_eq(core.m.n_disks, 3);
}
END_TEST

/* Dropped through the tuning path: out of the registry, the sampler told. */
START_TEST(test_forget) {
        RaDisk *d = test_core_add_disk(&core, "vda", VDA, "serial:VDA-1");

        ra_tune_disk(&core.m, d, "add");
        ck_assert(d->published);
        ck_assert_uint_eq(changes, 1);

        ra_tune_forget(&core.m, d, LOG_INFO, "removed.");
        ck_assert_uint_eq(core.m.n_disks, 0);
        ck_assert_ptr_null(ra_registry_find(&core.m, "vda"));
        ck_assert_uint_eq(changes, 2);
        /* What the store knows of it stays, for its next plug. */
        ck_assert_ptr_nonnull(ra_state_find(core.m.state, "serial:VDA-1"));
}
END_TEST

START_TEST(test_describe) {
        char buf[64];

        ra_registry_describe(&core.m, buf, sizeof(buf));
        ck_assert_str_eq(buf, "0 disks");
        (void) add(RA_KIND_DISK, "sda");
        ra_registry_describe(&core.m, buf, sizeof(buf));
        ck_assert_str_eq(buf, "1 disk");
        (void) add(RA_KIND_BDI, "0:52");
        ra_registry_describe(&core.m, buf, sizeof(buf));
        ck_assert_str_eq(buf, "1 disk and 1 bdi");
        (void) add(RA_KIND_DISK, "sdb");
        (void) add(RA_KIND_STACK, "dm-0");
        (void) add(RA_KIND_BDI, "btrfs-1");
        ra_registry_describe(&core.m, buf, sizeof(buf));
        ck_assert_str_eq(buf, "2 disks, 1 stacked device and 2 bdis");
}
END_TEST

/* The devices without a medium, runs of them said by their ends. */
START_TEST(test_describe_empty) {
        static const char *const empty[] = { "loop3", "loop1", "loop10", "loop0",
                                             "loop2", "sr0",   "loop7",  "loop8" };
        char buf[64], small[24];
        RaDisk *d;

        /* Only block devices with size 0 count: a bdi has no size, and sda has a medium. */
        d = add(RA_KIND_DISK, "sda");
        d->in.attrs.size_bytes = 1 << 20;
        (void) add(RA_KIND_BDI, "0:52");
        ck_assert_uint_eq(ra_registry_describe_empty(&core.m, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "");

        for (size_t i = 0; i < ELEMENTSOF(empty); i++)
                (void) add(RA_KIND_DISK, empty[i]);
        ck_assert_uint_eq(ra_registry_describe_empty(&core.m, buf, sizeof(buf)), ELEMENTSOF(empty));
        ck_assert_str_eq(buf, "loop0-loop3, loop7, loop8, loop10, sr0");

        /* Too long for the line: it ends in "...", never in half a name. */
        ck_assert_uint_eq(ra_registry_describe_empty(&core.m, small, sizeof(small)), ELEMENTSOF(empty));
        ck_assert_str_eq(small, "loop0-loop3, loop7, ...");
}
END_TEST

int main(void) {
        Suite *s = suite_create("registry");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_add_find_remove);
        tcase_add_test(tc, test_forget);
        tcase_add_test(tc, test_describe);
        tcase_add_test(tc, test_describe_empty);
        suite_add_tcase(s, tc);
        return test_run(s);
}
