/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libmount.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ra-macro.h"
#include "ra-util.h"
#include "rc-walk.h"

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
        bool lookups_planned;

        /* --data: regular files found by the walk, under lock. */
        RaPrefetchFile *files;
        char **file_paths;
        size_t n_files, files_allocated;
        uint64_t files_over, bytes_over;
};

static Dir *dir_unref(Dir *d) {
        if (!d || atomic_fetch_sub(&d->refs, 1) > 1)
                return NULL;
        (void) ra_close(d->fd);
        free(d->path);
        free(d->entries);
        free(d->names);
        free(d);
        return NULL;
}

static void task_free(Task *t) {
        if (!t)
                return;
        free(t->path);
        (void) dir_unref(t->dir);
        free(t);
}

/* Room for n items in the array *p, whose room is *allocated items of size bytes. */
static bool grow(void **p, size_t *allocated, size_t n, size_t size) {
        size_t want = *allocated * 2 > n ? *allocated * 2 : n + 1024;
        void *q;

        if (n <= *allocated)
                return true;
        q = reallocarray(*p, want, size);
        if (!q)
                return false;
        *p = q;
        *allocated = want;
        return true;
}

static char *path_join(const char *dir, const char *name) {
        char *p;

        if (asprintf(&p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name) < 0)
                return NULL;
        return p;
}

static void note_error(RcWalk *w, const char *path, const char *name, int r) {
        atomic_uint_fast64_t *counter;

        if (r == -ENOENT)
                counter = &w->counters.vanished;
        else if (IN_SET(r, -EACCES, -EPERM))
                counter = &w->counters.denied;
        else
                counter = &w->counters.errors;
        atomic_fetch_add(counter, 1);

        if (r == -ENOENT)
                return; /* normal in a live tree: counted, never an error */

        pthread_mutex_lock(&w->lock);
        if (!w->first_error &&
            asprintf(&w->first_error, "%s%s%s: %s", path, name ? "/" : "", name ?: "", strerror(-r)) < 0)
                w->first_error = NULL;
        pthread_mutex_unlock(&w->lock);
}

/* Queues a task at the tail, so the walk goes in the order things were found. */
static void push(RcWalk *w, Task *t) {
        pthread_mutex_lock(&w->lock);
        if (w->tail)
                w->tail->next = t;
        else
                w->head = t;
        w->tail = t;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
}

static Task *dir_task(const char *path, const RcWalkRoot *root) {
        Task *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->path = strdup(path);
        if (!t->path) {
                free(t);
                return NULL;
        }
        t->root = root;
        return t;
}

static int push_dir(RcWalk *w, const char *path, const RcWalkRoot *root) {
        Task *t = dir_task(path, root);

        if (!t)
                return -ENOMEM;
        push(w, t);
        return 0;
}

/*
 * Queues the subdirectories one directory's lookups found, in their order,
 * ahead of everything else: the walk goes depth first, as find and ls -R
 * do, and reads a subtree while the disk is still near it.
 */
static void push_front(RcWalk *w, Task *first, Task *last) {
        if (!first)
                return;
        pthread_mutex_lock(&w->lock);
        last->next = w->head;
        w->head = first;
        if (!w->tail)
                w->tail = last;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
}

static bool same_mount(const RcWalkRoot *root, const struct statx *stx) {
        if (root->has_mnt_id && (stx->stx_mask & STATX_MNT_ID))
                return stx->stx_mnt_id == root->mnt_id;
        return makedev(stx->stx_dev_major, stx->stx_dev_minor) == root->mnt_id;
}

