/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which window the files under a path read with (common/ra-path.c), and the
 * [path:PATH] sections that follow it (common/ra-config.c), over a sysfs
 * tree and a mountinfo of our own.
 */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "ra-config.h"
#include "ra-path.h"
#include "ra-util.h"
#include "test-helpers.h"

static char *dir;
static char sys[4200], mountinfo[4200], fstab[4200];

static void link_in(const char *name, const char *target) {
        char path[4200];

        (void) snprintf(path, sizeof(path), "%s/%s", dir, name);
        ck_assert_int_eq(symlink(target, path), 0);
}

/*
 * sda with a partition, dm-3 (an LV), a btrfs on sdb, a FUSE mount's bdi
 * 0:60, a fuseblk on sdc1 and a tmpfs with no bdi.
 */
static void setup(void) {
        dir = test_mkdtemp();
        (void) snprintf(sys, sizeof(sys), "%s/sys", dir);
        (void) snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", dir);
        (void) snprintf(fstab, sizeof(fstab), "%s/fstab", dir);
        test_write(dir, "fstab",
                   "UUID=1234 / ext4 defaults 0 1\n"
                   "/dev/mapper/vg-db /srv xfs defaults 0 2\n"
                   "/dev/sdd1 /not/mounted ext4 defaults 0 2\n");

        test_write(dir, "sys/devices/pci0/host0/block/sda/sda1/partition", "1\n");
        test_write(dir, "sys/devices/virtual/block/dm-3/dm/name", "vg-db\n");
        test_write(dir, "sys/devices/pci0/host0/block/sdc/sdc1/partition", "1\n");
        test_write(dir, "sys/dev/block/.keep", "");
        link_in("sys/dev/block/8:1", "../../devices/pci0/host0/block/sda/sda1");
        link_in("sys/dev/block/8:0", "../../devices/pci0/host0/block/sda");
        link_in("sys/dev/block/253:3", "../../devices/virtual/block/dm-3");
        link_in("sys/dev/block/8:33", "../../devices/pci0/host0/block/sdc/sdc1");

        test_write(dir, "sys/fs/btrfs/1111-aaaa/devices/sdb/dev", "8:16\n");
        test_write(dir, "sys/fs/btrfs/1111-aaaa/allocation/data/single/total_bytes", "0\n");
        test_write(dir, "sys/devices/virtual/bdi/btrfs-2/read_ahead_kb", "4096\n");
        test_write(dir, "sys/devices/virtual/bdi/0:60/read_ahead_kb", "128\n");
        test_write(dir, "sys/devices/virtual/bdi/8:33-fuseblk/read_ahead_kb", "128\n");
        test_write(dir, "sys/class/bdi/.keep", "");
        link_in("sys/class/bdi/btrfs-2", "../../devices/virtual/bdi/btrfs-2");
        link_in("sys/class/bdi/0:60", "../../devices/virtual/bdi/0:60");
        link_in("sys/class/bdi/8:33-fuseblk", "../../devices/virtual/bdi/8:33-fuseblk");
        link_in("sys/fs/btrfs/1111-aaaa/bdi", "../../../devices/virtual/bdi/btrfs-2");

        test_write(dir, "mountinfo",
                   "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                   "23 22 253:3 / /srv rw,relatime - xfs /dev/mapper/vg-db rw\n"
                   "24 23 0:50 /data /srv/db rw,relatime - btrfs /dev/sdb rw,subvol=/data\n"
                   "25 22 0:60 / /mnt/remote rw,nosuid - fuse.sshfs host:/home rw,user_id=0\n"
                   "26 22 8:33 / /mnt/win rw - fuseblk /dev/sdc1 rw,user_id=0\n"
                   "27 22 0:30 / /tmp rw - tmpfs tmpfs rw\n");
}

static void teardown(void) {
        test_rm_rf(dir);
        free(dir);
}

static void check(const char *path, int r, bool bdi, const char *name, const char *mountpoint) {
        RaPathObject o = {};

        ck_assert_int_eq(ra_path_object(sys, mountinfo, fstab, path, &o), r);
        if (r == 0) {
                ck_assert_int_eq(o.bdi, bdi);
                ck_assert_str_eq(o.name, name);
                ck_assert_str_eq(o.mountpoint, mountpoint);
        }
        ra_path_object_clear(&o);
}

