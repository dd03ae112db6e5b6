/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vm.page-cluster through the tuning path (daemon/ra-tune-swap.c over
 * ra-tune-knob.c), as the disks' windows go: its original saved through the
 * store before the first write, somebody else's writes and the one reassert
 * rule, a pin, and the original put back. The sysctl is a file of the
 * test's own (RaSwapWatch.sysctl_path), one zram area in use.
 */
#include "config.h"

#include <check.h>

#include "ra-swapwatch.h"
#include "ra-tune-swap.h"
#include "test-core.h"

static TestCore core;
static RaSwapWatch *w;

/* What the kernel holds until radaemon writes: its default. */
#define ORIGINAL 3

static int page_cluster(void) {
        return (int) test_core_read(&core, "page-cluster");
}

static void set_page_cluster(int value) {
        test_core_write(&core, "page-cluster", (uint32_t) value);
}

/* What ra_swapwatch_start() sets up and the watcher sees of one zram area, without /proc. */
static void setup(void) {
        test_core_init(&core, NULL);
        set_page_cluster(ORIGINAL);

        w = calloc(1, sizeof(*w));
        ck_assert_ptr_nonnull(w);
        core.m.swap = w;
        w->manager = &core.m;
        w->sysctl_path = test_core_path(&core, "page-cluster");
        w->current = ra_tune_swap_read(w);
        ck_assert_int_eq(w->current, ORIGINAL);
        w->decision.value = -1;
        w->areas = calloc(1, sizeof(RaSwapArea));
        ck_assert_ptr_nonnull(w->areas);
        w->areas[0] = (RaSwapArea){ .filename = strdup("/dev/zram0"),
                                    .device = strdup("zram0"),
                                    .class = RA_SWAP_CLASS_ZRAM,
                                    .priority = 100 };
        w->n_areas = w->n_active = 1;
        w->active = RA_SWAP_CLASS_ZRAM;
        ra_swap_model_reset(&w->model, RA_SWAP_CLASS_ZRAM, core.m.state->swap.learned[RA_SWAP_CLASS_ZRAM]);
}

static void teardown(void) {
        free((char *) w->sysctl_path);
        ra_swapwatch_free(&core.m);
        w = NULL;
        test_core_done(&core);
}

/* The watcher's look at the sysctl (ra-swapwatch.c's tick). */
static void look(void) {
        int now = ra_tune_swap_read(w);

        ck_assert_int_ge(now, 0);
        ra_tune_swap_drift(&core.m, now);
}

/* zram: 0, written once its original is on disk, through the store. */
START_TEST(test_write) {
        ra_tune_swap(&core.m, "start");
        ck_assert_int_eq(w->decision.value, 0);
        ck_assert_int_eq(page_cluster(), 0);
        ck_assert_int_eq(w->current, 0);
        ck_assert(core.m.state->swap.has_original);
        ck_assert_int_eq(core.m.state->swap.original, ORIGINAL);
        ck_assert(!core.m.original_unsaved);
        ck_assert(test_core_state_has(&core, "swap original=3"));
}
END_TEST

/* Its original cannot be saved: nothing is written over it. */
START_TEST(test_write_waits_for_the_original) {
        test_core_break_state_dir(&core);
        ra_tune_swap(&core.m, "start");
        ck_assert_int_eq(page_cluster(), ORIGINAL);
        ck_assert_int_lt(w->write_error, 0);
}
END_TEST

/* The disks' rule: written back three times within a minute, then left. */
START_TEST(test_drift_reassert_limit) {
        core.m.config->external = RA_EXTERNAL_REASSERT;
        ra_tune_swap(&core.m, "start");
        for (unsigned i = 1; i <= 3; i++) {
                set_page_cluster(5);
                look();
                ck_assert_int_eq(page_cluster(), 0);
                ck_assert_uint_eq(w->reassert.count, i);
                ck_assert(!w->external);
        }
        set_page_cluster(5);
        look();
        ck_assert_int_eq(page_cluster(), 5);
        ck_assert(w->external);
        ck_assert_int_eq(w->decision.source, RA_SOURCE_EXTERNAL);
}
END_TEST

/* external_changes = yield: the first change is theirs, also after a swap change. */
START_TEST(test_drift_yield) {
        ra_tune_swap(&core.m, "start");
        set_page_cluster(2);
        look();
        ck_assert(w->external);
        ck_assert_int_eq(w->decision.value, 2);
        ck_assert_int_eq(w->reassert.count, 0);
        ra_tune_swap_decide(&core.m, "swap change");
        ck_assert_int_eq(page_cluster(), 2);
}
END_TEST

/* A pin wins, stored, and ends a yield; cleared, radaemon decides again. */
START_TEST(test_pin) {
        ra_tune_swap(&core.m, "start");
        set_page_cluster(2);
        look();
        ck_assert(w->external);

        ck_assert_int_eq(ra_tune_swap_pin(&core.m, 1, true, 0), 0);
        ck_assert_int_eq(page_cluster(), 1);
        ck_assert_int_eq(w->decision.source, RA_SOURCE_PINNED);
        ck_assert(test_core_state_has(&core, "pin=1"));

        ck_assert_int_eq(ra_tune_swap_unpin(&core.m, 0), 0);
        ck_assert_int_eq(page_cluster(), 0);
        ck_assert(!test_core_state_has(&core, "pin="));
}
END_TEST

/* Put back with the disks, counted with them. */
START_TEST(test_restore) {
        ra_tune_swap(&core.m, "start");
        ck_assert_int_eq(page_cluster(), 0);
        ck_assert_uint_eq(ra_tune_restore_all(&core.m, false, "restore_on_exit"), 1);
        ck_assert_int_eq(page_cluster(), ORIGINAL);
        ck_assert_int_eq(w->current, ORIGINAL);
}
END_TEST

/* Observing: decided and said, never written, and no original taken for a write that does not come. */
START_TEST(test_observe) {
        core.m.force_observe = true;
        ra_tune_swap(&core.m, "start");
        ck_assert_int_eq(w->decision.value, 0);
        ck_assert_int_eq(page_cluster(), ORIGINAL);
        ck_assert(!core.m.state->swap.has_original);
}
END_TEST

/* Learned for the class in use: stored for it, saved with the next flush, and written. */
START_TEST(test_learned) {
        ra_tune_swap(&core.m, "start");
        w->decision.source = RA_SOURCE_PRIOR;
        w->model.learned = 2;
        ra_tune_swap_learned(&core.m);
        ck_assert_int_eq(core.m.state->swap.learned[RA_SWAP_CLASS_ZRAM], 2);
        ck_assert(ra_store_pending(&core.m));
        ck_assert_int_eq(w->decision.value, 2);
        ck_assert_int_eq(page_cluster(), 2);
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert(test_core_state_has(&core, "learned-zram=2"));
}
END_TEST

int main(void) {
        Suite *s = suite_create("tune-swap");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_write);
        tcase_add_test(tc, test_write_waits_for_the_original);
        tcase_add_test(tc, test_drift_reassert_limit);
        tcase_add_test(tc, test_drift_yield);
        tcase_add_test(tc, test_pin);
        tcase_add_test(tc, test_restore);
        tcase_add_test(tc, test_observe);
        tcase_add_test(tc, test_learned);
        suite_add_tcase(s, tc);
        return test_run(s);
}
