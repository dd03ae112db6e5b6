/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's store (daemon/ra-state-store.c): an entry's life from the first
 * look at a disk to what the next start of the daemon reads back, pins and
 * their rule for a failed save, a state file that cannot be read, and the
 * identities forgotten. The state lives in a temporary directory.
 */
#include "config.h"

#include <check.h>
#include <sys/stat.h>
#include <time.h>

#include "ra-state-store.h"
#include "ra-tune.h"
#include "sysfs-tree.h"
#include "test-core.h"

#define VDA "devices/pci0000:00/0000:00:02.0/virtio1/block/vda"
#define ID "serial:VDA-1"

static TestCore core;

static void setup(void) {
        test_core_init(&core, "plain-vda");
}

static void teardown(void) {
        test_core_done(&core);
}

static const RaStateEntry *entry(const char *identity) {
        return ra_state_find(core.m.state, identity);
}

/* First seen, learned from, saved, read back by the next start, and seen again. */
START_TEST(test_entry_life) {
        RaDisk *d = test_core_add_disk(&core, "vda", VDA, ID);
        const RaStateEntry *e;

        /* Seen: its original is remembered, and waits to be on disk before any write. */
        e = entry(ID);
        ck_assert_ptr_nonnull(e);
        ck_assert(e->has_original);
        ck_assert_uint_eq(e->original_kb, 8192);
        ck_assert_uint_gt(e->seen, 0);
        ck_assert(core.m.state_dirty && core.m.original_unsaved);
        ck_assert(!test_core_state_has(&core, ID));

        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert(!core.m.state_dirty && !core.m.original_unsaved);
        ck_assert(test_core_state_has(&core, "device " ID " original=8192\n"));

        /* Learned: kept, saved at the next flush, not at once. */
        d->model.learned_kb = 256;
        ra_store_learned(&core.m, d);
        ck_assert(core.m.state_dirty && !core.m.original_unsaved);
        ck_assert(!test_core_state_has(&core, "learned="));
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert(test_core_state_has(&core, "device " ID " original=8192 learned=256\n"));

        /* radaemon wrote its value; the next start reads the state back. */
        ra_tune_disk(&core.m, d, "add");
        ck_assert_uint_eq(test_core_knob(&core, VDA), 256);
        test_core_restart(&core);
        e = entry(ID);
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(e->original_kb, 8192);
        ck_assert_uint_eq(e->learned_kb, 256);

        /* Seen again: what it holds now is radaemon's, not its original; what it learned is its start. */
        d = test_core_add_disk(&core, "vda", VDA, ID);
        ck_assert_uint_eq(entry(ID)->original_kb, 8192);
        ck_assert(!core.m.original_unsaved);
        ck_assert_uint_eq(d->model.learned_kb, 256);
}
END_TEST

/* A value radaemon's udev helper wrote before the daemon saw the disk: the helper's word on the original. */
START_TEST(test_original_from_udev_helper) {
        RaDisk *d;

        test_core_set_knob(&core, VDA, 512);
        d = test_core_add_disk(&core, "vda", VDA, ID);
        /* The add above took what sysfs held; the helper's property says what was there before it. */
        core.m.state = ra_state_free(core.m.state);
        ck_assert_int_eq(ra_state_new(&core.m.state), 0);
        d->in.attrs.has_original = true;
        d->in.attrs.original_kb = 8192;
        ra_store_remember_original(&core.m, d);
        ck_assert_uint_eq(entry(ID)->original_kb, 8192);
}
END_TEST

/* The system's own starting value (a FUSE server's answer, a udev rule) replaces the original, durably. */
START_TEST(test_set_original) {
        (void) test_core_add_disk(&core, "vda", VDA, ID);
        ck_assert_int_eq(ra_store_flush(&core.m), 0);

        ra_store_set_original(&core.m, ID, 128);
        ck_assert(core.m.original_unsaved);
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert(test_core_state_has(&core, "original=128"));

        /* The same value again is nothing to save. */
        ra_store_set_original(&core.m, ID, 128);
        ck_assert(!core.m.state_dirty);
}
END_TEST

