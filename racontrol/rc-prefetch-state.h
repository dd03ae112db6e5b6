/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the prefetch walk's files share, for them alone: the walk's state,
 * its tasks, and each file's functions for the others. The CLI sees
 * rc-prefetch.h.
 *
 * The files stand in layers, each calling only those below it: the walk
 * (rc-prefetch-walk.c) over the roots (-root.c), the queue (-queue.c),
 * data read-ahead (-data.c) and device read-ahead (-devra.c), all over
 * this state (-state.c). The queue runs the walk's tasks through RcQueueOps.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ra-prefetch.h"
#include "rc-prefetch.h"

/* One getdents64 call fills this much: a 100,000-entry directory in a few calls. */
#define GETDENTS_BUFFER_SIZE (1024 * 1024)
/* The first call while the order is being decided: a few thousand entries. */
#define SAMPLE_BUFFER_SIZE (128 * 1024)
/* A directory with more entries than this is looked up by several threads at once. */
#define CHUNK_ENTRIES 256
/* Lookups in inode order over the whole tree go in tasks of this many, each
 * reading the next one's inode blocks ahead (ext4, from the device). */
#define LOOKUP_CHUNK 4096
/* Entries held for those lookups at most (24 bytes each and a name): a
 * larger tree has its further directories looked up one by one. */
#define PENDING_MAX (1U << 22)

/* A directory read and sorted; shared by the tasks that look its entries up. */
typedef struct Dir {
        atomic_uint refs;
        int fd;
        char *path;
        const RcWalkRoot *root;
        RaPrefetchEntry *entries;
        size_t n, allocated;
        char *names;
        size_t names_size, names_allocated;
} Dir;

/* An entry of an inode-order root, left for the lookups over the whole tree. */
typedef struct Lookup {
        uint64_t ino;
        Dir *dir; /* kept by the walk (RcWalk.kept) until it ends */
        uint32_t name_offset;
        uint32_t root;
} Lookup;

/* Read the directory at path, look up entries [begin, end) of dir, or, with
 * pending, look up RcWalk.pending[begin, end). */
typedef struct Task {
        struct Task *next;
        char *path;
        const RcWalkRoot *root;
        Dir *dir;
        bool pending;
        size_t begin, end;
} Task;

/* What the queue's threads do; set by rc_queue_start(). */
typedef struct RcQueueOps {
        /* One task; buf is the thread's GETDENTS_BUFFER_SIZE bytes, or NULL when they could not be had. */
        void (*run)(RcWalk *w, Task *t, char *buf);
        /* Once, by one thread while the others wait, when the queue first runs dry: may queue more. */
        void (*drained)(RcWalk *w);
        /* By the first thread once the queue is done, unless the walk was stopped. */
        void (*finished)(RcWalk *w);
} RcQueueOps;

struct RcWalk {
        unsigned n_threads;
        bool data;
        bool always;
        uint64_t budget;

        RcWalkRoot **roots; /* each allocated alone, so the pointers handed out stay valid */
        size_t n_roots;

        pthread_t *threads;
        size_t n_started;
        atomic_uint running;
        atomic_bool stop;
        const RcQueueOps *ops;

        pthread_mutex_t lock;
        pthread_cond_t cond;
        Task *head, *tail;
        unsigned busy;

        RcWalkCounters counters;
        char *first_error;

        /* Inode-order roots: their directories are read first, then every entry
         * not a directory is looked up in inode order over the whole tree. Under
         * lock until the directories are read; then read-only. */
        Lookup *pending;
        size_t n_pending, pending_allocated;
        Dir **kept; /* each open, for the lookups by name */
        size_t n_kept, kept_allocated, max_kept;
        bool drained; /* the queue ran dry once: RcQueueOps.drained ran */

        /* --data: regular files found by the walk, under lock. */
        RaPrefetchFile *files;
        char **file_paths;
        size_t n_files, files_allocated;
        uint64_t files_over, bytes_over;
};

/* rc-prefetch-state.c: what every part uses. */
Dir *rc_dir_unref(Dir *d);
/* Room for n items in the array *p, whose room is *allocated items of size bytes. */
bool rc_walk_grow(void **p, size_t *allocated, size_t n, size_t size);
char *rc_walk_path_join(const char *dir, const char *name);
/* Counts an error below a root, and keeps the first that is not ENOENT as "path/name: message". */
void rc_walk_note_error(RcWalk *w, const char *path, const char *name, int r);

/* rc-prefetch-queue.c: the tasks and the threads that run them. */
void rc_task_free(Task *t);
Task *rc_queue_dir_task(const char *path, const RcWalkRoot *root);
void rc_queue_push(RcWalk *w, Task *t);
int rc_queue_push_dir(RcWalk *w, const char *path, const RcWalkRoot *root);
void rc_queue_push_front(RcWalk *w, Task *first, Task *last);
int rc_queue_start(RcWalk *w, const RcQueueOps *ops);

/* rc-prefetch-devra.c: ext4 metadata read ahead from the device. */
void rc_devra_setup(RcWalkRoot *root, const struct statx *stx);
void rc_devra_read_dir(const RcWalkRoot *root, int fd);
void rc_devra_read_inodes(const RcWalkRoot *root, const Dir *d);
void rc_devra_read_chunk(RcWalk *w, size_t begin);

/*
 * rc-prefetch-root.c: opens path, a root's own or beneath one, from that
 * root's descriptor, following no link and crossing no mount on the way
 * (openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV): a
 * directory a user swaps for a link, or mounts over, while the walk runs or
 * before --data reads a file, sends the walk nowhere else (ELOOP, EXDEV).
 * Returns the descriptor, or a negative errno.
 */
int rc_walk_open_beneath(const RcWalk *w, const char *path, int flags);

/* rc-prefetch-data.c: --data, files read ahead in physical order. */
void rc_data_add_file(RcWalk *w, Dir *d, const char *name, uint64_t size);
void rc_data_read_ahead(RcWalk *w);
