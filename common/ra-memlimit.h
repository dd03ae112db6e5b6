/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * What a task may hold in memory: the tightest limit of its memory cgroup
 * and every cgroup above it (cgroup v2's memory.max, v1's
 * memory.limit_in_bytes), and at most the machine's memory (MemTotal). A
 * container, a service with MemoryMax=, a CI job: the page cache its reads
 * fill is charged to its cgroup, and evicted at that limit.
 */

/*
 * The memory controller's cgroup in the text of /proc/PID/cgroup: a v1
 * line naming "memory" first (*ret_v1 set), else the v2 line ("0::").
 * -ENOENT when neither is there; -EINVAL for a path that is not absolute,
 * has a "." or ".." component, or does not fit.
 */
int ra_memlimit_parse_cgroup(const char *text, bool *ret_v1, char *ret_path, size_t size);

/* A limit file's text, in bytes: "max" (v2) and v1's page-rounded LONG_MAX are UINT64_MAX. */
int ra_memlimit_parse_limit(const char *text, uint64_t *ret_bytes);

/*
 * What task pid may hold, in KiB, read under root ("" for the machine's own
 * /proc and /sys/fs/cgroup). -ENOENT (or -ESRCH) when the task is gone or
 * hidden: the unit's ProtectProc=invisible hides other users' tasks.
 */
int ra_memlimit_task_kb(const char *root, pid_t pid, uint64_t *ret_kb);