/* A stored pin outlives the daemon; a runtime one does not. */
START_TEST(test_pins_round_trip) {
        bool changed;

        ck_assert_int_eq(ra_store_pin(&core.m, ID, 1024, true, &changed), 0);
        ck_assert(changed);
        ck_assert(test_core_state_has(&core, "pin=1024"));
        ck_assert_int_eq(ra_store_pin(&core.m, "serial:OTHER", 64, false, &changed), 0);
        ck_assert(changed);
        ck_assert_uint_eq(entry("serial:OTHER")->runtime_pin_kb, 64);
        ck_assert_int_eq(ra_store_pin_swap(&core.m, 0, true, &changed), 0);
        ck_assert(changed);

        /* Pinning it again to the same value changes nothing. */
        ck_assert_int_eq(ra_store_pin(&core.m, ID, 1024, true, &changed), 0);
        ck_assert(!changed);

        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        test_core_restart(&core);
        ck_assert_uint_eq(entry(ID)->pin_kb, 1024);
        ck_assert(!entry("serial:OTHER") || entry("serial:OTHER")->runtime_pin_kb == 0);
        ck_assert_int_eq(core.m.state->swap.pin, 0);

        ck_assert_int_eq(ra_store_unpin(&core.m, ID, &changed), 0);
        ck_assert(changed);
        ck_assert_int_eq(ra_store_unpin_swap(&core.m, &changed), 0);
        ck_assert(changed);
        test_core_restart(&core);
        ck_assert(!entry(ID) || entry(ID)->pin_kb == 0);
        ck_assert_int_eq(core.m.state->swap.pin, -1);

        /* No pin to clear. */
        ck_assert_int_eq(ra_store_unpin(&core.m, "serial:NONE", &changed), 0);
        ck_assert(!changed);
}
END_TEST

/* A stored pin whose save failed before the file was replaced is not a pin. */
START_TEST(test_pin_rolled_back) {
        bool changed = true;

        test_core_break_state_dir(&core);
        ck_assert_int_lt(ra_store_pin(&core.m, ID, 1024, true, &changed), 0);
        ck_assert(!changed);
        ck_assert_uint_eq(entry(ID)->pin_kb, 0);
        ck_assert_ptr_nonnull(core.m.state_error);

        ck_assert_int_lt(ra_store_pin_swap(&core.m, 2, true, &changed), 0);
        ck_assert(!changed);
        ck_assert_int_eq(core.m.state->swap.pin, -1);

        /* A runtime pin needs no save. */
        ck_assert_int_eq(ra_store_pin(&core.m, ID, 64, false, &changed), 0);
        ck_assert(changed);
}
END_TEST

static unsigned manager_changes;
static void count_manager_changes(Manager *m, const char *property) {
        (void) m;
        ck_assert_str_eq(property, "StateError");
        manager_changes++;
}

/* A failed save is told once, and its end once. */
START_TEST(test_state_error) {
        _cleanup_free_ char *state_dir = strdup(core.m.state_dir);

        core.m.on_manager_changed = count_manager_changes;
        manager_changes = 0;
        test_core_break_state_dir(&core);
        core.m.state_dirty = true;
        ck_assert_int_lt(ra_store_flush(&core.m), 0);
        ck_assert_int_lt(ra_store_flush(&core.m), 0);
        ck_assert_uint_eq(manager_changes, 1);
        ck_assert(core.m.state_dirty);

        free(core.m.state_dir);
        core.m.state_dir = TAKE_PTR(state_dir);
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert_uint_eq(manager_changes, 2);
        ck_assert_ptr_null(core.m.state_error);
        ck_assert(!core.m.state_dirty);
}
END_TEST

