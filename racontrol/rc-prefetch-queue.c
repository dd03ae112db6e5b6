/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The walk's task queue and the worker threads that run its tasks. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ra-macro.h"
#include "rc-prefetch-state.h"

void rc_task_free(Task *t) {
        if (!t)
                return;
        free(t->path);
        (void) rc_dir_unref(t->dir);
        free(t);
}

/* Queues a task at the tail, so the walk goes in the order things were found. */
void rc_queue_push(RcWalk *w, Task *t) {
        pthread_mutex_lock(&w->lock);
        if (w->tail)
                w->tail->next = t;
        else
                w->head = t;
        w->tail = t;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
}

Task *rc_queue_dir_task(const char *path, const RcWalkRoot *root) {
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

int rc_queue_push_dir(RcWalk *w, const char *path, const RcWalkRoot *root) {
        Task *t = rc_queue_dir_task(path, root);

        if (!t)
                return -ENOMEM;
        rc_queue_push(w, t);
        return 0;
}

/*
 * Queues the subdirectories one directory's lookups found, in their order,
 * ahead of everything else: the walk goes depth first, as find and ls -R
 * do, and reads a subtree while the disk is still near it.
 */
void rc_queue_push_front(RcWalk *w, Task *first, Task *last) {
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
                if (!w->head && !w->drained && !atomic_load(&w->stop)) {
                        /* The queue ran dry once: the others wait while this thread queues what follows. */
                        w->drained = true;
                        w->busy++;
                        pthread_mutex_unlock(&w->lock);
                        w->ops->drained(w);
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

                if (!atomic_load(&w->stop))
                        w->ops->run(w, t, buf);
                rc_task_free(t);

                pthread_mutex_lock(&w->lock);
                w->busy--;
                if (!w->head && w->busy == 0)
                        pthread_cond_broadcast(&w->cond);
                pthread_mutex_unlock(&w->lock);
        }

        /* Unless stopped, a thread leaves the loop only when the queue is empty and no
         * one is busy: then what the tasks found is complete and no one else touches it. */
        if (first && !stopped)
                w->ops->finished(w);

        atomic_fetch_sub(&w->running, 1);
        return NULL;
}

/* Starts w->n_threads workers; a failure after the first is not the caller's: those run the walk. */
int rc_queue_start(RcWalk *w, const RcQueueOps *ops) {
        int r = 0;

        w->ops = ops;
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
