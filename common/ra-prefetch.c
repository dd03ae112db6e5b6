/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ra-prefetch.h"
#include "ra-util.h"

static const RaPrefetchFs known_fs[] = {
        { .name = "ext4",
          .order = RA_PREFETCH_ORDER_INODE,
          .reason =
                  "ext2/3/4 keep inodes in per-group tables in inode-number order, so ascending numbers read "
                  "the tables front to back" },
        { .name = "xfs",
          .order = RA_PREFETCH_ORDER_INODE,
          .reason =
                  "an XFS inode number encodes its allocation group and block, so ascending numbers are disk "
                  "order" },
        { .name = "btrfs",
          .order = RA_PREFETCH_ORDER_INODE,
          .reason =
                  "btrfs keeps inodes in b-tree leaves sorted by inode number, and the leaves of files "
                  "written together lie together, so ascending numbers read each leaf once, mostly forward "
                  "(copy-on-write moves a leaf that changes later)" },
        { .name = "f2fs",
          .order = RA_PREFETCH_ORDER_DIRECTORY,
          .reason = "f2fs is log-structured: inode numbers are node ids mapped anywhere on the device" },
        { .name = "tmpfs",
          .order = RA_PREFETCH_ORDER_DIRECTORY,
          .reason = "tmpfs is in memory: there is nothing to order" },
        { .name = "nfs",
          .order = RA_PREFETCH_ORDER_DIRECTORY,
          .reason = "on NFS the server decides where inodes live" },
};

static const RaPrefetchFs unknown_fs = {
        .name = "unknown",
        .order = RA_PREFETCH_ORDER_DIRECTORY,
        .reason =
                "nothing is known of where this file system puts inodes, so the walk keeps the directory's order",
};

const RaPrefetchFs *ra_prefetch_fs_from_magic(uint64_t f_type) {
        /* statfs(2)'s magic numbers; linux/magic.h names them. */
        switch (f_type) {
        case 0xEF53:
                return &known_fs[0];
        case 0x58465342:
                return &known_fs[1];
        case 0x9123683E:
                return &known_fs[2];
        case 0xF2F52010:
                return &known_fs[3];
        case 0x01021994:
                return &known_fs[4];
        case 0x6969:
                return &known_fs[5];
        default:
                return &unknown_fs;
        }
}

const char *ra_prefetch_order_to_string(RaPrefetchOrder order) {
        return order == RA_PREFETCH_ORDER_INODE ? "inode" : "directory";
}

static int cmp_inode(const void *a, const void *b) {
        const RaPrefetchEntry *x = a, *y = b;

        if (x->ino != y->ino)
                return x->ino < y->ino ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_index(const void *a, const void *b) {
        const RaPrefetchEntry *x = a, *y = b;

        return x->index < y->index ? -1 : x->index > y->index;
}

void ra_prefetch_sort_entries(RaPrefetchEntry *entries, size_t n, RaPrefetchOrder order) {
        if (n > 1)
                qsort(entries, n, sizeof(*entries),
                      order == RA_PREFETCH_ORDER_INODE ? cmp_inode : cmp_index);
}

void ra_prefetch_count_descents(const RaPrefetchEntry *entries, size_t n, uint64_t *pairs,
                                uint64_t *descents) {
        for (size_t i = 1; i < n; i++) {
                (*pairs)++;
                if (entries[i].ino < entries[i - 1].ino)
                        (*descents)++;
        }
}

bool ra_prefetch_walk_in_order(uint64_t pairs, uint64_t descents) {
        return pairs >= 64 && descents <= pairs / 16;
}

bool ra_prefetch_may_leave(int rotational, bool device_readahead, bool always, bool data) {
        return rotational == 1 && !device_readahead && !always && !data;
}

static int cmp_physical(const void *a, const void *b) {
        const RaPrefetchFile *x = a, *y = b;

        if (x->physical != y->physical)
                return x->physical < y->physical ? -1 : 1;
        return x->id < y->id ? -1 : x->id > y->id;
}

size_t ra_prefetch_plan(RaPrefetchFile *files, size_t n, uint64_t budget, uint64_t *ret_bytes) {
        uint64_t used = 0;
        size_t selected = 0;

        if (n > 1)
                qsort(files, n, sizeof(*files), cmp_physical);

        for (size_t i = 0; i < n; i++) {
                files[i].selected = files[i].size <= budget - used;
                if (files[i].selected) {
                        used += files[i].size;
                        selected++;
                }
        }

        if (ret_bytes)
                *ret_bytes = used;
        return selected;
}

int ra_prefetch_budget_from_meminfo(const char *meminfo, uint64_t *ret) {
        const char *p;
        uint64_t kb;
        char *end;

        for (p = meminfo; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, "MemAvailable:", 13) == 0)
                        break;
        if (!p)
                return -EINVAL;

        p += 13;
        p += strspn(p, " ");
        errno = 0;
        if (*p < '0' || *p > '9')
                return -EINVAL;
        kb = strtoull(p, &end, 10);
        if (errno != 0 || strncmp(end, " kB", 3) != 0 || kb > UINT64_MAX / 1024)
                return -EINVAL;

        *ret = kb * 1024 / 2;
        return 0;
}

