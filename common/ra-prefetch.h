/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The decisions behind `racontrol prefetch`, kept free of I/O so unit tests
 * drive them: in which order a directory's entries are looked up on a given
 * file system, which files' data fit the page-cache budget and in which
 * order they are read, and how long is left.
 */

typedef enum RaPrefetchOrder {
        /* Ascending inode number: where inode numbers name places on disk. */
        RA_PREFETCH_ORDER_INODE,
        /* The order getdents64 returns: where inode numbers say nothing about the disk. */
        RA_PREFETCH_ORDER_DIRECTORY,
} RaPrefetchOrder;

typedef struct RaPrefetchFs {
        const char *name;
        RaPrefetchOrder order;
        const char *reason; /* one sentence, for --json and the summary */
} RaPrefetchFs;

/* The file system with statfs(2)'s f_type; never NULL (unknown ones get directory order). */
const RaPrefetchFs *ra_prefetch_fs_from_magic(uint64_t f_type);
const char *ra_prefetch_order_to_string(RaPrefetchOrder order);

/* One directory entry as getdents64 gave it, in the order it gave it (index). */
typedef struct RaPrefetchEntry {
        uint64_t ino;
        uint32_t index;
        uint32_t name_offset; /* into the directory's name buffer */
        uint8_t type;         /* DT_* */
} RaPrefetchEntry;

/* Sorts entries for lookup; ties and directory order keep getdents64's order. */
void ra_prefetch_sort_entries(RaPrefetchEntry *entries, size_t n, RaPrefetchOrder order);

/*
 * Whether a walk in the directories' own order already meets the inodes in
 * disk order. Count, over each directory's entries in getdents64's order,
 * the pairs of neighbours and the descents among them (a neighbour with a
 * lower inode number: a jump back on the disk); add them up over a tree.
 */
void ra_prefetch_count_descents(const RaPrefetchEntry *entries, size_t n, uint64_t *pairs,
                                uint64_t *descents);
/*
 * At most one descent in 16 pairs: the tree's directories list their
 * entries in inode order already (files written where they stay, on XFS), so
 * a later walk reads the inodes in disk order by itself and sorting saves it
 * nothing. Too few pairs to tell (under 64) is not in order.
 */
bool ra_prefetch_walk_in_order(uint64_t pairs, uint64_t descents);
/* The pairs after which the first directories' order is taken for the tree's. */
#define RA_PREFETCH_ORDER_SAMPLE 2048

/*
 * Whether a tree's lookups may be left to the later walk: only on a
 * rotational disk (elsewhere many lookups in flight beat a walk), not where
 * the device is read ahead (ext4 as root: larger, fewer commands than the
 * walk's), and not when asked to warm anyway (--always) or to read the data
 * (--data, which needs every file's size). They are left where no order is
 * known cheaper than the walk's own (directory order), or where the tree's
 * directories list their entries in inode order already.
 */
bool ra_prefetch_may_leave(int rotational, bool device_readahead, bool always, bool data);
#define RA_PREFETCH_ASIDE_DIRECTORY                                                                         \
        "on a rotational disk its lookups would go in the order a walk goes by itself, the cheapest one "   \
        "known here, and read the same blocks in the same order: they are left to that walk (--always "     \
        "does them)"
#define RA_PREFETCH_ASIDE_IN_ORDER                                                                          \
        "its directories list their entries in inode order already (the first ones it read do), so a walk " \
        "reads the inodes in disk order by itself: its lookups are left to that walk (--always does them)"

/* A regular file whose data may be read ahead. */
typedef struct RaPrefetchFile {
        uint64_t physical; /* first extent's byte on the device (FIEMAP); UINT64_MAX when unknown */
        uint64_t size;
        uint32_t id; /* the caller's index, to find the file again */
        bool selected;
} RaPrefetchFile;

/*
 * Sorts files by physical place (unknown last, then in walk order) and
 * selects, in that order, every file that still fits in budget bytes. A
 * file too large to fit is passed over, so smaller ones after it still get
 * read. Returns the number selected and their bytes in *ret_bytes.
 */
size_t ra_prefetch_plan(RaPrefetchFile *files, size_t n, uint64_t budget, uint64_t *ret_bytes);

/*
 * The default budget from /proc/meminfo's text: half of MemAvailable, so
 * what is read ahead is still in the page cache when it is wanted. -EINVAL
 * when the text has no MemAvailable line.
 */
int ra_prefetch_budget_from_meminfo(const char *meminfo, uint64_t *ret);

/* "64M", "2G", "4096": bytes with an optional K/M/G/T suffix (powers of 1024). */
int ra_prefetch_parse_size(const char *s, uint64_t *ret);

/* Seconds left at the rate so far, or -1 when not yet known. */
double ra_prefetch_seconds_left(uint64_t done, uint64_t total, double elapsed);

/*
 * ext4 keeps inodes and directory blocks in the block device's own page
 * cache (buffer heads). A caller who may read the device itself can have
 * them read there in few large commands, in disk order, before the lookups
 * ask for them one 4 KiB block at a time. What follows is the geometry that
 * maps an inode number to its place, from the superblock and the group
 * descriptors.
 */
typedef struct RaExt4Layout {
        uint32_t block_size;
        uint32_t inodes_per_group;
        uint32_t inode_size;
        uint32_t desc_size;
        uint64_t n_groups;
        uint64_t gdt_offset;   /* bytes from the start of the device */
        uint64_t *inode_table; /* first block of each group's inode table */
} RaExt4Layout;

#define RA_EXT4_SUPERBLOCK_OFFSET 1024
#define RA_EXT4_SUPERBLOCK_SIZE 1024

/*
 * Reads the geometry from the 1024-byte superblock; the caller then reads
 * n_groups * desc_size bytes at gdt_offset for ra_ext4_layout_set_gdt().
 * -EINVAL for what is not a consistent ext2/3/4 superblock, -EOPNOTSUPP for
 * the meta_bg layout, whose descriptors are scattered.
 */
int ra_ext4_layout_parse(const uint8_t *sb, size_t size, RaExt4Layout *ret);
int ra_ext4_layout_set_gdt(RaExt4Layout *l, const uint8_t *gdt, size_t size);
void ra_ext4_layout_clear(RaExt4Layout *l);
/* The byte on the device where inode ino is, or -EINVAL out of range. */
int ra_ext4_inode_offset(const RaExt4Layout *l, uint64_t ino, uint64_t *ret);

/* A byte range on a device. */
typedef struct RaPrefetchRange {
        uint64_t offset;
        uint64_t length;
} RaPrefetchRange;

/*
 * Sorts ranges and merges those less than max_gap bytes apart: reading a
 * small gap costs less than another command (a seek on a disk). Returns the
 * number of ranges left.
 */
size_t ra_prefetch_coalesce(RaPrefetchRange *ranges, size_t n, uint64_t max_gap);
