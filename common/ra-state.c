/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ra-device.h"
#include "ra-state.h"
#include "ra-swap.h"
#include "ra-util.h"

_Static_assert(ELEMENTSOF(((RaStateSwap *) NULL)->learned) == _RA_SWAP_CLASS_MAX,
               "a learned page-cluster for every class of swap device");

/* Far more than thousands of devices need; a bigger file is not ours. */
#define STATE_MAX_BYTES (16u * 1024 * 1024)

static void swap_init(RaStateSwap *w) {
        *w = (RaStateSwap){ .pin = -1, .runtime_pin = -1, .original = -1 };
        for (size_t i = 0; i < ELEMENTSOF(w->learned); i++)
                w->learned[i] = -1;
}

int ra_state_new(RaState **ret) {
        *ret = calloc(1, sizeof(RaState));
        if (!*ret)
                return -ENOMEM;
        swap_init(&(*ret)->swap);
        return 0;
}

RaState *ra_state_free(RaState *s) {
        if (!s)
                return NULL;

        for (size_t i = 0; i < s->n_entries; i++)
                free(s->entries[i].identity);
        free(s->entries);
        free(s);
        return NULL;
}

RaStateEntry *ra_state_find(const RaState *s, const char *identity) {
        for (size_t i = 0; i < s->n_entries; i++)
                if (strcmp(s->entries[i].identity, identity) == 0)
                        return &s->entries[i];
        return NULL;
}

int ra_state_ensure(RaState *s, const char *identity, RaStateEntry **ret) {
        RaStateEntry *e, *grown;
        char *copy;

        e = ra_state_find(s, identity);
        if (e) {
                *ret = e;
                return 0;
        }

        copy = strdup(identity);
        grown = copy ? realloc(s->entries, (s->n_entries + 1) * sizeof(RaStateEntry)) : NULL;
        if (!grown) {
                free(copy);
                return -ENOMEM;
        }

        s->entries = grown;
        e = &s->entries[s->n_entries++];
        *e = (RaStateEntry){ .identity = copy };
        *ret = e;
        return 0;
}

uint32_t ra_state_pin(const RaState *s, const char *identity) {
        const RaStateEntry *e = identity ? ra_state_find(s, identity) : NULL;

        if (!e)
                return 0;
        return e->runtime_pin_kb > 0 ? e->runtime_pin_kb : e->pin_kb;
}

uint32_t ra_state_learned(const RaState *s, const char *identity) {
        const RaStateEntry *e = identity ? ra_state_find(s, identity) : NULL;

        return e ? e->learned_kb : 0;
}

const RaCalib *ra_state_calib(const RaState *s, const char *identity) {
        const RaStateEntry *e = ra_state_find(s, identity);

        return e && e->calib.when > 0 ? &e->calib : NULL;
}

int ra_state_remember_original(RaState *s, const char *identity, uint32_t kb) {
        RaStateEntry *e;
        int r;

        r = ra_state_ensure(s, identity, &e);
        if (r < 0)
                return r;
        if (e->has_original)
                return 0;

        e->original_kb = kb;
        e->has_original = true;
        return 1;
}

int ra_state_carry_over(RaState *s, const RaDeviceAttrs *a, const char *identity) {
        _cleanup_free_ char *old = NULL;
        RaStateEntry *e;
        char *copy;
        int r;

        if (ra_state_find(s, identity))
                return 0;
        r = ra_device_old_identity(a, &old);
        if (r <= 0)
                return r;
        e = ra_state_find(s, old);
        if (!e)
                return 0;

        copy = strdup(identity);
        if (!copy)
                return -ENOMEM;
        free(e->identity);
        e->identity = copy;
        return 1;
}

static bool swap_is_empty(const RaStateSwap *w) {
        bool any = w->has_original || w->pin >= 0;

        for (size_t i = 0; i < ELEMENTSOF(w->learned); i++)
                any = any || w->learned[i] >= 0;
        return !any;
}

int ra_state_swap_pin(const RaState *s) {
        return s->swap.runtime_pin >= 0 ? s->swap.runtime_pin : s->swap.pin;
}

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

