/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bdis of mounted file systems, found in a mountinfo and a sysfs tree of
 * our own (btrfs over two devices striped and over two mirrored, FUSE,
 * fuseblk, NFS, tmpfs), and the first value each gets.
 */
#include "config.h"

#include <check.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ra-mounts.h"
#include "test-helpers.h"

static const RaBounds any = { .min_kb = RA_KB_MIN, .max_kb = RA_KB_LIMIT };

/* A btrfs file system as /sys/fs/btrfs shows it once mounted. */
static void write_btrfs(const char *dir, const char *uuid, const char *bdi, const char *profile,
                        const char *dev1, const char *devno1, const char *dev2, const char *devno2) {
        char path[4200], target[128];

        (void) snprintf(path, sizeof(path), "sys/fs/btrfs/%s/devices/%s/dev", uuid, dev1);
        test_write_n(dir, path, devno1, strlen(devno1));
        (void) snprintf(path, sizeof(path), "sys/fs/btrfs/%s/devices/%s/dev", uuid, dev2);
        test_write_n(dir, path, devno2, strlen(devno2));
        (void) snprintf(path, sizeof(path), "sys/fs/btrfs/%s/allocation/data/%s/total_bytes", uuid, profile);
        test_write(dir, path, "0\n");
        (void) snprintf(path, sizeof(path), "sys/class/bdi/%s/read_ahead_kb", bdi);
        test_write(dir, path, "4096\n");
        (void) snprintf(path, sizeof(path), "%s/sys/fs/btrfs/%s/bdi", dir, uuid);
        (void) snprintf(target, sizeof(target), "../../../devices/virtual/bdi/%s", bdi);
        ck_assert_int_eq(symlink(target, path), 0);
}

static const RaBdi *find(const RaBdi *v, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i].name, name) == 0)
                        return &v[i];
        return NULL;
}

