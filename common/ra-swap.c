/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ra-swap.h"
#include "ra-util.h"

/* Far more than the kernel's MAX_SWAPFILES (32 and a few): anything longer is not /proc/swaps. */
#define AREAS_MAX 64
#define LINE_MAX_BYTES 8192

/*
 * Hit ratios that move page-cluster, with a dead band between them. Swap-in
 * happens under memory pressure, where every page read ahead and not used
 * takes the place of a page that was: once fewer than half are used, the
 * refaults they cause cost more than the hits save, on any device (measured
 * on ssd-ctrl with 43 % used: 0.76 s at 3 against 0.45 s at 1).
 */
#define GROW_HIT_RATIO 0.75
#define SHRINK_HIT_RATIO 0.5
/* Readahead below this share of swap-in says nothing about its hits. */
#define RA_SHARE_MIN 0.05
/* A larger value that swaps in this much less per busy second did not pay. */
#define SCORE_WORSE 0.85

static const char *const class_names[_RA_SWAP_CLASS_MAX] = {
        [RA_SWAP_CLASS_UNKNOWN] = "unknown",
        [RA_SWAP_CLASS_ZRAM] = "zram",
        [RA_SWAP_CLASS_NONROT] = "non-rotational",
        [RA_SWAP_CLASS_ROT] = "rotational",
};

const char *ra_swap_class_to_string(RaSwapClass c) {
        return c >= 0 && c < _RA_SWAP_CLASS_MAX ? class_names[c] : NULL;
}

void ra_swap_areas_free(RaSwapArea *a, size_t n) {
        for (size_t i = 0; a && i < n; i++) {
                free(a[i].filename);
                free(a[i].device);
        }
        free(a);
}

/* Undoes the kernel's mangle_path(): "\ooo" for blanks, newlines and "\". */
static int unescape_path(const char *s, char **ret) {
        _cleanup_free_ char *out = NULL;
        size_t n = 0;

        out = malloc(strlen(s) + 1);
        if (!out)
                return -ENOMEM;

        for (const char *p = s; *p; p++) {
                unsigned v = 0;

                if (*p != '\\') {
                        out[n++] = *p;
                        continue;
                }
                for (int i = 1; i <= 3; i++) {
                        if (p[i] < '0' || p[i] > '7')
                                return -EINVAL;
                        v = v * 8 + (unsigned) (p[i] - '0');
                }
                if (v == 0 || v > 0xff)
                        return -EINVAL;
                out[n++] = (char) v;
                p += 3;
        }

        if (n == 0 || out[0] != '/')
                return -EINVAL;
        out[n] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

static int parse_int(const char *s, int *ret) {
        uint32_t v;
        bool negative = s[0] == '-';

        if (ra_parse_u32(s + negative, &v) < 0 || v > (uint32_t) INT32_MAX)
                return -EINVAL;
        *ret = negative ? -(int) v : (int) v;
        return 0;
}

static int parse_area(char *line, RaSwapArea *ret) {
        const char *blanks = " \t";
        char *word[6], *save = NULL;
        size_t n = 0;

        for (char *w = strtok_r(line, blanks, &save); w; w = strtok_r(NULL, blanks, &save)) {
                if (n == ELEMENTSOF(word))
                        return -EINVAL;
                word[n++] = w;
        }
        if (n != 5)
                return -EINVAL;

        *ret = (RaSwapArea){};
        if (strcmp(word[1], "file") == 0)
                ret->is_file = true;
        else if (strcmp(word[1], "partition") != 0)
                return -EINVAL;
        if (ra_parse_u64(word[2], &ret->size_kb) < 0 || ra_parse_u64(word[3], &ret->used_kb) < 0 ||
            parse_int(word[4], &ret->priority) < 0)
                return -EINVAL;
        return unescape_path(word[0], &ret->filename);
}

int ra_swap_parse_swaps(const char *text, size_t len, RaSwapArea **ret, size_t *ret_n) {
        RaSwapArea *areas = NULL;
        size_t n = 0;
        bool header = true;
        int r = 0;

        if (memchr(text, '\0', len))
                return -EINVAL;

        for (const char *p = text, *end = text + len; p < end && r >= 0;) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t l = nl ? (size_t) (nl - p) : (size_t) (end - p);
                _cleanup_free_ char *line = NULL;
                RaSwapArea *grown;

                if (l > LINE_MAX_BYTES) {
                        r = -EINVAL;
                        break;
                }
                line = strndup(p, l);
                if (!line) {
                        r = -ENOMEM;
                        break;
                }
                p += l + (nl ? 1 : 0);

                if (header) {
                        /* "Filename Type Size Used Priority": the columns this parser reads. */
                        if (strncmp(line, "Filename", 8) != 0 || !strstr(line, "Priority"))
                                r = -EINVAL;
                        header = false;
                        continue;
                }
                if (n == AREAS_MAX) {
                        r = -EINVAL;
                        break;
                }
                grown = realloc(areas, (n + 1) * sizeof(RaSwapArea));
                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                areas = grown;
                r = parse_area(line, &areas[n]);
                if (r >= 0)
                        n++;
        }

        if (r >= 0 && header)
                r = -EINVAL;
        if (r < 0) {
                ra_swap_areas_free(areas, n);
                return r;
        }
        *ret = areas;
        *ret_n = n;
        return 0;
}