START_TEST(test_objects) {
        /* A partition's files read with its disk's window. */
        check("/etc/passwd", 0, false, "sda", "/");
        check("/", 0, false, "sda", "/");
        /* The top of a stack, and the deepest mount wins. */
        check("/srv", 0, false, "dm-3", "/srv");
        check("/srv/www/index.html", 0, false, "dm-3", "/srv");
        /* A btrfs subvolume reads with the file system's bdi, not the disk's. */
        check("/srv/db/base/1234", 0, true, "btrfs-2", "/srv/db");
        /* FUSE: the anonymous dev's bdi; fuseblk: its disk's. */
        check("/mnt/remote/x", 0, true, "0:60", "/mnt/remote");
        check("/mnt/win", 0, true, "8:33-fuseblk", "/mnt/win");
        /* A name that only begins like a mount point is not under it. */
        check("/srvx/a", 0, false, "sda", "/");
        /* Nothing reads ahead for tmpfs; a relative path is the caller's to make absolute. */
        check("/tmp/file", -ENODEV, false, NULL, NULL);
        check("srv", -EINVAL, false, NULL, NULL);
        /* fstab mounts a file system there that is not mounted yet: not the root's. */
        check("/not/mounted/yet", -EAGAIN, false, NULL, NULL);
        check("/not", 0, false, "sda", "/");
}
END_TEST

START_TEST(test_is_path) {
        ck_assert(ra_path_is_path("/var/lib/postgresql"));
        ck_assert(ra_path_is_path("./data"));
        ck_assert(ra_path_is_path("."));
        ck_assert(ra_path_is_path(".."));
        ck_assert(!ra_path_is_path("sda"));
        ck_assert(!ra_path_is_path("btrfs-2"));
        ck_assert(!ra_path_is_path("0:60"));
}
END_TEST

static RaConfig *parse(const char *text, size_t n_errors) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        RaConfig *c = NULL;

        ck_assert_int_eq(ra_config_new(&c), 0);
        (void) ra_config_parse_text(c, "test.conf", text, strlen(text), &errors);
        ck_assert_uint_eq(ra_strv_length(errors), n_errors);
        return c;
}

START_TEST(test_sections) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        RaSettings s;
        bool changed;

        c = parse("[path:/srv/www]\nread_ahead_kb = 512\n"
                  "[path:/srv/db]\nmax_kb = 64\n"
                  "[path:/mnt/win]\nignore = yes\n"
                  "[path:/not/mounted/yet]\nread_ahead_kb = 8\n",
                  0);

        /* Nothing applies before the paths are resolved. */
        ra_config_device_settings(c, "dm-3", &s);
        ck_assert_uint_eq(s.config_kb, 0);

        ck_assert_int_eq(ra_config_resolve_paths(c, sys, mountinfo, fstab, NULL, &changed), 0);
        ck_assert(changed);
        ra_config_device_settings(c, "dm-3", &s);
        ck_assert_uint_eq(s.config_kb, 512);
        ra_config_device_settings(c, "sda", &s);
        ck_assert_uint_eq(s.config_kb, 0);
        /* A bdi's section is for the bdi, never a disk of the same name. */
        ra_config_bdi_settings(c, (const char *[]){ "btrfs-2", "/srv/db", "btrfs", NULL }, &s);
        ck_assert_uint_eq(s.bounds.max_kb, 64);
        ra_config_device_settings(c, "btrfs-2", &s);
        ck_assert_uint_ne(s.bounds.max_kb, 64);
        ck_assert(
                !ra_config_manages_bdi(c, (const char *[]){ "8:33-fuseblk", "/mnt/win", "fuseblk", NULL }));
        ck_assert(ra_config_manages(c, "dm-3"));

        /* Resolved again with nothing moved: no change. */
        ck_assert_int_eq(ra_config_resolve_paths(c, sys, mountinfo, fstab, NULL, &changed), 0);
        ck_assert(!changed);

        /* /srv unmounted, as fstab still mounts it: waiting for it, for nobody now. */
        test_write(dir, "mountinfo", "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n");
        ck_assert_int_eq(ra_config_resolve_paths(c, sys, mountinfo, fstab, NULL, &changed), 0);
        ck_assert(changed);
        ra_config_device_settings(c, "dm-3", &s);
        ck_assert_uint_eq(s.config_kb, 0);
        ra_config_device_settings(c, "sda", &s);
        ck_assert_uint_eq(s.config_kb, 0);

        /* Out of fstab too: /srv/www is a directory of the root's now. */
        test_write(dir, "fstab",
                   "UUID=1234 / ext4 defaults 0 1\n/dev/sdd1 /not/mounted ext4 defaults 0 2\n");
        ck_assert_int_eq(ra_config_resolve_paths(c, sys, mountinfo, fstab, NULL, &changed), 0);
        ck_assert(changed);
        ra_config_device_settings(c, "sda", &s);
        ck_assert_uint_eq(s.config_kb, 512);
}
END_TEST

