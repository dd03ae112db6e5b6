/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A child for work that may never return: a path looked up on a hard NFS
 * mount whose server is gone, a probe of a disk whose reads wait on a FUSE
 * server that stopped. It holds none of radaemon's descriptors (the state
 * directory's lock would keep the next radaemon from starting), only the
 * write end of a pipe as fd 3, and the event loop waits for what it writes
 * no longer than a deadline. Past it the child is killed; one blocked in
 * the kernel does not die until its I/O does, and its pid is kept as the
 * stuck one of its kind: while it lives none other starts, so there is one
 * at most.
 */

/*
 * Forks: returns 0 in the child (which writes to fd 3 and _exit()s), the
 * child's pid in the parent with *ret_fd the pipe's read end, or -errno.
 */
pid_t ra_child_start(int *ret_fd);

/*
 * Reads what the child writes until it closes the pipe (0) or deadline_msec
 * passes (-ETIMEDOUT); *buf (grown, NUL-terminated, the caller's to free)
 * holds *len bytes that came either way.
 */
int ra_child_read(int fd, long deadline_msec, char **buf, size_t *len);

/*
 * Ends a child whose read returned r: reaped once it exits after a whole
 * answer; on any error killed, and kept in *stuck where it does not die at
 * once.
 */
void ra_child_end(pid_t pid, int r, pid_t *stuck);

/* Whether the child in *stuck still lives; one that ended is reaped and *stuck cleared. */
bool ra_child_stuck(pid_t *stuck);
