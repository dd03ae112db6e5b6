/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include "ra-calib-safe.h"
#include "ra-calib.h"
#include "sysfs-tree.h"
#include "test-helpers.h"

#define MB 1000000.0
#define MIB 1048576.0
static const RaBounds bounds = { .min_kb = 4, .max_kb = 8192 };

/* A read of kb on a device costing command_us a command and mb_s MB/s, as the calibration times it. */
static RaCalibSample flash_read(uint32_t kb, double command_us, double mb_s) {
        return (RaCalibSample){ .kb = kb,
                                .nsec = (uint64_t) (command_us * 1000 + kb * 1024.0 / (mb_s * MB) * 1e9) };
}

/* Five passes of every size, as the daemon reads them. */
static size_t passes(RaCalibSample *s, uint32_t max_kb, double command_us, double mb_s) {
        uint32_t sizes[RA_CALIB_POINTS_MAX];
        size_t n = 0, m = ra_calib_sizes(max_kb, sizes);

        for (int pass = 0; pass < 5; pass++)
                for (size_t i = 0; i < m; i++)
                        s[n++] = flash_read(sizes[i], command_us, mb_s);
        return n;
}

static RaDeviceAttrs device(uint64_t size, bool rotational) {
        return (RaDeviceAttrs){ .size_bytes = size, .rotational = rotational, .read_ahead_kb = 128 };
}

START_TEST(test_sizes) {
        uint32_t s[RA_CALIB_POINTS_MAX];

        ck_assert_uint_eq(ra_calib_sizes(1024, s), 5);
        ck_assert_uint_eq(s[0], 4);
        ck_assert_uint_eq(s[4], 1024);
        /* A USB stick's 120 KiB commands: the largest read is one command. */
        ck_assert_uint_eq(ra_calib_sizes(120, s), 4);
        ck_assert_uint_eq(s[3], 120);
        /* Never above 1 MiB, whatever a queue allows. */
        ck_assert_uint_eq(ra_calib_sizes(32767, s), 5);
        ck_assert_uint_eq(s[4], 1024);
}
END_TEST

/* Seed 004's SSD behind a heavy controller, as the ssd-ctrl class models it: 250 us a command, 270 MB/s. */
START_TEST(test_fit_ssd_ctrl) {
        RaCalibSample s[RA_CALIB_SAMPLES_MAX];
        size_t n = passes(s, 1024, 250, 270);
        RaDeviceAttrs a = device(22 * 1000 * MB, false);
        RaCalib c;
        RaDecision d;
        uint64_t bytes = 0, nsec = 0;

        for (size_t i = 0; i < n; i++) {
                bytes += s[i].kb * 1024ULL;
                nsec += s[i].nsec;
        }
        ck_assert_uint_le(bytes, RA_CALIB_BYTES_MAX);
        ck_assert_uint_le(nsec, RA_CALIB_NSEC_MAX);

        ck_assert_int_eq(ra_calib_fit(s, n, 1764150000, &c), 0);
        ck_assert_uint_eq(c.n_points, 5);
        ck_assert_uint_ge(c.command_us, 245);
        ck_assert_uint_le(c.command_us, 255);
        ck_assert_uint_ge(c.bandwidth_kb_s, 270 * MB / 1024 * 0.98);
        ck_assert_uint_le(c.bandwidth_kb_s, 270 * MB / 1024 * 1.02);
        ck_assert_uint_eq(c.jump_us, 0);

        /* 19 x 250 us x 263671 KiB/s = 1252 KiB: one stream needs 2 MiB windows for 95 % of it. */
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_uint_eq(d.kb, 2048);
        ck_assert_msg(strstr(d.reason, "250 us a command"), "reason: %s", d.reason);

        /* Another process slowed some reads (a loaded machine): the fastest of each size still fits. */
        for (size_t i = 0; i < n; i += 3)
                s[i].nsec *= 2;
        ck_assert_int_eq(ra_calib_fit(s, n, 1764150000, &c), 0);
        ck_assert_uint_ge(c.command_us, 245);
        ck_assert_uint_le(c.command_us, 255);
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 2048);
}
END_TEST

/*
 * Seed 004's own table, read one window at a time: 64 KiB 125 MB/s, 128 KiB
 * 183, 256 KiB 216, 512 KiB 216, 1 MiB 251. Fitted, it still says 1 MiB.
 */
START_TEST(test_fit_seed_004_table) {
        static const struct {
                uint32_t kb;
                double mb_s;
        } rows[] = { { 64, 125 }, { 128, 183 }, { 256, 216 }, { 512, 216 }, { 1024, 251 } };
        RaCalibSample s[ELEMENTSOF(rows)];
        RaDeviceAttrs a = device(22 * 1000 * MB, false);
        RaCalib c;
        RaDecision d;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                s[i] = flash_read(rows[i].kb, 0, rows[i].mb_s);
        ck_assert_int_eq(ra_calib_fit(s, ELEMENTSOF(s), 1, &c), 0);
        ck_assert_uint_ge(c.command_us, 200);
        ck_assert_uint_le(c.command_us, 400);
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_ge(d.kb, 1024);
}
END_TEST

/*
 * What the sanitizer build's model of that device gave in CI: the 4 KiB to
 * 256 KiB reads on the model's curve, the 1 MiB read a third slower (the
 * model's server, slowed by the sanitizers, copying 1 MiB). Plain least
 * squares said 157 us a command; the 4 KiB reads alone take 266.
 */
START_TEST(test_fit_one_slow_large_read) {
        static const struct {
                uint32_t kb;
                double mib_s;
        } rows[] = { { 4, 14.7 }, { 16, 50.1 }, { 64, 124.6 }, { 256, 194.2 }, { 1024, 178.4 } };
        RaCalibSample s[ELEMENTSOF(rows)];
        RaCalib c;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                s[i] = flash_read(rows[i].kb, 0, rows[i].mib_s * MIB / MB);
        ck_assert_int_eq(ra_calib_fit(s, ELEMENTSOF(s), 1, &c), 0);
        ck_assert_uint_ge(c.command_us, 225);
        ck_assert_uint_le(c.command_us, 265);
        ck_assert_uint_ge(c.bandwidth_kb_s, 200 * 1024);
}
END_TEST

/* The hdd-7200 class: 50 us a command, about 150 MB/s in the middle, 8.5 ms seeks and half a turn. */
START_TEST(test_fit_hdd) {
        RaCalibSample s[RA_CALIB_SAMPLES_MAX];
        size_t n = passes(s, 1024, 50, 150);
        RaDeviceAttrs a = device(1000 * 1000 * MB, true);
        RaCalib c;
        RaDecision d, prior;

        ck_assert_uint_le(n + 8, RA_CALIB_SAMPLES_MAX);
        for (int i = 0; i < 8; i++) {
                s[n] = flash_read(4, 50 + 8500 + 4170 + (i % 3) * 500, 150);
                s[n++].jump = true;
        }
        ck_assert_int_eq(ra_calib_fit(s, n, 1, &c), 0);
        ck_assert_uint_ge(c.jump_us, 12600);
        ck_assert_uint_le(c.jump_us, 13300);

        /* 13.1 ms at 143 MiB/s reads 1.9 MiB: more than its prior's 512 KiB, which stands. */
        ra_calib_prior(&c, &a, bounds, &d);
        ra_policy_prior(&a, bounds, &prior);
        ck_assert_uint_eq(d.kb, prior.kb);
        ck_assert_uint_eq(d.kb, 512);
        ck_assert_int_eq(d.source, RA_SOURCE_CALIBRATED);
        ck_assert_msg(strstr(d.reason, "a jump costs 13.1 ms") && strstr(d.reason, "the prior stands"),
                      "reason: %s", d.reason);

        /* A disk whose jumps read less than its prior (3 ms at 143 MiB/s: 439 KiB): the window of one jump.
         */
        c.jump_us = 3000;
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 512);
        c.jump_us = 1500;
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 256);
        ck_assert_msg(strstr(d.reason, "a jump costs only 1.5 ms"), "reason: %s", d.reason);

        /* It says it is rotational, but jumps for the price of a command: flash, 19 x 50 us x 146484 KiB/s.
         */
        c.jump_us = 100;
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 256);
        ck_assert_msg(strstr(d.reason, "no head moves"), "reason: %s", d.reason);
}
END_TEST

