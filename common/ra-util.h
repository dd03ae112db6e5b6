/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ra-macro.h"

/* yes/true/on/1 and no/false/off/0, exactly. */
int ra_parse_boolean(const char *s, bool *ret);

/* Strict decimal parsing: digits only, no sign, no blanks, no overflow. */
int ra_parse_u64(const char *s, uint64_t *ret);
int ra_parse_u32(const char *s, uint32_t *ret);

/*
 * Reads a small file (a sysfs attribute) relative to dirfd into buf, strips one
 * trailing newline, and NUL-terminates it. Returns the length, or -EFBIG when
 * the contents do not fit.
 */
int ra_read_file_at(int dirfd, const char *path, char *buf, size_t size);

/*
 * Writes s in one write(2) call, as sysfs expects, over what the file held
 * (O_TRUNC, as a shell's ">": sysfs, procfs and tracefs ignore it; a
 * regular file, such as a knob of the unit tests' fake sysfs, would keep
 * the tail of a longer value).
 */
int ra_write_file_at(int dirfd, const char *path, const char *s);

/* CLOCK_MONOTONIC, for deadlines and the time things take. */
uint64_t ra_now_nsec(void);
uint64_t ra_now_usec(void);
/* CLOCK_REALTIME, for what is shown with a date. */
uint64_t ra_realtime_usec(void);

/* NULL-terminated string vectors. */
char **ra_strv_free(char **l);
RA_DEFINE_CLEANUP(char *, ra_strv_free)
size_t ra_strv_length(char *const *l);
/* Splits on blanks; returns NULL on allocation failure. */
char **ra_strv_split(const char *s);
int ra_strv_push(char ***l, const char *s);
bool ra_strv_contains(char *const *l, const char *s);

/* True when name matches one of the shell globs in l. */
bool ra_glob_match_any(char *const *l, const char *name);

/* "505 KiB", "2.0 GiB": for messages, never for parsing. */
#define RA_SIZE_MAX 32
const char *ra_format_size(uint64_t bytes, char buf[static RA_SIZE_MAX]);

/* A kernel block device name is a single path component we can trust. */
bool ra_device_name_is_valid(const char *name);

/*
 * D-Bus and the journal take only valid UTF-8, but names come from the
 * kernel, udev and mount tables as any bytes (a loop device's backing file,
 * a FUSE mount point). ra_utf8_is_valid() says whether s is valid as sd-bus
 * checks it (no overlong forms, surrogates or noncharacters).
 * ra_utf8_escape_invalid() returns a copy of s in which each byte that is not
 * part of a valid character is written "\xNN", as systemd escapes names:
 * valid text, backslashes included, is copied unchanged. NULL on ENOMEM.
 */
bool ra_utf8_is_valid(const char *s);
char *ra_utf8_escape_invalid(const char *s);

/*
 * For a line people read (the log, racontrol's tables): a name with a
 * newline would forge a line of its own, "<0>" and all, and an escape
 * sequence would reach the terminal. ra_text_escape() writes C0 controls and
 * DEL as "\xNN" too, besides what is not UTF-8; ra_text_is_plain() says
 * whether it would change anything. NULL on ENOMEM.
 */
bool ra_text_is_plain(const char *s);
char *ra_text_escape(const char *s);

/* The errors a device that went away shows, depending on the moment. */
static inline bool ra_errno_is_gone(int r) {
        return r == -ENOENT || r == -ENXIO || r == -ENODEV;
}

static inline bool ra_streq(const char *a, const char *b) {
        return a && b && __builtin_strcmp(a, b) == 0;
}
