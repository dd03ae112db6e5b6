/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The directory walk: reads each directory, then looks its entries up in the
 * order the file system makes cheap.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ra-macro.h"
#include "ra-util.h"
#include "rc-prefetch-state.h"

static bool same_mount(const RcWalkRoot *root, const struct statx *stx) {
        if (root->has_mnt_id && (stx->stx_mask & STATX_MNT_ID))
                return stx->stx_mnt_id == root->mnt_id;
        return makedev(stx->stx_dev_major, stx->stx_dev_minor) == root->mnt_id;
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
                rc_walk_note_error(w, d->path, name, -errno);
                return;
        }
        atomic_fetch_add(&w->counters.entries, 1);

        if (S_ISDIR(stx.stx_mode) && first && same_mount(d->root, &stx)) {
                _cleanup_free_ char *path = rc_walk_path_join(d->path, name);
                Task *t = path ? rc_queue_dir_task(path, d->root) : NULL;

                if (!t) {
                        rc_walk_note_error(w, d->path, name, -ENOMEM);
                        return;
                }
                if (*last)
                        (*last)->next = t;
                else
                        *first = t;
                *last = t;
        } else if (w->data && S_ISREG(stx.stx_mode) && stx.stx_size > 0)
                rc_data_add_file(w, d, name, stx.stx_size);
}

static void lookup_entries(RcWalk *w, Dir *d, size_t begin, size_t end) {
        Task *first = NULL, *last = NULL;

        for (size_t i = begin; i < end && !atomic_load(&w->stop); i++)
                look_up(w, d, d->names + d->entries[i].name_offset, &first, &last);
        rc_queue_push_front(w, first, last);
}

/* A chunk of the lookups in inode order. The chunks go to the threads in
 * order, and each has the blocks read of the one as many chunks ahead as
 * there are threads: the reads stay ahead of every thread's lookups. */
static void lookup_pending(RcWalk *w, size_t begin, size_t end) {
        rc_devra_read_chunk(w, begin + (size_t) w->n_threads * LOOKUP_CHUNK);
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
            rc_walk_grow((void **) &w->kept, &w->kept_allocated, w->n_kept + 1, sizeof(*w->kept)) &&
            rc_walk_grow((void **) &w->pending, &w->pending_allocated, w->n_pending + d->n,
                         sizeof(*w->pending))) {
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
        rc_queue_push_front(w, first, last);
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

                if (!rc_walk_grow((void **) &d->entries, &d->allocated, d->n + 1, sizeof(*d->entries)) ||
                    !rc_walk_grow((void **) &d->names, &d->names_allocated, d->names_size + len, 1))
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

static void read_dir(RcWalk *w, Task *t, char *buf) {
        RcWalkRoot *root = w->roots[t->root->index];
        size_t size;
        Dir *d;

        d = calloc(1, sizeof(*d));
        if (!d) {
                rc_walk_note_error(w, t->path, NULL, -ENOMEM);
                return;
        }
        atomic_init(&d->refs, 1);
        d->root = t->root;
        d->path = TAKE_PTR(t->path);
        if (atomic_load(&root->in_order)) {
                (void) rc_dir_unref(d);
                return;
        }
        d->fd = rc_walk_open_beneath(w, d->path, O_RDONLY | O_DIRECTORY);
        if (d->fd < 0) {
                rc_walk_note_error(w, d->path, NULL, d->fd);
                (void) rc_dir_unref(d);
                return;
        }
        if (d->root->device_fd >= 0)
                rc_devra_read_dir(d->root, d->fd);

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
                        rc_walk_note_error(w, d->path, NULL, (int) got);
                        (void) rc_dir_unref(d);
                        return;
                }
                if (got == 0)
                        break;
                if (root->fs->order == RA_PREFETCH_ORDER_INODE && tell_order(w, root, d, counted)) {
                        atomic_fetch_add(&w->counters.skipped, d->n);
                        (void) rc_dir_unref(d);
                        return;
                }
                counted = d->n;
        }
        atomic_fetch_add(&w->counters.directories, 1);
        atomic_fetch_add(&w->counters.found, d->n);

        if (root->fs->order == RA_PREFETCH_ORDER_INODE && defer_lookups(w, d)) {
                (void) rc_dir_unref(d);
                return;
        }

        if (d->root->device_fd >= 0)
                rc_devra_read_inodes(d->root, d);
        ra_prefetch_sort_entries(d->entries, d->n, d->root->fs->order);

        /* One thread looks up in one pass, in order. */
        if (d->n <= CHUNK_ENTRIES || w->n_threads == 1) {
                lookup_entries(w, d, 0, d->n);
                (void) rc_dir_unref(d);
                return;
        }

        /* A large directory: its chunks go to every thread, in order, so several
         * lookups are in flight at neighbouring places on the disk. */
        for (size_t begin = 0; begin < d->n; begin += CHUNK_ENTRIES) {
                Task *c = calloc(1, sizeof(*c));

                if (!c) {
                        rc_walk_note_error(w, d->path, NULL, -ENOMEM);
                        break;
                }
                atomic_fetch_add(&d->refs, 1);
                c->dir = d;
                c->root = d->root;
                c->begin = begin;
                c->end = begin + CHUNK_ENTRIES < d->n ? begin + CHUNK_ENTRIES : d->n;
                rc_queue_push(w, c);
        }
        (void) rc_dir_unref(d);
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
                rc_devra_read_chunk(w, (size_t) i * LOOKUP_CHUNK);
        for (size_t begin = 0; begin < n; begin += LOOKUP_CHUNK) {
                Task *t = calloc(1, sizeof(*t));

                if (!t) {
                        rc_walk_note_error(w, w->roots[w->pending[begin].root]->path, NULL, -ENOMEM);
                        break;
                }
                t->pending = true;
                t->begin = begin;
                t->end = begin + LOOKUP_CHUNK < n ? begin + LOOKUP_CHUNK : n;
                rc_queue_push(w, t);
        }
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
                rc_task_free(t);
        }
        for (size_t i = 0; i < w->n_roots; i++) {
                free(w->roots[i]->path);
                (void) ra_close(w->roots[i]->fd);
                free(w->roots[i]->device);
                (void) ra_close(w->roots[i]->device_fd);
                ra_ext4_layout_clear(&w->roots[i]->ext4);
                free(w->roots[i]);
        }
        free(w->roots);
        for (size_t i = 0; i < w->n_kept; i++)
                (void) rc_dir_unref(w->kept[i]);
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

static void run_task(RcWalk *w, Task *t, char *buf) {
        if (t->pending)
                lookup_pending(w, t->begin, t->end);
        else if (t->dir)
                lookup_entries(w, t->dir, t->begin, t->end);
        else if (buf)
                read_dir(w, t, buf);
        else
                rc_walk_note_error(w, t->path, NULL, -ENOMEM);
}

/* Every directory is read: the lookups in inode order follow. */
static void drained(RcWalk *w) {
        plan_lookups(w);
}

/* The walk is done, so the list of files is complete. */
static void finished(RcWalk *w) {
        if (w->data)
                rc_data_read_ahead(w);
}

static const RcQueueOps walk_ops = {
        .run = run_task,
        .drained = drained,
        .finished = finished,
};

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
                r = rc_queue_push_dir(w, root->path, root);
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

        return rc_queue_start(w, &walk_ops);
}

const RcWalkCounters *rc_walk_counters(RcWalk *w) {
        return &w->counters;
}

const char *rc_walk_first_error(RcWalk *w) {
        return w->first_error;
}
