/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ra-context.h"
#include "ra-probe-run.h"
#include "ra-probe.h"
#include "ra-util.h"

/* The child: its errno (0: none), whether a file system was found, its type and the optimal I/O size, NUL
 * after each. */
static _Noreturn void probe_child(RaDeviceAttrs *a, const char *devnode, int fd) {
        FILE *f;
        int r;

        /* Only the pipe: a probe that hangs may outlive radaemon (as ra-pathwatch.c's lookups). */
        if (dup2(fd, 3) < 0)
                _exit(EXIT_FAILURE);
        (void) close_range(4, ~0U, 0);
        r = ra_probe_device(a, devnode);
        f = fdopen(3, "w");
        if (!f || fprintf(f, "%d%c%d%c%s%c%" PRIu32 "%c", r < 0 ? -r : 0, 0, r > 0, 0, a->fs_type ?: "", 0,
                          a->optimal_io_bytes, 0) < 0)
                _exit(EXIT_FAILURE);
        _exit(fclose(f) == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}

static long msec_since(const struct timespec *start) {
        struct timespec now;

        (void) clock_gettime(CLOCK_MONOTONIC, &now);
        return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* What the child wrote, until it closes the pipe or the deadline passes (-ETIMEDOUT). */
static int read_answer(int fd, char *buf, size_t size, size_t *ret_len) {
        struct timespec start;
        size_t len = 0;

        (void) clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                long left = RA_PROBE_DEADLINE_MSEC - msec_since(&start);
                ssize_t n;

                if (left <= 0)
                        return -ETIMEDOUT;
                if (poll(&p, 1, (int) left) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (!(p.revents & (POLLIN | POLLHUP)))
                        continue;
                n = read(fd, buf + len, size - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0 || (len += (size_t) n) == size - 1) {
                        buf[len] = '\0';
                        *ret_len = len;
                        return 0;
                }
        }
}

/* The next of the answer's fields, each ended by a NUL; NULL past the end. */
static const char *field(const char *buf, size_t len, const char **at) {
        const char *f = *at, *end;

        if (!f || f >= buf + len || !(end = memchr(f, 0, (size_t) (buf + len - f))))
                return NULL;
        *at = end + 1;
        return f;
}

static int take_answer(RaDeviceAttrs *a, const char *buf, size_t len) {
        const char *at = buf, *error = field(buf, len, &at), *found = field(buf, len, &at),
                   *type = field(buf, len, &at), *io = field(buf, len, &at);
        uint32_t e, yes, io_bytes;

        if (!io || ra_parse_u32(error, &e) < 0 || ra_parse_u32(found, &yes) < 0 ||
            ra_parse_u32(io, &io_bytes) < 0)
                return -EPROTO;
        if (e != 0)
                return -(int) e;
        if (*type && !a->fs_type && !(a->fs_type = strdup(type)))
                return -ENOMEM;
        if (a->optimal_io_bytes == 0)
                a->optimal_io_bytes = io_bytes;
        return yes ? 1 : 0;
}

int ra_probe_run(Manager *m, RaDeviceAttrs *a, const char *devnode) {
        _cleanup_close_ int reader = -1, writer = -1;
        int pipefd[2];
        char buf[512];
        size_t len = 0;
        pid_t pid;
        int r;

        if (m->probe_stuck > 0) {
                if (waitpid(m->probe_stuck, NULL, WNOHANG) == 0)
                        return -EBUSY;
                m->probe_stuck = 0;
        }
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        reader = pipefd[0];
        writer = pipefd[1];
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                probe_child(a, devnode, writer);
        writer = ra_close(writer);

        r = read_answer(reader, buf, sizeof(buf), &len);
        if (r < 0) {
                /* Past the deadline, or unreadable: killed at once if it can be, else reaped later. */
                (void) kill(pid, SIGKILL);
                if (waitpid(pid, NULL, WNOHANG) != pid)
                        m->probe_stuck = pid;
                return r;
        }
        (void) waitpid(pid, NULL, 0); /* it closed its end: it is exiting */
        return take_answer(a, buf, len);
}
