/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "ra-util.h"

int ra_parse_u64(const char *s, uint64_t *ret) {
        uint64_t v = 0;

        if (!s || !*s)
                return -EINVAL;

        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
        }

        *ret = v;
        return 0;
}

int ra_parse_boolean(const char *s, bool *ret) {
        static const char *const yes[] = { "yes", "true", "on", "1" };
        static const char *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; s && i < ELEMENTSOF(yes); i++) {
                if (strcmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

int ra_parse_u32(const char *s, uint32_t *ret) {
        uint64_t v;
        int r;

        r = ra_parse_u64(s, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;

        *ret = (uint32_t) v;
        return 0;
}

int ra_read_file_at(int dirfd, const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = -1;
        ssize_t n;

        if (size < 2)
                return -EINVAL;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();

        /* One byte more than fits tells us the contents were cut. */
        n = read(fd, buf, size);
        if (n < 0)
                return negative_errno();
        if ((size_t) n >= size)
                return -EFBIG;

        if (n > 0 && buf[n - 1] == '\n')
                n--;
        buf[n] = '\0';
        if (memchr(buf, '\0', (size_t) n))
                return -EBADMSG;

        return (int) n;
}

int ra_write_file_at(int dirfd, const char *path, const char *s) {
        _cleanup_close_ int fd = -1;
        size_t len = strlen(s);
        ssize_t n;

        fd = openat(dirfd, path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();

        n = write(fd, s, len);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != len)
                return -EIO;

        return 0;
}

char **ra_strv_free(char **l) {
        if (l) {
                for (char **i = l; *i; i++)
                        free(*i);
                free(l);
        }
        return NULL;
}

size_t ra_strv_length(char *const *l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

int ra_strv_push(char ***l, const char *s) {
        size_t n = ra_strv_length(*l);
        char **grown;
        char *copy;

        copy = strdup(s);
        if (!copy)
                return -ENOMEM;

        grown = realloc(*l, (n + 2) * sizeof(char *));
        if (!grown) {
                free(copy);
                return -ENOMEM;
        }

        grown[n] = copy;
        grown[n + 1] = NULL;
        *l = grown;
        return 0;
}

char **ra_strv_split(const char *s) {
        _cleanup_(ra_strv_freep) char **l = NULL;
        const char *blanks = " \t\n";

        l = calloc(1, sizeof(char *));
        if (!l)
                return NULL;

        for (const char *p = s + strspn(s, blanks); *p; p += strspn(p, blanks)) {
                size_t len = strcspn(p, blanks);
                _cleanup_free_ char *word = strndup(p, len);

                if (!word || ra_strv_push(&l, word) < 0)
                        return NULL;
                p += len;
        }

        return TAKE_PTR(l);
}

bool ra_strv_contains(char *const *l, const char *s) {
        for (size_t i = 0; l && l[i]; i++)
                if (strcmp(l[i], s) == 0)
                        return true;
        return false;
}

bool ra_glob_match_any(char *const *l, const char *name) {
        for (size_t i = 0; l && l[i]; i++)
                if (fnmatch(l[i], name, 0) == 0)
                        return true;
        return false;
}

const char *ra_format_size(uint64_t bytes, char buf[static RA_SIZE_MAX]) {
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        size_t u = 0;
        uint64_t scaled = bytes;

        while (scaled >= 1024 && u + 1 < ELEMENTSOF(units)) {
                scaled /= 1024;
                u++;
        }

        /* One decimal for small multiples, where it says something. */
        if (u > 0 && scaled < 10) {
                uint64_t unit = (uint64_t) 1 << (10 * u);
                uint64_t tenths = (bytes % unit) * 10 / unit;

                (void) snprintf(buf, RA_SIZE_MAX, "%" PRIu64 ".%" PRIu64 " %s", scaled, tenths, units[u]);
        } else
                (void) snprintf(buf, RA_SIZE_MAX, "%" PRIu64 " %s", scaled, units[u]);

        return buf;
}

bool ra_device_name_is_valid(const char *name) {
        size_t len;

        if (!name)
                return false;

        len = strlen(name);
        if (len == 0 || len > 255)
                return false;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return false;

        for (const char *p = name; *p; p++)
                if (*p == '/' || (unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
                        return false;

        return true;
}

/* The length of the character s starts with when it is valid UTF-8, else 0. */
static size_t utf8_char_len(const unsigned char *s) {
        uint32_t c;
        size_t len;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2;
        else if ((s[0] & 0xf0) == 0xe0)
                len = 3;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                len = 4;
        else
                return 0;

        c = s[0] & (0x7f >> len);
        /* Stops at the terminating NUL too: it is no continuation byte. */
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                c = c << 6 | (s[i] & 0x3f);
        }

        /* Overlong forms, past U+10FFFF, UTF-16's surrogates, and the noncharacters sd-bus refuses. */
        if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) || c > 0x10ffff ||
            (c >= 0xd800 && c <= 0xdfff) || (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe)
                return 0;
        return len;
}

/* C0 and DEL: a newline, a carriage return or an escape sequence moves a reader's line or cursor. */
static bool is_control(unsigned char c) {
        return c < 0x20 || c == 0x7f;
}

bool ra_utf8_is_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        while (*p) {
                size_t len = utf8_char_len(p);

                if (len == 0)
                        return false;
                p += len;
        }
        return true;
}

/* Each byte becomes at most the four of "\xNN"; controls too when they would move a line. */
static char *escape(const char *s, bool controls) {
        const unsigned char *p = (const unsigned char *) s;
        char *escaped, *q;

        escaped = malloc(strlen(s) * 4 + 1);
        if (!escaped)
                return NULL;

        for (q = escaped; *p;) {
                size_t len = utf8_char_len(p);

                if (len > 0 && !(controls && is_control(*p))) {
                        q = mempcpy(q, p, len);
                        p += len;
                } else
                        q += sprintf(q, "\\x%02x", *p++);
        }
        *q = '\0';
        return escaped;
}

char *ra_utf8_escape_invalid(const char *s) {
        return escape(s, false);
}

bool ra_text_is_plain(const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (is_control(*p))
                        return false;
        return ra_utf8_is_valid(s);
}

char *ra_text_escape(const char *s) {
        return escape(s, true);
}

uint64_t ra_now_nsec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

uint64_t ra_now_usec(void) {
        return ra_now_nsec() / 1000;
}

uint64_t ra_realtime_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}
