/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "ra-macro.h"

/*
 * Messages go to stderr: plain in a terminal, with "<N>" level prefixes when
 * stderr is the journal (systemd reads those as priorities). Messages about
 * one disk's value go to the journal directly there, with fields to filter
 * on (ra_log_disk).
 */
void ra_log_open(bool force_plain);
void ra_log_set_max_level(int level);
int ra_log_get_max_level(void);

/* Logs and returns -abs(error), so "return log_error_errno(r, ...)" works. */
int ra_log_internal(int level, int error, const char *format, ...) _printf_(3, 4);

#define log_full_errno(level, error, ...)                                                                   \
        ({                                                                                                  \
                int _level = (level), _e = (error);                                                         \
                _level <= ra_log_get_max_level() ? ra_log_internal(_level, _e, __VA_ARGS__)                 \
                                                 : -(_e < 0 ? -_e : _e);                                    \
        })

#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, e, __VA_ARGS__)
#define log_oom() log_error_errno(ENOMEM, "Out of memory.")

/*
 * The kinds of messages about a disk's value. Each has a fixed MESSAGE_ID in
 * the journal, and an entry for it in radaemon.catalog.
 */
typedef enum RaLogKind {
        RA_LOG_DECISION,    /* radaemon wrote a value it decided */
        RA_LOG_PIN,         /* somebody pinned a disk or cleared its pin over D-Bus */
        RA_LOG_RESTORE,     /* a disk was put back to its value before radaemon */
        RA_LOG_EXTERNAL,    /* somebody else changed read_ahead_kb */
        RA_LOG_CALIBRATION, /* a disk was measured once: its command cost, bandwidth and jump */
        _RA_LOG_KIND_MAX,
} RaLogKind;

/* The MESSAGE_ID of a kind, as 32 hex digits (sd_id128 format). */
const char *ra_log_kind_message_id(RaLogKind kind);

/*
 * Logs a message about one disk. When stderr is the journal it goes through
 * sd_journal_send() with MESSAGE_ID and the fields RADAEMON_DEVICE=,
 * RADAEMON_KB= (the value now) and RADAEMON_SOURCE= (why: a source such as
 * "prior" or "pinned"), so that "journalctl RADAEMON_DEVICE=sdb" finds it;
 * elsewhere it is a plain line like any other.
 */
int ra_log_disk_internal(int level, RaLogKind kind, const char *device, uint32_t kb, const char *source,
                         const char *format, ...) _printf_(6, 7);

#define log_disk(level, kind, device, kb, source, ...)                                                      \
        ({                                                                                                  \
                int _l = (level);                                                                           \
                _l <= ra_log_get_max_level()                                                                \
                        ? ra_log_disk_internal(_l, kind, device, kb, source, __VA_ARGS__)                   \
                        : 0;                                                                                \
        })
