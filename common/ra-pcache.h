/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ra-trace.h"

/*
 * What the page cache says, file by file. Block requests hide which file a
 * read belongs to: a tar of a tree reads every file in order, yet jumps once
 * per file on the disk, which looks like random read-around. The kernel's
 * readahead tracepoints say per (superblock, inode) why a window is read:
 *
 *  - readahead:page_cache_async_ra: a read reached the mark a previous
 *    window left, so the file is being read in order;
 *  - readahead:page_cache_sync_ra: a read missed the cache; in order when it
 *    starts the file or continues at the file's previous position
 *    (prev_pos), at random otherwise;
 *  - filemap:mm_filemap_fault: an mmap fault, which reads a whole window
 *    around itself (read-around) without passing through sync_ra;
 *  - readahead:page_cache_ra_order and page_cache_ra_unbounded: the pages
 *    then read, and the window (ra_pages) the file took at its open.
 *
 * Where those are missing (kernels before 6.10 or so),
 * filemap:mm_filemap_add_to_page_cache still says per file which pages come
 * in, and contiguity per inode tells streams from scattered reads. A
 * readahead adds its pages in one go (page_cache_ra_unbounded allocates and
 * adds one after another, then submits the reads), so pages that follow
 * their file's last ones within RA_PCACHE_BATCH_GAP_NS are the same
 * readahead: its size is the batch's, and the file's window is at least its
 * largest batch. Between two readaheads of a file the program reads what
 * the first brought, up to its mark: they are further apart than that takes.
 *
 * Which window a file runs under the fallback sees only from above: a
 * readahead larger than the knob says the file took a larger one at its
 * open, but a file opened under a smaller one reads readaheads that fit the
 * knob's as well. So a file is credited to the window in force only when it
 * was first seen, or read again from its first page (opened again, as a
 * rule), after the knob took that value: four streams opened under 1 MiB
 * must not speak for a 4 MiB trial begun while they read. A file first seen
 * in its middle after the knob grew may have opened before: it is credited
 * only once a readahead of it was larger than the knob's old value, which a
 * reader opened before never makes.
 *
 * Several readers of one inode (four dd of one block device, whose pages
 * are all its inode's) are told apart by where they read: pages that follow
 * one reader's go on with it, and a jump elsewhere takes a stream of its own
 * up to RA_PCACHE_READERS a file. The readahead events need none of this:
 * each names the window (ra_pages) its read was made under.
 */

/*
 * Measured on this machine's fallback (tests/pcache/tar-filemap.raw, a tar
 * at 128 KiB): pages and folios of one readahead 0-8 us apart, readaheads
 * of one file 17 us apart or more. A pause inside a readahead (reclaim, an
 * interrupt) splits it, which only undercounts full windows; two readaheads
 * closer than this merge into one at most as large as both.
 */
#define RA_PCACHE_BATCH_GAP_NS 12000

/* Where learning takes its evidence from, best first. */
typedef enum RaEvidence {
        RA_EVIDENCE_NONE,      /* no tracing: nothing to learn from */
        RA_EVIDENCE_BLOCK,     /* block requests only */
        RA_EVIDENCE_FILEMAP,   /* pages added to the page cache, per file */
        RA_EVIDENCE_READAHEAD, /* the readahead tracepoints, per file */
        _RA_EVIDENCE_MAX,
} RaEvidence;

const char *ra_evidence_to_string(RaEvidence e);

typedef enum RaPcacheKind {
        /* Causes first, then what they read: events of one time sort in that order. */
        RA_PCACHE_SYNC,      /* readahead:page_cache_sync_ra */
        RA_PCACHE_ASYNC,     /* readahead:page_cache_async_ra */
        RA_PCACHE_FAULT,     /* filemap:mm_filemap_fault */
        RA_PCACHE_ORDER,     /* readahead:page_cache_ra_order */
        RA_PCACHE_UNBOUNDED, /* readahead:page_cache_ra_unbounded */
        RA_PCACHE_ADD,       /* filemap:mm_filemap_add_to_page_cache */
        _RA_PCACHE_KIND_MAX,
} RaPcacheKind;

/* The tracefs path of each event, under events/. */
const char *ra_pcache_kind_path(RaPcacheKind k);

/* One event's record layout; id 0: the event is not there (or not readable). */
typedef struct RaPcacheEventFormat {
        uint16_t id;
        RaTraceField common_pid, i_ino, s_dev, index, size, async_size, ra_pages, mmap_miss, prev_pos,
                req_count, nr_to_read, order;
} RaPcacheEventFormat;