/* The tiny-stick class, 15 kB/s: one 4 KiB read (273 ms) and nothing more fits in a second. */
START_TEST(test_fit_tiny_stick) {
        RaCalibSample s[2];
        RaDeviceAttrs a = device(505 * 1024, false);
        RaCalib c;
        RaDecision d;

        s[0] = flash_read(4, 1000, 0.015);
        ck_assert(ra_calib_affordable(s, 0, 4));
        ck_assert(!ra_calib_affordable(s, 1, 16));
        ck_assert(ra_calib_affordable(s, 1, 4));
        s[1] = s[0];
        ck_assert(ra_calib_affordable(s, 2, 4));
        ck_assert_int_eq(ra_calib_fit(s, 2, 1, &c), 0);
        ck_assert_uint_eq(c.n_points, 1);
        ck_assert_uint_ge(c.bandwidth_kb_s, 13);
        ck_assert_uint_le(c.bandwidth_kb_s, 16);
        ra_calib_prior(&c, &a, bounds, &d);
        ck_assert_uint_eq(d.kb, 4);
        ck_assert_msg(strstr(d.reason, "reads only"), "reason: %s", d.reason);
}
END_TEST

START_TEST(test_affordable_bytes) {
        RaCalibSample s[RA_CALIB_SAMPLES_MAX];
        size_t n = 0;

        /* A device fast enough for any time budget still stops at 64 MiB. */
        while (ra_calib_affordable(s, n, 1024) && n < 16)
                s[n++] = (RaCalibSample){ .kb = 1024, .nsec = 1000 };
        ck_assert_uint_eq(n, 16);
        for (size_t i = 0; i < n; i++)
                s[i].kb = 4096;
        ck_assert(!ra_calib_affordable(s, n, 1024));
        ck_assert(!ra_calib_affordable(s, RA_CALIB_SAMPLES_MAX, 4));
        ck_assert_int_eq(ra_calib_fit(s, 0, 1, &(RaCalib){}), -EINVAL);
}
END_TEST