START_TEST(test_scan) {
        char *dir = test_mkdtemp(), mountinfo[4200], sys[4200];
        _cleanup_free_ char *id = NULL;
        const RaBdi *b;
        RaBdi *v = NULL;
        size_t n = 0;

        write_btrfs(dir, "1111-aaaa", "btrfs-3", "raid0", "loop4", "7:4\n", "loop5", "7:5\n");
        write_btrfs(dir, "2222-bbbb", "btrfs-4", "raid1", "sdb1", "8:17\n", "sdc1", "8:33\n");
        test_write(dir, "sys/class/bdi/0:52/read_ahead_kb", "64\n");
        test_write(dir, "sys/class/bdi/0:60/read_ahead_kb", "128\n");
        test_write(dir, "sys/class/bdi/8:49-fuseblk/read_ahead_kb", "128\n");
        test_write(dir, "sys/class/bdi/0:62/read_ahead_kb", "128\n");
        test_write(dir, "mountinfo",
                   "22 1 254:1 / / rw - ext4 /dev/vda1 rw\n"
                   "23 22 0:25 / /tmp rw - tmpfs tmpfs rw\n"
                   "30 22 0:40 / /srv/media rw - btrfs /dev/loop4 rw,space_cache=v2,subvolid=5,subvol=/\n"
                   "31 22 0:40 /photos /home/photos rw - btrfs /dev/loop4 rw,subvolid=257,subvol=/photos\n"
                   "32 22 0:41 / /backup rw - btrfs /dev/sdc1 rw\n"
                   "33 22 0:52 / /home/me/remote rw,nosuid - fuse.sshfs me@host: rw,user_id=0\n"
                   "34 22 0:60 / /net/export rw - nfs4 server:/export "
                   "rw,vers=4.2,rsize=1048576,wsize=1048576\n"
                   "35 22 8:49 / /media/win rw - fuseblk /dev/sdd1 rw,user_id=0\n"
                   "36 22 0:61 / /mnt/x rw - nfs4 server:/x rw,vers=4.2\n" /* no bdi in sys: skipped */
                   "37 22 0:62 / /home/u/m rw,nosuid,nodev - fuse.sshfs u@host: "
                   "rw,user_id=1000,group_id=1000\n");
        (void) snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", dir);
        (void) snprintf(sys, sizeof(sys), "%s/sys", dir);

        ck_assert_int_eq(ra_mounts_bdis(mountinfo, sys, &v, &n), 0);
        ck_assert_uint_eq(n, 6);

        /* Found from its source device; its subvolume's mount is the same superblock. */
        b = find(v, n, "btrfs-3");
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(b->kind, RA_BDI_BTRFS);
        ck_assert_str_eq(b->mountpoint, "/srv/media");
        ck_assert_uint_eq(b->s_dev, makedev(0, 40));
        ck_assert_int_eq(b->mount_id, 30); /* its first mount's: a remount under the name is another */
        ck_assert_uint_eq(b->n_beneath, 2);
        ck_assert_uint_eq(b->stripes, 2);
        ck_assert_int_eq(ra_bdi_identity(b, &id), 0);
        ck_assert_str_eq(id, "btrfs:1111-aaaa");

        /* Mounted from its second device, mirrored: a read goes to one. */
        b = find(v, n, "btrfs-4");
        ck_assert_ptr_nonnull(b);
        ck_assert_uint_eq(b->n_beneath, 2);
        ck_assert_uint_eq(b->stripes, 1);

        b = find(v, n, "0:52");
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(b->kind, RA_BDI_FUSE);
        ck_assert_str_eq(b->fs_type, "fuse.sshfs");
        ck_assert_uint_eq(b->n_beneath, 0);
        free(id);
        ck_assert_int_eq(ra_bdi_identity(b, &id), 0);
        ck_assert_str_eq(id, "fuse:fuse.sshfs:me@host:@/home/me/remote");
        /* Root's: no user's quota. */
        ck_assert(!b->user_made);

        /* fusermount's, for a user (RA_STATE_USER_QUOTA). */
        b = find(v, n, "0:62");
        ck_assert_ptr_nonnull(b);
        ck_assert(b->user_made);
        ck_assert_uint_eq(b->user_id, 1000);

        b = find(v, n, "0:60");
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(b->kind, RA_BDI_NFS);
        ck_assert_uint_eq(b->rsize_kb, 1024);
        free(id);
        ck_assert_int_eq(ra_bdi_identity(b, &id), 0);
        ck_assert_str_eq(id, "nfs:server:/export");

        b = find(v, n, "8:49-fuseblk");
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(b->kind, RA_BDI_FUSEBLK);
        ck_assert_uint_eq(b->n_beneath, 1);
        ck_assert_uint_eq(b->beneath[0], makedev(8, 49));

        ra_bdi_array_free(v, n);

        /* btrfs's bdi by name, as the udev helper knows it before the mount is done. */
        RaBdi byname = { .name = strdup("btrfs-4") };
        ck_assert_int_eq(ra_bdi_read_btrfs(sys, NULL, &byname), 0);
        ck_assert_str_eq(byname.uuid, "2222-bbbb");
        ra_bdi_clear(&byname);
        byname.name = strdup("btrfs-9");
        ck_assert_int_eq(ra_bdi_read_btrfs(sys, NULL, &byname), -ENOENT);
        ra_bdi_clear(&byname);

        test_rm_rf(dir);
        free(dir);
}
END_TEST

