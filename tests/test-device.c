/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <string.h>

#include "ra-device.h"
#include "test-helpers.h"

/* A /sys/block/<dev> directory as the kernel writes it for a 1 GiB SSD. */
static char *make_sysfs(void) {
        char *dir = test_mkdtemp();

        test_write(dir, "size", "2097152\n");
        test_write(dir, "removable", "0\n");
        test_write(dir, "queue/rotational", "0\n");
        test_write(dir, "queue/read_ahead_kb", "128\n");
        test_write(dir, "queue/max_sectors_kb", "1280\n");
        test_write(dir, "queue/max_hw_sectors_kb", "32767\n");
        test_write(dir, "queue/optimal_io_size", "131072\n");
        test_write(dir, "queue/logical_block_size", "512\n");
        return dir;
}

static int read_sysfs(const char *dir, RaDeviceAttrs *a, const char **bad) {
        _cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        return ra_device_attrs_read_sysfs(a, fd, bad);
}

START_TEST(test_sysfs_good) {
        _cleanup_free_ char *dir = make_sysfs();
        RaDeviceAttrs a = {};
        const char *bad = "unset";

        ck_assert_int_eq(read_sysfs(dir, &a, &bad), 0);
        ck_assert_ptr_null(bad);
        ck_assert_uint_eq(a.size_bytes, UINT64_C(1) << 30);
        ck_assert(!a.rotational);
        ck_assert(!a.removable);
        ck_assert_uint_eq(a.read_ahead_kb, 128);
        ck_assert_uint_eq(a.max_sectors_kb, 1280);
        ck_assert_uint_eq(a.max_hw_sectors_kb, 32767);
        ck_assert_uint_eq(a.optimal_io_bytes, 131072);
        ck_assert_uint_eq(a.logical_block_size, 512);
        ck_assert_ptr_null(a.backing_file);

        test_write(dir, "loop/backing_file", "/srv/images/disk one.img\n");
        ck_assert_int_eq(read_sysfs(dir, &a, &bad), 0);
        ck_assert_str_eq(a.backing_file, "/srv/images/disk one.img");

        ra_device_attrs_clear(&a);
        test_rm_rf(dir);
}
END_TEST

/* Optional attributes may be missing; the size and read_ahead_kb may not. */
START_TEST(test_sysfs_missing) {
        _cleanup_free_ char *dir = make_sysfs();
        char path[4200];
        RaDeviceAttrs a = {};
        const char *bad;

        snprintf(path, sizeof(path), "%s/queue/optimal_io_size", dir);
        ck_assert_int_eq(unlink(path), 0);
        snprintf(path, sizeof(path), "%s/removable", dir);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(read_sysfs(dir, &a, &bad), 0);
        ck_assert_uint_eq(a.optimal_io_bytes, 0);

        snprintf(path, sizeof(path), "%s/queue/read_ahead_kb", dir);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(read_sysfs(dir, &a, &bad), -ENOENT);
        ck_assert_str_eq(bad, "queue/read_ahead_kb");

        ra_device_attrs_clear(&a);
        test_rm_rf(dir);
}
END_TEST