/* A state file that cannot be read is moved aside, not written over. */
START_TEST(test_unreadable_state) {
        char path[4200];
        struct stat st;

        test_core_stop(&core);
        (void) snprintf(path, sizeof(path), "%s/%s", core.state_dir, RA_STATE_FILE);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        ck_assert_int_eq(ra_store_load(&core.m), 0);
        ck_assert(!core.m.state_frozen);
        (void) snprintf(path, sizeof(path), "%s/%s.unreadable", core.state_dir, RA_STATE_FILE);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));

        core.m.state_dirty = true;
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert(test_core_state_has(&core, "version "));
}
END_TEST

/* Identities not seen for forget_after_days go once every device present is found; pins stay. */
START_TEST(test_forget) {
        char text[512];
        uint64_t old = (uint64_t) time(NULL) - 40 * 24 * 3600;

        (void) snprintf(text, sizeof(text),
                        "version 2\n"
                        "device serial:GONE original=128\n"
                        "more serial:GONE seen=%" PRIu64 "\n"
                        "device serial:PINNED pin=64\n"
                        "more serial:PINNED seen=%" PRIu64 "\n"
                        "device " ID " original=8192\n"
                        "more " ID " seen=%" PRIu64 "\n",
                        old, old, old);
        test_core_stop(&core);
        test_write_n(core.state_dir, RA_STATE_FILE, text, strlen(text));
        ck_assert_int_eq(ra_store_load(&core.m), 0);
        core.m.config->forget_after_days = 30;
        (void) test_core_add_disk(&core, "vda", VDA, ID);

        /* Until coldplug is done, a device not found yet may still be there. */
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert_ptr_nonnull(entry("serial:GONE"));

        core.m.ready = true;
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert_ptr_null(entry("serial:GONE"));
        ck_assert_ptr_nonnull(entry("serial:PINNED"));
        ck_assert_ptr_nonnull(entry(ID));
        ck_assert(!test_core_state_has(&core, "serial:GONE"));
}
END_TEST

/* Swap's learned values, per class, as the disks' are. */
START_TEST(test_swap_learned) {
        ra_store_learned_swap(&core.m, RA_SWAP_CLASS_ROT, 5);
        ra_store_learned_swap(&core.m, _RA_SWAP_CLASS_MAX, 7); /* no such class: ignored */
        ck_assert(core.m.state_dirty);
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        test_core_restart(&core);
        ck_assert_int_eq(core.m.state->swap.learned[RA_SWAP_CLASS_ROT], 5);
}
END_TEST

/* Restore() outlives a restart: the next start observes until a reload. */
START_TEST(test_restored_round_trip) {
        RaDisk *d = test_core_add_disk(&core, "vda", VDA, ID);

        ra_tune_disk(&core.m, d, "add");
        ck_assert_uint_eq(ra_tune_restore_all(&core.m, true, "test"), 1);
        test_core_restart(&core);
        ck_assert(core.m.restored);
        ck_assert(ra_context_observing(&core.m));
}
END_TEST

/* Restore() is in the file at once, for the udev helper; a reload's end of it goes with the next save. */
START_TEST(test_restored_ends) {
        ra_store_set_restored(&core.m, true);
        ck_assert(core.m.restored && ra_context_observing(&core.m));
        ck_assert(!ra_store_pending(&core.m));
        ck_assert(test_core_state_has(&core, "\nrestored"));

        ra_store_set_restored(&core.m, false);
        ck_assert(!core.m.restored);
        ck_assert(ra_store_pending(&core.m));
        ck_assert(test_core_state_has(&core, "\nrestored"));
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert(!test_core_state_has(&core, "\nrestored"));
        test_core_restart(&core);
        ck_assert(!core.m.restored);

        /* Nothing changed: nothing to save. */
        ra_store_set_restored(&core.m, false);
        ck_assert(!ra_store_pending(&core.m));
}
END_TEST

