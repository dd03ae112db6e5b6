/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "ra-macro.h"

/*
 * Messages go to stderr: plain in a terminal, with "<N>" level prefixes when
 * stderr is the journal (systemd reads those as priorities).
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
