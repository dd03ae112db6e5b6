/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ra-log.h"

static int max_level = LOG_INFO;
static bool prefix_levels;

/* JOURNAL_STREAM is "dev:ino" of the stream systemd connected to stderr. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void ra_log_open(bool force_plain) {
        prefix_levels = !force_plain && stderr_is_journal();
}

void ra_log_set_max_level(int level) {
        max_level = level;
}

int ra_log_get_max_level(void) {
        return max_level;
}

int ra_log_internal(int level, int error, const char *format, ...) {
        char msg[2048];
        va_list ap;
        int saved = errno;

        if (error < 0)
                error = -error;

        /* Lets format use %m for the error being logged. */
        errno = error;
        va_start(ap, format);
        (void) vsnprintf(msg, sizeof(msg), format, ap);
        va_end(ap);

        if (prefix_levels)
                (void) fprintf(stderr, "<%d>%s\n", level, msg);
        else
                (void) fprintf(stderr, "%s\n", msg);

        errno = saved;
        return -error;
}
