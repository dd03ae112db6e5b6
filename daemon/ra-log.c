/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "ra-log.h"
#include "ra-util.h"

static int max_level = LOG_INFO;
/* stderr is the journal: systemd started radaemon. */
static bool prefix_levels;
/* And journald's native socket is there for sd_journal_send(). */
static bool journal_native;

/* Fixed for good: journalctl MESSAGE_ID=... and radaemon.catalog depend on them. */
static const char *const message_ids[_RA_LOG_KIND_MAX] = {
        [RA_LOG_DECISION] = "d1830d4dbd63498dbf42a1d29f13f6ec",
        [RA_LOG_PIN] = "3b6de856f8784cc7a14423ad779da934",
        [RA_LOG_RESTORE] = "0d72be0517fd4b4e89c91d89a8cad4e3",
        [RA_LOG_EXTERNAL] = "b63aea1a5f6d465d95999d80e50aaff2",
        [RA_LOG_CALIBRATION] = "b9f76a2a25064ef38e3f9c594e7012a9",
};

/*
 * The journal's fields and messages are UTF-8: names from the kernel, udev
 * and mount tables are any bytes, so what is not UTF-8 is escaped as "\xNN",
 * as on D-Bus. Control bytes too: a mount point that any user may choose
 * holding "\n<0>" would otherwise be a line of its own, at the emergency
 * level, and an escape sequence would reach the terminal of whoever reads the
 * log (ra_text_escape()). *buf keeps the escaped copy.
 */
static const char *as_text(const char *s, char **buf) {
        if (!s || ra_text_is_plain(s))
                return s;
        *buf = ra_text_escape(s);
        return *buf ?: "(a message with bytes to escape, and no memory to escape them)";
}

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
        /*
         * sd_journal_send() drops a message silently when journald's socket
         * is missing; a stream without it (JOURNAL_STREAM inherited, a test)
         * keeps every line on stderr instead.
         */
        journal_native = prefix_levels && access("/run/systemd/journal/socket", W_OK) == 0;
}

void ra_log_set_max_level(int level) {
        max_level = level;
}

int ra_log_get_max_level(void) {
        return max_level;
}

int ra_log_internal(int level, int error, const char *format, ...) {
        _cleanup_free_ char *escaped = NULL;
        const char *text;
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
        text = as_text(msg, &escaped);

        if (prefix_levels)
                (void) fprintf(stderr, "<%d>%s\n", level, text);
        else
                (void) fprintf(stderr, "%s\n", text);

        errno = saved;
        return -error;
}

const char *ra_log_kind_message_id(RaLogKind kind) {
        return kind >= 0 && kind < _RA_LOG_KIND_MAX ? message_ids[kind] : NULL;
}

int ra_log_disk_internal(int level, RaLogKind kind, const char *device, uint32_t kb, const char *source,
                         const char *format, ...) {
        _cleanup_free_ char *escaped_msg = NULL, *escaped_device = NULL, *escaped_source = NULL;
        char msg[2048];
        va_list ap;
        int saved = errno, r = -1;

        va_start(ap, format);
        (void) vsnprintf(msg, sizeof(msg), format, ap);
        va_end(ap);

        if (journal_native && ra_log_kind_message_id(kind))
                r = sd_journal_send("MESSAGE=%s", as_text(msg, &escaped_msg), "PRIORITY=%i", level,
                                    "MESSAGE_ID=%s", ra_log_kind_message_id(kind), "RADAEMON_DEVICE=%s",
                                    as_text(device, &escaped_device), "RADAEMON_KB=%" PRIu32, kb,
                                    "RADAEMON_SOURCE=%s", as_text(source ?: "", &escaped_source),
                                    "SYSLOG_IDENTIFIER=%s", program_invocation_short_name, NULL);
        /* Not lost when the journal's socket cannot take it: the stream still can. */
        if (r < 0)
                (void) ra_log_internal(level, 0, "%s", msg);

        errno = saved;
        return 0;
}