START_TEST(test_format_parse) {
        RaCalibSample s[RA_CALIB_SAMPLES_MAX];
        size_t n = passes(s, 1024, 250, 270);
        RaCalib c, back;
        char buf[256], text[512];

        ck_assert_int_eq(ra_calib_fit(s, n, 1764150000, &c), 0);
        c.jump_us = 12700;
        ck_assert_int_eq(ra_calib_format(&c, buf, sizeof(buf)), 0);
        ck_assert_ptr_null(strpbrk(buf, " \t\n"));
        ck_assert_int_eq(ra_calib_parse(buf, &back), 0);
        ck_assert_mem_eq(&c, &back, sizeof(c));
        ra_calib_describe(&c, text, sizeof(text));
        ck_assert_msg(strstr(text, "250 us a command, 257.4 MiB/s; 4 KiB"), "%s", text);
        ck_assert_msg(strstr(text, "a jump 12.7 ms"), "%s", text);

        static const char *const bad[] = {
                "",
                "0:1:2:3:",
                "x:1:2:3:",
                "1:2:3",
                "1:2:3:4:5",
                "1:2:3:4:4/",
                "1:2:3:4:4/10,",
                "1:2:3:4:0/10",
                "1:2:3:4:4/10,,16/20",
                "1:2:99999999999:4:",
                "1:2:3:4:4/10 16/20",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(ra_calib_parse(bad[i], &back) == -EINVAL, "accepted '%s'", bad[i]);
        ck_assert_int_eq(ra_calib_parse("1:0:0:0:", &back), 0);
        ck_assert_uint_eq(back.n_points, 0);
        ck_assert_int_eq(ra_calib_format(&c, buf, 10), -ENOBUFS);
}
END_TEST

/* A plain local disk of 1 GiB, as the daemon fills it before the sysfs attributes are read. */
static RaCalibDevice local_disk(const char *name) {
        RaCalibDevice d = RA_CALIB_DEVICE_INIT;

        d.name = name;
        d.syspath = "/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda";
        d.size_bytes = 1ULL << 30;
        return d;
}

START_TEST(test_unsafe_each_kind) {
        RaCalibDevice d;

        /* Safe: a SATA disk, a loop device, a local NVMe namespace, a USB stick with its medium. */
        d = local_disk("sda");
        d.scsi_type = 0;
        strcpy(d.zoned, "none");
        ck_assert_ptr_null(ra_calib_unsafe(&d));
        d = local_disk("loop3");
        d.syspath = "/sys/devices/virtual/block/loop3";
        ck_assert_ptr_null(ra_calib_unsafe(&d));
        d = local_disk("nvme0n1");
        strcpy(d.fabric, "pcie");
        ck_assert_ptr_null(ra_calib_unsafe(&d));
        strcpy(d.fabric, "loop");
        ck_assert_ptr_null(ra_calib_unsafe(&d));

        /* Network block devices, by name. */
        static const char *const network[] = { "nbd0", "nbd15", "rbd0", "drbd1", "etherd!e0.1" };
        for (size_t i = 0; i < ELEMENTSOF(network); i++) {
                d = local_disk(network[i]);
                ck_assert_msg(ra_calib_unsafe(&d) && strstr(ra_calib_unsafe(&d), "network block device"),
                              "%s", network[i]);
        }
        /* iSCSI: by udev's ID_PATH, or by the session in its sysfs path (no udev data). */
        d = local_disk("sdc");
        d.id_path = "ip-192.168.1.5:3260-iscsi-iqn.2003-01.org.linux-iscsi.target:sn.1234-lun-0";
        ck_assert_str_eq(ra_calib_unsafe(&d), "a network block device (iSCSI)");
        d = local_disk("sdc");
        d.syspath = "/sys/devices/platform/host3/session1/target3:0:0/3:0:0:0/block/sdc";
        ck_assert_str_eq(ra_calib_unsafe(&d), "a network block device (iSCSI)");
        /* NVMe over a fabric. */
        static const char *const fabrics[] = { "tcp", "rdma", "fc" };
        for (size_t i = 0; i < ELEMENTSOF(fabrics); i++) {
                d = local_disk("nvme1n1");
                strcpy(d.fabric, fabrics[i]);
                ck_assert_str_eq(ra_calib_unsafe(&d), "a network block device (NVMe over a fabric)");
        }

        /* Optical: by name, by udev, by SCSI type (WORM, CD/DVD, optical memory). */
        d = local_disk("sr0");
        ck_assert_str_eq(ra_calib_unsafe(&d), "an optical drive");
        d = local_disk("sdd");
        d.cdrom = true;
        ck_assert_str_eq(ra_calib_unsafe(&d), "an optical drive");
        static const int optical[] = { 4, 5, 7 };
        for (size_t i = 0; i < ELEMENTSOF(optical); i++) {
                d = local_disk("sdd");
                d.scsi_type = optical[i];
                ck_assert_str_eq(ra_calib_unsafe(&d), "an optical drive");
        }

        /* Zoned: host-managed (and anything but "none"), or a ZBC disk by its SCSI type. */
        d = local_disk("sde");
        strcpy(d.zoned, "host-managed");
        ck_assert_ptr_nonnull(strstr(ra_calib_unsafe(&d), "zoned"));
        d = local_disk("nullb0");
        strcpy(d.zoned, "host-aware");
        ck_assert_ptr_nonnull(strstr(ra_calib_unsafe(&d), "zoned"));
        d = local_disk("sde");
        d.scsi_type = 0x14;
        ck_assert_ptr_nonnull(strstr(ra_calib_unsafe(&d), "zoned"));

        /* A suspended dm device; once resumed it may be read. */
        d = local_disk("dm-3");
        d.suspended = true;
        ck_assert_str_eq(ra_calib_unsafe(&d), "a suspended device-mapper device");
        d.suspended = false;
        ck_assert_ptr_null(ra_calib_unsafe(&d));

        /* A removable drive without its medium. */
        d = local_disk("sdf");
        d.size_bytes = 0;
        ck_assert_str_eq(ra_calib_unsafe(&d), "a drive without a medium");

        /*
         * A SCSI disk many of whose commands failed: its reads fail (15 of 81
         * measured on scsi_debug with a medium error on every sector). A
         * healthy disk's unit attention and a few refused probe commands are
         * not that, nor is a disk that completed nothing yet, or no SCSI disk.
         */
        d = local_disk("sdh");
        d.commands_done = 81;
        d.commands_failed = 15;
        ck_assert_ptr_nonnull(strstr(ra_calib_unsafe(&d), "reads failed"));
        d.commands_failed = 11;
        ck_assert(ra_calib_reads_failed(&d));
        d.commands_failed = 10;
        ck_assert(!ra_calib_reads_failed(&d));
        ck_assert_ptr_null(ra_calib_unsafe(&d));
        d.commands_done = 136;
        d.commands_failed = 0;
        ck_assert_ptr_null(ra_calib_unsafe(&d));
        d.commands_done = 12;
        d.commands_failed = 2;
        ck_assert_ptr_null(ra_calib_unsafe(&d));
        d.commands_done = 2;
        ck_assert_ptr_null(ra_calib_unsafe(&d));
        d.commands_done = 0;
        d.commands_failed = 0;
        ck_assert_ptr_null(ra_calib_unsafe(&d));

        /* Blocks larger than the largest read. */
        d = local_disk("sdg");
        d.logical_block_size = 2 << 20;
        ck_assert_ptr_nonnull(ra_calib_unsafe(&d));
}
END_TEST

/* A loop device's file: where it is decides, as the mount table says it. */
START_TEST(test_unsafe_loop_backing) {
        static const struct {
                const char *fstype, *options;
                bool safe;
        } cases[] = {
                { "ext4", "rw,errors=remount-ro", true },
                { "xfs", "rw,attr2,inode64,user_id=7", true }, /* not FUSE's: user_id= means nothing */
                /* A FUSE server root runs (the bench's device model), and one a user runs. */
                { "fuse.ra-testfs", "rw,user_id=0,group_id=0", true },
                { "fuseblk", "rw,user_id=0,group_id=0,allow_other", true },
                { "fuse.ra-testfs", "rw,user_id=1000,group_id=1000", false },
                { "fuse", "rw,group_id=1000,user_id=1000", false },
                /* "user_id=" only as an option of its own. */
                { "fuse.x", "rw,xuser_id=1000,user_id=0", true },
                /* Network file systems, kernel clients and FUSE's, root's too. */
                { "nfs4", "rw,vers=4.2,addr=10.0.0.1", false },
                { "nfs", "rw", false },
                { "cifs", "rw", false },
                { "9p", "rw,trans=virtio", false },
                { "fuse.sshfs", "rw,user_id=0,group_id=0", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                RaCalibDevice d = local_disk("loop7");
                const char *why;

                d.syspath = "/sys/devices/virtual/block/loop7";
                ra_calib_backing_from_mount(&d, cases[i].fstype, cases[i].options);
                why = ra_calib_unsafe(&d);
                ck_assert_msg(cases[i].safe == !why, "%s %s: %s", cases[i].fstype, cases[i].options,
                              why ?: "safe");
                ck_assert(!why || strstr(why, "a loop device over a file of"));
        }
        /* Nothing known of its file (no mount holds it): nothing refused for it. */
        RaCalibDevice d = local_disk("loop7");
        ra_calib_backing_from_mount(&d, NULL, NULL);
        ck_assert_ptr_null(ra_calib_unsafe(&d));
}
END_TEST

START_TEST(test_whole_blocks) {
        uint32_t s[RA_CALIB_POINTS_MAX];
        size_t n;

        for (uint32_t block = 0; block <= 4096; block = block ? block * 2 : 512) {
                n = ra_calib_whole_blocks(s, ra_calib_sizes(1024, s), block);
                ck_assert_uint_eq(n, 5);
                ck_assert_uint_eq(s[0], 4);
                ck_assert_uint_eq(ra_calib_jump_kb(block), 4);
        }
        n = ra_calib_whole_blocks(s, ra_calib_sizes(1024, s), 16384);
        ck_assert_uint_eq(n, 4);
        ck_assert_uint_eq(s[0], 16);
        ck_assert_uint_eq(s[3], 1024);
        ck_assert_uint_eq(ra_calib_jump_kb(16384), 16);
        n = ra_calib_whole_blocks(s, ra_calib_sizes(1024, s), 65536);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(s[0], 64);
        ck_assert_uint_eq(ra_calib_jump_kb(65536), 64);
        /* A command limit between the steps that is no whole number of blocks is left out. */
        n = ra_calib_whole_blocks(s, ra_calib_sizes(120, s), 16384);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(s[1], 64);
        ck_assert_uint_eq(ra_calib_whole_blocks(s, ra_calib_sizes(1024, s), 2 << 20), 0);
}
END_TEST

START_TEST(test_pause) {
        /* Only the pace leaves room for others under none and kyber: a quarter of the device's time. */
        ck_assert_uint_eq(ra_calib_pause_nsec("none", 1000000), 3000000);
        ck_assert_uint_eq(ra_calib_pause_nsec("kyber", 1000000), 3000000);
        ck_assert_uint_eq(ra_calib_pause_nsec("", 1000000), 3000000);
        ck_assert_uint_eq(ra_calib_pause_nsec(NULL, 1000000), 3000000);
        /* bfq and mq-deadline hold idle-class reads back themselves. */
        ck_assert_uint_eq(ra_calib_pause_nsec("bfq", 1000000), 0);
        ck_assert_uint_eq(ra_calib_pause_nsec("mq-deadline", 1000000), 0);
}
END_TEST

/* Reads the manifest text's tree for the disk at block/NAME. */
static RaCalibDevice read_tree(const char *manifest, const char *name) {
        RaCalibDevice d = RA_CALIB_DEVICE_INIT;
        char *root = test_mkdtemp(), path[4096];
        int fd;

        test_tree_apply(root, manifest);
        (void) snprintf(path, sizeof(path), "%s/block/%s", root, name);
        fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        d.name = name;
        d.size_bytes = 1ULL << 30;
        ck_assert_int_eq(ra_calib_device_read_sysfs(fd, &d), 0);
        (void) close(fd);
        test_rm_rf(root);
        free(root);
        return d;
}

START_TEST(test_read_sysfs) {
        RaCalibDevice d;

        /* An NVMe/TCP namespace: its device is its controller. */
        d = read_tree("f block/nvme1n1/queue/zoned none\n"
                      "f block/nvme1n1/queue/scheduler [none] mq-deadline kyber bfq\n"
                      "f block/nvme1n1/queue/logical_block_size 4096\n"
                      "f ctl/nvme1/transport tcp\n"
                      "l block/nvme1n1/device ../../ctl/nvme1\n",
                      "nvme1n1");
        ck_assert_str_eq(d.fabric, "tcp");
        ck_assert_str_eq(d.scheduler, "none");
        ck_assert_str_eq(d.zoned, "none");
        ck_assert_uint_eq(d.logical_block_size, 4096);
        ck_assert_int_eq(d.scsi_type, -1);
        ck_assert_str_eq(ra_calib_unsafe(&d), "a network block device (NVMe over a fabric)");
        /* A multipath head: its device is the subsystem, whose controllers say it. */
        d = read_tree("d block/nvme2n1/queue\n"
                      "f subsys/nvme-subsys2/nvme2/transport rdma\n"
                      "f subsys/nvme-subsys2/subsysnqn nqn.x\n"
                      "l block/nvme2n1/device ../../subsys/nvme-subsys2\n",
                      "nvme2n1");
        ck_assert_str_eq(d.fabric, "rdma");
        ck_assert_ptr_nonnull(ra_calib_unsafe(&d));
        /* A DVD drive, by its SCSI type; bfq. */
        d = read_tree("f block/sr0/queue/scheduler mq-deadline kyber [bfq] none\n"
                      "f dev/0:0:1:0/type 5\n"
                      "l block/sr0/device ../../dev/0:0:1:0\n",
                      "sr0");
        ck_assert_int_eq(d.scsi_type, 5);
        ck_assert_str_eq(d.scheduler, "bfq");
        d.name = "sdx"; /* the type alone says it */
        ck_assert_str_eq(ra_calib_unsafe(&d), "an optical drive");
        /* A host-managed zoned disk. */
        d = read_tree(
                "f block/sdb/queue/zoned host-managed\nf block/sdb/queue/scheduler [mq-deadline] none\n",
                "sdb");
        ck_assert_str_eq(d.zoned, "host-managed");
        ck_assert_ptr_nonnull(strstr(ra_calib_unsafe(&d), "zoned"));
        /* A suspended dm device, bio-based: one scheduler, said bare. */
        d = read_tree("f block/dm-0/dm/suspended 1\nf block/dm-0/queue/scheduler none\n", "dm-0");
        ck_assert(d.suspended);
        ck_assert_str_eq(d.scheduler, "none");
        ck_assert_str_eq(ra_calib_unsafe(&d), "a suspended device-mapper device");
        d = read_tree("f block/dm-0/dm/suspended 0\n", "dm-0");
        ck_assert(!d.suspended);
        ck_assert_ptr_null(ra_calib_unsafe(&d));
        /* A SCSI disk's counters, in hex: every read failed (15 of 81); and a healthy one's unit attention.
         */
        d = read_tree("f block/sdh/device/iodone_cnt 0x51\nf block/sdh/device/ioerr_cnt 0xf\n", "sdh");
        ck_assert_uint_eq(d.commands_done, 81);
        ck_assert_uint_eq(d.commands_failed, 15);
        ck_assert_ptr_nonnull(strstr(ra_calib_unsafe(&d), "reads failed"));
        d = read_tree("f block/sdi/device/iodone_cnt 0x2a\nf block/sdi/device/ioerr_cnt 0x1\n", "sdi");
        ck_assert_uint_eq(d.commands_failed, 1);
        ck_assert_ptr_null(ra_calib_unsafe(&d));
        /* An SD card: its device's type is a word, no SCSI type; nothing else there. */
        d = read_tree("f dev/mmc0:0001/type SD\nl block/mmcblk0/device ../../dev/mmc0:0001\n", "mmcblk0");
        ck_assert_int_eq(d.scsi_type, -1);
        ck_assert_str_eq(d.fabric, "");
        ck_assert_str_eq(d.zoned, "");
        ck_assert_uint_eq(d.logical_block_size, 0);
        ck_assert_uint_eq(d.commands_done, 0);
        ck_assert_uint_eq(d.commands_failed, 0);
        ck_assert_ptr_null(ra_calib_unsafe(&d));
}
END_TEST

/* One read's device time: the command, the transfer, and a disk's jump; assumed figures when unmeasured. */
START_TEST(test_read_usec) {
        RaCalib disk = { .command_us = 50, .bandwidth_kb_s = 160000000 / 1024, .jump_us = 10000 }, c;

        /* 1 MiB at 160 MB/s: 6.55 ms after a 50 us command, 10 ms more to get there. */
        ck_assert_double_eq_tol(ra_calib_read_usec(&disk, 1024, false), 50 + 6553.6, 1);
        ck_assert_double_eq_tol(ra_calib_read_usec(&disk, 1024, true), 10050 + 6553.6, 1);
        /* No bandwidth measured: the command alone. */
        disk.bandwidth_kb_s = 0;
        ck_assert_double_eq_tol(ra_calib_read_usec(&disk, 1024, false), 50, 1e-9);

        ra_calib_assumed(true, &c);
        ck_assert_uint_eq(c.when, 0);
        ck_assert_uint_eq(c.jump_us, 12700);
        /* The inner zone of a 7200 rpm disk: 128 KiB in 1.25 ms. */
        ck_assert_double_eq_tol(ra_calib_read_usec(&c, 128, false), 50 + 1248.3, 1);
        ra_calib_assumed(false, &c);
        ck_assert_uint_eq(c.jump_us, 0);
        ck_assert_double_eq_tol(ra_calib_read_usec(&c, 128, false), 100 + 262.1, 1);
}
END_TEST

/*
 * Where the reads go: no two in one place or overlapping, none next to the
 * one before it, all within the device, aligned; a small device gets
 * fewer reads, never a repeat.
 */
START_TEST(test_places) {
        uint64_t at[5 * RA_CALIB_POINTS_MAX + 8];
        const uint64_t span = 1028 * 1024, size = 1000204886016ULL;
        size_t n = ra_calib_places(size, 33, span, 4096, 0, at);

        ck_assert_uint_eq(n, 33);
        for (size_t i = 0; i < n; i++) {
                ck_assert_uint_eq(at[i] % 4096, 0);
                ck_assert_uint_le(at[i] + span, size);
                for (size_t k = 0; k < i; k++)
                        ck_assert(at[k] + span <= at[i] || at[i] + span <= at[k]);
                /* Far apart: more than a tenth of the device from the read before. */
                if (i > 0)
                        ck_assert_uint_gt(at[i] > at[i - 1] ? at[i] - at[i - 1] : at[i - 1] - at[i],
                                          size / 10);
        }
        /* 25 reads of a 16 MiB loop device's 1 MiB: as many as fit, each in its own place. */
        n = ra_calib_places(16 * MIB, 25, 1024 * 1024, 4096, 0, at);
        ck_assert_uint_eq(n, 16);
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < i; k++)
                        ck_assert(at[k] + 1024 * 1024 <= at[i] || at[i] + 1024 * 1024 <= at[k]);
        ck_assert_uint_eq(ra_calib_places(4096, 5, 8192, 4096, 0, at), 0);
}
END_TEST

/*
 * A calibration asked for again reads elsewhere: with another shift, no
 * place of the second is within a read of one of the first's (the disk's
 * cache holds what the last read), and every place is still aligned,
 * within the device and far from the one before. A 16 MiB device leaves
 * its slots no room: the shift changes nothing there.
 */
START_TEST(test_places_shift) {
        uint64_t a[33], b[33], c[16], d[16];
        const uint64_t span = 2052 * 1024, size = 1000204886016ULL;
        const uint64_t shifts[] = { 1, 4095, 123456789012ULL, 0x9E3779B97F4A7C15ULL };

        ck_assert_uint_eq(ra_calib_places(size, 33, span, 4096, 0, a), 33);
        for (size_t s = 0; s < ELEMENTSOF(shifts); s++) {
                ck_assert_uint_eq(ra_calib_places(size, 33, span, 4096, shifts[s], b), 33);
                for (size_t i = 0; i < 33; i++) {
                        ck_assert_uint_eq(b[i] % 4096, 0);
                        ck_assert_uint_le(b[i] + span, size);
                        /* Still in its own slot: the order of the places is kept. */
                        ck_assert_uint_eq(b[i] / (size / 33), a[i] / (size / 33));
                        if (i > 0)
                                ck_assert_uint_gt(b[i] > b[i - 1] ? b[i] - b[i - 1] : b[i - 1] - b[i],
                                                  size / 10);
                        for (size_t k = 0; k < i; k++)
                                ck_assert(b[k] + span <= b[i] || b[i] + span <= b[k]);
                }
                if (shifts[s] >= 2 * span)
                        for (size_t i = 0; i < 33; i++)
                                for (size_t k = 0; k < 33; k++)
                                        ck_assert(a[k] + span <= b[i] || b[i] + span <= a[k]);
        }
        ck_assert_uint_eq(ra_calib_places(16 * MIB, 25, 1024 * 1024, 4096, 0, c), 16);
        ck_assert_uint_eq(ra_calib_places(16 * MIB, 25, 1024 * 1024, 4096, 123456789012ULL, d), 16);
        for (size_t i = 0; i < 16; i++)
                ck_assert_uint_eq(c[i], d[i]);
}
END_TEST

/*
 * A rotational disk's sizes timed as streams (1 MiB of each, two reads of
 * the largest): what the daemon recorded on bench/devmodel's hdd-7200,
 * whose media reads 105-210 MB/s, 50 us a command. Its reads of 4 and 16
 * KiB come from the cache the disk reads ahead into; the stream's time
 * still holds the media's. The fit says the media's rate, not the cache's
 * (one timed read after the head's "calibrated" it at 353-456 MiB/s).
 * One 64 KiB stream began late (3.6 ms, 276 MiB/s: the disk had read
 * ahead before this process woke, as under ASan on a loaded CI host): the
 * median of the five passes does not take it.
 */
START_TEST(test_fit_hdd_streams) {
        static const struct {
                uint32_t kb, reads;
                double ms;
        } rec[] = {
                { 4, 256, 16.273 },  { 16, 64, 11.862 },  { 64, 16, 6.610 },   { 256, 4, 7.875 },
                { 1024, 2, 10.726 }, { 4, 256, 17.720 },  { 16, 64, 11.942 },  { 64, 16, 6.571 },
                { 256, 4, 7.688 },   { 1024, 2, 10.658 }, { 4, 256, 19.763 },  { 16, 64, 11.179 },
                { 64, 16, 3.627 },   { 256, 4, 7.536 },   { 1024, 2, 10.520 }, { 4, 256, 16.843 },
                { 16, 64, 14.428 },  { 64, 16, 6.296 },   { 256, 4, 7.468 },   { 1024, 2, 35.361 },
                { 4, 256, 17.234 },  { 16, 64, 10.422 },  { 64, 16, 6.270 },   { 256, 4, 7.255 },
                { 1024, 2, 19.800 },
        };
        RaCalibSample s[RA_CALIB_SAMPLES_MAX];
        size_t n = 0;
        RaCalib c;

        for (size_t i = 0; i < ELEMENTSOF(rec); i++)
                s[n++] = (RaCalibSample){ .kb = rec[i].kb,
                                          .reads = rec[i].reads,
                                          .nsec = (uint64_t) (rec[i].ms * 1e6) };
        ck_assert_int_eq(ra_calib_fit(s, n, 1, &c), 0);
        ck_assert_uint_ge(c.bandwidth_kb_s, 100 * 1024);
        ck_assert_uint_le(c.bandwidth_kb_s, 200 * 1024);
        ck_assert_uint_le(c.command_us, 100);
        /* A point is one read's share of its median stream: 1 MiB of 4 KiB in 17.2 ms, 58.0 MiB/s. */
        ck_assert_uint_eq(c.points[0].kb, 4);
        ck_assert_uint_ge(c.points[0].kb_s, 57 * 1024);
        ck_assert_uint_le(c.points[0].kb_s, 59 * 1024);
        ck_assert_uint_le(c.points[2].kb_s, 200 * 1024);

        /* A stream's bytes count against the budget: 32 streams of 2 MiB fill the 64 MiB. */
        for (n = 0; n < 32; n++)
                s[n] = (RaCalibSample){ .kb = 1024, .reads = 2, .nsec = 1000 };
        ck_assert(!ra_calib_affordable(s, 32, 2048));
        ck_assert(ra_calib_affordable(s, 31, 2048));
}
END_TEST

/* One traced event: a request's issue or completion. */
typedef struct TraceEv {
        uint64_t ns, sector;
        uint32_t kb;
        bool complete;
} TraceEv;

static int trace_ev_cmp(const void *a, const void *b) {
        const TraceEv *x = a, *y = b;

        return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/*
 * n requests of the sizes given in turn on a device serving one at a time,
 * c_us a command and mb_s MB/s, each arriving gap_us[i % n_gaps] after the
 * one before: a short gap queues it behind the others. Handed to t in time
 * order, as the tracer does.
 */
static void trace_device(RaCalibTrace *t, const uint32_t *kb, size_t n_kb, const uint32_t *gap_us,
                         size_t n_gaps, size_t n, double c_us, double mb_s) {
        TraceEv *ev = calloc(2 * n, sizeof(*ev));
        uint64_t arrive = 1000000, free_at = 0, sector = 2048;

        ck_assert_ptr_nonnull(ev);
        for (size_t i = 0; i < n; i++) {
                uint32_t size = kb[i % n_kb];
                uint64_t start, done;

                arrive += (uint64_t) gap_us[i % n_gaps] * 1000;
                start = arrive > free_at ? arrive : free_at;
                done = start + (uint64_t) (c_us * 1000 + size * 1024.0 / (mb_s * MB) * 1e9);
                free_at = done;
                ev[2 * i] = (TraceEv){ .ns = arrive, .sector = sector, .kb = size };
                ev[2 * i + 1] = (TraceEv){ .ns = done, .sector = sector, .complete = true };
                /* Far apart: every request its own place. */
                sector += 1000000;
        }
        qsort(ev, 2 * n, sizeof(*ev), trace_ev_cmp);
        for (size_t i = 0; i < 2 * n; i++)
                if (ev[i].complete)
                        ra_calib_trace_complete(t, ev[i].sector, ev[i].ns);
                else
                        ra_calib_trace_issue(t, ev[i].sector, ev[i].kb, ev[i].ns);
        free(ev);
}

/* The calibration's own curve, traced: the same figures as its fit. */
START_TEST(test_trace_calibration_curve) {
        static const uint32_t sizes[] = { 4, 16, 64, 256, 1024 }, idle[] = { 100000 };
        RaCalibTrace t = {};
        RaCalib c;

        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), -ENODATA);
        /* Three passes: not yet RA_CALIB_TRACE_MIN of each class. */
        trace_device(&t, sizes, ELEMENTSOF(sizes), idle, 1, 3 * ELEMENTSOF(sizes), 250, 270);
        ck_assert(!t.changed);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), -ENODATA);
        trace_device(&t, sizes, ELEMENTSOF(sizes), idle, 1, 2 * ELEMENTSOF(sizes), 250, 270);
        ck_assert(t.changed);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1764150000, &c), 0);
        ck_assert(!t.changed);
        ck_assert_int_eq(c.source, RA_CALIB_TRACED);
        ck_assert_uint_eq(c.when, 1764150000);
        ck_assert_uint_eq(c.n_points, 5);
        ck_assert_uint_le(c.command_us, 255);
        ck_assert_uint_ge(c.command_us, 245);
        ck_assert_uint_le(c.bandwidth_kb_s, (uint32_t) (270 * MB / 1024 * 1.02));
        ck_assert_uint_ge(c.bandwidth_kb_s, (uint32_t) (270 * MB / 1024 * 0.98));
        ck_assert_uint_eq(c.jump_us, 0);
        ck_assert_str_eq(ra_calib_source_to_string(c.source), "traced");
}
END_TEST

