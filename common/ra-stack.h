/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ra-calib.h"
#include "ra-device.h"
#include "ra-macro.h"
#include "ra-policy.h"

/*
 * Block-device stacks: dm (LUKS, LVM, multipath) and md (RAID) devices and
 * the disks beneath them. A file system on a stack reads ahead through the
 * top device's window, never through the disks', and the kernel gives that
 * top device max(2 × optimal_io_size, 128 KiB): 32-64 MiB on disks that
 * report a large optimal I/O size. This module walks a stack in sysfs, down
 * and up (ra-stack-walk.c, reading each device through ra-stack-sysfs.c and
 * parsing dm and md in ra-stack-dm.c and ra-stack-md.c), says it in words
 * (ra-stack-describe.c), and decides the top's first value from what lies
 * beneath (ra-stack-policy.c, ra-stack-cost.c). It takes the sysfs root as a
 * path, so the tests read recorded trees; the daemon passes "/sys".
 */

/* Deeper than any real stack (LUKS on LVM on md on a partition is 4 levels). */
#define RA_STACK_DEPTH_MAX 16u
/* Every device of one stack; an LVM volume group over 200 disks still fits. */
#define RA_STACK_DEVICES_MAX 256u

typedef enum RaStackKind {
        RA_STACK_DISK,         /* neither dm nor md: sd, nvme, vd, mmcblk, loop, ... */
        RA_STACK_DM_CRYPT,     /* cryptsetup: dm/uuid "CRYPT-LUKS2-…", "CRYPT-PLAIN-…" */
        RA_STACK_DM_LVM,       /* an LVM logical volume: dm/uuid "LVM-…" */
        RA_STACK_DM_MULTIPATH, /* several paths to one LUN: dm/uuid "mpath-…" */
        RA_STACK_DM_OTHER,     /* any other dm table, or one without a uuid */
        RA_STACK_MD,           /* md RAID; see md_level */
        _RA_STACK_KIND_MAX,
} RaStackKind;

const char *ra_stack_kind_to_string(RaStackKind k);

typedef enum RaMdLevel {
        RA_MD_LEVEL_NONE, /* not an md device, or an array that is not running (md/level empty) */
        RA_MD_LEVEL_LINEAR,
        RA_MD_LEVEL_RAID0,
        RA_MD_LEVEL_RAID1,
        RA_MD_LEVEL_RAID4,
        RA_MD_LEVEL_RAID5,
        RA_MD_LEVEL_RAID6,
        RA_MD_LEVEL_RAID10,
        RA_MD_LEVEL_OTHER, /* multipath, faulty, container: a level this module does not stripe */
        _RA_MD_LEVEL_MAX,
} RaMdLevel;

/* "raid1" for RA_MD_LEVEL_RAID1, as md/level says it; "other" and "none" for those. */
const char *ra_md_level_to_string(RaMdLevel l);

/* One slave: the name it has in slaves/ and the whole device it belongs to. */
typedef struct RaStackSlave {
        char *name;    /* "sda2", "md0" */
        size_t device; /* index in RaStack.devices of the whole device: sda for sda2 */
} RaStackSlave;

/* One device of a stack, with what the policy needs of it. */
typedef struct RaStackDevice {
        char *name; /* kernel name: "dm-1", "md0", "sda" */
        RaStackKind kind;

        /* dm only; NULL otherwise */
        char *dm_name; /* "vg0-root", "luks-3f2a…" */
        char *dm_uuid; /* "LVM-…", "CRYPT-LUKS2-…"; NULL when dm has none */

        /* md only; 0 otherwise */
        RaMdLevel md_level;
        uint32_t md_raid_disks;
        uint32_t md_chunk_bytes;
        uint32_t md_layout;     /* raid10: near copies in bits 0-7, far copies in 8-15 */
        uint32_t md_data_disks; /* disks a read is striped over: 1 unless raid0/4/5/6/10 */

        /* The whole device's attributes: 0 where the kernel does not report one. */
        uint64_t size_bytes;
        uint32_t read_ahead_kb;
        uint32_t optimal_io_bytes;
        uint32_t max_sectors_kb;
        bool rotational;
        bool removable;

        RaStackSlave *slaves; /* direct slaves, in version order ("sda2" before "sdb2") */
        size_t n_slaves;
        char **holders; /* direct holders of the device and of its partitions, each once, in order */
} RaStackDevice;

