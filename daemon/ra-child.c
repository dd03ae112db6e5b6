/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ra-child.h"
#include "ra-util.h"

pid_t ra_child_start(int *ret_fd) {
        int fds[2];
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                pid = -errno;
                (void) close(fds[0]);
                (void) close(fds[1]);
                return pid;
        }
        if (pid == 0) {
                /* Only the pipe. */
                if (dup2(fds[1], 3) < 0)
                        _exit(EXIT_FAILURE);
                (void) close_range(4, ~0U, 0);
                return 0;
        }
        (void) close(fds[1]);
        *ret_fd = fds[0];
        return pid;
}

int ra_child_read(int fd, long deadline_msec, char **buf, size_t *len) {
        uint64_t until = ra_now_usec() + (uint64_t) deadline_msec * 1000;
        size_t size = 0;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                uint64_t now = ra_now_usec();
                ssize_t n;

                if (now >= until)
                        return -ETIMEDOUT;
                if (poll(&p, 1, (int) ((until - now + 999) / 1000)) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (!(p.revents & (POLLIN | POLLHUP)))
                        continue;
                if (*len + 4096 > size) {
                        char *grown = realloc(*buf, *len + 65536);

                        if (!grown)
                                return -ENOMEM;
                        *buf = grown;
                        size = *len + 65536;
                }
                n = read(fd, *buf + *len, size - *len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                (*buf)[*len + (size_t) n] = '\0';
                if (n == 0)
                        return 0;
                *len += (size_t) n;
        }
}

void ra_child_end(pid_t pid, int r, pid_t *stuck) {
        if (r >= 0) {
                (void) waitpid(pid, NULL, 0); /* it closed its end: it is exiting */
                return;
        }
        (void) kill(pid, SIGKILL);
        if (waitpid(pid, NULL, WNOHANG) != pid)
                *stuck = pid;
}

bool ra_child_stuck(pid_t *stuck) {
        if (*stuck <= 0)
                return false;
        if (waitpid(*stuck, NULL, WNOHANG) == 0)
                return true;
        *stuck = 0;
        return false;
}