/*
 * A busy disk's requests (a 7200 rpm disk's 8 ms a command at 170 MB/s,
 * sizes of every class, most queued behind up to seven others, one in ten
 * arriving at an idle device): only the fastest of each class is what the
 * device costs; the mean, queueing included, would make it seem several
 * times slower.
 */
START_TEST(test_trace_busy_queueing) {
        static const uint32_t sizes[] = { 4, 128, 8, 512, 1024, 32, 256, 4, 64, 16, 4096 };
        static const uint32_t gaps[] = { 200, 10, 10, 50, 10, 10, 10, 30, 10, 300000 };
        RaCalibTrace t = {};
        RaCalib c;

        trace_device(&t, sizes, ELEMENTSOF(sizes), gaps, ELEMENTSOF(gaps), 1100, 8000, 170);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert_uint_eq(c.n_points, RA_CALIB_TRACE_CLASSES);
        ck_assert_uint_le(c.command_us, 8000 * 1.03);
        ck_assert_uint_ge(c.command_us, 8000 * 0.97);
        ck_assert_uint_le(c.bandwidth_kb_s, (uint32_t) (170 * MB / 1024 * 1.03));
        ck_assert_uint_ge(c.bandwidth_kb_s, (uint32_t) (170 * MB / 1024 * 0.97));

        /* A completion never seen issued (lost, or before radaemon traced) is no evidence. */
        t = (RaCalibTrace){};
        ra_calib_trace_complete(&t, 2048, 5000);
        ck_assert_uint_eq(t.count[0], 0);
        /* Out of order, matched by sector; a second completion of the same request is ignored. */
        ra_calib_trace_issue(&t, 100, 4, 1000);
        ra_calib_trace_issue(&t, 200, 4, 1100);
        ra_calib_trace_complete(&t, 200, 1300);
        ra_calib_trace_complete(&t, 100, 2000);
        ra_calib_trace_complete(&t, 100, 2500);
        ck_assert_uint_eq(t.count[0], 2);
        ck_assert_uint_eq(t.fastest[0].nsec, 200);
}
END_TEST

