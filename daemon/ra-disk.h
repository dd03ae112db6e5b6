/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libudev.h>
#include <stdbool.h>
#include <sys/types.h>

#include "ra-adapt.h"
#include "ra-bdi.h"
#include "ra-calib.h"
#include "ra-device.h"
#include "ra-diskstat.h"
#include "ra-inputs.h"
#include "ra-pcache.h"
#include "ra-policy.h"
#include "ra-stack.h"
#include "ra-trace.h"
#include "ra-tune-knob.h"

struct Manager;

/*
 * What a managed object is: a block disk (its queue/read_ahead_kb), a block
 * device on top of others (dm, md), decided from the disks at the bottom of
 * its stack, or a backing device of a file system's own (btrfs, FUSE, NFS:
 * see ra-bdi.h). A block device's kind is known only once its stack is
 * read: a dm device has nothing beneath until its table is loaded.
 */
typedef enum RaKind {
        RA_KIND_DISK,
        RA_KIND_BDI,
        RA_KIND_STACK,
        _RA_KIND_MAX,
} RaKind;

const char *ra_kind_to_string(RaKind k);

/* A disk or a stack: a block device, with a queue, a device node and udev events of its own. */
static inline bool ra_kind_is_block(RaKind k) {
        return k == RA_KIND_DISK || k == RA_KIND_STACK;
}

/*
 * What only a device on top of others (RA_KIND_STACK) has beyond its
 * inputs (RaDisk.in: its stack, NULL while it is not settled, and its
 * leaves): the stack in words for D-Bus.
 */
typedef struct RaDiskStack {
        char text[RA_STACK_DESCRIBE_MAX]; /* "dm-1 (LUKS) on md0 (raid1) on sda2, sdb2"; "" */
} RaDiskStack;

/*
 * What only a file system's own backing device (RA_KIND_BDI) has beyond its
 * inputs (RaDisk.in: what it is, the priors of what lies beneath it, the
 * value its file system was given): where udevd and a FUSE server are with
 * it.
 */
typedef struct RaDiskBdi {
        bool reread; /* udevd has finished an event of it: read its properties again at the next scan */
        /*
         * Found after radaemon started, until udevd has finished its "add"
         * (CLOCK_MONOTONIC usec; 0 after): a udev rule's write meanwhile
         * (nfs-common's nfsrahead) is the bdi's starting value, not someone
         * else's change. udev_added: udevd's "add" came through the monitor.
         */
        uint64_t udev_add_pending_since;
        bool udev_added;
        /* FUSE: when it was found (CLOCK_MONOTONIC usec), until its server's INIT answer is seen; then 0. */
        uint64_t fuse_init_pending_since;
} RaDiskBdi;

/*
 * The statistics sampler's (ra-sampler.c, ra-observe.c): the last counters
 * and the accounts of the interval under way, and what the latest interval
 * showed, for D-Bus. Besides them, only ra_disk_new() (where they start)
 * and the tuning path for a new medium (ra_tune_identified(), which starts
 * them over) write them.
 */
typedef struct RaDiskSampled {
        RaDiskStat stat;
        uint64_t stat_usec; /* 0: no sample yet */
        unsigned idle_samples;
        unsigned skip; /* samples to skip: idle disks are looked at less often */
        RaTraceAccount trace;
        RaPcacheAccount pcache; /* the files read through this disk's window */
        uint64_t read_bytes_per_sec;
        uint64_t avg_read_request_bytes;
        const char *workload; /* "idle", "sequential", "random", "mixed" */
        const char *evidence; /* what the latest busy interval was judged from */
} RaDiskSampled;

/*
 * A file already open whose window radaemon changed with its device's
 * (ra-openfiles.c), as racontrol show lists it: the reader, the file as
 * the reader's /proc/PID/fd names it, and what was done when.
 */