START_TEST(test_sysfs_odd) {
        static const struct {
                const char *attr;
                const char *contents;
                int r;
        } cases[] = {
                { "size", "", -EINVAL },
                { "size", "\n", -EINVAL },
                { "size", "garbage\n", -EINVAL },
                { "size", "-1\n", -EINVAL },
                { "size", "12 34\n", -EINVAL },
                /* Sectors that would overflow bytes. */
                { "size", "36028797018963968\n", -ERANGE },
                { "size", "99999999999999999999999999\n", -ERANGE },
                /* Longer than any number: cut, not trusted. */
                { "size", "11111111111111111111111111111111111111111\n", -ERANGE },
                { "queue/read_ahead_kb", "\n", -EINVAL },
                { "queue/read_ahead_kb", "4294967296\n", -ERANGE },
                { "queue/read_ahead_kb", "0x80\n", -EINVAL },
                { "queue/max_sectors_kb", "lots\n", -EINVAL },
                { "queue/optimal_io_size", "99999999999\n", -ERANGE },
                { "queue/rotational", "2\n", -EINVAL },
                { "queue/rotational", "yes\n", -EINVAL },
                { "removable", "\n", -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *dir = make_sysfs();
                RaDeviceAttrs a = {};
                const char *bad = NULL;
                int r;

                test_write_n(dir, cases[i].attr, cases[i].contents, strlen(cases[i].contents));
                r = read_sysfs(dir, &a, &bad);
                ck_assert_msg(r == cases[i].r, "%s='%s': got %d, want %d", cases[i].attr, cases[i].contents,
                              r, cases[i].r);
                ck_assert_str_eq(bad, cases[i].attr);

                ra_device_attrs_clear(&a);
                test_rm_rf(dir);
        }
}
END_TEST

/* Properties from a NULL-terminated key, value, key, value, ... list. */
static const char *get_from_list(void *userdata, const char *key) {
        const char *const *l = userdata;

        for (size_t i = 0; l[i]; i += 2)
                if (strcmp(l[i], key) == 0)
                        return l[i + 1];
        return NULL;
}

START_TEST(test_properties) {
        const char *props[] = {
                "ID_BUS",
                "usb",
                "ID_MODEL",
                "Ultra_Fit",
                "ID_SERIAL",
                "SanDisk_Ultra_Fit_4C530001",
                "ID_WWN",
                "0x5000000000000001",
                "ID_WWN_WITH_EXTENSION",
                "0x5000000000000001abcd",
                "ID_PATH",
                "pci-0000:00:14.0-usb-0:1:1.0-scsi-0:0:0:0",
                "ID_FS_TYPE",
                "vfat",
                "RADAEMON_IGNORE",
                "0",
                "RADAEMON_READ_AHEAD_KB",
                "256",
                "RADAEMON_MIN_KB",
                "8",
                "RADAEMON_MAX_KB",
                "64",
                NULL,
        };
        RaDeviceAttrs a = { .name = strdup("sdb") };
        const char *bad = "unset";

        ck_assert_int_eq(ra_device_attrs_read_properties(&a, get_from_list, props, &bad), 0);
        ck_assert_ptr_null(bad);
        ck_assert_str_eq(a.bus, "usb");
        ck_assert_str_eq(a.model, "Ultra_Fit");
        ck_assert_str_eq(a.wwn, "0x5000000000000001abcd");
        ck_assert_str_eq(a.fs_type, "vfat");
        ck_assert(!a.ignore);
        ck_assert_uint_eq(a.pin_kb, 256);
        ck_assert_uint_eq(a.min_kb, 8);
        ck_assert_uint_eq(a.max_kb, 64);

        ra_device_attrs_guess_transport(&a, "/sys/devices/pci0000:00/usb1/1-1/block/sdb");
        ck_assert_str_eq(a.transport, "usb");

        ra_device_attrs_clear(&a);
}
END_TEST

START_TEST(test_properties_bad) {
        static const struct {
                const char *key, *value;
        } cases[] = {
                { "RADAEMON_IGNORE", "maybe" },      { "RADAEMON_IGNORE", "" },
                { "RADAEMON_READ_AHEAD_KB", "0" },   { "RADAEMON_READ_AHEAD_KB", "3" },
                { "RADAEMON_READ_AHEAD_KB", "-4" },  { "RADAEMON_READ_AHEAD_KB", "64k" },
                { "RADAEMON_MIN_KB", "4294967300" }, { "RADAEMON_MAX_KB", "2097152" },
                { "RADAEMON_MAX_KB", " 64" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                /* A valid property beside the bad one must still be taken. */
                bool good_is_min = strcmp(cases[i].key, "RADAEMON_MIN_KB") != 0;
                const char *props[] = {
                        cases[i].key, cases[i].value, good_is_min ? "RADAEMON_MIN_KB" : "RADAEMON_MAX_KB",
                        "8",          NULL,
                };
                RaDeviceAttrs a = {};
                const char *bad = NULL;
                int r;

                r = ra_device_attrs_read_properties(&a, get_from_list, props, &bad);
                ck_assert_msg(r == -EINVAL, "%s=%s accepted", cases[i].key, cases[i].value);
                ck_assert_str_eq(bad, cases[i].key);
                ck_assert_uint_eq(good_is_min ? a.min_kb : a.max_kb, 8);
                ra_device_attrs_clear(&a);
        }
}
END_TEST

START_TEST(test_identity) {
        static const struct {
                const char *wwn, *serial, *backing, *path, *want;
        } cases[] = {
                { "0x50014ee", "WDC_1", NULL, "pci-1", "wwn:0x50014ee/WD40EFRX/4000787030016" },
                { NULL, "WDC_1", NULL, "pci-1", "serial:WDC_1/WD40EFRX/4000787030016" },
                { NULL, NULL, "/tmp/disk.img", NULL, "loop:/tmp/disk.img" },
                { NULL, NULL, NULL, "pci-0000:00:1f.2-ata-1", "path:pci-0000:00:1f.2-ata-1" },
                { NULL, NULL, NULL, NULL, "name:vdb" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                RaDeviceAttrs a = {
                        .name = (char *) "vdb",
                        .wwn = (char *) cases[i].wwn,
                        .serial = (char *) cases[i].serial,
                        .backing_file = (char *) cases[i].backing,
                        .id_path = (char *) cases[i].path,
                        .model = (char *) "WD40EFRX",
                        .size_bytes = UINT64_C(4000787030016),
                };
                _cleanup_free_ char *id = NULL;

                ck_assert_int_eq(ra_device_identity(&a, &id), 0);
                ck_assert_str_eq(id, cases[i].want);
        }
}
END_TEST

/* One WWN on three scsi_debug disks, one serial on two units of a cheap USB bridge. */
START_TEST(test_identity_collision) {
        RaDeviceAttrs disk = {
                .name = (char *) "sdb",
                .wwn = (char *) "0x3333333000001f40",
                .serial = (char *) "3333333000001f40",
                .model = (char *) "scsi_debug",
                .size_bytes = UINT64_C(536870912000),
        };
        RaDeviceAttrs zoned = disk, other_model = disk, same = disk;
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

        zoned.name = (char *) "sdc";
        zoned.size_bytes = UINT64_C(1073741824);
        other_model.model = (char *) "ST4000DM004";
        /* The same disk again, on another port under another name. */
        same.name = (char *) "sdd";
        same.id_path = (char *) "pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0";

        ck_assert_int_eq(ra_device_identity(&disk, &a), 0);
        ck_assert_int_eq(ra_device_identity(&zoned, &b), 0);
        ck_assert_int_eq(ra_device_identity(&other_model, &c), 0);
        ck_assert_int_eq(ra_device_identity(&same, &d), 0);
        ck_assert_str_ne(a, b);
        ck_assert_str_ne(a, c);
        ck_assert_str_ne(b, c);
        ck_assert_str_eq(a, d);

        /* Without a WWN the serial speaks, with the model and size too. */
        disk.wwn = other_model.wwn = NULL;
        a = mfree(a);
        c = mfree(c);
        ck_assert_int_eq(ra_device_identity(&disk, &a), 0);
        ck_assert_int_eq(ra_device_identity(&other_model, &c), 0);
        ck_assert_str_ne(a, c);
}
END_TEST

START_TEST(test_identity_parts) {
        RaDeviceAttrs a = {
                .name = (char *) "sdb",
                .serial = (char *) "AB/C\\D",
                .model = (char *) "X/Y",
                .size_bytes = 512,
        };
        _cleanup_free_ char *id = NULL, *apart = NULL, *apart_name = NULL, *old = NULL;

        /* A "/" inside a part cannot make two devices' parts run together. */
        ck_assert_int_eq(ra_device_identity(&a, &id), 0);
        ck_assert_str_eq(id, "serial:AB\\x2fC\\x5cD/X\\x2fY/512");

        ck_assert_int_eq(ra_device_old_identity(&a, &old), 1);
        ck_assert_str_eq(old, "serial:AB/C\\D");

        a.id_path = (char *) "pci-0000:00:14.0-usb-0:2:1.0";
        ck_assert_int_eq(ra_device_identity_apart(&a, "serial:S/M/1", &apart), 0);
        ck_assert_str_eq(apart, "serial:S/M/1@path:pci-0000:00:14.0-usb-0:2:1.0");
        a.id_path = NULL;
        ck_assert_int_eq(ra_device_identity_apart(&a, "serial:S/M/1", &apart_name), 0);
        ck_assert_str_eq(apart_name, "serial:S/M/1@name:sdb");

        /* Loop, path and name identities were never anything else. */
        old = mfree(old);
        a.serial = NULL;
        a.backing_file = (char *) "/tmp/disk.img";
        ck_assert_int_eq(ra_device_old_identity(&a, &old), 0);
        ck_assert_ptr_null(old);
}
END_TEST

/* Identity of a stacked device from the properties udev gives it, read as the daemon reads them. */
static char *stacked_identity(const char *name, const char *const *props) {
        _cleanup_(ra_device_attrs_clear) RaDeviceAttrs a = { .name = strdup(name) };
        char *id = NULL;

        ck_assert_ptr_nonnull(a.name);
        ck_assert_int_eq(ra_device_attrs_read_properties(&a, get_from_list, (void *) props, NULL), 0);
        ck_assert_int_eq(ra_device_identity(&a, &id), 0);
        return id;
}

START_TEST(test_identity_stacked) {
        const char *lvm[] = { "DM_UUID", "LVM-Xq3pVd0kq8Yy1l2GmXgS0vJc5m6tQWqZ", "DM_NAME", "vg0-home",
                              NULL };
        const char *luks[] = { "DM_UUID", "CRYPT-LUKS2-6f0f3c1e8c2b4a8e9d5f2b7a1c9e4d30-luks-6f0f", NULL };
        const char *md[] = { "MD_UUID", "3a1b2c4d:5e6f7081:92a3b4c5:d6e7f809", "MD_LEVEL", "raid0", NULL };
        /* A member disk carries its array's MD_UUID too (mdadm --examine --export): not its identity. */
        const char *member[] = { "MD_UUID", "3a1b2c4d:5e6f7081:92a3b4c5:d6e7f809", "ID_SERIAL", "WDC_1",
                                 NULL };
        const char *no_uuid[] = { "DM_NAME", "plain", NULL };
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;

        /* dm-N and mdN follow creation order; what udev reads from dm and md does not. */
        a = stacked_identity("dm-0", lvm);
        ck_assert_str_eq(a, "dm:LVM-Xq3pVd0kq8Yy1l2GmXgS0vJc5m6tQWqZ");
        b = stacked_identity("dm-3", luks);
        ck_assert_str_eq(b, "dm:CRYPT-LUKS2-6f0f3c1e8c2b4a8e9d5f2b7a1c9e4d30-luks-6f0f");
        c = stacked_identity("md127", md);
        ck_assert_str_eq(c, "md:3a1b2c4d:5e6f7081:92a3b4c5:d6e7f809");
        d = stacked_identity("sdb", member);
        ck_assert_str_eq(d, "serial:WDC_1//0");
        /* A table without a uuid has nothing stable but its name. */
        e = stacked_identity("dm-5", no_uuid);
        ck_assert_str_eq(e, "name:dm-5");
}
END_TEST

START_TEST(test_transport) {
        static const struct {
                const char *name, *bus, *syspath, *want;
        } cases[] = {
                { "sda", "ata", "/sys/devices/pci0000:00/ata1/host0/block/sda", "ata" },
                { "sdb", NULL, "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/block/sdb", "usb" },
                { "nvme0n1", NULL, "/sys/devices/pci0000:00/nvme/nvme0/nvme0n1", "nvme" },
                { "loop3", NULL, "/sys/devices/virtual/block/loop3", "loop" },
                { "vda", NULL, "/sys/devices/pci0000:00/virtio1/block/vda", "virtio" },
                { "weird0", NULL, "/sys/devices/virtual/block/weird0", "unknown" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                RaDeviceAttrs a = { .name = (char *) cases[i].name, .bus = (char *) cases[i].bus };

                ra_device_attrs_guess_transport(&a, cases[i].syspath);
                ck_assert_str_eq(a.transport, cases[i].want);
        }
}
END_TEST

int main(void) {
        Suite *s = suite_create("device");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_sysfs_good);
        tcase_add_test(tc, test_sysfs_missing);
        tcase_add_test(tc, test_sysfs_odd);
        tcase_add_test(tc, test_properties);
        tcase_add_test(tc, test_properties_bad);
        tcase_add_test(tc, test_identity);
        tcase_add_test(tc, test_identity_collision);
        tcase_add_test(tc, test_identity_parts);
        tcase_add_test(tc, test_identity_stacked);
        tcase_add_test(tc, test_transport);
        suite_add_tcase(s, tc);

        return test_run(s);
}
