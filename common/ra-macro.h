/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define IN_SET(x, a, b) ((x) == (a) || (x) == (b))

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(ra_freep)
#define _cleanup_close_ _cleanup_(ra_closep)
#define _cleanup_fclose_ _cleanup_(ra_fclosep)
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

static inline void ra_freep(void *p) {
        free(*(void **) p);
}

/* Frees and returns NULL: "p = mfree(p);". */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

/* Closes and returns -1, so "fd = ra_close(fd);" leaves no dangling fd. */
static inline int ra_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -1;
}

static inline void ra_closep(int *fd) {
        (void) ra_close(*fd);
}

static inline void ra_fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}

/* Defines name##p(type **p) for a destructor that accepts and returns NULL. */
#define RA_DEFINE_CLEANUP(type, func)                                                                       \
        static inline void func##p(type **p) {                                                              \
                if (*p)                                                                                     \
                        *p = func(*p);                                                                      \
        }

/* Hands ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                                                                         \
        ({                                                                                                  \
                __typeof__(p) _taken = (p);                                                                 \
                (p) = NULL;                                                                                 \
                _taken;                                                                                     \
        })

#define TAKE_FD(fd)                                                                                         \
        ({                                                                                                  \
                int _taken = (fd);                                                                          \
                (fd) = -1;                                                                                  \
                _taken;                                                                                     \
        })

static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