START_TEST(test_prior) {
        RaBdi b = { .kind = RA_BDI_BTRFS, .n_beneath = 2, .stripes = 1 };
        uint32_t usb_and_ssd[] = { 128, 512 }, kb[] = { 512 };
        RaDecision d;

        /* Not the kernel's 4 MiB: the slower device's prior. */
        ra_bdi_prior(&b, usb_and_ssd, 4096, any, &d);
        ck_assert_uint_eq(d.kb, 128);
        ck_assert_int_eq(d.source, RA_SOURCE_PRIOR);
        ck_assert_ptr_nonnull(strstr(d.reason, "slowest device"));

        /* Striped over both: a window as wide as the stripe. */
        b.stripes = 2;
        ra_bdi_prior(&b, usb_and_ssd, 4096, any, &d);
        ck_assert_uint_eq(d.kb, 256);
        ck_assert_ptr_nonnull(strstr(d.reason, "striped over 2"));
        ra_bdi_prior(&b, usb_and_ssd, 4096, (RaBounds){ .min_kb = 4, .max_kb = 64 }, &d);
        ck_assert_uint_eq(d.kb, 64);

        /* Devices not read yet: nothing to say. */
        ra_bdi_prior(&b, (uint32_t[]){ 0, 0 }, 4096, any, &d);
        ck_assert_uint_eq(d.kb, 0);

        /* FUSE: the server's window; fuseblk: its disk's prior. */
        b = (RaBdi){ .kind = RA_BDI_FUSE };
        ra_bdi_prior(&b, NULL, 64, any, &d);
        ck_assert_uint_eq(d.kb, 64);
        ck_assert_ptr_nonnull(strstr(d.reason, "server"));
        b = (RaBdi){ .kind = RA_BDI_FUSEBLK, .n_beneath = 1 };
        ra_bdi_prior(&b, kb, 128, any, &d);
        ck_assert_uint_eq(d.kb, 512);

        /* NFS: 15 rsize, at most 16 MiB; without rsize the kernel's. */
        b = (RaBdi){ .kind = RA_BDI_NFS, .rsize_kb = 1024 };
        ra_bdi_prior(&b, NULL, 128, any, &d);
        ck_assert_uint_eq(d.kb, 15360);
        b.rsize_kb = 4096;
        ra_bdi_prior(&b, NULL, 128, any, &d);
        ck_assert_uint_eq(d.kb, 16384);
        b.rsize_kb = 0;
        ra_bdi_prior(&b, NULL, 128, any, &d);
        ck_assert_uint_eq(d.kb, 128);

        ck_assert_int_eq(ra_bdi_kind_from_fs_type("fuse.sshfs"), RA_BDI_FUSE);
        ck_assert_int_eq(ra_bdi_kind_from_fs_type("fuseblk"), RA_BDI_FUSEBLK);
        ck_assert_int_eq(ra_bdi_kind_from_fs_type("nfs"), RA_BDI_NFS);
        ck_assert_int_eq(ra_bdi_kind_from_fs_type("cifs"), RA_BDI_OTHER);
}
END_TEST

/* bdis= and [bdi:GLOB] see the words known: a btrfs being mounted has no mount point yet. */
START_TEST(test_keys) {
        RaBdi b = { .name = (char *) "btrfs-7", .fs_type = (char *) "btrfs" };
        const char *keys[4];

        ra_bdi_keys(&b, keys);
        ck_assert_str_eq(keys[0], "btrfs-7");
        ck_assert_str_eq(keys[1], "btrfs");
        ck_assert_ptr_null(keys[2]);

        b.mountpoint = (char *) "/srv";
        ra_bdi_keys(&b, keys);
        ck_assert_str_eq(keys[1], "/srv");
        ck_assert_str_eq(keys[2], "btrfs");
        ck_assert_ptr_null(keys[3]);
}
END_TEST

/* A FUSE server's INIT answer only lowers the window, to at most its offer, once, soon after the mount. */
START_TEST(test_fuse_init_answer) {
        RaBdi fuse = { .kind = RA_BDI_FUSE }, btrfs = { .kind = RA_BDI_BTRFS };
        uint64_t soon = 1000, late = RA_BDI_FUSE_INIT_USEC;

        /* The prior (128, the kernel's offer) lowered to the server's 64. */
        ck_assert(ra_bdi_fuse_init_answer(&fuse, true, soon, 128, 128, 64));
        /* A pin of 1024 written before the answer: min(1024, 128). */
        ck_assert(ra_bdi_fuse_init_answer(&fuse, true, soon, 128, 1024, 128));
        /* Not the answer: a raise, a value above the offer, seen once already, too late, not FUSE. */
        ck_assert(!ra_bdi_fuse_init_answer(&fuse, true, soon, 128, 64, 128));
        ck_assert(!ra_bdi_fuse_init_answer(&fuse, true, soon, 128, 1024, 512));
        ck_assert(!ra_bdi_fuse_init_answer(&fuse, false, soon, 128, 1024, 128));
        ck_assert(!ra_bdi_fuse_init_answer(&fuse, true, late, 128, 1024, 128));
        ck_assert(!ra_bdi_fuse_init_answer(&btrfs, true, soon, 4096, 8192, 128));
}
END_TEST

int main(void) {
        Suite *s = suite_create("bdi");
        TCase *tc = tcase_create("bdi");

        tcase_add_test(tc, test_scan);
        tcase_add_test(tc, test_prior);
        tcase_add_test(tc, test_keys);
        tcase_add_test(tc, test_fuse_init_answer);
        suite_add_tcase(s, tc);
        return test_run(s);
}
