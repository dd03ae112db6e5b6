/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ra-bdi-mount.h"
#include "ra-calib-safe.h"
#include "ra-macro.h"
#include "ra-util.h"

/* Reads path below dirfd into buf; 0 when it is not there (buf ""), 1 when read. */
static int read_optional(int dirfd, const char *path, char *buf, size_t size) {
        int r = ra_read_file_at(dirfd, path, buf, size);

        buf[0] = r < 0 ? '\0' : buf[0];
        if (r == -ENOENT || r == -ENOTDIR)
                return 0;
        return r < 0 ? r : 1;
}

/* "[none] mq-deadline kyber bfq": the bracketed one; a queue with one choice says it bare. */
static void active_scheduler(const char *text, char *buf, size_t size) {
        const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;

        if (open && close)
                (void) snprintf(buf, size, "%.*s", (int) (close - open - 1), open + 1);
        else
                (void) snprintf(buf, size, "%.*s", (int) strcspn(text, " "), text);
}

/*
 * An NVMe namespace's device is its controller, which says its transport; a
 * multipath head's is its subsystem, whose controllers (nvme0, nvme1, ...)
 * each say it: the first one found stands for all.
 */
static int read_fabric(int sysfd, char *buf, size_t size) {
        _cleanup_close_ int devfd = -1;
        DIR *dir;
        int r = read_optional(sysfd, "device/transport", buf, size);

        if (r != 0)
                return r < 0 ? r : 0;
        devfd = openat(sysfd, "device", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (devfd < 0)
                return 0;
        dir = fdopendir(devfd);
        if (!dir)
                return negative_errno();
        devfd = -1; /* the directory's now */
        for (struct dirent *e = readdir(dir); e && r == 0; e = readdir(dir)) {
                char path[NAME_MAX + 16];

                if (strncmp(e->d_name, "nvme", 4) != 0 || strncmp(e->d_name, "nvme-", 5) == 0)
                        continue;
                (void) snprintf(path, sizeof(path), "%s/transport", e->d_name);
                r = read_optional(dirfd(dir), path, buf, size);
        }
        (void) closedir(dir);
        return r < 0 ? r : 0;
}

/* A SCSI device's counter: "0x1f\n" (scsi_sysfs.c prints them in hex); 0 when absent or unreadable. */
static uint32_t read_counter(int sysfd, const char *path) {
        char text[32], *end;
        unsigned long v;

        if (read_optional(sysfd, path, text, sizeof(text)) <= 0)
                return 0;
        errno = 0;
        v = strtoul(text, &end, 16);
        return errno == 0 && end != text && v <= UINT32_MAX ? (uint32_t) v : 0;
}

int ra_calib_device_read_sysfs(int sysfd, RaCalibDevice *d) {
        char text[128];
        uint32_t v;
        int r;

        r = read_optional(sysfd, "queue/zoned", d->zoned, sizeof(d->zoned));
        if (r < 0)
                return r;
        r = read_fabric(sysfd, d->fabric, sizeof(d->fabric));
        if (r < 0)
                return r;
        /* mmc's device has a "type" too, a word: only a number is a SCSI type. */
        d->scsi_type = -1;
        r = read_optional(sysfd, "device/type", text, sizeof(text));
        if (r < 0)
                return r;
        if (r > 0 && ra_parse_u32(text, &v) >= 0 && v <= 0x1f)
                d->scsi_type = (int) v;
        r = read_optional(sysfd, "dm/suspended", text, sizeof(text));
        if (r < 0)
                return r;
        d->suspended = r > 0 && strcmp(text, "0") != 0;
        r = read_optional(sysfd, "queue/scheduler", text, sizeof(text));
        if (r < 0)
                return r;
        active_scheduler(text, d->scheduler, sizeof(d->scheduler));
        r = read_optional(sysfd, "queue/logical_block_size", text, sizeof(text));
        if (r < 0)
                return r;
        d->logical_block_size = r > 0 && ra_parse_u32(text, &v) >= 0 ? v : 0;
        d->commands_done = read_counter(sysfd, "device/iodone_cnt");
        d->commands_failed = read_counter(sysfd, "device/ioerr_cnt");
        return 0;
}

static bool has_prefix(const char *s, const char *prefix) {
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ".../host3/session1/target3:0:0/...": an iSCSI session's disk. */
static bool below_session(const char *syspath) {
        for (const char *p = syspath; p && (p = strstr(p, "/session")); p++)
                if (p[8] >= '0' && p[8] <= '9')
                        return true;
        return false;
}

bool ra_calib_reads_failed(const RaCalibDevice *d) {
        /*
         * A healthy disk fails a few of its probe's commands at most: a unit
         * attention after power-on, a page or command it does not support;
         * the kernel's partition scan and udev's probes then read it without
         * an error. A disk whose reads fail fails each of those reads. sd's
         * probe zeroes the count, so it holds what the kernel and udev met
         * since the disk appeared. Measured in the VM suite (tests/vm-lie.sh,
         * Debian 13's 6.12, at udevadm settle): healthy scsi_debug disks 0
         * failed of 74-136; one with a medium error on every sector 15 of 81
         * (its probe's INQUIRYs and READ CAPACITY pass, every read fails).
         */
        return d->commands_failed >= RA_CALIB_FAILED_MIN &&
               (uint64_t) d->commands_failed * RA_CALIB_FAILED_SHARE > d->commands_done;
}

void ra_calib_backing_from_mount(RaCalibDevice *d, const char *fstype, const char *options) {
        uint64_t uid;

        (void) snprintf(d->backing_fstype, sizeof(d->backing_fstype), "%s", fstype ?: "");
        d->backing_user = -1;
        if (has_prefix(d->backing_fstype, "fuse") && ra_mount_option_u64(options, "user_id", &uid) >= 0 &&
            uid <= UINT32_MAX)
                d->backing_user = (long) uid;
}

/* A loop device's file whose reads cross a network: kernel clients, and FUSE's that do. */
static bool backing_is_network(const char *fstype) {
        static const char *const network[] = {
                "nfs",          "nfs4",           "cifs",
                "smb3",         "smbfs",          "9p",
                "ceph",         "glusterfs",      "afs",
                "fuse.sshfs",   "fuse.s3fs",      "fuse.rclone",
                "fuse.gcsfuse", "fuse.glusterfs", "fuse.ceph-fuse",
                "fuse.davfs",
        };

        for (size_t i = 0; i < ELEMENTSOF(network); i++)
                if (ra_streq(fstype, network[i]))
                        return true;
        return false;
}

const char *ra_calib_unsafe(const RaCalibDevice *d) {
        /* Block devices whose reads cross a network to a server, by their driver's names. */
        static const struct {
                const char *prefix, *why;
        } network[] = {
                { "nbd", "a network block device (nbd)" },
                { "rbd", "a network block device (Ceph rbd)" },
                { "drbd", "a network block device (drbd)" },
                { "etherd", "a network block device (AoE)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(network); i++)
                if (has_prefix(d->name, network[i].prefix))
                        return network[i].why;
        /* An iSCSI disk: udev's path says so, and its sysfs path runs through the session. */
        if ((d->id_path && strstr(d->id_path, "-iscsi-")) || below_session(d->syspath))
                return "a network block device (iSCSI)";
        /* NVMe over TCP, RDMA or Fibre Channel: a path away, whose loss queues reads. */
        if (d->fabric[0] && strcmp(d->fabric, "pcie") != 0 && strcmp(d->fabric, "loop") != 0)
                return "a network block device (NVMe over a fabric)";
        if (backing_is_network(d->backing_fstype))
                return "a loop device over a file of a network file system";
        if (d->backing_user > 0)
                return "a loop device over a file of a FUSE server a user runs (it may stop answering)";
        if (d->cdrom || has_prefix(d->name, "sr") || d->scsi_type == 4 || d->scsi_type == 5 ||
            d->scsi_type == 7)
                return "an optical drive";
        if ((d->zoned[0] && strcmp(d->zoned, "none") != 0) || d->scsi_type == 0x14)
                return "a zoned disk (its reads past a zone's write pointer fail)";
        if (d->suspended)
                return "a suspended device-mapper device";
        if (d->size_bytes == 0)
                return "a drive without a medium";
        if (ra_calib_reads_failed(d))
                return "a disk whose reads failed before radaemon read it (its commands failed)";
        /* The largest read is 1 MiB (ra_calib_sizes()). */
        if (d->logical_block_size > 1024 * 1024)
                return "a disk of blocks larger than a calibration's reads";
        return NULL;
}

size_t ra_calib_whole_blocks(uint32_t *sizes, size_t n, uint32_t block_bytes) {
        size_t kept = 0;

        for (size_t i = 0; i < n; i++)
                if (block_bytes == 0 || (uint64_t) sizes[i] * 1024 % block_bytes == 0)
                        sizes[kept++] = sizes[i];
        return kept;
}

uint32_t ra_calib_jump_kb(uint32_t block_bytes) {
        return block_bytes > 4096 ? (block_bytes + 1023) / 1024 : 4;
}

uint64_t ra_calib_pause_nsec(const char *scheduler, uint64_t read_nsec) {
        if (ra_streq(scheduler, "bfq") || ra_streq(scheduler, "mq-deadline"))
                return 0;
        return read_nsec * RA_CALIB_PACE;
}