typedef struct RaPcacheFormat {
        RaTracePage page;
        RaPcacheEventFormat events[_RA_PCACHE_KIND_MAX];
        RaEvidence evidence; /* RA_EVIDENCE_READAHEAD or RA_EVIDENCE_FILEMAP */
} RaPcacheFormat;

/* Parses one event's format file; -EINVAL when a field it needs is missing or has a size this cannot read.
 */
int ra_pcache_event_format_parse(RaPcacheKind k, const char *text, RaPcacheEventFormat *ret);

/*
 * Parses events/header_page and each event's format (texts[k], NULL where
 * the kernel lacks the event). Events that do not parse are left out.
 * Returns -ENOENT when neither the readahead events (sync, async and
 * ra_order at least) nor mm_filemap_add_to_page_cache can be read.
 */
int ra_pcache_format_parse(const char *header_page, const char *const texts[_RA_PCACHE_KIND_MAX],
                           RaPcacheFormat *ret);

typedef struct RaPcacheEvent {
        uint64_t time_ns;
        RaPcacheKind kind;
        uint32_t s_dev; /* the kernel's encoding: major << 20 | minor */
        uint64_t ino;
        uint64_t index; /* in pages */
        uint32_t size, async_size, ra_pages, mmap_miss;
        int64_t prev_pos;   /* bytes; -1: nothing read since the open */
        uint64_t req_count; /* pages the program asked for */
        uint64_t nr;        /* pages read: ra_order's size, ra_unbounded's nr_to_read, 1 << order added */
        int32_t pid;        /* the task that read (common_pid); 0: not known */
} RaPcacheEvent;

typedef void (*RaPcacheEventFn)(void *userdata, const RaPcacheEvent *e);

/*
 * Hands every page-cache record of one page of trace_pipe_raw to fn, in
 * order; records of other events are skipped. Returns the number handed
 * over, or -EINVAL for a page that does not parse.
 */
int ra_pcache_page_parse(const RaPcacheFormat *f, const void *page, size_t size, RaPcacheEventFn fn,
                         void *userdata);

/* --- the per-file stream model ---------------------------------------------- */

/*
 * Files read at once that each keep their stream: past it, the stalest is
 * forgotten and, read again, counted as a new file and stream. With 32,
 * sixty-four `cat` taking turns were counted as 134-199 streams an
 * interval, and the memory bound (ra-adapt-memory.h) cut their windows to
 * 40-192 KiB where 512 fit (bench/memory.py). 128 files read at once: a
 * parallel build's or a backup's; 248 bytes each, 31 KiB a device.
 */
#define RA_PCACHE_STREAMS 128
/*
 * The fallback's readers of one file told apart by where they read: a block
 * device read by several programs at once (four dd, fio --numjobs=4) is one
 * inode. Random reads of a file cycle through as many streams.
 */
#define RA_PCACHE_READERS 8
#define RA_PCACHE_REQ_BUCKETS 12 /* one page << n */
/* The tasks of an interval's sequential readers it names, for their memory limits (ra-adapt-memory.h). */
#define RA_PCACHE_PIDS 8

typedef enum RaPcacheCause {
        RA_CAUSE_NONE,
        RA_CAUSE_SEQUENTIAL,   /* async readahead, or a miss where the file's reading goes on */
        RA_CAUSE_RANDOM,       /* a miss away from where the file was read before */
        RA_CAUSE_FAULT_RANDOM, /* an mmap fault away from what the file has read */
        RA_CAUSE_FAULT_FIRST,  /* a file's first fault: nothing to tell it by yet */
} RaPcacheCause;

/* One file being read: where its reading stands and why its next window is read. */
typedef struct RaPcacheStream {
        uint32_t s_dev;
        uint64_t ino;
        uint64_t start; /* the last window read: [start, next) in pages */
        uint64_t next;
        uint64_t run;           /* fallback: pages added contiguously so far... */
        bool run_from_start;    /* ...from the file's first page */
        uint64_t batch;         /* fallback: pages of the readahead being added... */
        uint64_t batch_seq;     /* ...of them, counted as read in order */
        uint64_t batch_ns;      /* ...and when its last page came */
        uint64_t batch_max;     /* fallback: the largest readahead seen, a floor for the file's window */
        uint32_t ra_pages;      /* the window the file took at its open */
        uint64_t epoch;         /* fallback: the knob's epoch when first seen or read from its start */
        uint64_t held_bytes;    /* fallback: bytes held from the credit until it reads past the old window */
        uint64_t held_interval; /* ...of this interval (+1) */
        uint64_t credited;      /* the last interval it was counted in window_files */
        RaPcacheCause pending;
        bool pending_miss;  /* ...by a read that missed the cache (sync_ra), not a fault's read-around */
        uint64_t req_count; /* of the read that made pending */
        uint64_t last_seen;
        uint64_t interval;     /* the last interval it read in */
        uint64_t seq_interval; /* the last interval it read in order in (+1) */
        uint64_t read_from;    /* readahead events: where what it read in order up to next begins */
        uint64_t reread_until; /* fallback: pages added before up to here, read again from a page before */
        /* The last interval (+1) a read of it away from the last brought more than asked... */
        uint64_t waste_interval;
        uint64_t waste_run; /* ...under the fallback, the run read around it, in pages */
        /* ...and it read ahead in order, unasked, a window as large as its own; the tasks that did. */
        uint64_t full_interval;
        /* ...and it read again what it had read ahead (evicted before it was used). */
        uint64_t reread_interval;
        int32_t waste_pid, full_pid, reread_pid;
        int32_t pid; /* the task that read it last */
        bool used;
} RaPcacheStream;

