/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every part of the walk uses: its errors, the directories its tasks
 * share, and growing arrays and joining paths.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ra-macro.h"
#include "ra-util.h"
#include "rc-prefetch-state.h"

Dir *rc_dir_unref(Dir *d) {
        if (!d || atomic_fetch_sub(&d->refs, 1) > 1)
                return NULL;
        (void) ra_close(d->fd);
        free(d->path);
        free(d->entries);
        free(d->names);
        free(d);
        return NULL;
}

bool rc_walk_grow(void **p, size_t *allocated, size_t n, size_t size) {
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

char *rc_walk_path_join(const char *dir, const char *name) {
        char *p;

        if (asprintf(&p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name) < 0)
                return NULL;
        return p;
}

void rc_walk_note_error(RcWalk *w, const char *path, const char *name, int r) {
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
