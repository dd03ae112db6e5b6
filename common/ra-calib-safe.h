/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What a calibration (daemon/ra-calib-sched.c) may read, and how: pure rules
 * and the reader of the sysfs attributes they take, so that the unit tests
 * can try every kind of disk.
 *
 * A calibration reads a disk directly, from a process of its own that the
 * daemon abandons when a read does not return in time. Still, a read that
 * cannot succeed, or that may wait on something other than the disk itself,
 * is not made at all: network block devices (a server or a path away: nbd,
 * rbd, drbd, AoE, iSCSI, NVMe over a fabric), optical drives (a read may
 * spin up and wait on the drive for a minute), zoned disks (a host-managed
 * zone fails reads past its write pointer), a suspended device-mapper
 * device (every read waits for its resume), a drive without a medium, a
 * disk whose reads failed before radaemon read it (many of its commands
 * failed: each read radaemon made would fail too, and wake the kernel's
 * errors), and a loop device whose file is on a network file system or
 * served by a FUSE server a user runs: its reads wait on a server that may
 * stop answering, and each calibration given up on leaves a process that
 * cannot be killed until the server answers. A FUSE server root mounted is
 * the administrator's, as a driver is (the bench's device model is one).
 */

/* What decides whether a disk may be read; strings may be NULL or "" when unknown. */
typedef struct RaCalibDevice {
        const char *name;    /* kernel name: "sda", "nbd0" */
        const char *syspath; /* "/sys/devices/..."; an iSCSI disk's lies below its session */
        const char *id_path; /* udev's ID_PATH: "ip-10.0.0.1:3260-iscsi-iqn...-lun-0" */
        bool cdrom;          /* udev's ID_CDROM */
        uint64_t size_bytes; /* 0: no medium */

        /* From sysfs, by ra_calib_device_read_sysfs(). */
        char zoned[32];     /* queue/zoned: "none", "host-managed"; "" when absent */
        char fabric[16];    /* an NVMe controller's transport: "pcie", "tcp", "rdma", "fc", "loop" */
        int scsi_type;      /* a SCSI device's type: 0 disk, 4 WORM, 5 CD/DVD, 7 optical, 0x14 zoned */
        bool suspended;     /* dm/suspended */
        char scheduler[32]; /* the active one of queue/scheduler: "none", "mq-deadline", "bfq" */
        uint32_t logical_block_size; /* bytes; 0: unknown, taken as 512 */
        /* A SCSI disk's commands since sd's probe zeroed the error count: done, and of them failed. */
        uint32_t commands_done;   /* device/iodone_cnt; 0: unknown (not SCSI) */
        uint32_t commands_failed; /* device/ioerr_cnt: an error status or sense, a unit attention too */

        /* A loop device's file, by ra_calib_backing_from_mount(): where it is, who mounted that. */
        char backing_fstype[64]; /* "ext4", "nfs4", "fuse.sshfs"; "" when not a loop device or unknown */
        long backing_user;       /* a FUSE mount's user_id=; -1 when it says none */
} RaCalibDevice;

/* A RaCalibDevice with nothing known: scsi_type -1, no FUSE user. */
#define RA_CALIB_DEVICE_INIT                                                                                \
        { .scsi_type = -1, .backing_user = -1 }

/*
 * A loop device's file is on the mount of fstype with options (mountinfo's
 * file system type and super options, "rw,user_id=1000,group_id=1000"):
 * sets d's backing_fstype and backing_user.
 */
void ra_calib_backing_from_mount(RaCalibDevice *d, const char *fstype, const char *options);

/*
 * Reads the attributes above from a disk's /sys/block/<name> directory (the
 * controller's transport through its device link). Missing attributes stay
 * unknown; returns 0, or a negative errno when one present could not be read.
 */
int ra_calib_device_read_sysfs(int sysfd, RaCalibDevice *d);

/*
 * Whether d's reads already failed: at least RA_CALIB_FAILED_MIN of its
 * commands failed, and more than one in RA_CALIB_FAILED_SHARE of those it
 * completed.
 */
#define RA_CALIB_FAILED_MIN 3
#define RA_CALIB_FAILED_SHARE 8
bool ra_calib_reads_failed(const RaCalibDevice *d);

/*
 * NULL when a calibration may read d; else why not, a phrase to follow "it
 * is ": "a network block device (nbd)", "an optical drive", ...
 */
const char *ra_calib_unsafe(const RaCalibDevice *d);

/*
 * Keeps those of the n read sizes (KiB, ra_calib_sizes()) that are a whole
 * number of logical blocks of block_bytes: a direct read of less, or not a
 * multiple, fails with EINVAL (a disk of 16 KiB blocks cannot read 4 KiB).
 * Returns how many are left, in order.
 */
size_t ra_calib_whole_blocks(uint32_t *sizes, size_t n, uint32_t block_bytes);

/* The small read a rotational disk is timed at, far apart: 4 KiB, or one block when larger. */
uint32_t ra_calib_jump_kb(uint32_t block_bytes);

/*
 * The pause after a read of read_nsec, so that a calibration takes at most
 * a quarter of the device's time while it runs: three times the read's own,
 * where the scheduler does not hold idle-class reads back for others (none,
 * kyber: nothing but the pace leaves room for other I/O); none under bfq and
 * mq-deadline, which serve the idle class only when nothing else waits.
 */
#define RA_CALIB_PACE 3
uint64_t ra_calib_pause_nsec(const char *scheduler, uint64_t read_nsec);