/* What one interval's page-cache events showed for one knob. */
typedef struct RaPcacheSummary {
        uint64_t events;
        uint64_t files;         /* files read from */
        uint64_t seq_reads;     /* windows read for files read in order */
        uint64_t seq_bytes;     /* what they read */
        uint64_t full_bytes;    /* of seq_bytes, in windows as large as the file's window allows */
        uint64_t window_bytes;  /* of seq_bytes, by files under the window in force */
        uint64_t window_files;  /* files that read them */
        uint64_t random_reads;  /* reads away from where their file was read before */
        uint64_t random_bytes;  /* what they read */
        uint64_t waste_bytes;   /* of random_bytes, beyond what the reads asked for */
        uint64_t random_faults; /* mmap faults among random_reads */
        uint32_t req_kb;        /* the programs' usual read size (0: not known) */
        uint32_t stream_kb;     /* the window of the files that read the most in order */
        /*
         * Memory: streams that read in order, and the first RA_PCACHE_PIDS tasks
         * that did; of seq_bytes, by files under the window in force, pages read
         * again that their stream had read before, since its last jump: read
         * ahead, evicted before they were used (ra-adapt-memory.h). A file read
         * again from its first page is opened again, and not counted.
         */
        uint64_t seq_streams;
        uint64_t reread_bytes;
        int32_t pids[RA_PCACHE_PIDS];
        uint32_t n_pids;
} RaPcacheSummary;

typedef struct RaPcacheAccount {
        RaPcacheStream streams[RA_PCACHE_STREAMS];
        uint64_t clock;
        uint64_t interval;
        uint32_t page_kb;       /* 0: 4 */
        uint32_t window_kb;     /* the knob's value with the last event... */
        uint64_t epoch;         /* ...and how many times it changed */
        uint32_t grown_from_kb; /* its value before it last grew; 0: it shrank */
        RaPcacheSummary now;
        uint64_t req_reads[RA_PCACHE_REQ_BUCKETS];
        uint64_t req_pages[RA_PCACHE_REQ_BUCKETS];
        uint64_t window_seq[4][2]; /* (ra_pages, sequential pages) of the windows seen this interval */
} RaPcacheAccount;

/* Accounts one event; window_kb is the knob's read_ahead_kb now (for the fallback and the credit). */
void ra_pcache_account_add(RaPcacheAccount *a, const RaPcacheEvent *e, uint32_t window_kb);

/* Hands out the interval's summary and starts the next; the streams stay. */
void ra_pcache_account_take(RaPcacheAccount *a, RaPcacheSummary *ret);

/*
 * A file being read under the window its open gave it, and whose reads say
 * the knob's new window suits it better: where it was cut, random reads that
 * brought whole windows where less was asked, or pages read ahead and
 * evicted before they were used (read again); where it grew, reads in order
 * that filled every window. Its reader's descriptions follow the knob
 * (daemon/ra-openfiles.c).
 */
typedef struct RaPcacheFollower {
        int32_t pid; /* the task whose reads made it one */
        uint32_t s_dev;
        uint64_t ino;
        bool cut;    /* random reads of whole windows, or a stream's pages evicted unused... */
        bool reread; /* ...the latter; else a stream that fills them */
} RaPcacheFollower;

/*
 * The files of a that read under old_kb in this interval or the last, and
 * read as new_kb calls for, up to n of them in ret; returns how many. A file
 * whose window is not old_kb is left: its process chose its own
 * (POSIX_FADV_SEQUENTIAL doubles it), or it opened under another.
 */
size_t ra_pcache_followers(const RaPcacheAccount *a, uint32_t old_kb, uint32_t new_kb, RaPcacheFollower *ret,
                           size_t n);