/* --data: where the file starts on the device, for the read order. */
static void add_data_file(RcWalk *w, Dir *d, const char *name, uint64_t size) {
        /* A struct fiemap with room for one extent after it. */
        uint64_t fm_buf[(sizeof(struct fiemap) + sizeof(struct fiemap_extent)) / sizeof(uint64_t) + 1] = {};
        struct fiemap *fm = (struct fiemap *) fm_buf;
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        uint64_t physical = UINT64_MAX;

        fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME | O_NONBLOCK);
        if (fd < 0 && errno == EPERM) /* O_NOATIME is for the owner only */
                fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
                note_error(w, d->path, name, -errno);
                return;
        }

        fm->fm_length = FIEMAP_MAX_OFFSET;
        fm->fm_extent_count = 1;
        /* Not every file system has FIEMAP: those files go last, in walk order. */
        if (ioctl(fd, FS_IOC_FIEMAP, fm) >= 0 && fm->fm_mapped_extents > 0 &&
            !(fm->fm_extents[0].fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)))
                physical = fm->fm_extents[0].fe_physical;

        path = path_join(d->path, name);
        if (!path) {
                note_error(w, d->path, name, -ENOMEM);
                return;
        }

        pthread_mutex_lock(&w->lock);
        if (w->n_files == w->files_allocated) {
                size_t n = w->files_allocated ? w->files_allocated * 2 : 1024;
                RaPrefetchFile *files = reallocarray(w->files, n, sizeof(*files));
                char **paths = files ? reallocarray(w->file_paths, n, sizeof(*paths)) : NULL;

                if (files)
                        w->files = files;
                if (paths)
                        w->file_paths = paths;
                if (!files || !paths) {
                        pthread_mutex_unlock(&w->lock);
                        note_error(w, d->path, name, -ENOMEM);
                        return;
                }
                w->files_allocated = n;
        }
        w->files[w->n_files] =
                (RaPrefetchFile){ .physical = physical, .size = size, .id = (uint32_t) w->n_files };
        w->file_paths[w->n_files++] = TAKE_PTR(path);
        pthread_mutex_unlock(&w->lock);
}

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
static void device_read_dir(const RcWalkRoot *root, int fd) {
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
static void device_read_inodes(const RcWalkRoot *root, const Dir *d) {
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

/*
 * Looks one entry up, which warms its inode (and dentry) for a later walk. A
 * directory on the same mount is appended to the list *first..*last, to be
 * walked; without a list, it is not.
 */
static void look_up(RcWalk *w, Dir *d, const char *name, Task **first, Task **last) {
        struct statx stx;

        if (statx(d->fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS | STATX_MNT_ID,
                  &stx) < 0) {
                note_error(w, d->path, name, -errno);
                return;
        }
        atomic_fetch_add(&w->counters.entries, 1);

        if (S_ISDIR(stx.stx_mode) && first && same_mount(d->root, &stx)) {
                _cleanup_free_ char *path = path_join(d->path, name);
                Task *t = path ? dir_task(path, d->root) : NULL;

                if (!t) {
                        note_error(w, d->path, name, -ENOMEM);
                        return;
                }
                if (*last)
                        (*last)->next = t;
                else
                        *first = t;
                *last = t;
        } else if (w->data && S_ISREG(stx.stx_mode) && stx.stx_size > 0)
                add_data_file(w, d, name, stx.stx_size);
}

static void lookup_entries(RcWalk *w, Dir *d, size_t begin, size_t end) {
        Task *first = NULL, *last = NULL;

        for (size_t i = begin; i < end && !atomic_load(&w->stop); i++)
                look_up(w, d, d->names + d->entries[i].name_offset, &first, &last);
        push_front(w, first, last);
}

/* The inode blocks of the pending chunk that starts at begin, if there is one. */
static void device_read_chunk(RcWalk *w, size_t begin) {
        if (begin < w->n_pending)
                device_read_pending(
                        w, begin, begin + LOOKUP_CHUNK < w->n_pending ? begin + LOOKUP_CHUNK : w->n_pending);
}

/* A chunk of the lookups in inode order. The chunks go to the threads in
 * order, and each has the blocks read of the one as many chunks ahead as
 * there are threads: the reads stay ahead of every thread's lookups. */
static void lookup_pending(RcWalk *w, size_t begin, size_t end) {
        device_read_chunk(w, begin + (size_t) w->n_threads * LOOKUP_CHUNK);
        for (size_t i = begin; i < end && !atomic_load(&w->stop); i++) {
                const Lookup *l = &w->pending[i];

                look_up(w, l->dir, l->dir->names + l->name_offset, NULL, NULL);
        }
}

/*
 * An inode-order root's directory: what may be a directory is looked up now,
 * so the walk goes on; the rest waits for the lookups in inode
 * order over the whole tree, which a directory at a time would sweep the
 * disk once per directory. False, with nothing done, when the walk holds as
 * many entries or open directories as it may.
 */
static bool defer_lookups(RcWalk *w, Dir *d) {
        Task *first = NULL, *last = NULL;
        bool kept = false;

        pthread_mutex_lock(&w->lock);
        if (w->n_kept < w->max_kept && w->n_pending + d->n <= PENDING_MAX &&
            grow((void **) &w->kept, &w->kept_allocated, w->n_kept + 1, sizeof(*w->kept)) &&
            grow((void **) &w->pending, &w->pending_allocated, w->n_pending + d->n, sizeof(*w->pending))) {
                atomic_fetch_add(&d->refs, 1);
                w->kept[w->n_kept++] = d;
                for (size_t i = 0; i < d->n; i++)
                        if (!IN_SET(d->entries[i].type, DT_DIR, DT_UNKNOWN))
                                w->pending[w->n_pending++] = (Lookup){
                                        .ino = d->entries[i].ino,
                                        .dir = d,
                                        .name_offset = d->entries[i].name_offset,
                                        .root = d->root->index,
                                };
                kept = true;
        }
        pthread_mutex_unlock(&w->lock);
        if (!kept)
                return false;

        for (size_t i = 0; i < d->n && !atomic_load(&w->stop); i++)
                if (IN_SET(d->entries[i].type, DT_DIR, DT_UNKNOWN))
                        look_up(w, d, d->names + d->entries[i].name_offset, &first, &last);
        push_front(w, first, last);
        return true;
}

/* One getdents64 call of at most size bytes, its entries added to the
 * directory's: how many bytes it read, 0 at the end, or -errno. */
static long read_some(Dir *d, char *buf, size_t size) {
        long got = syscall(SYS_getdents64, d->fd, buf, size);

        if (got < 0)
                return negative_errno();

        for (long off = 0; off < got;) {
                struct dirent64 *de = (struct dirent64 *) (buf + off);
                size_t len = strlen(de->d_name) + 1;

                off += de->d_reclen;
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;

                if (!grow((void **) &d->entries, &d->allocated, d->n + 1, sizeof(*d->entries)) ||
                    !grow((void **) &d->names, &d->names_allocated, d->names_size + len, 1))
                        return -ENOMEM;
                if (d->n >= UINT32_MAX || d->names_size >= UINT32_MAX)
                        return -EOVERFLOW;

                memcpy(d->names + d->names_size, de->d_name, len);
                d->entries[d->n] = (RaPrefetchEntry){
                        .ino = de->d_ino,
                        .index = (uint32_t) d->n,
                        .name_offset = (uint32_t) d->names_size,
                        .type = de->d_type,
                };
                d->names_size += len;
                d->n++;
        }
        return got;
}

/* Whether root may leave its lookups to the later walk (ra_prefetch_may_leave). */
static bool may_stand_aside(const RcWalk *w, const RcWalkRoot *root) {
        return ra_prefetch_may_leave(root->rotational, root->device_fd >= 0, w->always, w->data);
}

/*
 * Adds the order of the directory's entries from counted on to the root's
 * and, once the root has RA_PREFETCH_ORDER_SAMPLE pairs, decides whether its
 * walk is in order, once. True when the root is in order: its lookups are
 * left to the later walk.
 */
static bool tell_order(RcWalk *w, RcWalkRoot *root, const Dir *d, size_t counted) {
        size_t start = counted > 0 ? counted - 1 : 0;
        uint64_t pairs = 0, descents = 0, before;

        ra_prefetch_count_descents(d->entries + start, d->n - start, &pairs, &descents);
        atomic_fetch_add(&root->descents, descents);
        before = atomic_fetch_add(&root->pairs, pairs);
        if (before < RA_PREFETCH_ORDER_SAMPLE && before + pairs >= RA_PREFETCH_ORDER_SAMPLE &&
            may_stand_aside(w, root) &&
            ra_prefetch_walk_in_order(before + pairs, atomic_load(&root->descents)))
                atomic_store(&root->in_order, true);
        return atomic_load(&root->in_order);
}

static void walk_dir(RcWalk *w, Task *t, char *buf) {
        RcWalkRoot *root = w->roots[t->root->index];
        size_t size;
        Dir *d;

        d = calloc(1, sizeof(*d));
        if (!d) {
                note_error(w, t->path, NULL, -ENOMEM);
                return;
        }
        atomic_init(&d->refs, 1);
        d->root = t->root;
        d->path = TAKE_PTR(t->path);
        if (atomic_load(&root->in_order)) {
                (void) dir_unref(d);
                return;
        }
        d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d->fd < 0) {
                note_error(w, d->path, NULL, -errno);
                (void) dir_unref(d);
                return;
        }
        if (d->root->device_fd >= 0)
                device_read_dir(d->root, d->fd);

        /* While the tree's order is not decided, the first call reads only what
         * the decision needs: a tree in order is left before the rest of a big
         * directory is read, or its other directories, which would cost the
         * walk a second pass over the disk. */
        size = root->fs->order == RA_PREFETCH_ORDER_INODE && may_stand_aside(w, root) &&
                               atomic_load(&root->pairs) < RA_PREFETCH_ORDER_SAMPLE
                       ? SAMPLE_BUFFER_SIZE
                       : GETDENTS_BUFFER_SIZE;
        for (size_t counted = 0;; size = GETDENTS_BUFFER_SIZE) {
                long got = read_some(d, buf, size);

                if (got < 0) {
                        note_error(w, d->path, NULL, (int) got);
                        (void) dir_unref(d);
                        return;
                }
                if (got == 0)
                        break;
                if (root->fs->order == RA_PREFETCH_ORDER_INODE && tell_order(w, root, d, counted)) {
                        atomic_fetch_add(&w->counters.skipped, d->n);
                        (void) dir_unref(d);
                        return;
                }
                counted = d->n;
        }
        atomic_fetch_add(&w->counters.directories, 1);
        atomic_fetch_add(&w->counters.found, d->n);

        if (root->fs->order == RA_PREFETCH_ORDER_INODE && defer_lookups(w, d)) {
                (void) dir_unref(d);
                return;
        }

        if (d->root->device_fd >= 0)
                device_read_inodes(d->root, d);
        ra_prefetch_sort_entries(d->entries, d->n, d->root->fs->order);

        /* One thread looks up in one pass, in order. */
        if (d->n <= CHUNK_ENTRIES || w->n_threads == 1) {
                lookup_entries(w, d, 0, d->n);
                (void) dir_unref(d);
                return;
        }

        /* A large directory: its chunks go to every thread, in order, so several
         * lookups are in flight at neighbouring places on the disk. */
        for (size_t begin = 0; begin < d->n; begin += CHUNK_ENTRIES) {
                Task *c = calloc(1, sizeof(*c));

                if (!c) {
                        note_error(w, d->path, NULL, -ENOMEM);
                        break;
                }
                atomic_fetch_add(&d->refs, 1);
                c->dir = d;
                c->root = d->root;
                c->begin = begin;
                c->end = begin + CHUNK_ENTRIES < d->n ? begin + CHUNK_ENTRIES : d->n;
                push(w, c);
        }
        (void) dir_unref(d);
}

static int cmp_lookup(const void *a, const void *b) {
        const Lookup *x = a, *y = b;

        if (x->root != y->root)
                return x->root < y->root ? -1 : 1;
        return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Every directory is read: the lookups in inode order over each tree follow, in tasks. */
static void plan_lookups(RcWalk *w) {
        size_t n = 0;

        for (size_t i = 0; i < w->n_roots; i++) {
                RcWalkRoot *root = w->roots[i];

                if (atomic_load(&root->in_order) ||
                    (root->fs->order == RA_PREFETCH_ORDER_INODE && may_stand_aside(w, root) &&
                     ra_prefetch_walk_in_order(atomic_load(&root->pairs), atomic_load(&root->descents))))
                        root->aside = RA_PREFETCH_ASIDE_IN_ORDER;
        }
        for (size_t i = 0; i < w->n_pending; i++)
                if (w->roots[w->pending[i].root]->aside)
                        atomic_fetch_add(&w->counters.skipped, 1);
                else
                        w->pending[n++] = w->pending[i];
        w->n_pending = n;
        if (n > 1)
                qsort(w->pending, n, sizeof(*w->pending), cmp_lookup);

        for (unsigned i = 0; i < w->n_threads; i++)
                device_read_chunk(w, (size_t) i * LOOKUP_CHUNK);
        for (size_t begin = 0; begin < n; begin += LOOKUP_CHUNK) {
                Task *t = calloc(1, sizeof(*t));

                if (!t) {
                        note_error(w, w->roots[w->pending[begin].root]->path, NULL, -ENOMEM);
                        break;
                }
                t->pending = true;
                t->begin = begin;
                t->end = begin + LOOKUP_CHUNK < n ? begin + LOOKUP_CHUNK : n;
                push(w, t);
        }
}

/* --data, after the walk: read ahead in physical order, up to the budget. */
static void read_ahead_data(RcWalk *w) {
        uint64_t planned;

        ra_prefetch_plan(w->files, w->n_files, w->budget, &planned);
        atomic_store(&w->counters.data_planned_bytes, planned);
        atomic_store(&w->counters.data_phase, true);

        for (size_t i = 0; i < w->n_files; i++) {
                const RaPrefetchFile *f = &w->files[i];
                _cleanup_close_ int fd = -1;

                if (!f->selected) {
                        w->files_over++;
                        w->bytes_over += f->size;
                        continue;
                }
                if (atomic_load(&w->stop))
                        continue;

                fd = open(w->file_paths[f->id], O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME | O_NONBLOCK);
                if (fd < 0 && errno == EPERM)
                        fd = open(w->file_paths[f->id], O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
                if (fd < 0) {
                        note_error(w, w->file_paths[f->id], NULL, -errno);
                        continue;
                }
                /* readahead(2) only queues the reads; the file system without it gets the advice. */
                if (readahead(fd, 0, f->size) < 0) {
                        int r = posix_fadvise(fd, 0, (off_t) f->size, POSIX_FADV_WILLNEED);

                        if (r != 0) {
                                note_error(w, w->file_paths[f->id], NULL, -r);
                                continue;
                        }
                }
                atomic_fetch_add(&w->counters.data_files, 1);
                atomic_fetch_add(&w->counters.data_bytes, f->size);
        }
}

typedef struct Worker {
        RcWalk *w;
        bool first;
} Worker;

static void *worker(void *arg) {
        RcWalk *w = ((Worker *) arg)->w;
        bool first = ((Worker *) arg)->first;
        _cleanup_free_ char *buf = NULL;
        bool stopped = false;

        free(arg);
        buf = malloc(GETDENTS_BUFFER_SIZE);

        for (;;) {
                Task *t;

                pthread_mutex_lock(&w->lock);
                while (!w->head && w->busy > 0 && !atomic_load(&w->stop))
                        pthread_cond_wait(&w->cond, &w->lock);
                if (!w->head && !w->lookups_planned && !atomic_load(&w->stop)) {
                        /* Every directory is read: the others wait while this one plans. */
                        w->lookups_planned = true;
                        w->busy++;
                        pthread_mutex_unlock(&w->lock);
                        plan_lookups(w);
                        pthread_mutex_lock(&w->lock);
                        w->busy--;
                        pthread_cond_broadcast(&w->cond);
                        pthread_mutex_unlock(&w->lock);
                        continue;
                }
                if (atomic_load(&w->stop) || !w->head) {
                        stopped = atomic_load(&w->stop);
                        pthread_cond_broadcast(&w->cond);
                        pthread_mutex_unlock(&w->lock);
                        break;
                }
                t = w->head;
                w->head = t->next;
                if (!w->head)
                        w->tail = NULL;
                w->busy++;
                pthread_mutex_unlock(&w->lock);

                if (atomic_load(&w->stop))
                        ;
                else if (t->pending)
                        lookup_pending(w, t->begin, t->end);
                else if (t->dir)
                        lookup_entries(w, t->dir, t->begin, t->end);
                else if (buf)
                        walk_dir(w, t, buf);
                else
                        note_error(w, t->path, NULL, -ENOMEM);
                task_free(t);

                pthread_mutex_lock(&w->lock);
                w->busy--;
                if (!w->head && w->busy == 0)
                        pthread_cond_broadcast(&w->cond);
                pthread_mutex_unlock(&w->lock);
        }

        /* Unless stopped, a thread leaves the loop only when the queue is empty and no
         * one is busy: then the list of files is complete and no one else touches it. */
        if (first && w->data && !stopped)
                read_ahead_data(w);

        atomic_fetch_sub(&w->running, 1);
        return NULL;
}

int rc_walk_new(unsigned threads, bool data, bool always, uint64_t budget, RcWalk **ret) {
        RcWalk *w;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->n_threads = threads;
        w->data = data;
        w->always = always;
        w->budget = budget;
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->cond, NULL);
        *ret = w;
        return 0;
}

RcWalk *rc_walk_free(RcWalk *w) {
        if (!w)
                return NULL;

        while (w->head) {
                Task *t = w->head;

                w->head = t->next;
                task_free(t);
        }
        for (size_t i = 0; i < w->n_roots; i++) {
                free(w->roots[i]->path);
                free(w->roots[i]->device);
                (void) ra_close(w->roots[i]->device_fd);
                ra_ext4_layout_clear(&w->roots[i]->ext4);
                free(w->roots[i]);
        }
        free(w->roots);
        for (size_t i = 0; i < w->n_kept; i++)
                (void) dir_unref(w->kept[i]);
        free(w->kept);
        free(w->pending);
        for (size_t i = 0; i < w->n_files; i++)
                free(w->file_paths[i]);
        free(w->file_paths);
        free(w->files);
        free(w->threads);
        free(w->first_error);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->cond);
        free(w);
        return NULL;
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

/* The block device beneath a mount: the file system's own device number,
 * or, where that is an anonymous one (btrfs), the mount's source, found in
 * mountinfo by the mount's ID (libmount undoes mountinfo's escapes). */
static int mount_device(const struct statx *stx, const RcWalkRoot *root, dev_t *ret) {
        struct libmnt_table *tb = NULL;
        struct libmnt_iter *it = NULL;
        struct libmnt_fs *fs;
        const char *source = NULL;
        char path[64];
        struct stat st;
        int r = -ENODEV;

        (void) snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", stx->stx_dev_major, stx->stx_dev_minor);
        if (access(path, F_OK) == 0) {
                *ret = makedev(stx->stx_dev_major, stx->stx_dev_minor);
                return 0;
        }
        if (!root->has_mnt_id)
                return -ENODEV;

        tb = mnt_new_table_from_file("/proc/self/mountinfo");
        it = mnt_new_iter(MNT_ITER_FORWARD);
        while (tb && it && mnt_table_next_fs(tb, it, &fs) == 0)
                if (mnt_fs_get_id(fs) >= 0 && (uint64_t) mnt_fs_get_id(fs) == root->mnt_id) {
                        source = mnt_fs_get_srcpath(fs);
                        break;
                }
        if (source && stat(source, &st) == 0 && S_ISBLK(st.st_mode)) {
                *ret = st.st_rdev;
                r = 0;
        }
        mnt_free_iter(it);
        mnt_unref_table(tb);
        return r;
}

/* 1 for a rotational disk, 0 for one that is not, -1 when it cannot be told. */
static int device_rotational(const struct statx *stx, const RcWalkRoot *root) {
        char path[96], buf[8];
        dev_t dev;

        if (mount_device(stx, root, &dev) < 0)
                return -1;
        /* A partition has no queue of its own: its disk's is one directory up. */
        (void) snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/rotational", major(dev), minor(dev));
        if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0) {
                (void) snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/rotational", major(dev),
                                minor(dev));
                if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
                        return -1;
        }
        return IN_SET(buf[0], '0', '1') && buf[1] == '\0' ? buf[0] - '0' : -1;
}

