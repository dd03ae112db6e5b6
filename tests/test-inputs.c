/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * radaemon and its udev helper read an object through one reader
 * (common/ra-inputs.c) and differ only in where the object's own udev
 * properties come from: the helper from its event's environment, radaemon
 * from udev's database. Over every recorded sysfs tree, each block device
 * and a btrfs made over the tree's disks are read both ways, with the same
 * properties behind each: the inputs and the decisions must be equal.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "ra-config.h"
#include "ra-inputs.h"
#include "ra-util.h"
#include "sysfs-tree.h"
#include "test-helpers.h"

static const char *const trees[] = {
        "luks-lvm-raid1", "lvm-nvme", "lvm-striped-nvme", "md-raid0", "plain-vda",
};

#define BDI "btrfs-7"

/* The properties udev holds for a device (its database, or its event's environment): one value each. */
static bool property(const char *name, const char *key, char *buf, size_t size) {
        bool bdi = strncmp(name, "btrfs-", 6) == 0;

        if (ra_streq(key, "ID_BUS") && !bdi)
                /* A prior of its own, which shows when a leaf's properties are lost. */
                (void) snprintf(buf, size, "usb");
        else if (ra_streq(key, "ID_SERIAL") && !bdi)
                (void) snprintf(buf, size, "SER-%s", name);
        else if (ra_streq(key, "ID_MODEL") && !bdi)
                (void) snprintf(buf, size, "Model-%s", name);
        else if (ra_streq(key, "RADAEMON_MAX_KB"))
                (void) snprintf(buf, size, "%s", bdi ? "1024" : "3072");
        else if (ra_streq(key, "RADAEMON_MIN_KB") && bdi)
                (void) snprintf(buf, size, "64");
        else
                return false;
        return true;
}

/* udev's database: a device's properties looked up by its name. */
typedef struct Database {
        char name[NAME_MAX + 1];
        char value[256];
} Database;

static const char *get_database(void *userdata, const char *key) {
        Database *db = userdata;

        return property(db->name, key, db->value, sizeof(db->value)) ? db->value : NULL;
}

