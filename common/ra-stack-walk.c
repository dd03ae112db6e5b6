/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "ra-stack-sysfs.h"
#include "ra-util.h"

static int read_device(RaStackWalker *w, int devfd, RaStackDevice *d) {
        int r;

        r = ra_stack_sysfs_read_queue(w, devfd, d);
        if (r < 0)
                return r;

        if (faccessat(devfd, "dm", F_OK, 0) >= 0)
                r = ra_stack_dm_read(w, devfd, d);
        else if (faccessat(devfd, "md", F_OK, 0) >= 0)
                r = ra_stack_md_read(w, devfd, d);
        else
                d->kind = RA_STACK_DISK;
        if (r < 0)
                return r;

        return ra_stack_sysfs_holders(w, devfd, d->name, &d->holders);
}

static int add_device(RaStackWalker *w, const char *name, size_t *ret_index) {
        RaStack *s = w->stack;
        RaStackDevice *grown;

        if (s->n_devices >= RA_STACK_DEVICES_MAX) {
                ra_stack_walker_bad_path(w, "block/%s", name);
                return -E2BIG;
        }
        grown = realloc(s->devices, (s->n_devices + 1) * sizeof(RaStackDevice));
        if (!grown)
                return -ENOMEM;
        s->devices = grown;

        s->devices[s->n_devices] = (RaStackDevice){ .name = strdup(name) };
        if (!s->devices[s->n_devices].name)
                return -ENOMEM;
        *ret_index = s->n_devices++;
        return 0;
}

static int add_slave(RaStackDevice *d, const char *name, size_t device) {
        RaStackSlave *grown;
        char *copy;

        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        grown = realloc(d->slaves, (d->n_slaves + 1) * sizeof(RaStackSlave));
        if (!grown) {
                free(copy);
                return -ENOMEM;
        }
        d->slaves = grown;
        d->slaves[d->n_slaves++] = (RaStackSlave){ .name = copy, .device = device };
        return 0;
}

static int walk_down(RaStackWalker *w, const char *name, unsigned depth, size_t *ret_index) {
        _cleanup_(ra_strv_freep) char **slaves = NULL;
        _cleanup_close_ int devfd = -1;
        size_t index;
        int r;

        for (size_t i = 0; i < w->stack->n_devices; i++)
                if (strcmp(w->stack->devices[i].name, name) == 0) {
                        if (w->on_path[i]) {
                                ra_stack_walker_bad_path(w, "block/%s", name);
                                return -ELOOP;
                        }
                        *ret_index = i;
                        return 0;
                }

        if (depth >= RA_STACK_DEPTH_MAX) {
                ra_stack_walker_bad_path(w, "block/%s", name);
                return -ELOOP;
        }

        r = ra_stack_sysfs_open(w, name, &devfd);
        if (r < 0)
                return r;
        r = add_device(w, name, &index);
        if (r < 0)
                return r;
        w->on_path[index] = true;

        r = read_device(w, devfd, &w->stack->devices[index]);
        if (r < 0)
                return r;

        r = ra_stack_sysfs_list(w, devfd, name, "slaves", &slaves);
        if (r < 0)
                return r;

        for (size_t i = 0; slaves[i]; i++) {
                _cleanup_free_ char *whole = NULL;
                size_t child;

                r = ra_stack_sysfs_resolve_slave(w, devfd, name, slaves[i], &whole);
                if (r < 0)
                        return r;
                r = walk_down(w, whole, depth + 1, &child);
                if (r < 0)
                        return r;
                /* The walk may have moved the array. */
                r = add_slave(&w->stack->devices[index], slaves[i], child);
                if (r < 0)
                        return r;
        }

        w->on_path[index] = false;
        *ret_index = index;
        return 0;
}

static int collect_leaves(RaStack *s) {
        s->leaves = calloc(s->n_devices, sizeof(size_t));
        if (!s->leaves)
                return -ENOMEM;

        /* In the order the walk met them, which is the order of the slaves. */
        for (size_t i = 0; i < s->n_devices; i++)
                if (s->devices[i].n_slaves == 0)
                        s->leaves[s->n_leaves++] = i;
        return 0;
}

