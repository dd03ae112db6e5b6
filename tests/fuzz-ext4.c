/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ext4 superblock and group descriptor reader of racontrol prefetch: the
 * first 1024 bytes are the superblock, the rest the descriptors, as a device
 * whose file system a user made (a loop file, a USB stick) gives them. Every
 * inode number the layout names is mapped, and the first, last and one past.
 */
#include "config.h"

#include "fuzz.h"
#include "ra-prefetch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        RaExt4Layout l = {};
        uint64_t offset, inodes;

        if (size < RA_EXT4_SUPERBLOCK_SIZE || ra_ext4_layout_parse(data, RA_EXT4_SUPERBLOCK_SIZE, &l) < 0)
                return 0;
        if (ra_ext4_layout_set_gdt(&l, data + RA_EXT4_SUPERBLOCK_SIZE, size - RA_EXT4_SUPERBLOCK_SIZE) >=
            0) {
                inodes = l.n_groups * l.inodes_per_group;
                (void) ra_ext4_inode_offset(&l, 0, &offset);
                (void) ra_ext4_inode_offset(&l, 1, &offset);
                (void) ra_ext4_inode_offset(&l, inodes, &offset);
                (void) ra_ext4_inode_offset(&l, inodes + 1, &offset);
                for (uint64_t g = 0; g < l.n_groups && g < 4096; g++)
                        (void) ra_ext4_inode_offset(&l, g * l.inodes_per_group + 1, &offset);
        }
        ra_ext4_layout_clear(&l);
        return 0;
}
