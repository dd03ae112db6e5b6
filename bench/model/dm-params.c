/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dm-params.h"
#include "ra-macro.h"

typedef struct Parser {
        DmParams *p;
        const char *filename;
        char *err;
        size_t errlen;
        FILE *f;
        int line; /* of the line inih has just read */
        bool failed;
        unsigned sections; /* bit per section kind seen */
} Parser;

_printf_(3, 4) static int fail(Parser *ps, int line, const char *fmt, ...) {
        char what[256];
        va_list ap;

        if (ps->failed)
                return 0;
        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        if (line > 0)
                (void) snprintf(ps->err, ps->errlen, "%s:%d: %s", ps->filename, line, what);
        else
                (void) snprintf(ps->err, ps->errlen, "%s: %s", ps->filename, what);
        ps->failed = true;
        return 0; /* inih: stop at the first error */
}

static int parse_double(const char *s, double min, double max, double *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

typedef enum Section { SEC_DEVICE = 1, SEC_DISK = 2, SEC_FLASH = 4, SEC_SOURCE = 8 } Section;

typedef struct Key {
        const char *name;
        Section section;
        double min, max;
        size_t offset; /* of a double, or of an unsigned when is_uint */
        bool is_uint;
        const char *unit;
} Key;

#define D(sec, n, lo, hi, field, u)                                                                         \
        { n, sec, lo, hi, offsetof(DmParams, field), false, u }
#define U(sec, n, lo, hi, field, u)                                                                         \
        { n, sec, lo, hi, offsetof(DmParams, field), true, u }
static const Key keys[] = {
        D(SEC_DEVICE, "command_us", 0, 1e6, command_us, "microseconds"),
        D(SEC_DEVICE, "bus_mb_s", 0.001, 1e6, bus_mb_s, "MB/s"),
        U(SEC_DEVICE, "max_sectors_kb", 4, 1024, max_sectors_kb, "KiB, at most 1024 (one FUSE request)"),
        U(SEC_DEVICE, "queue", 1, 64, queue, "commands at once"),
        D(SEC_FLASH, "read_mb_s", 0.001, 1e6, read_mb_s, "MB/s"),
        D(SEC_FLASH, "write_mb_s", 0.001, 1e6, write_mb_s, "MB/s"),
        D(SEC_DISK, "rpm", 1000, 20000, rpm, "revolutions per minute"),
        D(SEC_DISK, "track_seek_ms", 0, 100, track_seek_ms, "ms"),
        D(SEC_DISK, "average_seek_ms", 0, 100, average_seek_ms, "ms"),
        D(SEC_DISK, "full_seek_ms", 0, 100, full_seek_ms, "ms"),
        D(SEC_DISK, "outer_mb_s", 0.001, 1e5, outer_mb_s, "MB/s"),
        D(SEC_DISK, "inner_mb_s", 0.001, 1e5, inner_mb_s, "MB/s"),
        U(SEC_DISK, "cache_segments", 0, 64, cache_segments, "segments"),
        U(SEC_DISK, "cache_segment_kb", 4, 65536, cache_segment_kb, "KiB"),
};
#undef D
#undef U

static Section section_of(const char *name) {
        if (strcmp(name, "device") == 0)
                return SEC_DEVICE;
        if (strcmp(name, "disk") == 0)
                return SEC_DISK;
        if (strcmp(name, "flash") == 0)
                return SEC_FLASH;
        if (strcmp(name, "source") == 0)
                return SEC_SOURCE;
        return 0;
}

static int handle(void *user, const char *section, const char *name, const char *value) {
        Parser *ps = user;
        DmParams *p = ps->p;
        Section sec = section_of(section);
        int line = ps->line;
        uint64_t u;

        if (ps->failed)
                return 0;
        if (sec == 0)
                return fail(ps, line, "unknown section [%s]", section);

        if (sec == SEC_SOURCE) {
                char *last = p->n_sources > 0 ? p->sources[p->n_sources - 1] : NULL;
                size_t n = strlen(name);

                /* An indented line continues the previous key's text. */
                if (last && strncmp(last, name, n) == 0 && last[n] == ':') {
                        size_t used = strlen(last);

                        if (used + 1 + strlen(value) >= sizeof(p->sources[0]))
                                return fail(ps, line, "source '%s' is longer than %zu characters", name,
                                            sizeof(p->sources[0]) - 1);
                        (void) snprintf(last + used, sizeof(p->sources[0]) - used, " %s", value);
                        return 1;
                }
                if (p->n_sources >= DM_SOURCES_MAX)
                        return fail(ps, line, "more than %d sources", DM_SOURCES_MAX);
                (void) snprintf(p->sources[p->n_sources++], sizeof(p->sources[0]), "%s: %s", name, value);
                return 1;
        }
        if (sec == SEC_DEVICE && strcmp(name, "emulates") == 0) {
                if (strlen(value) >= sizeof(p->emulates))
                        return fail(ps, line, "emulates is longer than %zu characters",
                                    sizeof(p->emulates) - 1);
                strcpy(p->emulates, value);
                return 1;
        }
        if (sec == SEC_DEVICE && strcmp(name, "size") == 0) {
                if (parse_uint(value, 512, UINT64_C(1) << 50, &u) < 0 || u % 512 != 0)
                        return fail(ps, line, "size must be a number of bytes, a multiple of 512 (got '%s')",
                                    value);
                p->size = u;
                return 1;
        }
        if (sec == SEC_DEVICE && strcmp(name, "rotational") == 0) {
                if (!IN_SET(value[0], '0', '1') || value[1] != '\0')
                        return fail(ps, line, "rotational must be 0 or 1 (got '%s')", value);
                p->rotational = value[0] == '1';
                return 1;
        }

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                const Key *k = &keys[i];
                double d;

                if (k->section != sec || strcmp(k->name, name) != 0)
                        continue;
                if (k->is_uint) {
                        if (parse_uint(value, (uint64_t) k->min, (uint64_t) k->max, &u) < 0)
                                return fail(ps, line,
                                            "%s must be a whole number from %.0f to %.0f %s (got '%s')",
                                            name, k->min, k->max, k->unit, value);
                        *(unsigned *) ((char *) p + k->offset) = (unsigned) u;
                } else {
                        if (parse_double(value, k->min, k->max, &d) < 0)
                                return fail(ps, line, "%s must be a number from %g to %g %s (got '%s')",
                                            name, k->min, k->max, k->unit, value);
                        *(double *) ((char *) p + k->offset) = d;
                }
                return 1;
        }
        return fail(ps, line, "unknown key '%s' in [%s]", name, section);
}