int ra_swap_parse_vmstat(const char *text, size_t len, RaVmSwapStat *ret) {
        static const struct {
                const char *name;
                size_t offset;
        } fields[] = {
                { "pswpin", offsetof(RaVmSwapStat, pswpin) },
                { "pswpout", offsetof(RaVmSwapStat, pswpout) },
                { "swap_ra", offsetof(RaVmSwapStat, swap_ra) },
                { "swap_ra_hit", offsetof(RaVmSwapStat, swap_ra_hit) },
        };
        RaVmSwapStat s = {};
        unsigned seen = 0;

        if (memchr(text, '\0', len))
                return -EINVAL;

        for (const char *p = text, *end = text + len; p < end;) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t l = nl ? (size_t) (nl - p) : (size_t) (end - p);
                const char *sp = memchr(p, ' ', l);
                char value[32];

                for (size_t i = 0; sp && i < ELEMENTSOF(fields); i++) {
                        size_t vlen = l - (size_t) (sp + 1 - p);

                        if ((size_t) (sp - p) != strlen(fields[i].name) ||
                            memcmp(p, fields[i].name, (size_t) (sp - p)) != 0)
                                continue;
                        /* A counter twice, or one that is not a number, is not the file we know. */
                        if (seen & (1u << i) || vlen == 0 || vlen >= sizeof(value))
                                return -EINVAL;
                        memcpy(value, sp + 1, vlen);
                        value[vlen] = '\0';
                        if (ra_parse_u64(value, (uint64_t *) ((char *) &s + fields[i].offset)) < 0)
                                return -EINVAL;
                        seen |= 1u << i;
                }
                p += l + (nl ? 1 : 0);
        }

        if ((seen & 3u) != 3u)
                return -EINVAL;
        s.has_ra = (seen & 12u) == 12u;
        *ret = s;
        return 0;
}

RaSwapClass ra_swap_active_class(const RaSwapArea *a, size_t n, size_t *ret_n_in_use) {
        uint64_t used[_RA_SWAP_CLASS_MAX] = {}, size[_RA_SWAP_CLASS_MAX] = {}, any_used = 0;
        size_t count[_RA_SWAP_CLASS_MAX] = {};
        RaSwapClass best = RA_SWAP_CLASS_UNKNOWN;
        int top = 0;
        bool first = true;

        for (size_t i = 0; i < n; i++)
                any_used += a[i].used_kb;
        for (size_t i = 0; i < n; i++)
                if (first || a[i].priority > top) {
                        top = a[i].priority;
                        first = false;
                }

        for (size_t i = 0; i < n; i++) {
                RaSwapClass c = a[i].class >= 0 && a[i].class < _RA_SWAP_CLASS_MAX ? a[i].class
                                                                                   : RA_SWAP_CLASS_UNKNOWN;

                if (any_used > 0 ? a[i].used_kb == 0 : a[i].priority != top)
                        continue;
                used[c] += a[i].used_kb;
                size[c] += a[i].size_kb;
                count[c]++;
        }

        /*
         * Most used pages, else the most room among the highest priority; on a
         * tie the slower class, whose mistakes cost more.
         */
        for (int c = 0; c < _RA_SWAP_CLASS_MAX; c++) {
                uint64_t w = any_used > 0 ? used[c] : size[c], wb = any_used > 0 ? used[best] : size[best];

                if (count[c] > 0 && (count[best] == 0 || w >= wb))
                        best = (RaSwapClass) c;
        }

        if (ret_n_in_use)
                *ret_n_in_use = count[best];
        return best;
}

