/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ra-calib.h"
#include "ra-macro.h"
#include "ra-util.h"

#define KERNEL_DEFAULT_KB 128u
#define FLASH_MAX_KB 4096u
#define SEQ_MAX_KB 1024u
/* Below this a device is slow enough that every KiB read for nothing is felt (a 15 kB/s stick). */
#define SLOW_KB_S 1024u
#define SEEK_MIN_US 1000u

size_t ra_calib_sizes(uint32_t max_kb, uint32_t sizes[static RA_CALIB_POINTS_MAX]) {
        size_t n = 0;

        if (max_kb == 0 || max_kb > SEQ_MAX_KB)
                max_kb = SEQ_MAX_KB;
        for (uint32_t kb = 4; kb <= max_kb && n < RA_CALIB_POINTS_MAX; kb *= 4)
                sizes[n++] = kb;
        /* A command limit between the steps is measured too: it is the largest read a window makes. */
        if (n > 0 && sizes[n - 1] != max_kb && n < RA_CALIB_POINTS_MAX && max_kb % 4 == 0)
                sizes[n++] = max_kb;
        return n;
}

static size_t gcd(size_t a, size_t b) {
        while (b) {
                size_t t = a % b;

                a = b;
                b = t;
        }
        return a;
}

size_t ra_calib_places(uint64_t size_bytes, size_t n, uint64_t span, uint64_t align, uint64_t shift,
                       uint64_t *ret) {
        uint64_t width, room;
        size_t stride;

        if (align == 0 || span == 0 || size_bytes / span == 0)
                return 0;
        if (n > size_bytes / span)
                n = (size_t) (size_bytes / span);
        if (n == 0)
                return 0;
        width = size_bytes / n;
        /* Into the slot, as far as leaves the read room in it after aligning. */
        room = width - span > align ? width - span - align : 0;
        shift = room > 0 ? shift % room : 0;
        /* About three eighths of the device on from each read to the next, never a neighbour. */
        stride = n * 3 / 8 + 1;
        while (n > 1 && gcd(stride, n) != 1)
                stride++;
        for (size_t i = 0; i < n; i++) {
                uint64_t slot = (uint64_t) ((i * stride + n / 2) % n) * width, at = slot + shift;

                /* Up to the next boundary when the slot still holds the read from there, else down. */
                if (at % align != 0 && at - at % align + align + span <= slot + width)
                        at += align - at % align;
                else
                        at -= at % align;
                ret[i] = at;
        }
        return n;
}