double dm_params_seek_exponent(double track, double average, double full) {
        /* Seek lengths weighted as a datasheet weighs them ((max + 1 - n) for
         * length n) have the density 2(1 - x) on x = n / max, and the mean of
         * x^e under it is 2 / ((e + 1)(e + 2)). */
        double k = (average - track) / (full - track);

        return (-3.0 + sqrt(1.0 + 8.0 / k)) / 2.0;
}

static int check(Parser *ps) {
        DmParams *p = ps->p;

        if (!(ps->sections & SEC_DEVICE))
                return fail(ps, 0, "no [device] section");
        if (p->size == 0)
                return fail(ps, 0, "[device] size is missing");
        if (p->bus_mb_s == 0)
                return fail(ps, 0, "[device] bus_mb_s is missing");
        if ((ps->sections & SEC_DISK) && (ps->sections & SEC_FLASH))
                return fail(ps, 0, "a class is a [disk] or [flash], not both");
        if (ps->sections & SEC_FLASH) {
                p->kind = DM_KIND_FLASH;
                if (p->read_mb_s == 0)
                        return fail(ps, 0, "[flash] read_mb_s is missing");
                if (p->write_mb_s == 0)
                        p->write_mb_s = p->read_mb_s;
        } else if (ps->sections & SEC_DISK) {
                p->kind = DM_KIND_DISK;
                if (p->rpm == 0 || p->average_seek_ms == 0 || p->full_seek_ms == 0 || p->outer_mb_s == 0 ||
                    p->inner_mb_s == 0)
                        return fail(
                                ps, 0,
                                "[disk] needs rpm, average_seek_ms, full_seek_ms, outer_mb_s, inner_mb_s");
                if (!(p->track_seek_ms < p->average_seek_ms && p->average_seek_ms < p->full_seek_ms))
                        return fail(
                                ps, 0,
                                "[disk] seeks must grow: track_seek_ms < average_seek_ms < full_seek_ms");
                if (p->inner_mb_s > p->outer_mb_s)
                        return fail(
                                ps, 0,
                                "[disk] inner_mb_s is larger than outer_mb_s: the outer zone is the faster");
                if (p->queue != 1)
                        return fail(ps, 0, "[disk] serves one command at a time: queue must be 1");
                p->seek_exponent =
                        dm_params_seek_exponent(p->track_seek_ms, p->average_seek_ms, p->full_seek_ms);
        } else
                return fail(ps, 0, "no [disk] or [flash] section: what kind of device is it?");
        return 1;
}