/*
 * A device and everything beneath it. devices[0] is the device read; every
 * other device appears once, however many paths lead to it (a diamond:
 * two LVs of one volume group under a third device).
 */
typedef struct RaStack {
        RaStackDevice *devices;
        size_t n_devices;
        size_t *leaves; /* indexes of the devices without slaves (the disks at the bottom), each once */
        size_t n_leaves;
} RaStack;

RaStack *ra_stack_free(RaStack *s);
RA_DEFINE_CLEANUP(RaStack, ra_stack_free)

static inline const RaStackDevice *ra_stack_top(const RaStack *s) {
        return &s->devices[0];
}

static inline const RaStackDevice *ra_stack_leaf(const RaStack *s, size_t i) {
        return &s->devices[s->leaves[i]];
}

/*
 * Reads the stack beneath the whole block device name (as listed in
 * <sysfs_root>/block/), following slaves/ down to the disks, partitions
 * resolved to their disks. Returns 0; -ENODEV when the device, or a device
 * beneath it, is gone (a stack being torn down); -ELOOP for a cycle or a
 * stack deeper than RA_STACK_DEPTH_MAX; -E2BIG for more than
 * RA_STACK_DEVICES_MAX devices; -EINVAL, -ERANGE or -EBADMSG for an
 * attribute or a link this module does not accept. On failure
 * *ret_bad_path (may be NULL; free() it) names the path, relative to the
 * root, that was wrong, where there is one.
 */
int ra_stack_read(const char *sysfs_root, const char *name, RaStack **ret, char **ret_bad_path);

/*
 * The devices at the top of every stack name is part of: follows holders/
 * (of the device and its partitions) up to devices nothing holds. A device
 * that nothing holds is its own top. The names are in version order, each
 * once. Errors as for ra_stack_read().
 */
int ra_stack_find_tops(const char *sysfs_root, const char *name, char ***ret, char **ret_bad_path);

/*
 * One line for logs and D-Bus: "dm-1 (LUKS) on dm-0 (LVM) on md0 (raid1) on
 * sda2, sdb2". Where a device has several slaves and one of them has its own,
 * that slave's part is bracketed: "dm-2 (LVM) on [md0 (raid0) on sda, sdb], sdc".
 * Cut, and marked " ...", where it would not fit.
 */
#define RA_STACK_DESCRIBE_MAX RA_REASON_MAX
const char *ra_stack_describe(const RaStack *s, char buf[static RA_STACK_DESCRIBE_MAX]);

/*
 * The most a window may reach on the optimal I/O size's word alone: a fast
 * SSD behind a costly controller reached full bandwidth at 1-4 MiB
 * (docs/design.md), and anything larger has to be learned from the device's reads.
 */
#define RA_STACK_HINT_CAP_KB 4096u

/*
 * The first value for the top of a stack (devices[0]), the device whose
 * window a file system on the stack reads with. leaf_prior_kb[i] is
 * radaemon's prior for the leaf s->leaves[i] as a disk of its own
 * (ra_policy_prior()), 0 where it has none. The rule:
 *
 * - The layout: the largest prior of the disks beneath, times the disks a
 *   read is striped over. md raid0, raid4/5/6 (less parity) and raid10
 *   (over its near copies) stripe, and nested arrays multiply; raid1, linear
 *   md, LUKS, LVM and multipath send a read to one disk at a time. A
 *   striped array's window is at least a whole chunk per data disk, or it
 *   would reach fewer disks than it is striped over.
 * - The top's optimal I/O size is a hint, never the rule. Twice it (what
 *   the kernel sets) may raise the window only where a dm table could
 *   explain it (an LVM striped volume looks linear in sysfs), only when the
 *   disks beneath do not report it themselves (the kernel hands theirs up,
 *   and their priors weighed it already), and never past what the disks
 *   could use were the table striped over all of them (the sum of their
 *   priors), nor past RA_STACK_HINT_CAP_KB. The reason says when it was
 *   ignored.
 * - Then, as for a disk: capped by the top's size (ra_policy_size_cap_kb()),
 *   held within bounds, whole pages. A top of size 0 gets 0 (nothing to
 *   read ahead yet). A device with nothing beneath keeps its own prior.
 */
void ra_stack_prior(const RaStack *s, const uint32_t *leaf_prior_kb, RaBounds bounds, RaDecision *ret);

/*
 * Reads one disk at the bottom of a stack (a whole disk: a partition is
 * resolved to its disk) as radaemon reads a disk, into ret. A negative errno
 * when it cannot, -ENODEV when it is gone.
 */