static int open_block_dir(const char *sysfs_root, int *ret_fd) {
        _cleanup_close_ int rootfd = -1;
        int fd;

        rootfd = open(sysfs_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return negative_errno();
        fd = openat(rootfd, "block", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        *ret_fd = fd;
        return 0;
}

int ra_stack_read(const char *sysfs_root, const char *name, RaStack **ret, char **ret_bad_path) {
        _cleanup_(ra_stack_freep) RaStack *s = NULL;
        _cleanup_close_ int blockfd = -1;
        RaStackWalker w = {};
        size_t top;
        int r;

        if (ret_bad_path)
                *ret_bad_path = NULL;

        r = open_block_dir(sysfs_root, &blockfd);
        if (r < 0)
                return r;

        s = calloc(1, sizeof(RaStack));
        if (!s)
                return -ENOMEM;

        w = (RaStackWalker){ .blockfd = blockfd, .stack = s };
        r = walk_down(&w, name, 0, &top);
        if (r >= 0)
                r = collect_leaves(s);
        if (r < 0) {
                if (ret_bad_path)
                        *ret_bad_path = TAKE_PTR(w.bad_path);
                free(w.bad_path);
                return r;
        }

        free(w.bad_path);
        *ret = TAKE_PTR(s);
        return 0;
}

static int walk_up(RaStackWalker *w, const char *name, unsigned depth, char ***path, char ***visited,
                   char ***tops) {
        _cleanup_(ra_strv_freep) char **holders = NULL;
        _cleanup_close_ int devfd = -1;
        int r;

        if (ra_strv_contains(*path, name)) {
                ra_stack_walker_bad_path(w, "block/%s", name);
                return -ELOOP;
        }
        if (ra_strv_contains(*visited, name))
                return 0;
        if (depth >= RA_STACK_DEPTH_MAX) {
                ra_stack_walker_bad_path(w, "block/%s", name);
                return -ELOOP;
        }
        if (ra_strv_length(*visited) >= RA_STACK_DEVICES_MAX) {
                ra_stack_walker_bad_path(w, "block/%s", name);
                return -E2BIG;
        }

        r = ra_stack_sysfs_open(w, name, &devfd);
        if (r < 0)
                return r;
        r = ra_stack_sysfs_holders(w, devfd, name, &holders);
        if (r < 0)
                return r;
        r = ra_strv_push(visited, name);
        if (r < 0)
                return r;

        if (!holders[0])
                return ra_strv_contains(*tops, name) ? 0 : ra_strv_push(tops, name);

        r = ra_strv_push(path, name);
        if (r < 0)
                return r;
        for (size_t i = 0; holders[i]; i++) {
                r = walk_up(w, holders[i], depth + 1, path, visited, tops);
                if (r < 0)
                        return r;
        }
        /* Off the path again: the last one pushed is this device. */
        free((*path)[ra_strv_length(*path) - 1]);
        (*path)[ra_strv_length(*path) - 1] = NULL;
        return 0;
}

int ra_stack_find_tops(const char *sysfs_root, const char *name, char ***ret, char **ret_bad_path) {
        _cleanup_(ra_strv_freep) char **path = NULL, **visited = NULL, **tops = NULL;
        _cleanup_close_ int blockfd = -1;
        RaStackWalker w = {};
        int r;

        if (ret_bad_path)
                *ret_bad_path = NULL;

        r = open_block_dir(sysfs_root, &blockfd);
        if (r < 0)
                return r;

        path = calloc(1, sizeof(char *));
        visited = calloc(1, sizeof(char *));
        tops = calloc(1, sizeof(char *));
        if (!path || !visited || !tops)
                return -ENOMEM;

        w = (RaStackWalker){ .blockfd = blockfd };
        r = walk_up(&w, name, 0, &path, &visited, &tops);
        if (r < 0) {
                if (ret_bad_path)
                        *ret_bad_path = TAKE_PTR(w.bad_path);
                free(w.bad_path);
                return r;
        }

        free(w.bad_path);
        ra_stack_sysfs_sort(tops);
        *ret = TAKE_PTR(tops);
        return 0;
}

int ra_stack_tops_to_redecide(const char *sysfs_root, char *const *changed, RaStackIsManaged is_managed,
                              void *userdata, char ***ret) {
        _cleanup_(ra_strv_freep) char **tops = NULL;
        int r;

        for (size_t i = 0; changed && changed[i]; i++) {
                _cleanup_(ra_strv_freep) char **above = NULL;

                r = ra_stack_find_tops(sysfs_root, changed[i], &above, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue; /* gone, or torn down: the top's own event says so */

                for (size_t j = 0; above && above[j]; j++) {
                        if (ra_strv_contains(changed, above[j]) || ra_strv_contains(tops, above[j]) ||
                            !is_managed(userdata, above[j]))
                                continue;
                        if (ra_strv_push(&tops, above[j]) < 0)
                                return -ENOMEM;
                }
        }

        *ret = TAKE_PTR(tops);
        return 0;
}