int ra_swap_prior(RaSwapClass c, char reason[static RA_REASON_MAX]) {
        switch (c) {
        case RA_SWAP_CLASS_ZRAM:
                ra_reason_format(reason, "Swap is zram, which is RAM: a page read ahead and not used "
                                         "costs a decompression and memory, so one page a fault.");
                return 0;
        case RA_SWAP_CLASS_ROT:
                /*
                 * Measured on a modelled 7200 rpm disk (bench/swap.py): sequential swap-in
                 * is fastest at 5, and random swap-in costs the same at every value,
                 * because the kernel shrinks its window itself when read-ahead pages
                 * go unused.
                 */
                ra_reason_format(reason, "Swap is on a rotational disk, where every command pays a seek: "
                                         "32 pages a fault, one request.");
                return 5;
        case RA_SWAP_CLASS_NONROT:
                ra_reason_format(reason, "Swap is on a non-rotational disk: the kernel's 8 pages a fault "
                                         "until swap-in shows what pays.");
                return RA_SWAP_KERNEL_DEFAULT;
        default:
                ra_reason_format(reason,
                                 "The disk beneath swap is not known: the kernel's 8 pages a fault.");
                return RA_SWAP_KERNEL_DEFAULT;
        }
}

void ra_swap_model_reset(RaSwapModel *m, RaSwapClass c, int learned) {
        *m = (RaSwapModel){ .class = c, .learned = learned, .at = -1 };
        if (learned >= 0)
                ra_reason_format(m->reason, "Learned earlier from swap-in on %s swap: %u pages a fault.",
                                 ra_swap_class_to_string(c), 1u << learned);
}

static void accumulate(RaSwapObservation *w, const RaSwapObservation *o) {
        w->seconds += o->seconds;
        w->pswpin += o->pswpin;
        w->swap_ra += o->swap_ra;
        w->swap_ra_hit += o->swap_ra_hit;
        w->has_ra = o->has_ra;
        w->read_ios += o->read_ios;
        w->read_sectors += o->read_sectors;
        w->io_ticks_ms += o->io_ticks_ms;
}

/* The nearest value from current in direction dir (-1, +1) that has a score; -1 if none. */
static int scored_neighbour(const RaSwapModel *m, int current, int dir) {
        for (int v = current + dir; v >= 0 && v <= RA_SWAP_LEARN_MAX; v += dir)
                if (m->score[v] > 0)
                        return v;
        return -1;
}

/* What one full window says: +1 grow, -1 shrink, 0 keep; why in reason. */
static int judge(RaSwapModel *m, int current, const RaSwapObservation *w,
                 char reason[static RA_REASON_MAX]) {
        double hit, score = 0;
        double req_kb = w->read_ios > 0 ? (double) w->read_sectors / 2.0 / (double) w->read_ios : 0;
        /* Pages read ahead and never used are work, not progress. */
        uint64_t wasted = w->swap_ra > w->swap_ra_hit ? w->swap_ra - w->swap_ra_hit : 0;
        uint64_t useful = w->pswpin > wasted ? w->pswpin - wasted : 0;
        bool reads_ahead = w->has_ra && (double) w->swap_ra >= RA_SHARE_MIN * (double) w->pswpin;
        bool scored = current >= 0 && current <= RA_SWAP_LEARN_MAX;
        int below = scored_neighbour(m, current, -1), above = scored_neighbour(m, current, +1);

        /* Hits on pages read ahead in an earlier window can outnumber this one's. */
        hit = reads_ahead ? (double) w->swap_ra_hit / (double) w->swap_ra : 0;
        if (hit > 1)
                hit = 1;
        /*
         * Only windows whose read-ahead pages are used are scored: swap-in
         * that reads none (random faults, where the kernel shrinks its window
         * itself) or wastes much of it (a mix, whose refaults it causes
         * itself) says nothing about how large requests should be, and would
         * make a change of workload look like a value that did not pay.
         */
        if (w->io_ticks_ms > 0 && hit >= GROW_HIT_RATIO)
                score = (double) useful / ((double) w->io_ticks_ms / 1000.0);
        if (scored && score > 0)
                m->score[current] = m->score[current] > 0 ? (m->score[current] + score) / 2 : score;

        /* A step up that made swap-in slower per busy second goes back, whatever the hits. */
        if (scored && below >= 0 && score > 0 && m->score[current] < m->score[below] * SCORE_WORSE) {
                ra_reason_format(reason,
                                 "At %u pages a fault swap-in brought %.0f used pages per busy second, "
                                 "against %.0f at %u: larger requests did not pay.",
                                 1u << current, m->score[current], m->score[below], 1u << below);
                return -1;
        }

        if (!reads_ahead) {
                ra_reason_format(reason,
                                 "Swap-in read %" PRIu64 " pages with almost no readahead: nothing "
                                 "to learn from.",
                                 w->pswpin);
                return 0;
        }

        if (hit >= GROW_HIT_RATIO && current < RA_SWAP_LEARN_MAX) {
                if (above >= 0 && scored && m->score[current] > 0 &&
                    m->score[above] < m->score[current] * SCORE_WORSE) {
                        ra_reason_format(reason,
                                         "%.0f %% of the pages read ahead were used, but %u pages a fault "
                                         "swapped in slower than %u.",
                                         hit * 100, 1u << above, 1u << current);
                        return 0;
                }
                ra_reason_format(reason,
                                 "%.0f %% of %" PRIu64 " pages read ahead were used, in requests of %.0f "
                                 "KiB: reading more than %u pages a fault pays.",
                                 hit * 100, w->swap_ra, req_kb, 1u << current);
                return +1;
        }
        if (hit < SHRINK_HIT_RATIO && current > RA_SWAP_LEARN_MIN) {
                ra_reason_format(reason,
                                 "Only %.0f %% of %" PRIu64 " pages read ahead were used, and the rest "
                                 "took the place of pages in memory: fewer than %u pages a fault.",
                                 hit * 100, w->swap_ra, 1u << current);
                return -1;
        }
        ra_reason_format(reason, "%.0f %% of the pages read ahead were used: %u pages a fault is right.",
                         hit * 100, 1u << current);
        return 0;
}