static int hex_value(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Undoes escape_identity(); refuses anything it would not have written. */
static int unescape_identity(const char *s, char **ret) {
        _cleanup_free_ char *out = NULL;
        size_t n = 0;

        out = malloc(strlen(s) + 1);
        if (!out)
                return -ENOMEM;

        for (const char *p = s; *p; p++) {
                int hi, lo;

                if (*p != '\\') {
                        if (needs_escape((unsigned char) *p))
                                return -EINVAL;
                        out[n++] = *p;
                        continue;
                }

                if (p[1] != 'x' || (hi = hex_value(p[2])) < 0 || (lo = hex_value(p[3])) < 0)
                        return -EINVAL;
                if (hi == 0 && lo == 0)
                        return -EINVAL;
                out[n++] = (char) (hi << 4 | lo);
                p += 3;
        }

        if (n == 0)
                return -EINVAL;
        out[n] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

static int add_error(char ***errors, unsigned line, const char *format, ...) _printf_(3, 4);
static int add_error(char ***errors, unsigned line, const char *format, ...) {
        _cleanup_free_ char *msg = NULL, *full = NULL;
        va_list ap;
        int r;

        va_start(ap, format);
        r = vasprintf(&msg, format, ap);
        va_end(ap);
        if (r < 0 || asprintf(&full, "line %u: %s", line, msg) < 0)
                return -ENOMEM;
        return ra_strv_push(errors, full);
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

/* Parses the words after "swap" into s; returns a message on error. */
static int parse_swap_line(RaState *s, char **save, const char **ret_error) {
        RaStateSwap w;
        char *word;

        swap_init(&w);
        while ((word = strtok_r(NULL, " \t", save))) {
                char *eq = strchr(word, '=');
                int *field = NULL;

                if (!eq) {
                        *ret_error = "expected key=value after 'swap'";
                        return -EINVAL;
                }
                *eq = '\0';
                if (strcmp(word, "original") == 0)
                        field = &w.original;
                else if (strcmp(word, "pin") == 0)
                        field = &w.pin;
                else if (strncmp(word, "learned-", 8) == 0)
                        for (int c = 0; c < _RA_SWAP_CLASS_MAX; c++)
                                if (strcmp(word + 8, ra_swap_class_to_string((RaSwapClass) c)) == 0)
                                        field = &w.learned[c];
                if (!field) {
                        *ret_error = "unknown key after 'swap'";
                        return -EINVAL;
                }
                if (*field >= 0 || parse_page_cluster(eq + 1,
                                                      field == &w.original ? SYSCTL_PAGE_CLUSTER_MAX
                                                                           : RA_SWAP_PAGE_CLUSTER_MAX,
                                                      field) < 0) {
                        *ret_error = "a page-cluster must be given once, from 0 to 10 (an original to 31)";
                        return -EINVAL;
                }
        }

        if (!swap_is_empty(&s->swap)) {
                *ret_error = "a second 'swap' line";
                return -EINVAL;
        }
        w.has_original = w.original >= 0;
        w.runtime_pin = s->swap.runtime_pin;
        s->swap = w;
        return 0;
}

/* Parses "device IDENTITY key=value..." into s; returns a message on error. */
static int parse_line(RaState *s, char *line, const char **ret_error) {
        _cleanup_free_ char *identity = NULL;
        const char *blanks = " \t";
        uint32_t pin_kb = 0, learned_kb = 0, original_kb = 0;
        bool has_original = false;
        RaCalib calib = {};
        RaStateEntry *e;
        char *word, *save = NULL;
        int r;

        word = strtok_r(line, blanks, &save);
        if (word && strcmp(word, "restored") == 0 && !strtok_r(NULL, blanks, &save)) {
                s->restored = true;
                return 0;
        }
        if (word && strcmp(word, "swap") == 0)
                return parse_swap_line(s, &save, ret_error);
        if (!word || strcmp(word, "device") != 0) {
                *ret_error = "expected 'device IDENTITY key=value ...', 'swap key=value ...' or 'restored'";
                return -EINVAL;
        }

        word = strtok_r(NULL, blanks, &save);
        if (!word || unescape_identity(word, &identity) < 0) {
                *ret_error = "missing or badly escaped identity";
                return -EINVAL;
        }

        while ((word = strtok_r(NULL, blanks, &save))) {
                if (strncmp(word, "pin=", 4) == 0) {
                        if (ra_parse_u32(word + 4, &pin_kb) < 0 || !ra_kb_is_valid(pin_kb)) {
                                *ret_error = "pin= is not a valid size in KiB";
                                return -EINVAL;
                        }
                } else if (strncmp(word, "original=", 9) == 0) {
                        /* Any value the kernel held, 0 included. */
                        if (ra_parse_u32(word + 9, &original_kb) < 0 || original_kb > RA_KB_LIMIT) {
                                *ret_error = "original= is not a size in KiB";
                                return -EINVAL;
                        }
                        has_original = true;
                } else if (strncmp(word, "learned=", 8) == 0) {
                        if (ra_parse_u32(word + 8, &learned_kb) < 0 || !ra_kb_is_valid(learned_kb)) {
                                *ret_error = "learned= is not a valid size in KiB";
                                return -EINVAL;
                        }
                } else if (strncmp(word, "calibrated=", 11) == 0) {
                        if (ra_calib_parse(word + 11, &calib) < 0) {
                                *ret_error = "calibrated= is not WHEN:COMMAND_US:KB_S:JUMP_US:CURVE";
                                return -EINVAL;
                        }
                } else {
                        *ret_error = "unknown key";
                        return -EINVAL;
                }
        }

        if (ra_state_find(s, identity)) {
                *ret_error = "a second line for the same identity";
                return -EINVAL;
        }

        r = ra_state_ensure(s, identity, &e);
        if (r < 0)
                return r;
        e->pin_kb = pin_kb;
        e->learned_kb = learned_kb;
        e->original_kb = original_kb;
        e->has_original = has_original;
        e->calib = calib;
        return 0;
}

int ra_state_parse(RaState *s, const char *text, size_t len, char ***errors) {
        unsigned lineno = 0;
        bool bad = false;
        int r;

        for (const char *p = text, *end = text + len; p < end;) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
                _cleanup_free_ char *line = NULL;
                const char *error = NULL;

                lineno++;
                line = strndup(p, n);
                if (!line)
                        return -ENOMEM;
                p += n + (nl ? 1 : 0);

                if (strlen(line) != n) {
                        r = add_error(errors, lineno, "a NUL byte");
                } else if (line[strspn(line, " \t")] == '\0' || line[strspn(line, " \t")] == '#')
                        continue;
                else {
                        r = parse_line(s, line, &error);
                        if (r == -ENOMEM)
                                return r;
                        if (r >= 0)
                                continue;
                        r = add_error(errors, lineno, "%s", error);
                }
                if (r < 0)
                        return r;
                bad = true;
        }

        return bad ? -EINVAL : 0;
}

int ra_state_load(RaState *s, const char *dir, char ***errors) {
        _cleanup_close_ int dfd = -1, fd = -1;
        _cleanup_free_ char *text = NULL;
        struct stat st;
        size_t len = 0;

        dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? 0 : negative_errno();

        fd = openat(dfd, RA_STATE_FILE, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADF;
        if ((uint64_t) st.st_size > STATE_MAX_BYTES)
                return -EFBIG;

        text = malloc((size_t) st.st_size + 1);
        if (!text)
                return -ENOMEM;

        while (len < (size_t) st.st_size) {
                ssize_t n = read(fd, text + len, (size_t) st.st_size - len);

                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                len += (size_t) n;
        }

        return ra_state_parse(s, text, len, errors);
}

static int format_swap(const RaStateSwap *w, FILE *f) {
        if (swap_is_empty(w))
                return 0;

        if (fputs("swap", f) == EOF)
                return -EIO;
        if (w->has_original && fprintf(f, " original=%d", w->original) < 0)
                return -EIO;
        if (w->pin >= 0 && fprintf(f, " pin=%d", w->pin) < 0)
                return -EIO;
        for (size_t i = 0; i < ELEMENTSOF(w->learned); i++)
                if (w->learned[i] >= 0 &&
                    fprintf(f, " learned-%s=%d", ra_swap_class_to_string((RaSwapClass) i), w->learned[i]) <
                            0)
                        return -EIO;
        return fputc('\n', f) == EOF ? -EIO : 0;
}

int ra_state_format(const RaState *s, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r = 0;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;

        if (fputs("# radaemon state: original, pinned and learned values per device identity.\n", f) == EOF)
                r = -EIO;
        if (r == 0 && s->restored && fputs("restored\n", f) == EOF)
                r = -EIO;

        if (r == 0)
                r = format_swap(&s->swap, f);

        for (size_t i = 0; r == 0 && i < s->n_entries; i++) {
                const RaStateEntry *e = &s->entries[i];

                if (e->pin_kb == 0 && e->learned_kb == 0 && !e->has_original && e->calib.when == 0)
                        continue;
                if (fputs("device ", f) == EOF)
                        r = -EIO;
                if (r == 0)
                        r = escape_identity(e->identity, f);
                if (r == 0 && e->has_original && fprintf(f, " original=%" PRIu32, e->original_kb) < 0)
                        r = -EIO;
                if (r == 0 && e->pin_kb > 0 && fprintf(f, " pin=%" PRIu32, e->pin_kb) < 0)
                        r = -EIO;
                if (r == 0 && e->learned_kb > 0 && fprintf(f, " learned=%" PRIu32, e->learned_kb) < 0)
                        r = -EIO;
                if (r == 0 && e->calib.when > 0) {
                        char calib[RA_CALIB_TEXT_MAX];

                        r = ra_calib_format(&e->calib, calib, sizeof(calib));
                        if (r == 0 && fprintf(f, " calibrated=%s", calib) < 0)
                                r = -EIO;
                }
                if (r == 0 && fputc('\n', f) == EOF)
                        r = -EIO;
        }

        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r < 0)
                return r;

        *ret = TAKE_PTR(buf);
        return 0;
}

static int write_all(int fd, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, buf, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                buf += n;
                len -= (size_t) n;
        }
        return 0;
}

int ra_state_save(const RaState *s, const char *dir, bool *ret_replaced) {
        _cleanup_free_ char *text = NULL, *tmp = NULL, *path = NULL;
        _cleanup_close_ int dfd = -1, fd = -1;
        int r;

        if (ret_replaced)
                *ret_replaced = false;

        r = ra_state_format(s, &text);
        if (r < 0)
                return r;

        if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, RA_STATE_FILE) < 0 ||
            asprintf(&path, "%s/%s", dir, RA_STATE_FILE) < 0)
                return -ENOMEM;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();

        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        r = write_all(fd, text, strlen(text));
        if (r >= 0 && fchmod(fd, 0644) < 0)
                r = negative_errno();
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = negative_errno();
        if (r >= 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }

        /* The rename is durable only once the directory is. */
        if (ret_replaced)
                *ret_replaced = true;
        if (fsync(dfd) < 0)
                return negative_errno();
        return 0;
}
