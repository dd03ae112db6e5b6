/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A daemon's core without its sources: a Manager with the default
 * configuration, its state in a temporary directory (daemon/ra-state-store.c), an
 * event loop that never runs (the tuning path only reads its clock), no bus
 * and no udev, and disks of a fake sysfs tree (tests/sysfs) added through
 * the registry as a udev event would add them. What the tuning path, the
 * store and the registry do can then be checked in the tree's files.
 */

#include <fcntl.h>

#include "ra-context.h"
#include "ra-registry.h"
#include "ra-state-store.h"
#include "ra-tune.h"
#include "ra-util.h"
#include "sysfs-tree.h"

typedef struct TestCore {
        char *root;      /* the sysfs tree */
        char *state_dir; /* the store's */
        Manager m;
} TestCore;

/* A core over tests/sysfs/<tree>.tree (an empty root for NULL), its state empty. */
static inline void test_core_init(TestCore *c, const char *tree) {
        *c = (TestCore){};
        c->root = tree ? test_tree_load(tree) : test_mkdtemp();
        c->state_dir = test_mkdtemp();
        ck_assert_int_ge(sd_event_new(&c->m.event), 0);
        ck_assert_int_eq(ra_config_new(&c->m.config), 0);
        free(c->m.config->state_dir);
        c->m.config->state_dir = strdup(c->state_dir);
        ck_assert_ptr_nonnull(c->m.config->state_dir);
        ck_assert_int_eq(ra_store_load(&c->m), 0);
}

/* Frees the Manager's parts that the test made, leaving the directories. */
static inline void test_core_stop(TestCore *c) {
        while (c->m.n_disks > 0)
                ra_registry_remove(&c->m, c->m.disks[0]);
        c->m.disks = mfree(c->m.disks);
        ra_store_close(&c->m);
        c->m.learning_off = mfree(c->m.learning_off);
        c->m.restored = false;
}

/* A restart: the same configuration, the state read again from its directory, no disks. */
static inline void test_core_restart(TestCore *c) {
        test_core_stop(c);
        ck_assert_int_eq(ra_store_load(&c->m), 0);
}

static inline void test_core_done(TestCore *c) {
        test_core_stop(c);
        c->m.config = ra_config_free(c->m.config);
        c->m.event = sd_event_unref(c->m.event);
        test_rm_rf(c->root);
        test_rm_rf(c->state_dir);
        free(c->root);
        free(c->state_dir);
}

/* root/path as a string the caller frees. */
static inline char *test_core_path(const TestCore *c, const char *path) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/%s", c->root, path), 0);
        return p;
}

/*
 * The disk at syspath (relative to the tree) with identity, added to the
 * registry and read as ra_disk_update() reads sysfs, then identified: its
 * original remembered, as after a udev "add".
 */
static inline RaDisk *test_core_add_disk(TestCore *c, const char *name, const char *syspath,
                                         const char *identity) {
        _cleanup_close_ int sysfd = -1;
        const char *bad = NULL;
        RaDisk *d;

        ck_assert_int_eq(ra_registry_add(&c->m, RA_KIND_DISK, name, &d), 0);
        ck_assert_ptr_eq(ra_registry_find(&c->m, name), d);
        d->syspath = test_core_path(c, syspath);
        d->in.identity = strdup(identity);
        d->in.attrs.name = strdup(name);
        ck_assert(d->in.identity && d->in.attrs.name);
        sysfd = ra_disk_open_sysfs(d);
        ck_assert_int_ge(sysfd, 0);
        ck_assert_int_eq(ra_device_attrs_read_sysfs(&d->in.attrs, sysfd, &bad), 0);
        ra_tune_identified(&c->m, d, NULL);
        return d;
}

/* What the knob below syspath holds (file, relative to the tree). */
static inline uint32_t test_core_read(const TestCore *c, const char *file) {
        _cleanup_free_ char *p = test_core_path(c, file);
        char buf[32];
        uint32_t v;

        ck_assert_int_ge(ra_read_file_at(AT_FDCWD, p, buf, sizeof(buf)), 0);
        ck_assert_msg(ra_parse_u32(buf, &v) == 0, "%s holds '%s'", file, buf);
        return v;
}

/* Somebody else writes value to file, relative to the tree. */
static inline void test_core_write(const TestCore *c, const char *file, uint32_t value) {
        char buf[16];
        int n = snprintf(buf, sizeof(buf), "%" PRIu32 "\n", value);

        test_write_n(c->root, file, buf, (size_t) n);
}

#define test_core_knob(c, syspath) test_core_read(c, syspath "/queue/read_ahead_kb")
#define test_core_set_knob(c, syspath, v) test_core_write(c, syspath "/queue/read_ahead_kb", v)

/* The tuning path's look at d's window, as the sampler's: what it read. */
static inline uint32_t test_core_check(TestCore *c, RaDisk *d) {
        _cleanup_close_ int fd = -1;
        uint32_t kb = 0;

        fd = ra_tune_check_window(&c->m, d, &kb);
        ck_assert_int_ge(fd, 0);
        return kb;
}

/* The device at syspath leaves the tree. */
static inline void test_core_remove(const TestCore *c, const char *syspath) {
        _cleanup_free_ char *p = test_core_path(c, syspath);

        test_rm_rf(p);
}

/* The state file holds text. */
static inline bool test_core_state_has(const TestCore *c, const char *text) {
        char path[4200], buf[65536];

        (void) snprintf(path, sizeof(path), "%s/%s", c->state_dir, RA_STATE_FILE);
        if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
                return false;
        return strstr(buf, text) != NULL;
}

/* From now on the state cannot be saved: its directory is below a file. */
static inline void test_core_break_state_dir(TestCore *c) {
        free(c->m.state_dir);
        c->m.state_dir = test_core_path(c, "not-a-directory/state");
        test_write(c->root, "not-a-directory", "\n");
}
