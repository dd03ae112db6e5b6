/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Data read-ahead (--data): the regular files the walk finds, read ahead in
 * physical order up to a budget.
 */
#include "config.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "ra-macro.h"
#include "ra-util.h"
#include "rc-prefetch-state.h"

/* --data: where the file starts on the device, for the read order. */
void rc_data_add_file(RcWalk *w, Dir *d, const char *name, uint64_t size) {
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
                rc_walk_note_error(w, d->path, name, -errno);
                return;
        }

        fm->fm_length = FIEMAP_MAX_OFFSET;
        fm->fm_extent_count = 1;
        /* Not every file system has FIEMAP: those files go last, in walk order. */
        if (ioctl(fd, FS_IOC_FIEMAP, fm) >= 0 && fm->fm_mapped_extents > 0 &&
            !(fm->fm_extents[0].fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)))
                physical = fm->fm_extents[0].fe_physical;

        path = rc_walk_path_join(d->path, name);
        if (!path) {
                rc_walk_note_error(w, d->path, name, -ENOMEM);
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
                        rc_walk_note_error(w, d->path, name, -ENOMEM);
                        return;
                }
                w->files_allocated = n;
        }
        w->files[w->n_files] =
                (RaPrefetchFile){ .physical = physical, .size = size, .id = (uint32_t) w->n_files };
        w->file_paths[w->n_files++] = TAKE_PTR(path);
        pthread_mutex_unlock(&w->lock);
}

/* --data, after the walk: read ahead in physical order, up to the budget. */
void rc_data_read_ahead(RcWalk *w) {
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

                fd = rc_walk_open_beneath(w, w->file_paths[f->id], O_RDONLY | O_NOATIME | O_NONBLOCK);
                if (fd == -EPERM) /* O_NOATIME is for the owner only */
                        fd = rc_walk_open_beneath(w, w->file_paths[f->id], O_RDONLY | O_NONBLOCK);
                if (fd < 0) {
                        rc_walk_note_error(w, w->file_paths[f->id], NULL, fd);
                        continue;
                }
                /* readahead(2) only queues the reads; the file system without it gets the advice. */
                if (readahead(fd, 0, f->size) < 0) {
                        int r = posix_fadvise(fd, 0, (off_t) f->size, POSIX_FADV_WILLNEED);

                        if (r != 0) {
                                rc_walk_note_error(w, w->file_paths[f->id], NULL, -r);
                                continue;
                        }
                }
                atomic_fetch_add(&w->counters.data_files, 1);
                atomic_fetch_add(&w->counters.data_bytes, f->size);
        }
}

void rc_walk_data_summary(RcWalk *w, uint64_t *ret_budget, uint64_t *ret_files_over,
                          uint64_t *ret_bytes_over) {
        *ret_budget = w->budget;
        *ret_files_over = w->files_over;
        *ret_bytes_over = w->bytes_over;
}
