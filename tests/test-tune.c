/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tuning path (daemon/ra-tune.c) over a disk of a fake sysfs tree
 * (tests/sysfs/plain-vda.tree): a decision written, someone else's write
 * seen as drift and the reassert limit, a pin over a learned value, and the
 * originals put back. No bus, no udev: a Manager of the test's own, with
 * the state in a temporary directory.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <syslog.h>

#include "ra-registry.h"
#include "ra-state-store.h"
#include "ra-tune.h"
#include "ra-util.h"
#include "sysfs-tree.h"
#include "test-core.h"

#define VDA "devices/pci0000:00/0000:00:02.0/virtio1/block/vda"
/* What plain-vda.tree's disk holds before radaemon: its original. */
#define ORIGINAL_KB 8192

static TestCore core;
static RaDisk *vda;

static void setup(void) {
        test_core_init(&core, "plain-vda");
        vda = test_core_add_disk(&core, "vda", VDA, "serial:VDA-1");
}

static void teardown(void) {
        test_core_done(&core);
        vda = NULL;
}

/* The first decision: the original saved before the write, then written. */
START_TEST(test_write) {
        ck_assert_uint_eq(test_core_knob(&core, VDA), ORIGINAL_KB);
        ra_tune_disk(&core.m, vda, "add");

        ck_assert_uint_gt(vda->decision.kb, 0);
        ck_assert_uint_ne(vda->decision.kb, ORIGINAL_KB);
        ck_assert_uint_eq(test_core_knob(&core, VDA), vda->decision.kb);
        ck_assert_uint_eq(vda->in.attrs.read_ahead_kb, vda->decision.kb);
        ck_assert_uint_eq(vda->decisions, 1);
        ck_assert(vda->published);

        /* On disk before the write: a crash after it still knows the value to put back. */
        ck_assert(!core.m.original_unsaved);
        ck_assert(test_core_state_has(&core, "device serial:VDA-1 original=8192"));

        /* The same event again writes nothing. */
        ra_tune_disk(&core.m, vda, "change");
        ck_assert_uint_eq(vda->decisions, 1);
}
END_TEST

/* The original cannot be saved: nothing is written over it. */
START_TEST(test_write_waits_for_the_original) {
        test_core_break_state_dir(&core);
        ra_tune_disk(&core.m, vda, "add");

        ck_assert_uint_eq(test_core_knob(&core, VDA), ORIGINAL_KB);
        ck_assert_uint_eq(vda->decisions, 0);
        ck_assert_int_lt(vda->write_error, 0);
        ck_assert(core.m.original_unsaved);
}
END_TEST

/* Someone else writes the knob: written back REASSERT_MAX (3) times a minute, then left. */
START_TEST(test_drift_reassert_limit) {
        uint32_t target;

        core.m.config->external = RA_EXTERNAL_REASSERT;
        ra_tune_disk(&core.m, vda, "add");
        target = vda->decision.kb;

        for (unsigned i = 1; i <= 3; i++) {
                test_core_set_knob(&core, VDA, 1000 + i * 4);
                ck_assert_uint_eq(test_core_check(&core, vda), 1000 + i * 4);
                ck_assert_uint_eq(test_core_knob(&core, VDA), target);
                ck_assert_uint_eq(vda->reassert.count, i);
                ck_assert(!vda->external);
        }

        /* The fourth within the minute is theirs. */
        test_core_set_knob(&core, VDA, 2000);
        (void) test_core_check(&core, vda);
        ck_assert_uint_eq(test_core_knob(&core, VDA), 2000);
        ck_assert(vda->external);
        ck_assert_int_eq(vda->decision.source, RA_SOURCE_EXTERNAL);
        ck_assert_uint_eq(vda->decision.kb, 2000);

        /* Yielding, a further change is followed, not fought. */
        test_core_set_knob(&core, VDA, 3000);
        (void) test_core_check(&core, vda);
        ck_assert_uint_eq(test_core_knob(&core, VDA), 3000);
        ck_assert_uint_eq(vda->decision.kb, 3000);
}
END_TEST

/* A minute later the count starts again. */
START_TEST(test_drift_reassert_window) {
        uint32_t target;

        core.m.config->external = RA_EXTERNAL_REASSERT;
        ra_tune_disk(&core.m, vda, "add");
        target = vda->decision.kb;
        for (unsigned i = 1; i <= 3; i++) {
                test_core_set_knob(&core, VDA, 1000 + i * 4);
                (void) test_core_check(&core, vda);
        }
        ck_assert_uint_eq(vda->reassert.count, 3);

        vda->reassert.since -= 61 * UINT64_C(1000000);
        test_core_set_knob(&core, VDA, 2000);
        (void) test_core_check(&core, vda);
        ck_assert_uint_eq(test_core_knob(&core, VDA), target);
        ck_assert_uint_eq(vda->reassert.count, 1);
        ck_assert(!vda->external);
}
END_TEST

