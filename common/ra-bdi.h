/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ra-macro.h"
#include "ra-policy.h"

/*
 * The backing devices (bdis) that are not a disk's. A file is read ahead with
 * the window of its superblock's bdi, /sys/class/bdi/<name>/read_ahead_kb.
 * For a file system on a disk that is the disk's queue/read_ahead_kb; these
 * file systems have a bdi of their own, which lives exactly as long as the
 * superblock (a new one, with a new name, at every mount):
 *
 *  - btrfs: "btrfs-N", linked from /sys/fs/btrfs/<uuid>/bdi; the kernel
 *    gives it 128 KiB times the number of devices, and at least 4 MiB,
 *    whatever the devices are;
 *  - FUSE: "<maj>:<min>" of the superblock's anonymous dev; the kernel gives
 *    it 128 KiB, lowered to the server's max_readahead when it answers INIT;
 *  - fuseblk (ntfs-3g, exfat-fuse): "<maj>:<min>-fuseblk" of its disk;
 *  - NFS: "<maj>:<min>" of the anonymous dev; 128 KiB since Linux 5.4.
 *
 * Pure: everything is read below a sysfs root given by the caller, so the
 * tests point it at trees of their own.
 */

typedef enum RaBdiKind {
        RA_BDI_BTRFS,
        RA_BDI_FUSE,
        RA_BDI_FUSEBLK,
        RA_BDI_NFS,
        RA_BDI_OTHER, /* another file system with a bdi of its own (cifs, ceph, 9p, ...) */
        _RA_BDI_KIND_MAX,
} RaBdiKind;

const char *ra_bdi_kind_to_string(RaBdiKind k);
/* From mountinfo's file system type: "btrfs", "fuse.sshfs", "fuseblk", "nfs4", ... */
RaBdiKind ra_bdi_kind_from_fs_type(const char *fs_type);

typedef struct RaBdi {
        char *name; /* under /sys/class/bdi: "btrfs-3", "0:52", "8:17-fuseblk" */
        RaBdiKind kind;
        char *fs_type;    /* as mountinfo says; NULL while not mounted yet */
        char *mountpoint; /* the superblock's first mount; NULL while not mounted yet */
        char *source;     /* mountinfo's source: "/dev/sdb1", "server:/export", "sshfs#host:" */
        char *uuid;       /* btrfs: the file system's UUID */
        dev_t s_dev;      /* the superblock's dev, as the page-cache events name it; 0 while not mounted */
        int mount_id;     /* mountinfo's ID of that first mount; 0 while not mounted */
        dev_t *beneath;   /* the block devices it reads from (btrfs's devices, fuseblk's disk) */
        size_t n_beneath;
        unsigned stripes;  /* btrfs: devices one data stripe spans (raid0, raid10, raid5/6); else 1 */
        uint32_t rsize_kb; /* NFS: the rsize mount option; 0 when unknown */
        bool user_made;    /* FUSE: mounted by a user other than root (fusermount's user_id=)... */
        uid_t user_id;     /* ...this one */
} RaBdi;

void ra_bdi_clear(RaBdi *b);
void ra_bdi_array_free(RaBdi *v, size_t n);

/*
 * Fills b's btrfs fields (uuid, beneath, stripes, and name if b->name is
 * NULL) from <sysfs_root>/fs/btrfs: the file system whose bdi is b->name,
 * or, when b->name is NULL, the one with device_name (a kernel name such as
 * "sdb1") among its devices. -ENOENT when there is none.
 */
int ra_bdi_read_btrfs(const char *sysfs_root, const char *device_name, RaBdi *b);

/*
 * The words a bdis= glob or a [bdi:GLOB] section is matched against: the
 * bdi's name, mount point and file system type, those known (a btrfs being
 * mounted has no mount point yet). ret ends with NULL.
 */
void ra_bdi_keys(const RaBdi *b, const char *ret[static 4]);

/* True when <sysfs_root>/class/bdi/<name> exists. */
bool ra_bdi_exists(const char *sysfs_root, const char *name);

/*
 * The stable identity pins and originals are kept under, the same at every
 * mount: "btrfs:<uuid>", "fuse:<type>:<source>@<mount point>",
 * "nfs:<source>", "bdi:<type>:<source>@<mount point>".
 */
int ra_bdi_identity(const RaBdi *b, char **ret);

/*
 * The first value of a bdi, from what it is and what lies beneath:
 *
 *  - btrfs: the prior of the slowest device beneath (the smallest of
 *    beneath_kb, each the disk prior of one device), times the devices a
 *    data stripe spans; not the kernel's 4 MiB, which it gives a USB stick
 *    and an array alike;
 *  - fuseblk: its disk's prior;
 *  - FUSE: the window the server left at INIT (server_kb), which only it
 *    knows to be right for what is behind it;
 *  - NFS: 15 times rsize, what the kernel gave before 5.4 (cloud vendors'
 *    rules set as much), at most 16 MiB;
 *  - another: what the kernel gave it (server_kb).
 *
 * Held within bounds. ret->kb is 0 when nothing can be said (btrfs whose
 * devices are not known yet).
 */
void ra_bdi_prior(const RaBdi *b, const uint32_t *beneath_kb, uint32_t server_kb, RaBounds bounds,
                  RaDecision *ret);

/* How long after a FUSE bdi is found its server's INIT answer is looked for. */
#define RA_BDI_FUSE_INIT_USEC (5 * UINT64_C(1000000))

/*
 * Whether a FUSE bdi's window, gone from was_kb to kb, is its server's INIT
 * answer rather than somebody else's write. mount(2) returns before the
 * server answers, and radaemon can find the bdi and write it first; the
 * answer then sets the window to min(the window then, the server's
 * max_readahead). So it only lowers, to at most server_kb (the window the
 * bdi had when found, the kernel's offer), once (pending: not seen yet),
 * and soon: since_found_usec after the bdi was found.
 */
bool ra_bdi_fuse_init_answer(const RaBdi *b, bool pending, uint64_t since_found_usec, uint32_t server_kb,
                             uint32_t was_kb, uint32_t kb);