/*
 * readers readers, each asking for its next request think_us after its last
 * completed, of the sizes given in turn (reader r starting at the r-th), on
 * a device that serves depth commands at once, each c_us and then mb_s MB/s
 * (times up to jitter of that more, pseudo-random), the rest waiting in
 * order of arrival. n requests in all from start_ns, handed to t in time
 * order. Every late_every-th completion is seen late_us after the device
 * is done with it (a completion handled late, or coalesced with the next),
 * by the tracer and its reader alike.
 */
typedef struct Readers {
        size_t readers;
        const uint32_t *kb;
        size_t n_kb;
        uint32_t think_us;
        size_t depth;
        double c_us, mb_s, jitter;
        size_t late_every;
        uint32_t late_us;
} Readers;

static uint64_t trace_readers(RaCalibTrace *t, const Readers *w, size_t n, uint64_t start_ns) {
        TraceEv *ev = calloc(2 * n, sizeof(*ev));
        uint64_t arrive[8] = {}, free_at[8] = {}, sector = 2048 + start_ns / 1000, last = 0;
        uint32_t seed = 1;
        size_t next[8] = {};

        ck_assert_ptr_nonnull(ev);
        ck_assert_uint_le(w->readers, 8);
        ck_assert_uint_le(w->depth, 8);
        for (size_t r = 0; r < w->readers; r++) {
                arrive[r] = start_ns;
                next[r] = r;
        }
        for (size_t i = 0; i < n; i++) {
                size_t r = 0, d = 0;
                uint32_t size;
                uint64_t start, done;
                double cost;

                /* The reader that asks first, and the server free first. */
                for (size_t j = 1; j < w->readers; j++)
                        if (arrive[j] < arrive[r])
                                r = j;
                for (size_t j = 1; j < w->depth; j++)
                        if (free_at[j] < free_at[d])
                                d = j;
                size = w->kb[next[r]++ % w->n_kb];
                seed = seed * 1103515245 + 12345;
                cost = (w->c_us * 1000 + size * 1024.0 / (w->mb_s * MB) * 1e9) *
                       (1 + w->jitter * (double) (seed >> 16 & 0x7fff) / 0x8000);
                start = arrive[r] > free_at[d] ? arrive[r] : free_at[d];
                done = start + (uint64_t) cost;
                free_at[d] = done;
                if (w->late_every && i % w->late_every == w->late_every - 1)
                        done += (uint64_t) w->late_us * 1000;
                ev[2 * i] = (TraceEv){ .ns = arrive[r], .sector = sector, .kb = size };
                ev[2 * i + 1] = (TraceEv){ .ns = done, .sector = sector, .complete = true };
                arrive[r] = done + (uint64_t) w->think_us * 1000;
                last = done > last ? done : last;
                sector += 1000000;
        }
        qsort(ev, 2 * n, sizeof(*ev), trace_ev_cmp);
        for (size_t i = 0; i < 2 * n; i++)
                if (ev[i].complete)
                        ra_calib_trace_complete(t, ev[i].sector, ev[i].ns);
                else
                        ra_calib_trace_issue(t, ev[i].sector, ev[i].kb, ev[i].ns);
        free(ev);
        return last;
}