typedef struct RaOpenFile {
        uint64_t when_usec; /* CLOCK_REALTIME; 0: an empty slot */
        pid_t pid;
        uid_t uid, euid; /* the reader's real and effective: only it (both) and root are told of the file */
        int fd;
        uint32_t from_kb, to_kb;
        const char *why; /* RA_OPENFILE_RANDOM, _EVICTED or _STREAM */
        uint32_t s_dev;  /* the file, for undoing what was done (ra-openfiles.c) */
        uint64_t ino;
        char comm[16];
        char *path;
} RaOpenFile;

/* Why a file followed its device's window, as ListOpenFiles says it. */
#define RA_OPENFILE_RANDOM "random"   /* cut: its random reads brought whole windows */
#define RA_OPENFILE_EVICTED "evicted" /* cut: it read again pages read ahead for it, evicted unused */
#define RA_OPENFILE_STREAM "stream"   /* grown: it read in order, filling each window */
#define RA_OPENFILE_UNDONE "undone"   /* cut back: the growth that moved it was undone */

/* The files a device keeps, the latest: one a reader (pid and path) however often it changed. */
#define RA_OPENFILES_KEPT 16

/*
 * One disk or bdi radaemon manages: what it is, what we want for it, and
 * why. Every kind is kept, decided, learned and published alike, from the
 * fields they share; what only a stack or a bdi has is in as_stack and
 * as_bdi. A bdi's attributes are those of what lies beneath it.
 */
typedef struct RaDisk {
        struct Manager *manager;
        RaKind kind;
        const char *knob_attr; /* below syspath: RA_APPLY_DISK_ATTR or RA_APPLY_BDI_ATTR */
        char *name;            /* kernel name, or the bdi's; the key of the registry */
        char *object_path;     /* on D-Bus */
        char *syspath;
        char *devnode;
        /*
         * What it was last read with (ra_disk_update(), ra_disk_update_bdi(),
         * through common/ra-inputs.c as the udev helper reads it), and is
         * decided from; all its own. A bdi's attrs are those of what lies
         * beneath it. in.identity is the one it is kept under (NULL: none);
         * in.leaf_identities, its leaves', are taken at every decision. Kept
         * current between reads: in.attrs.read_ahead_kb follows what is
         * written and seen (drift), in.server_kb a FUSE server's answer, and
         * in.identity moves apart from a device reporting the same one.
         */
        RaInputs in;
        /*
         * A block device's identity as it reports it; in.identity differs
         * while another present device reports the same one
         * (ra_identify(), daemon/ra-identify.c).
         */
        char *reported_identity;
        dev_t devnum;

        RaSettings settings;
        RaDecision decision;

        RaDiskSampled sampled;
        /*
         * What it has learned (ra-adapt.h): the sampler learns it, the store
         * keeps it, and the tuning path decides with it and starts it over
         * from the store for a new medium; not the sampler's alone.
         */
        RaModel model;
        uint64_t decisions; /* values written since radaemon started, for racontrol metrics */

        /* Someone else's writes, and our failed ones: each logged once. */
        bool external; /* read_ahead_kb was changed behind our back, and we yield */
        /*
         * Its diskseq moved: a new medium, whose udev event is on its way and
         * decides. What sysfs holds until then is the kernel's, not somebody
         * else's, and nothing is written over it.
         */
        bool medium_pending;
        RaReassert reassert; /* writes again after such changes (ra-tune-knob.h) */
        int write_error;     /* errno of the last failed write; 0 after a good one */

        /* A disk or stack: a managed bdi reads through it, so its block requests are a file system's. */
        bool beneath_bdi;
        /*
         * Beneath a bdi: the turns its traced requests took between the
         * file system's streams (RaTraceSummary.switches) and what they cost
         * (RaCalibTurns), since the bdi took them. The bdi's window makes them
         * fewer, so they are the bdi's evidence (ra-observe.c).
         */
        uint64_t bdi_switches;
        RaCalibTurns bdi_turns;

        /*
         * Its cost model: its calibration (ra-calib-sched.c), else the model
         * from its traced requests (costs), as the store keeps them for its
         * identity, a copy for D-Bus; whether one runs; not before
         * calib_after (CLOCK_MONOTONIC usec; UINT64_MAX: not this run); when
         * its counters last moved, which says a rotational disk is awake.
         */
        RaCalib calib;
        RaCalibTrace costs;     /* its traced requests' completions: its model where no calibration ran */
        uint64_t costs_diskseq; /* the medium (diskseq) they are of: another starts them empty */
        bool calibrating;
        unsigned calib_interrupted; /* calibrations stopped by other reads or writes this run */
        uint64_t calib_after;
        uint64_t active_usec;
        bool announced; /* the decision has been logged at info level */
        bool published; /* D-Bus clients have been told the disk exists */
        bool seen;      /* found by the enumeration under way */

        /* The files already open it last gave a new window (ra-openfiles.c), for ListOpenFiles. */
        RaOpenFile open_files[RA_OPENFILES_KEPT];
        struct RaOpenFilesScan *openfiles_scan; /* the search for them under way, if any */

        /* What only one kind has; zero for the others. */
        RaDiskStack as_stack;
        RaDiskBdi as_bdi;
} RaDisk;