int ra_prefetch_parse_size(const char *s, uint64_t *ret) {
        static const char suffixes[] = "KMGT";
        _cleanup_free_ char *digits = NULL;
        const char *suffix;
        unsigned shift = 0;
        uint64_t v;
        size_t len;
        int r;

        if (!s || !*s)
                return -EINVAL;

        len = strlen(s);
        suffix = strchr(suffixes, s[len - 1]);
        if (suffix && s[len - 1] != '\0') {
                shift = 10 * (unsigned) (suffix - suffixes + 1);
                len--;
        }

        digits = strndup(s, len);
        if (!digits)
                return -ENOMEM;
        r = ra_parse_u64(digits, &v);
        if (r < 0)
                return r;
        if (shift > 0 && v > (UINT64_MAX >> shift))
                return -ERANGE;

        *ret = v << shift;
        return 0;
}

double ra_prefetch_seconds_left(uint64_t done, uint64_t total, double elapsed) {
        if (done == 0 || elapsed <= 0 || total < done)
                return -1;
        return elapsed * (double) (total - done) / (double) done;
}

static uint16_t le16(const uint8_t *p) {
        return (uint16_t) (p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

int ra_ext4_layout_parse(const uint8_t *sb, size_t size, RaExt4Layout *ret) {
        uint32_t log_block_size, blocks_per_group, first_data_block, incompat;
        uint64_t blocks;
        RaExt4Layout l = {};

        if (size < RA_EXT4_SUPERBLOCK_SIZE || le16(sb + 56) != 0xEF53)
                return -EINVAL;

        log_block_size = le32(sb + 24);
        if (log_block_size > 6) /* 1 KiB to 64 KiB */
                return -EINVAL;
        l.block_size = 1024U << log_block_size;
        first_data_block = le32(sb + 20);
        blocks_per_group = le32(sb + 32);
        l.inodes_per_group = le32(sb + 40);
        l.inode_size = le32(sb + 76) >= 1 ? le16(sb + 88) : 128;
        incompat = le32(sb + 96);
        l.desc_size = (incompat & 0x80) && le16(sb + 254) >= 64 ? le16(sb + 254) : 32;
        blocks = le32(sb + 4) | ((incompat & 0x80) ? (uint64_t) le32(sb + 336) << 32 : 0);

        if (incompat & 0x10) /* meta_bg */
                return -EOPNOTSUPP;
        if (blocks_per_group == 0 || l.inodes_per_group == 0 || l.inode_size < 128 ||
            l.inode_size > l.block_size || (l.inode_size & (l.inode_size - 1)) != 0 || l.desc_size > 1024 ||
            blocks <= first_data_block)
                return -EINVAL;

        l.n_groups = (blocks - first_data_block + blocks_per_group - 1) / blocks_per_group;
        l.gdt_offset = ((uint64_t) first_data_block + 1) * l.block_size;
        *ret = l;
        return 0;
}

int ra_ext4_layout_set_gdt(RaExt4Layout *l, const uint8_t *gdt, size_t size) {
        uint64_t *table;

        if (l->n_groups == 0 || size / l->desc_size < l->n_groups)
                return -EINVAL;
        table = calloc(l->n_groups, sizeof(*table));
        if (!table)
                return -ENOMEM;
        for (uint64_t g = 0; g < l->n_groups; g++) {
                const uint8_t *d = gdt + g * l->desc_size;

                table[g] = le32(d + 8) | (l->desc_size >= 64 ? (uint64_t) le32(d + 40) << 32 : 0);
        }
        free(l->inode_table);
        l->inode_table = table;
        return 0;
}

void ra_ext4_layout_clear(RaExt4Layout *l) {
        l->inode_table = mfree(l->inode_table);
}

int ra_ext4_inode_offset(const RaExt4Layout *l, uint64_t ino, uint64_t *ret) {
        uint64_t group, index;

        if (!l->inode_table || ino == 0)
                return -EINVAL;
        group = (ino - 1) / l->inodes_per_group;
        index = (ino - 1) % l->inodes_per_group;
        if (group >= l->n_groups)
                return -EINVAL;
        *ret = l->inode_table[group] * l->block_size + index * l->inode_size;
        return 0;
}

static int cmp_range(const void *a, const void *b) {
        const RaPrefetchRange *x = a, *y = b;

        if (x->offset != y->offset)
                return x->offset < y->offset ? -1 : 1;
        return x->length < y->length ? -1 : x->length > y->length;
}

size_t ra_prefetch_coalesce(RaPrefetchRange *ranges, size_t n, uint64_t max_gap) {
        size_t out = 0;

        if (n == 0)
                return 0;
        qsort(ranges, n, sizeof(*ranges), cmp_range);

        for (size_t i = 1; i < n; i++) {
                RaPrefetchRange *last = &ranges[out];
                uint64_t end = last->offset + last->length;

                if (ranges[i].offset <= end || ranges[i].offset - end < max_gap) {
                        uint64_t new_end = ranges[i].offset + ranges[i].length;

                        if (new_end > end)
                                last->length = new_end - last->offset;
                } else
                        ranges[++out] = ranges[i];
        }
        return out + 1;
}
