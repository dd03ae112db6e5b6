/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ra-child.h"
#include "ra-context.h"
#include "ra-probe-run.h"
#include "ra-probe.h"
#include "ra-util.h"

/* The child (ra-child.h): its errno (0: none), whether a file system was found, its type and the optimal
 * I/O size, NUL after each, to fd 3. */
static _Noreturn void probe_child(RaDeviceAttrs *a, const char *devnode) {
        FILE *f;
        int r;

        r = ra_probe_device(a, devnode);
        f = fdopen(3, "w");
        if (!f || fprintf(f, "%d%c%d%c%s%c%" PRIu32 "%c", r < 0 ? -r : 0, 0, r > 0, 0, a->fs_type ?: "", 0,
                          a->optimal_io_bytes, 0) < 0)
                _exit(EXIT_FAILURE);
        _exit(fclose(f) == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
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
        _cleanup_close_ int reader = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        pid_t pid;
        int r;

        if (ra_child_stuck(&m->probe_stuck))
                return -EBUSY;
        pid = ra_child_start(&reader);
        if (pid < 0)
                return pid;
        if (pid == 0)
                probe_child(a, devnode);
        r = ra_child_read(reader, RA_PROBE_DEADLINE_MSEC, &buf, &len);
        ra_child_end(pid, r, &m->probe_stuck);
        if (r < 0)
                return r;
        return take_answer(a, buf, len);
}