/* external_changes = yield, the default: the first change is theirs. */
START_TEST(test_drift_yield) {
        ck_assert_int_eq(core.m.config->external, RA_EXTERNAL_YIELD);
        ra_tune_disk(&core.m, vda, "add");
        test_core_set_knob(&core, VDA, 1024);
        (void) test_core_check(&core, vda);

        ck_assert_uint_eq(test_core_knob(&core, VDA), 1024);
        ck_assert(vda->external);
        ck_assert_int_eq(vda->decision.source, RA_SOURCE_EXTERNAL);
        ck_assert_uint_eq(vda->reassert.count, 0);

        /* A new decision (an event) still yields: the value is theirs until a pin or a reload. */
        ra_tune_disk(&core.m, vda, "change");
        ck_assert_uint_eq(test_core_knob(&core, VDA), 1024);
}
END_TEST

/* A value that did not move is no drift. */
START_TEST(test_no_drift) {
        ra_tune_disk(&core.m, vda, "add");
        ck_assert_uint_eq(test_core_check(&core, vda), vda->decision.kb);
        ck_assert(!vda->external);
        ck_assert_uint_eq(vda->reassert.count, 0);
}
END_TEST

/* A pin wins over what was learned, and clearing it brings the learned value back. */
START_TEST(test_pin_over_learned) {
        ra_tune_disk(&core.m, vda, "add");

        vda->model.learned_kb = 256;
        (void) snprintf(vda->model.reason, sizeof(vda->model.reason), "Reads are random.");
        ra_store_learned(&core.m, vda);
        ra_tune_disk(&core.m, vda, "learned");
        ck_assert_int_eq(vda->decision.source, RA_SOURCE_LEARNED);
        ck_assert_uint_eq(test_core_knob(&core, VDA), 256);

        ck_assert_int_eq(ra_tune_pin(&core.m, vda, 512, true, 0), 0);
        ck_assert_int_eq(vda->decision.source, RA_SOURCE_PINNED);
        ck_assert_uint_eq(test_core_knob(&core, VDA), 512);
        /* persist: on disk when the call returns. */
        ck_assert(test_core_state_has(&core, "pin=512"));

        ck_assert_int_eq(ra_tune_unpin(&core.m, vda, 0), 0);
        ck_assert_int_eq(vda->decision.source, RA_SOURCE_LEARNED);
        ck_assert_uint_eq(test_core_knob(&core, VDA), 256);
        ck_assert(!test_core_state_has(&core, "pin=512"));
}
END_TEST

/* A pin ends a yield: the administrator's word is newer than the stranger's write. */
START_TEST(test_pin_over_external) {
        ra_tune_disk(&core.m, vda, "add");
        test_core_set_knob(&core, VDA, 1024);
        (void) test_core_check(&core, vda);
        ck_assert(vda->external);

        ck_assert_int_eq(ra_tune_pin(&core.m, vda, 64, false, 0), 0);
        ck_assert(!vda->external);
        ck_assert_int_eq(vda->decision.source, RA_SOURCE_PINNED);
        ck_assert_uint_eq(test_core_knob(&core, VDA), 64);
        /* A runtime pin is not stored. */
        ck_assert(!test_core_state_has(&core, "pin="));
}
END_TEST

/* At exit (restore_on_exit): the original goes back, and radaemon may write again after. */
START_TEST(test_restore_on_exit) {
        ra_tune_disk(&core.m, vda, "add");
        ck_assert_uint_ne(test_core_knob(&core, VDA), ORIGINAL_KB);

        ck_assert_uint_eq(ra_tune_restore_all(&core.m, false, "restore_on_exit"), 1);
        ck_assert_uint_eq(test_core_knob(&core, VDA), ORIGINAL_KB);
        ck_assert_uint_eq(vda->in.attrs.read_ahead_kb, ORIGINAL_KB);
        ck_assert(!core.m.restored);
}
END_TEST

/* Restore(): the originals go back and stay, across a restart, until a reload. */
START_TEST(test_restore_stays) {
        ra_tune_disk(&core.m, vda, "add");
        ck_assert_uint_eq(ra_tune_restore_all(&core.m, true, "restore asked over D-Bus"), 1);
        ck_assert_uint_eq(test_core_knob(&core, VDA), ORIGINAL_KB);
        ck_assert(core.m.restored);
        ck_assert(ra_context_observing(&core.m));
        ck_assert(test_core_state_has(&core, "restored"));

        /* Observing now: a decision is not written. */
        ra_tune_disk(&core.m, vda, "change");
        ck_assert_uint_eq(test_core_knob(&core, VDA), ORIGINAL_KB);
        ck_assert_uint_eq(vda->decisions, 1);
}
END_TEST