typedef int (*RaStackLeafReader)(void *userdata, const char *name, RaDeviceAttrs *ret);

/*
 * The reader both radaemon and its udev helper use: the leaf's sysfs
 * attributes and its properties from udev's database, never from an event's
 * environment, so that both see the same leaf. userdata is a struct udev *.
 * (ra-stack-udev.c, the only part of this module that needs libudev.)
 */
int ra_stack_read_leaf_udev(void *userdata, const char *name, RaDeviceAttrs *ret);

/*
 * Radaemon and its udev helper decide a stacked device in these two steps,
 * so they cannot disagree. First, the stack beneath name and each leaf's prior
 * as a disk of its own (ra_policy_prior()), each leaf read through read_leaf.
 * Returns 1 with *ret_stack, *ret_leaf_kb (one per s->leaves) and
 * *ret_leaf_names (may be NULL; the leaves by name) set; 0 when nothing lies
 * beneath name; -EAGAIN when the stack is not settled (a device in it, or a
 * leaf, is gone or cannot be read yet: it is being built or torn down);
 * another negative errno as for ra_stack_read().
 */
int ra_stack_read_priors(const char *sysfs_root, const char *name, RaStackLeafReader read_leaf,
                         void *userdata, RaStack **ret_stack, uint32_t **ret_leaf_kb, char ***ret_leaf_names,
                         char **ret_bad_path);

/*
 * Then the prior, from what ra_stack_read_priors() returned (read) and read:
 * returns true with *ret the device's prior (ra_stack_prior() over a settled
 * stack; nothing, kb 0, while the stack is not settled, until an event of it
 * or of a disk beneath brings it settled); false when the device is decided
 * from its own attributes (nothing beneath it, or a stack this module cannot
 * read).
 */
bool ra_stack_decide(int read, const RaStack *s, const uint32_t *leaf_kb, RaBounds bounds, RaDecision *ret);

/*
 * A stacked device's cost model, composed from its leaves' calibrations
 * (ra-stack-cost.c): leaf_calib[i] is what was measured of s->leaves[i],
 * NULL where nothing was. A device that sends a read to one device beneath
 * at a time (LVM, linear md, multipath) costs what the one asking the
 * largest window does; an md mirror what its fastest does (md reads one
 * stream from one disk); a striped array (raid0, raid4/5/6 less parity,
 * raid10) reads at its slowest data disk's rate times its data disks, a
 * command as slow as the slowest; dm-crypt adds the CPU time of decrypting
 * a read's last bio to its command and caps the bandwidth at one CPU's
 * rate. *ret_floor_kb (may be NULL) is what a window must reach at least:
 * a whole chunk of every data disk. Returns false when a leaf has no
 * calibration, or nothing lies beneath the top.
 */
bool ra_stack_cost(const RaStack *s, const RaCalib *const *leaf_calib, RaCalib *ret, uint32_t *ret_floor_kb);

/*
 * The window from that model, as ra_calib_prior() decides a calibrated disk
 * (source RA_SOURCE_CALIBRATED), for the top whose attributes are top (its
 * size caps it; it counts as rotational where a leaf is), at least the
 * floor above, with a reason that names the leaves: "From sdc's calibration
 * beneath it, plus dm-crypt's ...: ...". Returns false, with *ret untouched,
 * when ra_stack_cost() has no model or the top has no size: the top keeps
 * the rule of ra_stack_prior().
 */
bool ra_stack_calibrated(const RaStack *s, const RaCalib *const *leaf_calib, const RaDeviceAttrs *top,
                         RaBounds bounds, RaDecision *ret);

/* Whether radaemon manages the device name (in the registry, as a disk). */
typedef bool (*RaStackIsManaged)(void *userdata, const char *name);

/*
 * The devices to decide again after the disks changed (a udev event each:
 * a rotational flag set, a size re-read, an md member added) were read
 * again: the managed tops of the stacks they are part of
 * (ra_stack_find_tops()), each once, in order, leaving out any in changed
 * (its own event decided it) and the disks themselves. A changed disk that
 * is gone, or whose stack cannot be read, has nothing to tell. Returns 0 with
 * *ret set (NULL for none), -ENOMEM.
 */
int ra_stack_tops_to_redecide(const char *sysfs_root, char *const *changed, RaStackIsManaged is_managed,
                              void *userdata, char ***ret);