bool ra_calib_affordable(const RaCalibSample *s, size_t n, uint32_t kb) {
        uint64_t bytes = 0, nsec = 0;
        double fastest = 0; /* ns per KiB */

        if (n >= RA_CALIB_SAMPLES_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                uint64_t kb_read = (uint64_t) s[i].kb * (s[i].reads ?: 1);
                double per_kb = (double) s[i].nsec / (double) kb_read;

                bytes += kb_read * 1024;
                nsec += s[i].nsec;
                /* The sizes grow: the latest reads are the largest, whose rate a larger one comes nearest.
                 */
                if (!s[i].jump && (fastest == 0 || per_kb < fastest))
                        fastest = per_kb;
        }
        if (bytes + (uint64_t) kb * 1024 > RA_CALIB_BYTES_MAX || nsec >= RA_CALIB_NSEC_MAX)
                return false;
        if (n == 0 || fastest == 0)
                return true;
        return (double) nsec + fastest * kb <= (double) RA_CALIB_NSEC_MAX;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

static uint64_t median_of(uint64_t *t, size_t m) {
        if (m == 0)
                return 0;
        qsort(t, m, sizeof(t[0]), cmp_u64);
        return m % 2 ? t[m / 2] : (t[m / 2 - 1] + t[m / 2]) / 2;
}

/*
 * What one sequential read of kb costs the device; 0 when none was timed.
 * A read timed alone: the fastest, as anything else (another process's CPU,
 * an interrupt) only adds to its time. A stream's reads share its time, and
 * that is off either way: it runs from one wakeup of this process to
 * another, and the disk reads ahead meanwhile, so a late first wakeup is
 * media read for free (hdd-7200, media 105-210 MB/s, "calibrated" a 64 KiB
 * stream at 276 MiB/s under ASan on a loaded CI host). The median of the
 * passes' streams.
 */
static uint64_t read_nsec(const RaCalibSample *s, size_t n, uint32_t kb) {
        uint64_t best = 0, streams[RA_CALIB_SAMPLES_MAX];
        size_t m = 0;

        for (size_t i = 0; i < n; i++) {
                uint64_t t = s[i].nsec / (s[i].reads ?: 1);

                if (s[i].jump || s[i].kb != kb || t == 0)
                        continue;
                if (s[i].reads > 1 && m < ELEMENTSOF(streams))
                        streams[m++] = t;
                else if (best == 0 || t < best)
                        best = t;
        }
        return m > 0 ? median_of(streams, m) : best;
}

/* The median time of the reads that jumped (their distances differ); 0 when none. */
static uint64_t jump_nsec(const RaCalibSample *s, size_t n) {
        uint64_t t[RA_CALIB_SAMPLES_MAX];
        size_t m = 0;

        for (size_t i = 0; i < n && m < ELEMENTSOF(t); i++)
                if (s[i].jump)
                        t[m++] = s[i].nsec;
        return median_of(t, m);
}

static uint32_t to_u32(double v) {
        if (v <= 0)
                return 0;
        if (v >= (double) UINT32_MAX)
                return UINT32_MAX;
        return (uint32_t) (v + 0.5);
}

int ra_calib_fit(const RaCalibSample *s, size_t n, uint64_t when, RaCalib *ret) {
        double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, c, per_kb;
        uint64_t jump;

        *ret = (RaCalib){ .when = when, .source = RA_CALIB_CALIBRATED };

        /* The curve: one point per size, in the order the sizes were first read. */
        for (size_t i = 0; i < n; i++) {
                bool known = false;
                uint64_t t;

                if (s[i].jump || s[i].kb == 0)
                        continue;
                for (size_t j = 0; j < ret->n_points; j++)
                        known = known || ret->points[j].kb == s[i].kb;
                if (known || ret->n_points == RA_CALIB_POINTS_MAX)
                        continue;
                t = read_nsec(s, n, s[i].kb);
                ret->points[ret->n_points++] = (RaCalibPoint){
                        .kb = s[i].kb,
                        .kb_s = t > 0 ? to_u32((double) s[i].kb * 1e9 / (double) t) : 0,
                };
        }
        if (ret->n_points == 0)
                return -EINVAL;

        if (ret->n_points == 1) {
                ret->bandwidth_kb_s = ret->points[0].kb_s;
        } else {
                /*
                 * y = c + x * per_kb, in ns and KiB, fitted on relative
                 * errors (each point weighs 1 / y^2): the times span a
                 * factor of twenty, and on plain least squares the largest
                 * read alone would set both figures, one slow 1 MiB read
                 * taking a third off the command cost the 4 KiB reads show.
                 */
                for (size_t j = 0; j < ret->n_points; j++) {
                        double x = ret->points[j].kb, y = (double) read_nsec(s, n, ret->points[j].kb);
                        double w = 1.0 / (y * y);

                        sw += w;
                        sx += w * x;
                        sy += w * y;
                        sxx += w * x * x;
                        sxy += w * x * y;
                }
                per_kb = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
                c = (sy - per_kb * sx) / sw;
                if (per_kb <= 0) {
                        /* Bigger reads no slower: the largest's rate, the best there is to say. */
                        per_kb = (double) read_nsec(s, n, ret->points[ret->n_points - 1].kb) /
                                 ret->points[ret->n_points - 1].kb;
                        c = 0;
                }
                ret->bandwidth_kb_s = per_kb > 0 ? to_u32(1e9 / per_kb) : 0;
                ret->command_us = to_u32(c / 1000);
        }

        /* A jump: a small read elsewhere, less what the same read costs in sequence. */
        jump = jump_nsec(s, n);
        if (jump > 0) {
                double same = ret->command_us * 1000.0 +
                              (ret->bandwidth_kb_s ? 4.0 * 1e9 / ret->bandwidth_kb_s : 0);

                ret->jump_us = to_u32(((double) jump - same) / 1000);
        }
        return 0;
}

static uint32_t pow2_at_least(uint64_t kb) {
        uint32_t w = 4;

        while (w < kb && w < FLASH_MAX_KB)
                w *= 2;
        return w;
}

static uint32_t pow2_at_most(uint64_t kb) {
        uint32_t w = 4;

        while ((uint64_t) w * 2 <= kb && w < FLASH_MAX_KB)
                w *= 2;
        return w;
}

bool ra_calib_seeks(const RaCalib *c, bool rotational) {
        return rotational && c->jump_us >= SEEK_MIN_US + 2 * c->command_us;
}

void ra_calib_prior(const RaCalib *c, const RaDeviceAttrs *a, RaBounds bounds, RaDecision *ret) {
        char why[RA_REASON_MAX];
        RaDecision prior;
        uint32_t kb, cap;

        ra_policy_prior(a, bounds, &prior);
        *ret = (RaDecision){ .source = RA_SOURCE_CALIBRATED };
        if (a->size_bytes == 0 || c->bandwidth_kb_s == 0) {
                *ret = prior;
                return;
        }

        if (ra_calib_seeks(c, a->rotational)) {
                /* The KiB it reads in the time of one jump. */
                uint64_t per_jump = (uint64_t) c->jump_us * c->bandwidth_kb_s / 1000000;

                if (per_jump >= prior.kb) {
                        kb = prior.kb;
                        (void) snprintf(why, sizeof(why),
                                        "a jump costs %" PRIu32 ".%" PRIu32 " ms, in which it reads %" PRIu64
                                        " KiB, more than its prior's %" PRIu32
                                        " KiB: streams that take turns seek at every switch, so the prior "
                                        "stands",
                                        c->jump_us / 1000, c->jump_us % 1000 / 100, per_jump, kb);
                } else {
                        kb = pow2_at_least(per_jump);
                        if (kb < KERNEL_DEFAULT_KB)
                                kb = KERNEL_DEFAULT_KB;
                        (void) snprintf(why, sizeof(why),
                                        "a jump costs only %" PRIu32 ".%" PRIu32
                                        " ms, in which it reads %" PRIu64 " KiB: from %" PRIu32
                                        " KiB a window, streams that take turns spend no more time seeking "
                                        "than reading",
                                        c->jump_us / 1000, c->jump_us % 1000 / 100, per_jump, kb);
                }
        } else if (c->bandwidth_kb_s < SLOW_KB_S) {
                /* So slow that a tenth of a second's reading is the most worth risking. */
                kb = pow2_at_most(c->bandwidth_kb_s / 10 > 4 ? c->bandwidth_kb_s / 10 : 4);
                (void) snprintf(
                        why, sizeof(why),
                        "it reads only %" PRIu32 " KiB/s, so %" PRIu32
                        " KiB, about a tenth of a second of it, is the most worth reading for nothing",
                        c->bandwidth_kb_s, kb);
        } else {
                /* Each doubling beyond the stream's 95 % gains less than 5 %. */
                uint64_t need = (uint64_t) ra_calib_stream_kb(c);
                size_t len = 0;

                kb = pow2_at_least(need);
                if (kb < KERNEL_DEFAULT_KB)
                        kb = KERNEL_DEFAULT_KB;
                if (a->rotational && c->jump_us > 0)
                        len = (size_t) snprintf(why, sizeof(why),
                                                "it says it is rotational, but a jump costs only %" PRIu32
                                                " us, so no head moves; ",
                                                c->jump_us);
                (void) snprintf(why + len, sizeof(why) - len,
                                "%" PRIu32 " us a command at %" PRIu32
                                " MiB/s: one stream reads at 95 %% of that from %" PRIu64
                                " KiB a window, so %" PRIu32 " KiB",
                                c->command_us, c->bandwidth_kb_s / 1024, need, kb);
        }

        /* Measured, as learned values are: capped as they are, by a 128th of the size. */
        cap = ra_policy_learned_cap_kb(a->size_bytes);
        if (kb > cap) {
                ret->kb = ra_policy_clamp_kb(cap, bounds);
                ra_reason_format(ret->reason,
                                 "Calibrated: %s; capped at %" PRIu32 " KiB, a 128th of its size.", why,
                                 cap);
        } else {
                ret->kb = ra_policy_clamp_kb(kb, bounds);
                if (ret->kb != kb)
                        ra_reason_format(ret->reason,
                                         "Calibrated: %s, held within %" PRIu32 " to %" PRIu32 " KiB.", why,
                                         bounds.min_kb, bounds.max_kb);
                else
                        ra_reason_format(ret->reason, "Calibrated: %s.", why);
        }
}

/* KiB/s as people read it: "15 KiB/s", "231.4 MiB/s". */
double ra_calib_stream_kb(const RaCalib *c) {
        return 19.0 * c->command_us * c->bandwidth_kb_s / 1000000;
}

double ra_calib_read_usec(const RaCalib *c, uint32_t kb, bool jump) {
        double t = c->command_us;

        if (c->bandwidth_kb_s > 0)
                t += (double) kb * 1e6 / c->bandwidth_kb_s;
        return jump ? t + c->jump_us : t;
}

void ra_calib_assumed(bool rotational, RaCalib *ret) {
        /* See the header for where each figure comes from. MB/s are 10^6 bytes, KiB/s 1024. */
        if (rotational)
                *ret = (RaCalib){ .command_us = 50, .bandwidth_kb_s = 105000000 / 1024, .jump_us = 12700 };
        else
                *ret = (RaCalib){ .command_us = 100, .bandwidth_kb_s = 500000000 / 1024 };
}

static void format_rate(uint32_t kb_s, char *buf, size_t size) {
        if (kb_s < 1024)
                (void) snprintf(buf, size, "%" PRIu32 " KiB/s", kb_s);
        else
                (void) snprintf(buf, size, "%" PRIu32 ".%" PRIu32 " MiB/s", kb_s / 1024,
                                kb_s % 1024 * 10 / 1024);
}

void ra_calib_describe(const RaCalib *c, char *buf, size_t size) {
        char rate[32];
        size_t len;

        if (size == 0)
                return;
        buf[0] = '\0';
        if (c->when == 0)
                return;
        format_rate(c->bandwidth_kb_s, rate, sizeof(rate));
        /* One size only: no command cost could be told from the transfer. */
        if (c->n_points > 1)
                (void) snprintf(buf, size, "%" PRIu32 " us a command, %s;", c->command_us, rate);
        else
                (void) snprintf(buf, size, "%s;", rate);
        for (size_t i = 0; i < c->n_points; i++) {
                format_rate(c->points[i].kb_s, rate, sizeof(rate));
                len = strlen(buf);
                (void) snprintf(buf + len, size - len, "%s %" PRIu32 " KiB %s", i > 0 ? "," : "",
                                c->points[i].kb, rate);
        }
        if (c->jump_us > 0) {
                len = strlen(buf);
                (void) snprintf(buf + len, size - len, "; a jump %" PRIu32 ".%" PRIu32 " ms",
                                c->jump_us / 1000, c->jump_us % 1000 / 100);
        }
}

int ra_calib_format(const RaCalib *c, char *buf, size_t size) {
        size_t len;
        int r;

        r = snprintf(buf, size, "%" PRIu64 ":%" PRIu32 ":%" PRIu32 ":%" PRIu32 ":", c->when, c->command_us,
                     c->bandwidth_kb_s, c->jump_us);
        if (r < 0 || (size_t) r >= size)
                return -ENOBUFS;
        for (size_t i = 0; i < c->n_points; i++) {
                len = strlen(buf);
                r = snprintf(buf + len, size - len, "%s%" PRIu32 "/%" PRIu32, i > 0 ? "," : "",
                             c->points[i].kb, c->points[i].kb_s);
                if (r < 0 || (size_t) r >= size - len)
                        return -ENOBUFS;
        }
        return 0;
}

static int parse_u32_until(const char **p, char end, uint32_t *ret) {
        uint64_t v = 0;
        const char *q = *p;

        if (*q < '0' || *q > '9')
                return -EINVAL;
        for (; *q >= '0' && *q <= '9'; q++) {
                v = v * 10 + (uint64_t) (*q - '0');
                if (v > UINT32_MAX)
                        return -EINVAL;
        }
        if (*q != end)
                return -EINVAL;
        *ret = (uint32_t) v;
        *p = *q ? q + 1 : q;
        return 0;
}

int ra_calib_parse(const char *s, RaCalib *ret) {
        RaCalib c = {};
        uint32_t hi, lo;
        const char *p = s;
        char *end;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        c.when = strtoull(s, &end, 10);
        if (errno != 0 || *end != ':' || c.when == 0)
                return -EINVAL;
        p = end + 1;
        if (parse_u32_until(&p, ':', &c.command_us) < 0 || parse_u32_until(&p, ':', &c.bandwidth_kb_s) < 0 ||
            parse_u32_until(&p, ':', &c.jump_us) < 0)
                return -EINVAL;
        while (*p) {
                if (c.n_points == RA_CALIB_POINTS_MAX || parse_u32_until(&p, '/', &hi) < 0)
                        return -EINVAL;
                if (parse_u32_until(&p, ',', &lo) < 0 && parse_u32_until(&p, '\0', &lo) < 0)
                        return -EINVAL;
                if (hi == 0 || !ra_kb_is_valid(hi))
                        return -EINVAL;
                c.points[c.n_points++] = (RaCalibPoint){ .kb = hi, .kb_s = lo };
                if (p > s && p[-1] == ',' && *p == '\0')
                        return -EINVAL;
        }
        c.source = RA_CALIB_CALIBRATED;
        *ret = c;
        return 0;
}