/* The original is what the disk held before radaemon's first write, not after. */
START_TEST(test_original_kept_across_events) {
        ra_tune_disk(&core.m, vda, "add");
        /* Read again (a "change"): the value there now is radaemon's, not a new original. */
        ra_tune_identified(&core.m, vda, vda->in.identity);
        ck_assert_int_eq(ra_store_flush(&core.m), 0);
        ck_assert(test_core_state_has(&core, "original=8192"));
        ck_assert_uint_eq(ra_tune_restore_all(&core.m, false, "test"), 1);
        ck_assert_uint_eq(test_core_knob(&core, VDA), ORIGINAL_KB);
}
END_TEST

/* Fills the disk's traced request classes as a medium that answers 1 MiB in 25 us would. */
static void trace_fast_medium(RaDisk *d) {
        uint64_t ns = 1000000;

        for (uint64_t i = 0; i < 64; i++, ns += 100000) {
                ra_calib_trace_issue(&d->costs, i * 2048, 1024, ns);
                ra_calib_trace_complete(&d->costs, i * 2048, ns + 25000);
        }
        ck_assert_uint_gt(d->costs.count[0] + d->costs.served_all.n, 0);
}

static bool costs_empty(const RaDisk *d) {
        return d->costs.served_all.n == 0 && d->costs.alone.n == 0 && d->costs.last_done_ns == 0;
}

/*
 * One kernel device, media one after another (losetup -f reusing loop0, a
 * card reader's next card): what one medium's requests taught is not the
 * next one's model; the same medium read again keeps it.
 */
START_TEST(test_costs_follow_the_medium) {
        ra_tune_disk(&core.m, vda, "add");
        vda->in.attrs.diskseq = 7;
        ra_tune_identified(&core.m, vda, vda->in.identity);

        trace_fast_medium(vda);
        ra_tune_identified(&core.m, vda, vda->in.identity);
        ck_assert(!costs_empty(vda));

        /* Another medium under the same name and identity (a loop device attached again). */
        vda->in.attrs.diskseq = 8;
        ra_tune_identified(&core.m, vda, vda->in.identity);
        ck_assert(costs_empty(vda));

        /* Another identity under the same name. */
        trace_fast_medium(vda);
        ra_tune_identified(&core.m, vda, "serial:OTHER-1");
        ck_assert(costs_empty(vda));
}
END_TEST

/* A disk gone from sysfs: nothing written, nothing failed. */
START_TEST(test_gone) {
        uint32_t kb;

        ra_tune_disk(&core.m, vda, "add");
        test_core_remove(&core, VDA);
        ck_assert_int_eq(ra_tune_check_window(&core.m, vda, &kb), -ENODEV);
        ck_assert(!ra_tune_restore(&core.m, vda, "test"));
        ck_assert_int_eq(vda->write_error, 0);
}
END_TEST

/*
 * The sampler's interval through the tuning path: the window looked at
 * (another's write seen as drift), the counters observed and published, an
 * idle disk skipped.
 */
START_TEST(test_sample) {
        ra_tune_disk(&core.m, vda, "add");
        test_core_set_knob(&core, VDA, 1024);
        test_write(core.root, VDA "/stat", "100 0 2048 10 0 0 0 0 0 10 10 0 0 0 0 0 0\n");

        ra_tune_sample(&core.m, vda, 1000000, false);
        ck_assert(vda->external);
        ck_assert_uint_eq(test_core_knob(&core, VDA), 1024);
        ck_assert_uint_eq(vda->sampled.stat_usec, 1000000);
        ck_assert_uint_eq(vda->sampled.read_bytes_per_sec, 0);

        /* 2048 sectors more in a second: 1 MiB/s. */
        test_write(core.root, VDA "/stat", "200 0 4096 20 0 0 0 0 0 20 20 0 0 0 0 0 0\n");
        ra_tune_sample(&core.m, vda, 2000000, false);
        ck_assert_uint_eq(vda->sampled.stat_usec, 2000000);
        ck_assert_uint_eq(vda->sampled.read_bytes_per_sec, 1048576);

        /* Idle, looked at less often: its window still is, its counters are not. */
        vda->sampled.skip = 2;
        test_core_set_knob(&core, VDA, 2048);
        ra_tune_sample(&core.m, vda, 3000000, false);
        ck_assert_uint_eq(vda->sampled.skip, 1);
        ck_assert_uint_eq(vda->sampled.stat_usec, 2000000);
        ck_assert_uint_eq(vda->in.attrs.read_ahead_kb, 2048);
}
END_TEST

