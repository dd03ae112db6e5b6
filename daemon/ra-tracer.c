/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "ra-tracer.h"
#include "ra-util.h"

/* One instance per daemon ("radaemon.<pid>"): two daemons (tests, benchmarks) must not share one. */
#define INSTANCE_PREFIX "radaemon."
#define EVENT "events/block/block_rq_issue/"
/* Per CPU: a few thousand requests an interval. */
#define BUFFER_KB "256"
/* One interval's reading, at most: keeps a storm of tiny requests from costing a core. */
#define DRAIN_MAX_BYTES (1024 * 1024)
/* The kernel refuses a filter of a page or more. */
#define FILTER_MAX 4000

struct RaTracer {
        char *dir;
        int pipe;
        char line[1024];
        size_t len;    /* of a line cut at the end of the last read */
        bool overlong; /* the line being read did not fit */
};

static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static int write_attr(const RaTracer *t, const char *attr, const char *value) {
        _cleanup_close_ int dfd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (dfd < 0)
                return negative_errno();
        return ra_write_file_at(dfd, attr, value);
}

RaTracer *ra_tracer_close(RaTracer *t) {
        if (!t)
                return NULL;

        /* The instance, its buffers and its event go away with the directory, once nothing is open. */
        t->pipe = ra_close(t->pipe);
        if (t->dir) {
                (void) write_attr(t, EVENT "enable", "0");
                (void) rmdir(t->dir);
        }
        free(t->dir);
        free(t);
        return NULL;
}

/* Instances of radaemons that were killed before they could remove them. */
static void remove_stale_instances(const char *instances) {
        _cleanup_close_ int dfd = -1;
        struct dirent *de;
        DIR *d;

        d = opendir(instances);
        if (!d)
                return;
        dfd = dirfd(d);

        while ((de = readdir(d))) {
                char *end;
                long pid;

                if (strncmp(de->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)) != 0)
                        continue;
                pid = strtol(de->d_name + strlen(INSTANCE_PREFIX), &end, 10);
                if (*end || pid <= 0 || kill((pid_t) pid, 0) == 0 || errno != ESRCH)
                        continue;
                (void) unlinkat(dfd, de->d_name, AT_REMOVEDIR);
        }
        dfd = -1; /* closedir() closes it */
        closedir(d);
}

int ra_tracer_open(RaTracer **ret) {
        _cleanup_(ra_tracer_closep) RaTracer *t = NULL;
        const char *root = NULL;
        char path[256];
        int r;

        for (size_t i = 0; i < ELEMENTSOF(roots) && !root; i++) {
                (void) snprintf(path, sizeof(path), "%s/instances", roots[i]);
                if (access(path, F_OK) == 0)
                        root = roots[i];
        }
        if (!root)
                return -ENOENT;

        (void) snprintf(path, sizeof(path), "%s/instances", root);
        remove_stale_instances(path);

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->pipe = -1;
        if (asprintf(&t->dir, "%s/instances/" INSTANCE_PREFIX "%d", root, (int) getpid()) < 0) {
                t->dir = NULL;
                return -ENOMEM;
        }

        if (mkdir(t->dir, 0700) < 0) {
                r = negative_errno();
                free(t->dir);
                t->dir = NULL;
                return r;
        }

        r = write_attr(t, "buffer_size_kb", BUFFER_KB);
        if (r >= 0)
                r = ra_tracer_set_devices(t, NULL, 0);
        if (r >= 0)
                r = write_attr(t, EVENT "enable", "1");
        if (r < 0)
                return r;

        (void) snprintf(path, sizeof(path), "%s/trace_pipe", t->dir);
        t->pipe = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (t->pipe < 0)
                return negative_errno();

        *ret = TAKE_PTR(t);
        return 0;
}

const char *ra_tracer_path(const RaTracer *t) {
        return t->dir;
}

int ra_tracer_set_devices(RaTracer *t, const dev_t *devices, size_t n) {
        char filter[FILTER_MAX + 64] = "(dev == 0";
        size_t len = strlen(filter);

        /* The tracepoint's dev is the kernel's encoding: major << 20 | minor. */
        for (size_t i = 0; i < n; i++) {
                unsigned long dev = (unsigned long) major(devices[i]) << 20 | minor(devices[i]);
                int k = snprintf(filter + len, sizeof(filter) - len, " || dev == %lu", dev);

                if (k < 0 || len + (size_t) k >= FILTER_MAX) {
                        /* Too many to name: take every read, and pick ours when reading. */
                        (void) snprintf(filter, sizeof(filter), "(dev != 0");
                        len = strlen(filter);
                        break;
                }
                len += (size_t) k;
        }

        (void) snprintf(filter + len, sizeof(filter) - len, ") && rwbs ~ \"*R*\"");
        return write_attr(t, EVENT "filter", filter);
}

int ra_tracer_drain(RaTracer *t, RaTraceHandler fn, void *userdata) {
        size_t total = 0;

        while (total < DRAIN_MAX_BYTES) {
                char buf[16384];
                ssize_t n = read(t->pipe, buf, sizeof(buf));

                if (n < 0)
                        return errno == EAGAIN ? 0 : negative_errno();
                if (n == 0)
                        return 0;
                total += (size_t) n;

                for (ssize_t i = 0; i < n; i++) {
                        RaTraceEvent e;

                        if (buf[i] != '\n') {
                                /* A line too long to be ours is dropped, not cut and parsed. */
                                if (t->len < sizeof(t->line) - 1)
                                        t->line[t->len++] = buf[i];
                                else
                                        t->overlong = true;
                                continue;
                        }

                        t->line[t->len] = '\0';
                        if (!t->overlong && ra_trace_parse_line(t->line, &e) >= 0 && e.read)
                                fn(userdata, &e);
                        t->len = 0;
                        t->overlong = false;
                }
        }
        return 0;
}