/* The model within 3 % of c_us a command and mb_s MB/s. */
static void assert_model(const RaCalib *c, double c_us, double mb_s) {
        ck_assert_uint_le(c->command_us, c_us * 1.03);
        ck_assert_uint_ge(c->command_us, c_us * 0.97);
        ck_assert_uint_le(c->bandwidth_kb_s, (uint32_t) (mb_s * MB / 1024 * 1.03));
        ck_assert_uint_ge(c->bandwidth_kb_s, (uint32_t) (mb_s * MB / 1024 * 0.97));
}

/* Four readers of 16 KiB to 1 MiB requests on the bench's ssd-ctrl: 250 us a command, 270 MB/s, one at a
 * time. */
static const uint32_t ssd_sizes[] = { 16, 64, 256, 1024 };
static const Readers ssd_readers = { .readers = 4,
                                     .kb = ssd_sizes,
                                     .n_kb = ELEMENTSOF(ssd_sizes),
                                     .think_us = 20,
                                     .depth = 1,
                                     .c_us = 250,
                                     .mb_s = 270 };

/*
 * Four readers that never let the device rest: on one serving a command at
 * a time (the bench's ssd-ctrl, 250 us a command, 270 MB/s) every request
 * waits behind the others, the larger the longer, and no fastest completion
 * is what the device costs; timed from when it was free, each is exact. On
 * a device serving eight at once nothing waits, and completions follow each
 * other closer than any request takes: there the fastest completions are
 * the model.
 */