/* A batch made ready: what its writes must find on disk is saved once, before any of them. */
START_TEST(test_batch_ready) {
        ck_assert(!test_core_state_has(&core, "serial:VDA-1"));
        ra_tune_batch_ready(&core.m);
        ck_assert(test_core_state_has(&core, "device serial:VDA-1 original=8192"));
        ck_assert(!ra_store_pending(&core.m));
        ck_assert_uint_eq(test_core_knob(&core, VDA), ORIGINAL_KB);
}
END_TEST

/*
 * A source's batch (ra-tune-batch.c): the disk reported and read is
 * decided only once the batch is read, after one save of its original.
 */
START_TEST(test_batch) {
        ck_assert_int_eq(ra_tune_seen(&core.m, vda, "coldplug"), 0);
        ck_assert_uint_eq(core.m.n_pending, 1);
        ck_assert_uint_eq(vda->decisions, 0);
        ck_assert_uint_eq(test_core_knob(&core, VDA), ORIGINAL_KB);

        ra_tune_objects_read(&core.m);
        ck_assert_uint_eq(core.m.n_pending, 0);
        ck_assert_uint_eq(vda->decisions, 1);
        ck_assert_uint_eq(test_core_knob(&core, VDA), vda->decision.kb);
        ck_assert(test_core_state_has(&core, "device serial:VDA-1 original=8192"));
        ck_assert(vda->published);

        /* An empty batch decides nothing. */
        ra_tune_objects_read(&core.m);
        ck_assert_uint_eq(vda->decisions, 1);
}
END_TEST

/* A disk dropped while its source reads it is decided in no batch. */
START_TEST(test_batch_forget) {
        ck_assert_int_eq(ra_tune_seen(&core.m, vda, "add"), 0);
        ra_tune_forget(&core.m, vda, LOG_DEBUG, "gone.");
        vda = NULL;
        ck_assert_uint_eq(core.m.n_pending, 0);
        ck_assert_uint_eq(core.m.n_disks, 0);

        ra_tune_objects_read(&core.m);
        ck_assert_uint_eq(test_core_knob(&core, VDA), ORIGINAL_KB);
}
END_TEST

/*
 * Two devices reporting one identity: the one that came is kept apart when
 * the batch is identified, and the one known before is moved apart and
 * decided again by the tuning path ("identity clash").
 */
START_TEST(test_batch_identity_clash) {
        RaDisk *vdb;

        vda->reported_identity = strdup(vda->in.identity);
        ck_assert_ptr_nonnull(vda->reported_identity);
        ra_tune_disk(&core.m, vda, "add");

        vdb = test_core_add_disk(&core, "vdb", VDA, "serial:VDA-1");
        vdb->reported_identity = strdup(vdb->in.identity);
        ck_assert_ptr_nonnull(vdb->reported_identity);
        ck_assert_int_eq(ra_tune_seen(&core.m, vdb, "add"), 0);
        ra_tune_objects_read(&core.m);

        ck_assert_str_ne(vdb->in.identity, "serial:VDA-1");
        ck_assert_str_ne(vda->in.identity, "serial:VDA-1");
        ck_assert_str_ne(vda->in.identity, vdb->in.identity);
        ck_assert(vdb->published);
}
END_TEST

int main(void) {
        Suite *s = suite_create("tune");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_write);
        tcase_add_test(tc, test_costs_follow_the_medium);
        tcase_add_test(tc, test_write_waits_for_the_original);
        tcase_add_test(tc, test_drift_reassert_limit);
        tcase_add_test(tc, test_drift_reassert_window);
        tcase_add_test(tc, test_drift_yield);
        tcase_add_test(tc, test_no_drift);
        tcase_add_test(tc, test_pin_over_learned);
        tcase_add_test(tc, test_pin_over_external);
        tcase_add_test(tc, test_restore_on_exit);
        tcase_add_test(tc, test_restore_stays);
        tcase_add_test(tc, test_original_kept_across_events);
        tcase_add_test(tc, test_gone);
        tcase_add_test(tc, test_sample);
        tcase_add_test(tc, test_batch_ready);
        tcase_add_test(tc, test_batch);
        tcase_add_test(tc, test_batch_forget);
        tcase_add_test(tc, test_batch_identity_clash);
        suite_add_tcase(s, tc);
        return test_run(s);
}
