/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state file's text (ra-state.h): parsing, and escaping identities. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ra-state.h"
#include "ra-swap.h"
#include "ra-util.h"

_Static_assert(ELEMENTSOF(((RaStateSwap *) NULL)->learned) == _RA_SWAP_CLASS_MAX,
               "a learned page-cluster for every class of swap device");

/* The lines an entry has, to tell a second one of a kind (RaStateEntry.lines_read). */
#define LINE_DEVICE 1u
#define LINE_MORE 2u

#define BLANKS " \t"

static bool needs_escape(unsigned char c) {
        return c <= ' ' || c >= 0x7f || c == '\\';
}

static int escape_identity(const char *s, FILE *f) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (needs_escape(*p)) {
                        if (fprintf(f, "\\x%02x", *p) < 0)
                                return -EIO;
                } else if (fputc(*p, f) == EOF)
                        return -EIO;
        return 0;
}

size_t ra_state_escaped_length(const char *identity) {
        size_t n = 0;

        for (const unsigned char *p = (const unsigned char *) identity; *p; p++)
                n += needs_escape(*p) ? 4 : 1;
        return n;
}

static int hex_value(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Undoes escape_identity() on s's first n bytes; refuses anything it would not have written. */
static int unescape_identity(const char *s, size_t n, char **ret) {
        _cleanup_free_ char *out = NULL;
        size_t k = 0;

        out = malloc(n + 1);
        if (!out)
                return -ENOMEM;

        for (const char *p = s, *end = s + n; p < end; p++) {
                int hi, lo;

                if (*p != '\\') {
                        if (needs_escape((unsigned char) *p))
                                return -EINVAL;
                        out[k++] = *p;
                        continue;
                }

                if (end - p < 4 || p[1] != 'x' || (hi = hex_value(p[2])) < 0 || (lo = hex_value(p[3])) < 0)
                        return -EINVAL;
                if (hi == 0 && lo == 0)
                        return -EINVAL;
                out[k++] = (char) (hi << 4 | lo);
                p += 3;
        }

        if (k == 0)
                return -EINVAL;
        out[k] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

typedef struct Parser {
        RaState *s;
        const char *const *only;         /* the identities to read; NULL: all */
        const char *const *only_escaped; /* ...as written in the file */
        char ***errors;
        unsigned line;
        bool bad;
        bool swap_read;
        bool pins_only; /* a file past RA_STATE_MAX_BYTES: only what cannot be learned again */
} Parser;

static int add_error(Parser *p, const char *format, ...) _printf_(2, 3);
static int add_error(Parser *p, const char *format, ...) {
        _cleanup_free_ char *msg = NULL, *full = NULL;
        va_list ap;
        int r;

        p->bad = true;
        if (!p->errors)
                return 0;
        va_start(ap, format);
        r = vasprintf(&msg, format, ap);
        va_end(ap);
        if (r < 0 || asprintf(&full, "line %u: %s", p->line, msg) < 0)
                return -ENOMEM;
        return ra_strv_push(p->errors, full);
}

/* Appends word to *words, as it was, for the next save. */
static int keep_unknown(char **words, const char *word) {
        char *joined;

        if (asprintf(&joined, "%s%s%s", *words ?: "", *words ? " " : "", word) < 0)
                return -ENOMEM;
        free(*words);
        *words = joined;
        return 0;
}

/* The sysctl's own range: an original is whatever the kernel held. */
#define SYSCTL_PAGE_CLUSTER_MAX 31

static int parse_page_cluster(const char *s, int max, int *ret) {
        uint32_t v;

        if (ra_parse_u32(s, &v) < 0 || v > (uint32_t) max)
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

static int *swap_field(RaStateSwap *w, const char *key) {
        if (strcmp(key, "original") == 0)
                return &w->original;
        if (strcmp(key, "pin") == 0)
                return &w->pin;
        for (int c = 0; c < _RA_SWAP_CLASS_MAX; c++)
                if (strncmp(key, "learned-", 8) == 0 &&
                    strcmp(key + 8, ra_swap_class_to_string((RaSwapClass) c)) == 0)
                        return &w->learned[c];
        return NULL;
}

/* The words after "swap". */
static int parse_swap_line(Parser *p, char **save) {
        RaStateSwap *w = &p->s->swap;
        int runtime_pin = w->runtime_pin, r;
        char *word;

        if (p->swap_read)
                return add_error(p, "a second 'swap' line");
        p->swap_read = true;

        ra_state_swap_init(w);
        w->runtime_pin = runtime_pin;
        while ((word = strtok_r(NULL, BLANKS, save))) {
                char *eq = strchr(word, '=');
                int *field;

                if (eq)
                        *eq = '\0';
                field = swap_field(w, word);
                if (!field && strncmp(word, "learned-", 8) == 0)
                        r = add_error(p, "no such class of swap device: '%s'", word + 8);
                else if (!field) {
                        if (eq)
                                *eq = '=';
                        r = keep_unknown(&p->s->unknown_swap, word);
                } else if (!eq || *field >= 0 ||
                           parse_page_cluster(eq + 1,
                                              field == &w->original ? SYSCTL_PAGE_CLUSTER_MAX
                                                                    : RA_SWAP_PAGE_CLUSTER_MAX,
                                              field) < 0)
                        r = add_error(p,
                                      "a page-cluster must be given once, from 0 to 10 (an original to 31)");
                else
                        r = 0;
                if (r < 0)
                        return r;
        }

        w->has_original = w->original >= 0;
        return 0;
}

/* One key=value of a "device" or "more" line; an unknown one is kept in *unknown. */
static int parse_entry_word(Parser *p, RaStateEntry *e, char *word, char **unknown) {
        if (p->pins_only && strncmp(word, "pin=", 4) != 0 && strncmp(word, "original=", 9) != 0 &&
            strncmp(word, "seen=", 5) != 0 && strncmp(word, "owner=", 6) != 0)
                return 0;
        if (strncmp(word, "pin=", 4) == 0) {
                if (ra_parse_u32(word + 4, &e->pin_kb) < 0 || !ra_kb_is_valid(e->pin_kb)) {
                        e->pin_kb = 0;
                        return add_error(p, "pin= is not a valid size in KiB");
                }
        } else if (strncmp(word, "original=", 9) == 0) {
                /* Any value the kernel held, 0 included. */
                e->has_original =
                        ra_parse_u32(word + 9, &e->original_kb) >= 0 && e->original_kb <= RA_KB_LIMIT;
                if (!e->has_original) {
                        e->original_kb = 0;
                        return add_error(p, "original= is not a size in KiB");
                }
        } else if (strncmp(word, "learned=", 8) == 0) {
                if (ra_parse_u32(word + 8, &e->learned_kb) < 0 || !ra_kb_is_valid(e->learned_kb)) {
                        e->learned_kb = 0;
                        return add_error(p, "learned= is not a valid size in KiB");
                }
        } else if (strncmp(word, "calibrated=", 11) == 0) {
                if (ra_calib_parse(word + 11, &e->calib) < 0) {
                        e->calib = (RaCalib){};
                        return add_error(p, "calibrated= is not WHEN:COMMAND_US:KB_S:JUMP_US:CURVE");
                }
        } else if (strncmp(word, "traced=", 7) == 0) {
                if (ra_calib_parse(word + 7, &e->traced) < 0) {
                        e->traced = (RaCalib){};
                        return add_error(p, "traced= is not WHEN:COMMAND_US:KB_S:JUMP_US:CURVE");
                }
                e->traced.source = RA_CALIB_TRACED;
        } else if (strncmp(word, "owner=", 6) == 0) {
                uint32_t uid;

                /* Root's own mounts are not counted against anyone: 0 is not written. */
                if (ra_parse_u32(word + 6, &uid) < 0 || uid == 0 || uid == (uint32_t) -1) {
                        e->user_made = false;
                        return add_error(p, "owner= is not a user ID");
                }
                e->owner = (uid_t) uid;
                e->user_made = true;
        } else if (strncmp(word, "seen=", 5) == 0) {
                if (ra_parse_u64(word + 5, &e->seen) < 0 || e->seen == 0) {
                        e->seen = 0;
                        return add_error(p, "seen= is not a time in seconds");
                }
        } else
                return keep_unknown(unknown, word);
        return 0;
}

/* The words after "device" or "more". */
static int parse_entry_line(Parser *p, unsigned kind, char **save) {
        _cleanup_free_ char *identity = NULL;
        RaStateEntry *e;
        char *word;
        int r;

        word = strtok_r(NULL, BLANKS, save);
        if (!word || unescape_identity(word, strlen(word), &identity) < 0)
                return add_error(p, "missing or badly escaped identity");

        e = ra_state_find(p->s, identity);
        if (e && (e->lines_read & kind))
                return add_error(p, "a second line for the same identity");
        if (!e) {
                r = ra_state_ensure(p->s, identity, &e);
                if (r < 0)
                        return r;
        }
        e->lines_read |= kind;

        while ((word = strtok_r(NULL, BLANKS, save))) {
                r = parse_entry_word(p, e, word, kind == LINE_DEVICE ? &e->unknown : &e->unknown_more);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* line holds the n bytes at text, which are not all blanks nor a comment. */
static int parse_line(Parser *p, const char *text, size_t n, char *line) {
        char *word, *save = NULL, *rest;
        _cleanup_free_ char *copy = NULL;
        uint32_t version;

        word = strtok_r(line, BLANKS, &save);
        if (strcmp(word, "device") == 0)
                return parse_entry_line(p, LINE_DEVICE, &save);
        if (strcmp(word, "more") == 0)
                return parse_entry_line(p, LINE_MORE, &save);
        if (strcmp(word, "swap") == 0)
                return parse_swap_line(p, &save);

        rest = strtok_r(NULL, BLANKS, &save);
        if (strcmp(word, "restored") == 0) {
                if (rest)
                        return add_error(p, "nothing may follow 'restored'");
                p->s->restored = true;
                return 0;
        }
        if (strcmp(word, "version") == 0) {
                if (!rest || ra_parse_u32(rest, &version) < 0 || version == 0 ||
                    strtok_r(NULL, BLANKS, &save))
                        return add_error(p, "'version' takes one number");
                p->s->version = version;
                return 0;
        }

        /* A line of a later release, kept as it was. */
        if (!p->only && !p->pins_only) {
                copy = strndup(text, n);
                if (!copy)
                        return -ENOMEM;
                return ra_strv_push(&p->s->unknown_lines, copy);
        }
        return 0;
}

static const char *skip_blanks(const char *p, const char *end) {
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        return p;
}

static const char *skip_word(const char *p, const char *end) {
        while (p < end && *p != ' ' && *p != '\t')
                p++;
        return p;
}

static bool word_is(const char *word, const char *word_end, const char *s) {
        return (size_t) (word_end - word) == strlen(s) && memcmp(word, s, strlen(s)) == 0;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

/* Whether the line at word (its first word), ending at end, is one p->only wants. */
static bool wanted(const Parser *p, const char *word, const char *end) {
        const char *word_end, *id, *id_end;
        _cleanup_free_ char *identity = NULL;

        /* Most lines are the entries of other devices: passed over without a copy, nor a byte loop. */
        if ((size_t) (end - word) > 7 && memcmp(word, "device", 6) == 0 && is_blank(word[6]))
                word_end = word + 6;
        else if ((size_t) (end - word) > 5 && memcmp(word, "more", 4) == 0 && is_blank(word[4]))
                word_end = word + 4;
        else {
                word_end = skip_word(word, end);
                return word_is(word, word_end, "swap") || word_is(word, word_end, "restored");
        }

        id = skip_blanks(word_end, end);
        for (size_t i = 0; p->only[i]; i++) {
                size_t n = strlen(p->only_escaped[i]);

                if ((size_t) (end - id) >= n && memcmp(id, p->only_escaped[i], n) == 0 &&
                    (id + n == end || is_blank(id[n])))
                        return true;
        }

        /* Escaped otherwise, by hand? */
        if (!memchr(id, '\\', (size_t) (end - id)))
                return false;
        id_end = skip_word(id, end);
        if (!memchr(id, '\\', (size_t) (id_end - id)))
                return false;
        if (unescape_identity(id, (size_t) (id_end - id), &identity) < 0)
                return true; /* reported as for any reader */
        for (size_t i = 0; p->only[i]; i++)
                if (strcmp(p->only[i], identity) == 0)
                        return true;
        return false;
}

int ra_state_escape_identity(const char *identity, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        r = escape_identity(identity, f);
        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* Sets p up for only (NULL: all), with *escaped to free after. */
static int parser_init(Parser *p, RaState *s, const char *const *only, char ***errors, char ***escaped) {
        int r;

        *p = (Parser){ .s = s, .only = only, .errors = errors };
        for (size_t i = 0; only && only[i]; i++) {
                _cleanup_free_ char *e = NULL;

                r = ra_state_escape_identity(only[i], &e);
                if (r < 0)
                        return r;
                r = ra_strv_push(escaped, e);
                if (r < 0)
                        return r;
        }
        p->only_escaped = (const char *const *) *escaped;
        return 0;
}

/* The lines of the len bytes at text; the last may lack its newline. */
static int parse_lines(Parser *p, const char *text, size_t len) {
        int r;

        for (const char *line = text, *end = text + len; line < end;) {
                const char *nl = memchr(line, '\n', (size_t) (end - line));
                const char *line_end = nl ?: end, *first = skip_blanks(line, line_end);
                size_t n = (size_t) (line_end - line);
                _cleanup_free_ char *copy = NULL;

                p->line++;
                if (p->only && (first == line_end || !wanted(p, first, line_end)))
                        r = 0;
                else if (memchr(line, '\0', n))
                        r = add_error(p, "a NUL byte");
                else if (first == line_end || *first == '#')
                        r = 0;
                else if (!(copy = strndup(line, n)))
                        r = -ENOMEM;
                else
                        r = parse_line(p, line, n, copy);
                if (r < 0)
                        return r;
                line = line_end + 1;
        }
        return 0;
}

static int parser_done(Parser *p) {
        for (size_t i = 0; i < p->s->n_entries; i++)
                p->s->entries[i].lines_read = 0;
        return p->bad ? -EINVAL : 0;
}

int ra_state_parse_only(RaState *s, const char *text, size_t len, const char *const *only, char ***errors) {
        _cleanup_(ra_strv_freep) char **escaped = NULL;
        Parser p;
        int r;

        r = parser_init(&p, s, only, errors, &escaped);
        if (r < 0)
                return r;
        r = parse_lines(&p, text, len);
        if (r < 0)
                return r;
        return parser_done(&p);
}

/*
 * Reads fd into a buffer of two lines' room, parses what ends with a
 * newline and carries the rest over: memory stays within the buffer and
 * what the entries hold, whatever the file's size. A line that fills the
 * buffer is skipped, up to its newline.
 */
int ra_state_parse_fd(RaState *s, int fd, const char *const *only, char ***errors) {
        _cleanup_(ra_strv_freep) char **escaped = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t size = 2 * RA_STATE_LINE_MAX, len = 0;
        bool skipping = false;
        struct stat st;
        Parser p;
        int r;

        r = parser_init(&p, s, only, errors, &escaped);
        if (r < 0)
                return r;
        if (fstat(fd, &st) >= 0 && (uint64_t) st.st_size > RA_STATE_MAX_BYTES) {
                p.pins_only = true;
                r = add_error(&p,
                              "%" PRIu64
                              " bytes, more than radaemon writes: read for its pins and originals only",
                              (uint64_t) st.st_size);
                if (r < 0)
                        return r;
        }

        buf = malloc(size);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                ssize_t n = read(fd, buf + len, size - len);
                const char *nl;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                len += (size_t) n;

                if (skipping) {
                        nl = memchr(buf, '\n', len);
                        if (!nl) {
                                len = 0;
                                continue;
                        }
                        skipping = false;
                        len -= (size_t) (nl + 1 - buf);
                        memmove(buf, nl + 1, len);
                }

                nl = memrchr(buf, '\n', len);
                if (nl) {
                        size_t done = (size_t) (nl + 1 - buf);

                        r = parse_lines(&p, buf, done);
                        if (r < 0)
                                return r;
                        len -= done;
                        memmove(buf, buf + done, len);
                }
                if (len >= RA_STATE_LINE_MAX) {
                        p.line++;
                        r = add_error(&p, "longer than %u bytes; skipped", RA_STATE_LINE_MAX);
                        if (r < 0)
                                return r;
                        skipping = true;
                        len = 0;
                }
        }

        if (!skipping && len > 0) {
                r = parse_lines(&p, buf, len);
                if (r < 0)
                        return r;
        }
        return parser_done(&p);
}

int ra_state_parse(RaState *s, const char *text, size_t len, char ***errors) {
        return ra_state_parse_only(s, text, len, NULL, errors);
}