START_TEST(test_bad_sections) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;

        /* Relative, dotted, an unknown key and a bad ignore: each its own error. */
        c = parse("[path:srv]\nread_ahead_kb = 8\n"
                  "[path:/srv/../etc]\nread_ahead_kb = 8\n"
                  "[path:/srv]\nspeed = 8\nignore = maybe\n",
                  4);
}
END_TEST

/* chase(path): ra_path_chase() of dir + path, with dir cut off the answer again. */
static int chase(const char *path, char **ret) {
        _cleanup_free_ char *full = NULL, *real = NULL;
        int r;

        *ret = NULL;
        ck_assert_int_ge(asprintf(&full, "%s%s", dir, path), 0);
        r = ra_path_chase(full, &real);
        if (r < 0)
                return r;
        ck_assert_msg(strncmp(real, dir, strlen(dir)) == 0, "%s left %s", path, real);
        *ret = strdup(real + strlen(dir));
        return 0;
}

static const char *in_dir(const char *name) {
        static char path[4200];

        (void) snprintf(path, sizeof(path), "%s/%s", dir, name);
        return path;
}

static void user_link(const char *name, const char *target, uid_t uid) {
        char path[4200];

        link_in(name, target);
        (void) snprintf(path, sizeof(path), "%s/%s", dir, name);
        ck_assert_int_eq(lchown(path, uid, uid), 0);
}

/* path (below dir) resolves to want (below dir). */
static void chased_to(const char *path, const char *want) {
        _cleanup_free_ char *real = NULL;

        ck_assert_int_eq(chase(path, &real), 0);
        ck_assert_str_eq(real, want);
}

/* Links followed only when root's: a user's, in a directory of theirs, could be swapped in. */
START_TEST(test_chase) {
        char *real;

        if (geteuid() != 0)
                return; /* lchown to another user needs root; make check runs as root */
        test_write(dir, "srv/data/db/base", "");
        ck_assert_int_eq(mkdir(in_dir("srv/users"), 0755), 0);
        link_in("srv/www", "data");
        link_in("srv/abs", "/nowhere/x");
        link_in("srv/up", "../srv/data/./db");
        user_link("srv/users/alice", "../data", 1000);

        chased_to("/srv/data/db/base", "/srv/data/db/base");
        /* Root's links, relative, through "..", and what is not there yet kept as written. */
        chased_to("/srv/www/db", "/srv/data/db");
        chased_to("/srv/up/base", "/srv/data/db/base");
        chased_to("/srv//data/../www/not/mounted/yet", "/srv/data/not/mounted/yet");
        /* A user's link is refused, wherever it is on the way. */
        ck_assert_int_eq(chase("/srv/users/alice", &real), -EPERM);
        ck_assert_int_eq(chase("/srv/users/alice/db/base", &real), -EPERM);
        /* Relative; a loop of links. */
        ck_assert_int_eq(ra_path_chase("srv", &real), -EINVAL);
        link_in("srv/loop", "loop");
        ck_assert_int_eq(chase("/srv/loop/x", &real), -ELOOP);
        /* An absolute target starts at the root again. */
        ck_assert_int_eq(ra_path_chase(in_dir("srv/abs/y"), &real), 0);
        ck_assert_str_eq(real, "/nowhere/x/y");
        free(real);
}
END_TEST

int main(void) {
        Suite *s = suite_create("path");
        TCase *tc = tcase_create("path");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_objects);
        tcase_add_test(tc, test_is_path);
        tcase_add_test(tc, test_sections);
        tcase_add_test(tc, test_bad_sections);
        tcase_add_test(tc, test_chase);
        suite_add_tcase(s, tc);
        return test_run(s);
}