int ra_disk_new(struct Manager *m, RaKind kind, const char *name, RaDisk **ret);
RaDisk *ra_disk_free(RaDisk *d);
RA_DEFINE_CLEANUP(RaDisk, ra_disk_free)

/*
 * Re-reads sysfs and the udev properties. Returns -ENODEV when the device is
 * gone; when a RADAEMON_* property is invalid, the rest is still read and
 * *ret_bad_property names the bad one.
 */
int ra_disk_update(RaDisk *d, struct udev_device *dev, const char **ret_bad_property);

/*
 * Takes b (a bdi ra_mounts_bdis() found; b is cleared) and reads what lies
 * beneath it through udev, as disks are read. -ENODEV when the bdi is gone.
 */
int ra_disk_update_bdi(RaDisk *d, struct udev *udev, RaBdi *b);

/*
 * The disks it reads from, for D-Bus (a partition stands for its disk): a
 * stack's leaves, what lies beneath a bdi; NULL for a disk.
 */
char **ra_disk_beneath(const RaDisk *d);

/* Opens the disk's sysfs directory for the applier; -ENODEV when it is gone. */
int ra_disk_open_sysfs(const RaDisk *d);

/*
 * What D-Bus clients see of a disk that can change, taken before an update
 * so that PropertiesChanged names exactly what did.
 */
typedef struct RaDiskSnapshot {
        RaKind kind;
        char *node;
        char *identity;
        char *transport;
        uint64_t size_bytes;
        bool rotational;
        bool removable;
        uint32_t read_ahead_kb;
        RaDecision decision;
        uint64_t read_bytes_per_sec;
        uint64_t avg_read_request_bytes;
        const char *workload;
        uint64_t decisions;
        uint32_t learned_kb;
        const char *evidence;
        uint64_t calibrated; /* calib.when */
        bool calibrating;
} RaDiskSnapshot;

int ra_disk_snapshot(const RaDisk *d, RaDiskSnapshot *ret);
void ra_disk_snapshot_clear(RaDiskSnapshot *s);

/*
 * Whether kb, found in a stacked device's sysfs, is the kernel's own value
 * for its limits as they are now (max(2 × optimal I/O size, 128 KiB)): dm
 * and md stacking them again, not somebody's write. Updates the size, the
 * optimal I/O size and the stack it read on the way.
 */
bool ra_disk_restacked(RaDisk *d, struct udev *udev, uint32_t kb);

/* What its window's knob in sysfs holds now; *ret_kb is left alone on failure. */
int ra_disk_read_knob(const RaDisk *d, uint32_t *ret_kb);