START_TEST(test_trace_serial_busy) {
        static const uint32_t stick[] = { 120, 8 }, one[] = { 128 };
        Readers w = ssd_readers;
        RaCalibTrace t = {};
        RaCalib c;
        uint64_t end;

        end = trace_readers(&t, &w, 400, 1000000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert(t.serial);
        ck_assert_uint_eq(c.n_points, 4);
        assert_model(&c, 250, 270);
        /* Judged again as the requests double, though no class's fastest moved. */
        (void) trace_readers(&t, &w, 200, end + 1000000);
        ck_assert(t.changed);

        w.depth = 8;
        t = (RaCalibTrace){};
        (void) trace_readers(&t, &w, 400, 1000000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert(!t.serial);
        ck_assert_double_lt(t.served_share, RA_CALIB_TRACE_SERIAL_SHARE);
        assert_model(&c, 250, 270);

        /* Service times that vary by up to half again: one at a time still. */
        w = ssd_readers;
        w.jitter = 0.5;
        t = (RaCalibTrace){};
        (void) trace_readers(&t, &w, 400, 1000000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert(t.serial);
        ck_assert_uint_le(c.command_us, 250 * 1.2);
        ck_assert_uint_ge(c.command_us, 250 * 0.8);

        /* A USB stick's 128 KiB windows, 120 KiB and 8 KiB requests, four readers: 1 ms a command. */
        w = (Readers){ .readers = 4,
                       .kb = stick,
                       .n_kb = ELEMENTSOF(stick),
                       .think_us = 20,
                       .depth = 1,
                       .c_us = 1000,
                       .mb_s = 28 };
        t = (RaCalibTrace){};
        (void) trace_readers(&t, &w, 400, 1000000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert(t.serial);
        assert_model(&c, 1000, 28);

        /*
         * One size, four readers on a device serving four at once: evenly
         * spaced, they complete as regularly as one at a time would, four
         * times as fast. Not taken for one at a time: one size tells no
         * command cost (its bandwidth at that size), but not four times it.
         */
        w = (Readers){
                .readers = 4, .kb = one, .n_kb = 1, .think_us = 20, .depth = 4, .c_us = 100, .mb_s = 500
        };
        t = (RaCalibTrace){};
        (void) trace_readers(&t, &w, 400, 1000000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert(!t.serial);
        ck_assert_uint_le(c.bandwidth_kb_s, (uint32_t) (128 / (100 + 128 * 1024 / 500.0) * 1e6 * 1.03));
}
END_TEST

/*
 * One completion in 97 seen 280 us late (a completion handled late, or
 * coalesced with the next): the request after it seems served in what is
 * left of its time, 30 us of a 16 KiB request's 310. Timed from when the
 * device was free, the fastest of a class is then such a one; the fit of
 * the fastest still makes the device one that serves a command at a time
 * (70 % of the busy time), but its model was 111 us and 361 MB/s, and on
 * the bench's ssd-ctrl with four readers "0 us a command" once. The model
 * is the lower quartile of each class's latest requests.
 */
START_TEST(test_trace_serial_late) {
        Readers w = ssd_readers;
        RaCalibTrace t = {};
        RaCalib c;
        uint64_t end = 1000000;

        w.late_every = 97;
        w.late_us = 280;
        /* Ten rounds a second apart: each class's latest have turned over many times. */
        for (int i = 0; i < 10; i++)
                end = trace_readers(&t, &w, 400, end + 1000000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert(t.serial);
        assert_model(&c, 250, 270);

        /* Eight at once, completions seen late as well: not one at a time. */
        w.depth = 8;
        t = (RaCalibTrace){};
        (void) trace_readers(&t, &w, 400, 1000000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert(!t.serial);
}
END_TEST

/*
 * Four readers of a stream each on the bench's ssd-ctrl (one command at a
 * time), one completion in ten seen 1 ms late, as traced there: timed from
 * when the device was free, the fastest of each class is such a one and
 * tells nothing, and from issue every request queued behind the others,
 * the larger the longer, so that fit finds no command cost. Most of each
 * class's latest are the model. On a device serving four at once nothing
 * waits: the fastest from issue stand.
 */
START_TEST(test_trace_queued) {
        static const uint32_t sizes[] = { 256, 256, 256, 256, 256, 256, 256, 256, 256, 16, 64 };
        Readers w = ssd_readers;
        RaCalibTrace t = {};
        RaCalib c;

        w.kb = sizes;
        w.n_kb = ELEMENTSOF(sizes);
        w.late_every = 10;
        w.late_us = 1000;
        (void) trace_readers(&t, &w, 1000, 1000000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert(!t.serial);
        ck_assert(t.queued);
        ck_assert_double_ge(t.served_share, RA_CALIB_TRACE_SERIAL_SHARE);
        assert_model(&c, 250, 270);

        w.depth = 4;
        t = (RaCalibTrace){};
        (void) trace_readers(&t, &w, 1000, 1000000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert(!t.serial);
        ck_assert(!t.queued);
        assert_model(&c, 250, 270);
}
END_TEST

/*
 * A 7200 rpm disk's stream with its own cache: the media reads on from the
 * first request at mb_s (reading ahead without end here), the bus answers
 * at bus_mb_s, and the reader issues each 512 KiB request gap_us after the
 * last completed, with a 4 KiB read elsewhere (a jump of jump_us) every
 * 16 requests. A request completes when both the bus and the media are
 * done with it.
 */
static void trace_cached_disk(RaCalibTrace *t, size_t n, double mb_s, double bus_mb_s, uint32_t gap_us,
                              uint32_t jump_us) {
        uint64_t now = 1000000, media_start = now, sector = 2048, done_kb = 0;

        for (size_t i = 0; i < n; i++) {
                uint64_t issued = now + (uint64_t) gap_us * 1000, media_done, bus_done, done;

                if (i % 16 == 15) {
                        /* Elsewhere: the head moves there and back; the stream starts again after it. */
                        ra_calib_trace_issue(t, 900000000 + i * 8, 4, issued);
                        now = issued + (uint64_t) jump_us * 1000 + 50000;
                        ra_calib_trace_complete(t, 900000000 + i * 8, now);
                        media_start = now + (uint64_t) jump_us * 1000;
                        done_kb = 0;
                        continue;
                }
                done_kb += 512;
                media_done = media_start + (uint64_t) (done_kb * 1024.0 / (mb_s * MB) * 1e9);
                bus_done = issued + 50000 + (uint64_t) (512 * 1024.0 / (bus_mb_s * MB) * 1e9);
                done = media_done > bus_done ? media_done : bus_done;
                ra_calib_trace_issue(t, sector, 512, issued);
                ra_calib_trace_complete(t, sector, done);
                sector += 1024;
                now = done;
        }
}

/* Its requests alone would say the bus's speed; timed as streams, the media's, and its jump. */
START_TEST(test_trace_disk_cache) {
        RaCalibTrace t = {};
        RaCalib c;

        trace_cached_disk(&t, 400, 170, 600, 1000, 8000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert_uint_gt(c.bandwidth_kb_s, 200 * MB / 1024);

        t = (RaCalibTrace){ .streams = true };
        trace_cached_disk(&t, 400, 170, 600, 1000, 8000);
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert_uint_le(c.bandwidth_kb_s, (uint32_t) (170 * MB / 1024 * 1.05));
        ck_assert_uint_ge(c.bandwidth_kb_s, (uint32_t) (170 * MB / 1024 * 0.9));
        ck_assert_uint_ge(c.jump_us, 7000);
        ck_assert_uint_le(c.jump_us, 9000);

        /* Jumps alone: no sequential sample, no model. */
        t = (RaCalibTrace){ .streams = true };
        for (uint64_t i = 0; i < 20; i++) {
                ra_calib_trace_issue(&t, 1000000 * i, 4, 20000000 * i + 1);
                ra_calib_trace_complete(&t, 1000000 * i, 20000000 * i + 8000000);
        }
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), -ENODATA);
}
END_TEST

/*
 * A disk whose head moves, read in order in 1 MiB requests at 170 MB/s, but
 * one completion in ten seen late, just before the next one (the loop's
 * worker behind on a busy machine): the stream after it seems to read 1 MiB
 * in 20 us. The model is the media's, not that.
 */
START_TEST(test_trace_disk_late) {
        RaCalibTrace t = { .streams = true };
        uint64_t done = 1000000, per = (uint64_t) (1024 * 1024.0 / (170 * MB) * 1e9);
        RaCalib c;

        for (uint64_t i = 0; i < 200; i++) {
                uint64_t issued = done, at = done + per;

                ra_calib_trace_issue(&t, 2048 + i * 2048, 1024, issued);
                if (i % 10 == 5) {
                        /* Seen when the next one is done: both at once. */
                        ra_calib_trace_issue(&t, 2048 + (i + 1) * 2048, 1024, issued);
                        ra_calib_trace_complete(&t, 2048 + i * 2048, at + per - 20000);
                        ra_calib_trace_complete(&t, 2048 + (i + 1) * 2048, at + per);
                        done = at + per;
                        i++;
                        continue;
                }
                ra_calib_trace_complete(&t, 2048 + i * 2048, at);
                done = at;
        }
        ck_assert_int_eq(ra_calib_trace_fit(&t, 1, &c), 0);
        ck_assert_msg(c.bandwidth_kb_s <= (uint32_t) (170 * MB / 1024 * 1.1) &&
                              c.bandwidth_kb_s >= (uint32_t) (170 * MB / 1024 * 0.9),
                      "%" PRIu32 " KiB/s, %" PRIu32 " us a command", c.bandwidth_kb_s, c.command_us);
}
END_TEST

/*
 * Requests that jumped on a disk whose head moves are the interval's turns,
 * every size, each timed from when the head was free; a request that goes
 * on from the last is none, and flash keeps none.
 */
START_TEST(test_trace_turns) {
        RaCalibTrace t = { .streams = true };
        RaCalibTurns turns;

        /* Two streams in turns, 512 KiB each, issued together: 12 ms each from when the head was free. */
        for (uint64_t i = 0; i < 4; i++) {
                uint64_t at = 1000000000 + i * 24000000;

                ra_calib_trace_issue(&t, 2048 + i * 1024, 512, at);
                ra_calib_trace_issue(&t, 90000000 + i * 1024, 512, at);
                ra_calib_trace_complete(&t, 2048 + i * 1024, at + 12000000);
                ra_calib_trace_complete(&t, 90000000 + i * 1024, at + 24000000);
        }
        ra_calib_trace_take_turns(&t, &turns);
        ck_assert_uint_eq(turns.n, 8);
        ck_assert_uint_eq(turns.nsec, 8 * UINT64_C(12000000));
        ck_assert_uint_eq(turns.kb, 8 * 512);
        ra_calib_trace_take_turns(&t, &turns);
        ck_assert_uint_eq(turns.n, 0);

        /* One stream: its requests go on from the last, no turn. */
        for (uint64_t i = 0; i < 4; i++) {
                ra_calib_trace_issue(&t, 90000000 + 4 * 1024 + i * 1024, 512, 2000000000 + i * 3000000);
                ra_calib_trace_complete(&t, 90000000 + 4 * 1024 + i * 1024,
                                        2000000000 + i * 3000000 + 2600000);
        }
        ra_calib_trace_take_turns(&t, &turns);
        ck_assert_uint_eq(turns.n, 0);

        t = (RaCalibTrace){};
        ra_calib_trace_issue(&t, 2048, 512, 1000);
        ra_calib_trace_complete(&t, 2048, 2000000);
        ra_calib_trace_take_turns(&t, &turns);
        ck_assert_uint_eq(turns.n, 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("calib");
        TCase *tc = tcase_create("calib");

        tcase_add_test(tc, test_sizes);
        tcase_add_test(tc, test_fit_ssd_ctrl);
        tcase_add_test(tc, test_fit_seed_004_table);
        tcase_add_test(tc, test_fit_one_slow_large_read);
        tcase_add_test(tc, test_fit_hdd);
        tcase_add_test(tc, test_fit_tiny_stick);
        tcase_add_test(tc, test_affordable_bytes);
        tcase_add_test(tc, test_format_parse);
        tcase_add_test(tc, test_read_usec);
        tcase_add_test(tc, test_places);
        tcase_add_test(tc, test_places_shift);
        tcase_add_test(tc, test_fit_hdd_streams);
        tcase_add_test(tc, test_trace_disk_late);
        tcase_add_test(tc, test_trace_calibration_curve);
        tcase_add_test(tc, test_trace_busy_queueing);
        tcase_add_test(tc, test_trace_serial_busy);
        tcase_add_test(tc, test_trace_serial_late);
        tcase_add_test(tc, test_trace_queued);
        tcase_add_test(tc, test_trace_disk_cache);
        tcase_add_test(tc, test_trace_turns);
        suite_add_tcase(s, tc);
        tc = tcase_create("safe");
        tcase_add_test(tc, test_unsafe_each_kind);
        tcase_add_test(tc, test_unsafe_loop_backing);
        tcase_add_test(tc, test_whole_blocks);
        tcase_add_test(tc, test_pause);
        tcase_add_test(tc, test_read_sysfs);
        suite_add_tcase(s, tc);
        return test_run(s);
}
