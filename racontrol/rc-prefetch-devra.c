/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ext4 device read-ahead: a directory's blocks and its entries' inode tables,
 * read from the block device ahead of the lookups that need them.
 */
#include "config.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ra-macro.h"
#include "ra-util.h"
#include "rc-prefetch-state.h"

/* Largest gap between two metadata blocks still read as one: a seek costs
 * more than reading a megabyte on a disk, and one command more than that
 * on the emulated one. */
#define DEVICE_MAX_GAP (1024 * 1024)

static void device_read_ahead(const RcWalkRoot *root, RaPrefetchRange *ranges, size_t n) {
        n = ra_prefetch_coalesce(ranges, n, DEVICE_MAX_GAP);
        for (size_t i = 0; i < n; i++)
                for (uint64_t off = ranges[i].offset; off < ranges[i].offset + ranges[i].length;
                     off += root->device_chunk) {
                        uint64_t len = ranges[i].offset + ranges[i].length - off;

                        /* A hint: what is not read here is read by the lookups. */
                        (void) posix_fadvise(root->device_fd, (off_t) off,
                                             (off_t) (len < root->device_chunk ? len : root->device_chunk),
                                             POSIX_FADV_WILLNEED);
                }
}

/* The directory's own blocks, where FIEMAP says they are, before getdents64 asks for them. */
void rc_devra_read_dir(const RcWalkRoot *root, int fd) {
        enum { N = 64 };
        uint64_t buf[(sizeof(struct fiemap) + N * sizeof(struct fiemap_extent)) / sizeof(uint64_t) + 1];
        struct fiemap *fm = (struct fiemap *) buf;
        RaPrefetchRange ranges[N];
        uint64_t start = 0;

        for (;;) {
                size_t n = 0;
                bool last = false;

                memset(buf, 0, sizeof(buf));
                fm->fm_start = start;
                fm->fm_length = FIEMAP_MAX_OFFSET - start;
                fm->fm_extent_count = N;
                if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0 || fm->fm_mapped_extents == 0)
                        return;
                for (uint32_t i = 0; i < fm->fm_mapped_extents; i++) {
                        const struct fiemap_extent *e = &fm->fm_extents[i];

                        if (!(e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
                                             FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_UNWRITTEN)))
                                ranges[n++] = (RaPrefetchRange){ e->fe_physical, e->fe_length };
                        last = e->fe_flags & FIEMAP_EXTENT_LAST;
                        start = e->fe_logical + e->fe_length;
                }
                device_read_ahead(root, ranges, n);
                if (last || fm->fm_mapped_extents < N)
                        return;
        }
}

/* The inode table block that holds inode ino, as a range to read. */
static bool inode_block(const RcWalkRoot *root, uint64_t ino, RaPrefetchRange *ret) {
        uint64_t block = root->ext4.block_size, off;

        if (ra_ext4_inode_offset(&root->ext4, ino, &off) < 0)
                return false;
        *ret = (RaPrefetchRange){ off / block * block, block };
        return true;
}

/* The inode table blocks that hold the entries' inodes. */
void rc_devra_read_inodes(const RcWalkRoot *root, const Dir *d) {
        _cleanup_free_ RaPrefetchRange *ranges = NULL;
        size_t n = 0;

        ranges = calloc(d->n, sizeof(*ranges));
        if (!ranges)
                return;
        for (size_t i = 0; i < d->n; i++)
                if (inode_block(root, d->entries[i].ino, &ranges[n]))
                        n++;
        device_read_ahead(root, ranges, n);
}