int ra_swap_learn(RaSwapModel *m, int current, const RaSwapObservation *o) {
        char reason[RA_REASON_MAX];
        int direction, next;
        uint64_t units;

        if (current < 0 || current > RA_SWAP_PAGE_CLUSTER_MAX || o->seconds <= 0)
                return 0;
        /* Hits on pages read ahead at the old value would be counted for the new one. */
        if (m->at >= 0 && current != m->at) {
                m->at = current;
                m->window = (RaSwapObservation){};
                return 0;
        }
        m->at = current;
        /* Quiet intervals dilute nothing: only heavy swap-in is evidence. */
        if ((double) o->pswpin / o->seconds < RA_SWAP_HEAVY_PAGES_PER_SEC)
                return 0;

        accumulate(&m->window, o);
        if (m->window.pswpin < RA_SWAP_WINDOW_PAGES)
                return 0;

        /* A heavy interval of several windows' pages counts as that many windows that agree. */
        units = m->window.pswpin / RA_SWAP_WINDOW_PAGES;
        direction = judge(m, current, &m->window, reason);
        m->window = (RaSwapObservation){};
        memcpy(m->judged, reason, sizeof(reason));
        m->judgements++;

        if (direction == 0 || direction != m->direction)
                m->agree = 0;
        m->direction = direction;
        m->agree += units < RA_SWAP_AGREE_STRONG ? (unsigned) units : RA_SWAP_AGREE_STRONG;
        if (direction == 0 || m->agree < RA_SWAP_AGREE)
                return 0;

        /* Twice the windows a step needs agree: two steps, so a workload of seconds is served in time. */
        next = current + direction * (m->agree >= RA_SWAP_AGREE_STRONG ? 2 : 1);
        m->agree = 0;
        if (next < RA_SWAP_LEARN_MIN)
                next = RA_SWAP_LEARN_MIN;
        if (next > RA_SWAP_LEARN_MAX)
                next = RA_SWAP_LEARN_MAX;
        if (next == current || next == m->learned)
                return 0;
        m->learned = next;
        memcpy(m->reason, reason, sizeof(reason));
        return 1;
}

void ra_swap_decide(RaSwapClass active, size_t n_areas, const RaSwapSettings *s, RaSwapDecision *ret) {
        *ret = (RaSwapDecision){ .value = -1, .source = RA_SOURCE_PRIOR };

        if (s->external && s->current >= 0) {
                ret->value = s->current;
                ret->source = RA_SOURCE_EXTERNAL;
                ra_reason_format(ret->reason,
                                 "vm.page-cluster was set to %d by someone else; radaemon leaves it.",
                                 s->current);
                return;
        }
        if (ra_swap_page_cluster_is_valid(s->pinned)) {
                ret->value = s->pinned;
                ret->source = RA_SOURCE_PINNED;
                ra_reason_format(ret->reason, "Pinned to %d over D-Bus.", s->pinned);
                return;
        }
        if (ra_swap_page_cluster_is_valid(s->config)) {
                ret->value = s->config;
                ret->source = RA_SOURCE_CONFIG;
                ra_reason_format(ret->reason, "Set to %d by page_cluster in [swap] of the configuration.",
                                 s->config);
                return;
        }
        if (!s->manage) {
                ra_reason_format(ret->reason, "[swap] manage = no: vm.page-cluster is left as it is.");
                return;
        }
        if (n_areas == 0) {
                ra_reason_format(ret->reason, "No swap area is active: vm.page-cluster is left as it is.");
                return;
        }
        if (ra_swap_page_cluster_is_valid(s->learned)) {
                ret->value = s->learned;
                ret->source = RA_SOURCE_LEARNED;
                ra_reason_format(ret->reason, "%s", s->learned_reason ?: "Learned from swap-in.");
                return;
        }
        ret->value = ra_swap_prior(active, ret->reason);
}