/*
 * ext4 on a device the caller may read (root, the disk group): the layout
 * that places its inodes. Anyone else gets the lookups alone; so does a
 * device that is no ext4 as this code knows it.
 */
static void setup_device(RcWalkRoot *root, const struct statx *stx) {
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

int rc_walk_add_root(RcWalk *w, const char *path, const RcWalkRoot **ret) {
        _cleanup_close_ int fd = -1;
        struct statx stx;
        struct statfs sfs;
        RcWalkRoot **roots, *root;

        /* O_PATH first, so a file is told apart from a directory we may not read. */
        fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID, &stx) < 0)
                return -errno;
        if (!S_ISDIR(stx.stx_mode))
                return -ENOTDIR;
        fd = ra_close(fd);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstatfs(fd, &sfs) < 0)
                return -errno;

        root = calloc(1, sizeof(*root));
        if (!root)
                return -ENOMEM;
        root->path = strdup(path);
        roots = reallocarray(w->roots, w->n_roots + 1, sizeof(*roots));
        if (!root->path || !roots) {
                free(root->path);
                free(root);
                return -ENOMEM;
        }
        w->roots = roots;

        root->fs = ra_prefetch_fs_from_magic((uint64_t) sfs.f_type);
        setup_device(root, &stx);
        root->has_mnt_id = stx.stx_mask & STATX_MNT_ID;
        root->mnt_id = root->has_mnt_id ? stx.stx_mnt_id : makedev(stx.stx_dev_major, stx.stx_dev_minor);
        root->rotational = device_rotational(&stx, root);
        root->index = (uint32_t) w->n_roots;
        roots[w->n_roots++] = root;
        if (ret)
                *ret = root;
        return 0;
}