/* inih's reader: counts lines, and sees section headers, which inih does
 * not report when no key follows them. */
static char *read_line(char *buf, int size, void *user) {
        Parser *ps = user;
        const char *s;
        size_t len;
        Section sec;

        if (!fgets(buf, size, ps->f))
                return NULL;
        ps->line++;
        s = buf + strspn(buf, " \t");
        if (*s == '[') {
                len = strcspn(s + 1, "]");
                if (s[1 + len] == ']') {
                        char name[32] = "";

                        if (len < sizeof(name))
                                memcpy(name, s + 1, len);
                        sec = section_of(name);
                        if (sec == 0)
                                fail(ps, ps->line, "unknown section [%.*s]", (int) len, s + 1);
                        ps->sections |= sec;
                }
        }
        return buf;
}

int dm_params_parse(FILE *f, const char *filename, DmParams *ret, char *err, size_t errlen) {
        Parser ps = { .p = ret, .filename = filename, .err = err, .errlen = errlen, .f = f };
        const char *base = strrchr(filename, '/');
        size_t len;
        int r;

        *ret = (DmParams){ .queue = 1, .max_sectors_kb = 1024, .cache_segment_kb = 1024 };
        base = base ? base + 1 : filename;
        len = strcspn(base, ".");
        if (len == 0 || len >= sizeof(ret->name)) {
                (void) snprintf(err, errlen, "%s: cannot name a class after this file", filename);
                return -EINVAL;
        }
        memcpy(ret->name, base, len);
        ret->name[len] = '\0';

        r = ini_parse_stream(read_line, &ps, handle, &ps);
        if (r != 0 && !ps.failed)
                fail(&ps, r > 0 ? r : 0, r > 0 ? "not a key = value line" : "cannot be read");
        if (!ps.failed)
                check(&ps);
        return ps.failed ? -EINVAL : 0;
}

int dm_params_load(const char *path, DmParams *ret, char *err, size_t errlen) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");

        if (!f) {
                int r = negative_errno();
                (void) snprintf(err, errlen, "%s: %s", path, strerror(-r));
                return r;
        }
        return dm_params_parse(f, path, ret, err, errlen);
}

static void print_string(const char *s, FILE *f) {
        fputc('"', f);
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        fprintf(f, "\\%c", *s);
                else if ((unsigned char) *s < 0x20)
                        fprintf(f, "\\u%04x", *s);
                else
                        fputc(*s, f);
        }
        fputc('"', f);
}

void dm_params_print_json(const DmParams *p, FILE *f) {
        fprintf(f, "{\"name\": ");
        print_string(p->name, f);
        fprintf(f, ", \"emulates\": ");
        print_string(p->emulates, f);
        fprintf(f,
                ", \"kind\": \"%s\", \"size\": %" PRIu64 ", \"rotational\": %s, \"max_sectors_kb\": %u"
                ", \"queue\": %u, \"command_us\": %g, \"bus_mb_s\": %g",
                p->kind == DM_KIND_DISK ? "disk" : "flash", p->size, p->rotational ? "true" : "false",
                p->max_sectors_kb, p->queue, p->command_us, p->bus_mb_s);
        if (p->kind == DM_KIND_FLASH)
                fprintf(f, ", \"read_mb_s\": %g, \"write_mb_s\": %g", p->read_mb_s, p->write_mb_s);
        else
                fprintf(f,
                        ", \"rpm\": %g, \"track_seek_ms\": %g, \"average_seek_ms\": %g, \"full_seek_ms\": %g"
                        ", \"seek_exponent\": %.4f, \"outer_mb_s\": %g, \"inner_mb_s\": %g"
                        ", \"cache_segments\": %u, \"cache_segment_kb\": %u",
                        p->rpm, p->track_seek_ms, p->average_seek_ms, p->full_seek_ms, p->seek_exponent,
                        p->outer_mb_s, p->inner_mb_s, p->cache_segments, p->cache_segment_kb);
        fprintf(f, ", \"sources\": [");
        for (unsigned i = 0; i < p->n_sources; i++) {
                if (i > 0)
                        fprintf(f, ", ");
                print_string(p->sources[i], f);
        }
        fprintf(f, "]}\n");
}