/* An event's environment: KEY=value strings, made once for the object the event is of. */
static const char *get_environment(void *userdata, const char *key) {
        size_t n = strlen(key);

        for (char **e = userdata; e && *e; e++)
                if (strncmp(*e, key, n) == 0 && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

static char **environment_of(const char *name) {
        static const char *const keys[] = { "ID_BUS", "ID_SERIAL", "ID_MODEL", "RADAEMON_MAX_KB",
                                            "RADAEMON_MIN_KB" };
        char **env = NULL, value[256], line[512];

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (property(name, keys[i], value, sizeof(value))) {
                        (void) snprintf(line, sizeof(line), "%s=%s", keys[i], value);
                        ck_assert_int_eq(ra_strv_push(&env, line), 0);
                }
        return env;
}

/* A device beneath, by name, from the tree and "udev's database", as ra_stack_read_leaf_udev() reads it. */
static int read_beneath(void *userdata, const char *name, RaDeviceAttrs *ret) {
        const char *root = userdata, *bad_attr = NULL, *bad_property = NULL;
        _cleanup_close_ int sysfd = -1;
        char link[PATH_MAX], syspath[PATH_MAX];
        Database db = {};
        int r;

        (void) snprintf(link, sizeof(link), "%s/block/%s", root, name);
        if (!realpath(link, syspath) || (sysfd = open(syspath, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                return -ENODEV;
        (void) snprintf(db.name, sizeof(db.name), "%s", name);
        r = ra_device_read(ret, name, sysfd, syspath, get_database, &db, &bad_attr, &bad_property);
        return r == -EINVAL && bad_property ? 0 : r;
}

/* Equal, or both unknown. */
static bool eq(const char *a, const char *b) {
        return a == b || ra_streq(a, b);
}

static void assert_strv_eq(char *const *a, char *const *b, const char *what) {
        ck_assert_msg(ra_strv_length(a) == ra_strv_length(b), "%s: %zu against %zu", what, ra_strv_length(a),
                      ra_strv_length(b));
        for (size_t i = 0; a && a[i]; i++)
                ck_assert_msg(eq(a[i], b[i]), "%s[%zu]: %s against %s", what, i, a[i], b[i]);
}

static void assert_kb_eq(const uint32_t *a, const uint32_t *b, size_t n, const char *what) {
        ck_assert_msg(!a == !b, "%s: one is missing", what);
        for (size_t i = 0; a && i < n; i++)
                ck_assert_msg(a[i] == b[i], "%s[%zu]: %u against %u", what, i, a[i], b[i]);
}

static void assert_inputs_eq(const RaInputs *h, const RaInputs *d, const char *name) {
        const RaDeviceAttrs *x = &h->attrs, *y = &d->attrs;

        ck_assert_msg(h->kind == d->kind, "%s: kind", name);
        ck_assert_msg(x->size_bytes == y->size_bytes && x->rotational == y->rotational &&
                              x->removable == y->removable && x->read_ahead_kb == y->read_ahead_kb &&
                              x->max_sectors_kb == y->max_sectors_kb &&
                              x->optimal_io_bytes == y->optimal_io_bytes,
                      "%s: sysfs attributes", name);
        ck_assert_msg(eq(x->name, y->name) && eq(x->transport, y->transport) && eq(x->serial, y->serial) &&
                              eq(x->model, y->model) && eq(x->bus, y->bus),
                      "%s: identity properties: %s %s %s %s against %s %s %s %s", name, x->name,
                      x->transport, x->serial, x->model, y->name, y->transport, y->serial, y->model);
        ck_assert_msg(x->ignore == y->ignore && x->pin_kb == y->pin_kb && x->min_kb == y->min_kb &&
                              x->max_kb == y->max_kb && x->fleet_kb == y->fleet_kb,
                      "%s: RADAEMON_* properties: max %u against %u", name, x->max_kb, y->max_kb);
        ck_assert_msg(eq(h->identity, d->identity), "%s: identity %s against %s", name, h->identity,
                      d->identity);
        ck_assert_msg(h->stack_read == d->stack_read, "%s: stack read %d against %d", name, h->stack_read,
                      d->stack_read);
        ck_assert_msg(!h->stack == !d->stack, "%s: stack", name);
        if (h->stack) {
                ck_assert_uint_eq(h->stack->n_leaves, d->stack->n_leaves);
                assert_kb_eq(h->leaf_kb, d->leaf_kb, h->stack->n_leaves, "leaf_kb");
        }
        assert_strv_eq(h->leaf_names, d->leaf_names, "leaves");
        ck_assert_uint_eq(h->bdi.n_beneath, d->bdi.n_beneath);
        ck_assert_uint_eq(h->bdi.stripes, d->bdi.stripes);
        assert_kb_eq(h->beneath_kb, d->beneath_kb, h->bdi.n_beneath, "beneath_kb");
        assert_strv_eq(h->beneath_names, d->beneath_names, "beneath");
        ck_assert_uint_eq(h->server_kb, d->server_kb);
}

static void assert_decisions_eq(const RaInputs *h, const RaInputs *d, const char *name) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        RaSettings sh, sd;
        RaDecision a, b;

        ck_assert_int_eq(ra_config_new(&c), 0);
        ra_inputs_decide(c, NULL, h, NULL, &sh, &a);
        ra_inputs_decide(c, NULL, d, NULL, &sd, &b);
        ck_assert_msg(a.kb == b.kb && a.source == b.source && ra_streq(a.reason, b.reason),
                      "%s: the helper decides %u KiB (%s), radaemon %u KiB (%s)", name, a.kb, a.reason, b.kb,
                      b.reason);
        ck_assert_msg(a.kb > 0, "%s: nothing decided: %s", name, a.reason);
}

/* Every device of the tree at root, read as the helper and as radaemon read it. */
static void check_block_devices(const char *root, char ***ret_leaves) {
        _cleanup_free_ char *dir = NULL;
        struct dirent *de;
        DIR *d;

        ck_assert_int_ge(asprintf(&dir, "%s/block", root), 0);
        d = opendir(dir);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                _cleanup_(ra_strv_freep) char **env = NULL;
                _cleanup_(ra_inputs_clear) RaInputs h = {}, v = {};
                const char *bad_attr, *bad_property;
                Database db = {};
                RaPropertySource helper, daemon;

                if (de->d_name[0] == '.')
                        continue;
                env = environment_of(de->d_name);
                (void) snprintf(db.name, sizeof(db.name), "%s", de->d_name);
                helper = (RaPropertySource){ get_environment, env, read_beneath, (void *) root };
                daemon = (RaPropertySource){ get_database, &db, read_beneath, (void *) root };

                ck_assert_int_eq(
                        ra_inputs_read_disk(&h, root, de->d_name, &helper, &bad_attr, &bad_property), 1);
                ck_assert_ptr_null(bad_property);
                ck_assert_int_eq(
                        ra_inputs_read_disk(&v, root, de->d_name, &daemon, &bad_attr, &bad_property), 1);
                /* The properties were taken, not merely both missed. */
                ck_assert_str_eq(v.attrs.transport, "usb");
                ck_assert_uint_eq(v.attrs.max_kb, 3072);
                ck_assert_int_eq(ra_device_identity(&h.attrs, &h.identity), 0);
                ck_assert_int_eq(ra_device_identity(&v.attrs, &v.identity), 0);

                assert_inputs_eq(&h, &v, de->d_name);
                assert_decisions_eq(&h, &v, de->d_name);
                if (v.stack_read == 0)
                        ck_assert_int_eq(ra_strv_push(ret_leaves, de->d_name), 0);
        }
        closedir(d);
}

/* A btrfs over the tree's disks at the bottom, as sysfs shows one being mounted. */
static void make_btrfs(const char *root, char *const *disks) {
        char line[PATH_MAX * 4], target[PATH_MAX], link[PATH_MAX];

        test_tree_apply(root, "l fs/btrfs/0b5e-test/bdi ../../../class/bdi/" BDI "\n"
                              "f class/bdi/" BDI "/read_ahead_kb 4096\n"
                              "f fs/btrfs/0b5e-test/allocation/data/raid0 0\n");
        for (size_t i = 0; disks && disks[i]; i++) {
                ssize_t n;

                (void) snprintf(link, sizeof(link), "%s/block/%s", root, disks[i]);
                n = readlink(link, target, sizeof(target) - 1);
                ck_assert_int_gt(n, 3);
                target[n] = '\0'; /* "../devices/..." */
                (void) snprintf(
                        line, sizeof(line),
                        "f %s/dev 250:%zu\nl dev/block/250:%zu ../%s\nl fs/btrfs/0b5e-test/devices/%s ../../../../%s\n",
                        target + 3, i, i, target, disks[i], target + 3);
                test_tree_apply(root, line);
        }
}

static void check_btrfs(const char *root) {
        _cleanup_(ra_strv_freep) char **env = environment_of(BDI);
        _cleanup_(ra_inputs_clear) RaInputs h = {}, v = {};
        Database db = { .name = BDI };
        RaPropertySource helper = { get_environment, env, read_beneath, (void *) root },
                         daemon = { get_database, &db, read_beneath, (void *) root };
        const char *bad;

        ck_assert_int_eq(ra_inputs_read_btrfs(&h, root, BDI, &helper, &bad), 1);
        ck_assert_int_eq(ra_inputs_read_btrfs(&v, root, BDI, &daemon, &bad), 1);
        ck_assert_uint_eq(v.attrs.min_kb, 64);
        ck_assert_uint_gt(v.bdi.n_beneath, 0);
        for (size_t i = 0; i < v.bdi.n_beneath; i++)
                ck_assert_uint_gt(v.beneath_kb[i], 0);
        ck_assert_int_eq(ra_bdi_identity(&h.bdi, &h.identity), 0);
        ck_assert_int_eq(ra_bdi_identity(&v.bdi, &v.identity), 0);
        h.server_kb = ra_inputs_server_kb(&h.attrs, NULL, h.identity);
        v.server_kb = ra_inputs_server_kb(&v.attrs, NULL, v.identity);

        assert_inputs_eq(&h, &v, BDI);
        assert_decisions_eq(&h, &v, BDI);
}

START_TEST(test_both_sources_agree) {
        const char *tree = trees[_i];
        _cleanup_(ra_strv_freep) char **leaves = NULL;
        _cleanup_free_ char *root = test_tree_load(tree);

        check_block_devices(root, &leaves);
        ck_assert_msg(leaves, "%s: no disk at the bottom", tree);
        make_btrfs(root, leaves);
        check_btrfs(root);
        test_rm_rf(root);
}
END_TEST

/*
 * Whether a disk's queue is bio-based, from the directory the reader opened
 * for everything else (ra_disk_update() opens it no second time): blk-mq
 * queues have an mq directory, dm and md ones none.
 */
START_TEST(test_bio_based) {
        _cleanup_free_ char *root = test_tree_load("plain-vda");
        RaPropertySource none = { get_environment, NULL, read_beneath, NULL };
        const char *bad_attr, *bad_property;

        none.beneath_userdata = root;
        {
                _cleanup_(ra_inputs_clear) RaInputs in = {};

                ck_assert_int_eq(ra_inputs_read_disk(&in, root, "vda", &none, &bad_attr, &bad_property), 1);
                ck_assert(in.bio_based);
        }
        test_tree_apply(root, "d devices/pci0000:00/0000:00:02.0/virtio1/block/vda/mq\n");
        {
                _cleanup_(ra_inputs_clear) RaInputs in = {};

                ck_assert_int_eq(ra_inputs_read_disk(&in, root, "vda", &none, &bad_attr, &bad_property), 1);
                ck_assert(!in.bio_based);
        }
        test_rm_rf(root);
}
END_TEST

int main(void) {
        Suite *s = suite_create("inputs");
        TCase *tc = tcase_create("core");

        tcase_add_loop_test(tc, test_both_sources_agree, 0, ELEMENTSOF(trees));
        tcase_add_test(tc, test_bio_based);
        suite_add_tcase(s, tc);
        return test_run(s);
}