/* What an earlier radaemon kept under a dm device's kernel name moves to its identity once, saved. */
START_TEST(test_carry_over) {
        RaDisk lv = { .in = { .identity = (char *) "dm:LVM-aaaa",
                              .attrs = { .name = (char *) "dm-0", .dm_uuid = (char *) "LVM-aaaa" } } };

        test_write(core.state_dir, RA_STATE_FILE, "device name:dm-0 original=32768 pin=1024\n");
        test_core_restart(&core);

        ck_assert_int_eq(ra_store_carry_over(&core.m, &lv), 1);
        ck_assert(ra_store_pending(&core.m));
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert(test_core_state_has(&core, "device dm:LVM-aaaa original=32768 pin=1024"));
        ck_assert(!test_core_state_has(&core, "name:dm-0"));

        ck_assert_int_eq(ra_store_carry_over(&core.m, &lv), 0);
        ck_assert(!ra_store_pending(&core.m));
}
END_TEST

/* Before radaemon's first write only the originals must be on disk: nothing else is saved for it. */
START_TEST(test_save_originals) {
        RaDisk *d = test_core_add_disk(&core, "vda", VDA, ID);

        ck_assert_int_eq(ra_store_save_originals(&core.m), 0);
        ck_assert(test_core_state_has(&core, "device " ID " original=8192\n"));
        ck_assert(!ra_store_pending(&core.m));

        d->model.learned_kb = 256;
        ra_store_learned(&core.m, d);
        ck_assert_int_eq(ra_store_save_originals(&core.m), 0);
        ck_assert(ra_store_pending(&core.m));
        ck_assert(!test_core_state_has(&core, "learned="));

        /* One that cannot be saved stops the write. */
        ra_store_set_original(&core.m, ID, 128);
        test_core_break_state_dir(&core);
        ck_assert_int_lt(ra_store_save_originals(&core.m), 0);
}
END_TEST

/* Closed, the store holds nothing, and a start reads it all back. */
START_TEST(test_close) {
        (void) test_core_add_disk(&core, "vda", VDA, ID);
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ra_store_close(&core.m);
        ck_assert_ptr_null(core.m.state);
        ck_assert_ptr_null(core.m.state_dir);
        ck_assert(!ra_store_pending(&core.m));
        ck_assert_int_eq(ra_store_load(&core.m), 0);
        ck_assert_uint_eq(entry(ID)->original_kb, 8192);
}
END_TEST

/* What the store keeps, to read: an entry by identity (none for none), and the swap line. */
START_TEST(test_read) {
        (void) test_core_add_disk(&core, "vda", VDA, ID);
        ck_assert_ptr_eq(ra_store_entry(&core.m, ID), entry(ID));
        ck_assert_ptr_null(ra_store_entry(&core.m, NULL));
        ck_assert_ptr_null(ra_store_entry(&core.m, "serial:NONE"));
        ra_store_learned_swap(&core.m, RA_SWAP_CLASS_ZRAM, 0);
        ck_assert_int_eq(ra_store_swap(&core.m)->learned[RA_SWAP_CLASS_ZRAM], 0);
        ck_assert_int_eq(ra_store_swap(&core.m)->learned[RA_SWAP_CLASS_ROT], -1);
}
END_TEST

int main(void) {
        Suite *s = suite_create("store");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_entry_life);
        tcase_add_test(tc, test_original_from_udev_helper);
        tcase_add_test(tc, test_set_original);
        tcase_add_test(tc, test_pins_round_trip);
        tcase_add_test(tc, test_pin_rolled_back);
        tcase_add_test(tc, test_state_error);
        tcase_add_test(tc, test_unreadable_state);
        tcase_add_test(tc, test_forget);
        tcase_add_test(tc, test_swap_learned);
        tcase_add_test(tc, test_restored_round_trip);
        tcase_add_test(tc, test_restored_ends);
        tcase_add_test(tc, test_carry_over);
        tcase_add_test(tc, test_save_originals);
        tcase_add_test(tc, test_close);
        tcase_add_test(tc, test_read);
        suite_add_tcase(s, tc);
        return test_run(s);
}
