/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ra-memlimit.h"
#include "ra-util.h"

/* A cgroup path as the kernel writes it: absolute, no "." or ".." component. */
static bool path_ok(const char *p) {
        if (p[0] != '/')
                return false;
        for (const char *c = p; c; c = strchr(c + 1, '/'))
                if (strncmp(c, "/./", 3) == 0 || strncmp(c, "/../", 4) == 0 || strcmp(c, "/.") == 0 ||
                    strcmp(c, "/..") == 0)
                        return false;
        return true;
}

/* Whether a v1 line's controller list ("cpu,cpuacct", "memory") names memory. */
static bool names_memory(const char *list, size_t len) {
        for (const char *c = list; c < list + len;) {
                const char *end = memchr(c, ',', (size_t) (list + len - c));
                size_t n = end ? (size_t) (end - c) : (size_t) (list + len - c);

                if (n == 6 && strncmp(c, "memory", 6) == 0)
                        return true;
                c += n + 1;
        }
        return false;
}

int ra_memlimit_parse_cgroup(const char *text, bool *ret_v1, char *ret_path, size_t size) {
        const char *v2 = NULL, *found = NULL;
        size_t found_len = 0;
        bool v1 = false;

        for (const char *line = text; *line;) {
                const char *nl = strchrnul(line, '\n'), *c1 = memchr(line, ':', (size_t) (nl - line)), *c2;

                c2 = c1 ? memchr(c1 + 1, ':', (size_t) (nl - c1 - 1)) : NULL;
                if (c2 && names_memory(c1 + 1, (size_t) (c2 - c1 - 1))) {
                        found = c2 + 1;
                        found_len = (size_t) (nl - c2 - 1);
                        v1 = true;
                        break;
                }
                if (c2 && c1 - line == 1 && line[0] == '0' && c2 == c1 + 1)
                        v2 = c2 + 1;
                line = *nl ? nl + 1 : nl;
        }
        if (!found && v2) {
                found = v2;
                found_len = strchrnul(v2, '\n') - v2;
        }
        if (!found)
                return -ENOENT;
        if (found_len >= size)
                return -EINVAL;
        memcpy(ret_path, found, found_len);
        ret_path[found_len] = '\0';
        if (!path_ok(ret_path))
                return -EINVAL;
        *ret_v1 = v1;
        return 0;
}

int ra_memlimit_parse_limit(const char *text, uint64_t *ret_bytes) {
        uint64_t v;
        int r;

        if (strcmp(text, "max") == 0) {
                *ret_bytes = UINT64_MAX;
                return 0;
        }
        r = ra_parse_u64(text, &v);
        if (r < 0)
                return r;
        /* v1 says "no limit" as LONG_MAX rounded down to a page. */
        *ret_bytes = v >= (UINT64_C(1) << 62) ? UINT64_MAX : v;
        return 0;
}

static int mem_total_kb(const char *root, uint64_t *ret) {
        char path[PATH_MAX], buf[4096];
        const char *p;
        int r;

        (void) snprintf(path, sizeof(path), "%s/proc/meminfo", root);
        r = ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf));
        if (r == -EFBIG)
                r = 0; /* MemTotal is its first line */
        if (r < 0)
                return r;
        p = strstr(buf, "MemTotal:");
        if (!p || sscanf(p, "MemTotal: %" SCNu64 " kB", ret) != 1)
                return -EBADMSG;
        return 0;
}

int ra_memlimit_task_kb(const char *root, pid_t pid, uint64_t *ret_kb) {
        char path[PATH_MAX], cgroup[PATH_MAX], buf[4096], *slash;
        uint64_t kb, limit;
        bool v1;
        int r;

        (void) snprintf(path, sizeof(path), "%s/proc/%d/cgroup", root, (int) pid);
        r = ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf));
        if (r < 0)
                return r;
        r = ra_memlimit_parse_cgroup(buf, &v1, cgroup, sizeof(cgroup));
        if (r < 0)
                return r;
        r = mem_total_kb(root, &kb);
        if (r < 0)
                return r;

        /* The cgroup and each one above it; the root has none (v2) or no limit (v1). */
        for (;;) {
                if (snprintf(path, sizeof(path), "%s/sys/fs/cgroup%s%s/%s", root, v1 ? "/memory" : "",
                             cgroup, v1 ? "memory.limit_in_bytes" : "memory.max") < (int) sizeof(path) &&
                    ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) >= 0 &&
                    ra_memlimit_parse_limit(buf, &limit) >= 0 && limit / 1024 < kb)
                        kb = limit / 1024;
                slash = strrchr(cgroup, '/');
                if (!slash || cgroup[1] == '\0')
                        break;
                if (slash == cgroup)
                        slash[1] = '\0';
                else
                        *slash = '\0';
        }
        *ret_kb = kb;
        return 0;
}