/* The same for pending[begin, end), which is sorted by root. */
static void device_read_pending(RcWalk *w, size_t begin, size_t end) {
        _cleanup_free_ RaPrefetchRange *ranges = NULL;
        const RcWalkRoot *root = NULL;
        size_t n = 0;

        ranges = calloc(end - begin, sizeof(*ranges));
        if (!ranges)
                return;
        for (size_t i = begin; i < end; i++) {
                const RcWalkRoot *r = w->pending[i].dir->root;

                if (r != root) {
                        if (n > 0)
                                device_read_ahead(root, ranges, n);
                        root = r;
                        n = 0;
                }
                if (r->device_fd >= 0 && inode_block(r, w->pending[i].ino, &ranges[n]))
                        n++;
        }
        if (n > 0)
                device_read_ahead(root, ranges, n);
}

/* The inode blocks of the pending chunk that starts at begin, if there is one. */
void rc_devra_read_chunk(RcWalk *w, size_t begin) {
        if (begin < w->n_pending)
                device_read_pending(
                        w, begin, begin + LOOKUP_CHUNK < w->n_pending ? begin + LOOKUP_CHUNK : w->n_pending);
}

/* Where the device node of dev is: udev's /dev/block link, else sysfs's DEVNAME. */
static int open_device(unsigned major, unsigned minor, char **ret_path) {
        char path[64], uevent[4096], *name;
        int fd, r;

        (void) snprintf(path, sizeof(path), "/dev/block/%u:%u", major, minor);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && errno == ENOENT) {
                (void) snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major, minor);
                r = ra_read_file_at(AT_FDCWD, path, uevent, sizeof(uevent));
                if (r < 0)
                        return r;
                name = strstr(uevent, "DEVNAME=");
                if (!name)
                        return -ENOENT;
                name += strlen("DEVNAME=");
                name[strcspn(name, "\n")] = '\0';
                if (snprintf(path, sizeof(path), "/dev/%s", name) >= (int) sizeof(path))
                        return -ENAMETOOLONG;
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        }
        if (fd < 0)
                return -errno;
        *ret_path = strdup(path);
        if (!*ret_path) {
                (void) ra_close(fd);
                return -ENOMEM;
        }
        return fd;
}

/*
 * ext4 on a device the caller may read (root, the disk group): the layout
 * that places its inodes. Anyone else gets the lookups alone; so does a
 * device that is no ext4 as this code knows it.
 */
void rc_devra_setup(RcWalkRoot *root, const struct statx *stx) {
        uint8_t sb[RA_EXT4_SUPERBLOCK_SIZE];
        _cleanup_free_ uint8_t *gdt = NULL;
        _cleanup_free_ char *device = NULL;
        _cleanup_close_ int fd = -1;
        size_t gdt_size;
        int ra_sectors = 0;
        unsigned short max_sectors = 0;

        root->device_fd = -1;
        if (root->fs->order != RA_PREFETCH_ORDER_INODE || strcmp(root->fs->name, "ext4") != 0)
                return;
        fd = open_device(stx->stx_dev_major, stx->stx_dev_minor, &device);
        if (fd < 0)
                return;
        if (pread(fd, sb, sizeof(sb), RA_EXT4_SUPERBLOCK_OFFSET) != (ssize_t) sizeof(sb) ||
            ra_ext4_layout_parse(sb, sizeof(sb), &root->ext4) < 0)
                return;
        gdt_size = root->ext4.n_groups * root->ext4.desc_size;
        gdt = malloc(gdt_size);
        if (!gdt || pread(fd, gdt, gdt_size, (off_t) root->ext4.gdt_offset) != (ssize_t) gdt_size ||
            ra_ext4_layout_set_gdt(&root->ext4, gdt, gdt_size) < 0)
                return;

        /* POSIX_FADV_WILLNEED reads at most max(readahead, largest request) a call. */
        (void) ioctl(fd, BLKRAGET, &ra_sectors);
        (void) ioctl(fd, BLKSECTGET, &max_sectors);
        root->device_chunk = (uint64_t) (ra_sectors > max_sectors ? ra_sectors : max_sectors) * 512;
        if (root->device_chunk < 4096)
                root->device_chunk = 4096;
        root->device = TAKE_PTR(device);
        root->device_fd = TAKE_FD(fd);
}