int rc_walk_start(RcWalk *w) {
        struct rlimit rl;
        int r;

        for (size_t i = 0; i < w->n_roots; i++) {
                RcWalkRoot *root = w->roots[i];

                /* Nothing known reads a directory-order tree cheaper than a walk of it. */
                if (root->fs->order == RA_PREFETCH_ORDER_DIRECTORY && may_stand_aside(w, root)) {
                        root->aside = RA_PREFETCH_ASIDE_DIRECTORY;
                        continue;
                }
                r = push_dir(w, root->path, root);
                if (r < 0)
                        return r;
        }

        /* A disk serves one command at a time and reads ahead into its cache while
         * idle: lookups from many threads at once make it seek between them. Where
         * the metadata is read from the device in large commands ahead of the
         * lookups, these wait on the CPU instead (creating the inodes): one each. */
        if (w->n_threads == 0) {
                long cpus = sysconf(_SC_NPROCESSORS_ONLN);

                w->n_threads = RC_WALK_THREADS;
                for (size_t i = 0; i < w->n_roots; i++)
                        if (w->roots[i]->rotational == 1 && w->roots[i]->device_fd < 0)
                                w->n_threads = 1;
                        else if (w->roots[i]->rotational == 1 && w->n_threads > 1)
                                w->n_threads = cpus < 1                 ? 1
                                               : cpus < RC_WALK_THREADS ? (unsigned) cpus
                                                                        : RC_WALK_THREADS;
        }

        /* The directories kept open for the lookups in inode order: what the
         * descriptors allow, less one for each thread and a margin. */
        w->max_kept = 1 << 20;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
                w->max_kept = rl.rlim_cur > 64 + w->n_threads ? (size_t) rl.rlim_cur - 64 - w->n_threads : 0;

        w->threads = calloc(w->n_threads, sizeof(*w->threads));
        if (!w->threads)
                return -ENOMEM;

        for (unsigned i = 0; i < w->n_threads; i++) {
                Worker *arg = malloc(sizeof(*arg));

                if (!arg) {
                        r = -ENOMEM;
                        goto fail;
                }
                *arg = (Worker){ .w = w, .first = i == 0 };
                atomic_fetch_add(&w->running, 1);
                r = -pthread_create(&w->threads[i], NULL, worker, arg);
                if (r < 0) {
                        atomic_fetch_sub(&w->running, 1);
                        free(arg);
                        goto fail;
                }
                w->n_started++;
        }
        return 0;

fail:
        /* The threads already started finish the walk; the caller joins them. */
        if (w->n_started > 0)
                return 0;
        return r;
}

bool rc_walk_done(RcWalk *w) {
        return atomic_load(&w->running) == 0;
}

void rc_walk_stop(RcWalk *w) {
        atomic_store(&w->stop, true);
        pthread_mutex_lock(&w->lock);
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
}

void rc_walk_join(RcWalk *w) {
        for (size_t i = 0; i < w->n_started; i++)
                (void) pthread_join(w->threads[i], NULL);
        w->n_started = 0;
}

unsigned rc_walk_threads(RcWalk *w) {
        return w->n_threads;
}

const RcWalkCounters *rc_walk_counters(RcWalk *w) {
        return &w->counters;
}

void rc_walk_data_summary(RcWalk *w, uint64_t *ret_budget, uint64_t *ret_files_over,
                          uint64_t *ret_bytes_over) {
        *ret_budget = w->budget;
        *ret_files_over = w->files_over;
        *ret_bytes_over = w->bytes_over;
}

const char *rc_walk_first_error(RcWalk *w) {
        return w->first_error;
}
