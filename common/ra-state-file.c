/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state file (ra-state.h): its text written, and the file read and saved. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ra-state.h"
#include "ra-swap.h"
#include "ra-util.h"

static int format_unknown(const char *words, FILE *f) {
        if (words && fprintf(f, " %s", words) < 0)
                return -EIO;
        return 0;
}

static int format_swap(const RaState *s, FILE *f) {
        const RaStateSwap *w = &s->swap;

        if (ra_state_swap_is_empty(w) && !s->unknown_swap)
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
        if (format_unknown(s->unknown_swap, f) < 0)
                return -EIO;
        return fputc('\n', f) == EOF ? -EIO : 0;
}

/* The "device" line, with what the release before version 2 knows, and the "more" line. */
static int format_entry(const RaStateEntry *e, FILE *f) {
        _cleanup_free_ char *identity = NULL;
        int r;

        r = ra_state_escape_identity(e->identity, &identity);
        if (r < 0)
                return r;
        if (fprintf(f, "device %s", identity) < 0)
                return -EIO;
        if (e->has_original && fprintf(f, " original=%" PRIu32, e->original_kb) < 0)
                return -EIO;
        if (e->pin_kb > 0 && fprintf(f, " pin=%" PRIu32, e->pin_kb) < 0)
                return -EIO;
        if (e->learned_kb > 0 && fprintf(f, " learned=%" PRIu32, e->learned_kb) < 0)
                return -EIO;
        if (e->calib.when > 0) {
                char calib[RA_CALIB_TEXT_MAX];

                r = ra_calib_format(&e->calib, calib, sizeof(calib));
                if (r < 0)
                        return r;
                if (fprintf(f, " calibrated=%s", calib) < 0)
                        return -EIO;
        }
        if (format_unknown(e->unknown, f) < 0 || fputc('\n', f) == EOF)
                return -EIO;

        if (e->seen == 0 && e->traced.when == 0 && !e->user_made && !e->unknown_more)
                return 0;
        if (fprintf(f, "more %s", identity) < 0)
                return -EIO;
        if (e->seen > 0 && fprintf(f, " seen=%" PRIu64, e->seen) < 0)
                return -EIO;
        if (e->user_made && fprintf(f, " owner=%" PRIu32, (uint32_t) e->owner) < 0)
                return -EIO;
        if (e->traced.when > 0) {
                char traced[RA_CALIB_TEXT_MAX];

                r = ra_calib_format(&e->traced, traced, sizeof(traced));
                if (r < 0)
                        return r;
                if (fprintf(f, " traced=%s", traced) < 0)
                        return -EIO;
        }
        if (format_unknown(e->unknown_more, f) < 0 || fputc('\n', f) == EOF)
                return -EIO;
        return 0;
}

static bool is_pinned(const RaStateEntry *e) {
        return e->pin_kb > 0;
}

/* A user's entries, the most recently seen first. */
static int compare_owner_seen(const void *a, const void *b) {
        const RaStateEntry *x = *(RaStateEntry *const *) a, *y = *(RaStateEntry *const *) b;

        if (x->owner != y->owner)
                return x->owner < y->owner ? -1 : 1;
        if (x->seen != y->seen)
                return x->seen > y->seen ? -1 : 1;
        return x < y ? -1 : x > y;
}

/* What a budget drops first: no original before an original, then the least recently seen. */
static int compare_worth(const void *a, const void *b) {
        const RaStateEntry *x = *(RaStateEntry *const *) a, *y = *(RaStateEntry *const *) b;

        if (x->has_original != y->has_original)
                return x->has_original ? 1 : -1;
        if (x->seen != y->seen)
                return x->seen < y->seen ? -1 : 1;
        return x < y ? -1 : x > y;
}

/*
 * Clears keep[i] for the entries of users beyond RA_STATE_USER_QUOTA each,
 * and of those not stored at all. A pin is root's choice: neither counted
 * nor dropped.
 */
static int apply_quota(const RaState *s, bool *keep) {
        _cleanup_free_ const RaStateEntry **users = NULL;
        size_t n = 0, run = 0;

        for (size_t i = 0; i < s->n_entries; i++)
                keep[i] = ra_state_entry_is_stored(&s->entries[i]);

        users = malloc((s->n_entries ?: 1) * sizeof(*users));
        if (!users)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_entries; i++)
                if (keep[i] && s->entries[i].user_made && !is_pinned(&s->entries[i]))
                        users[n++] = &s->entries[i];
        if (n > 0)
                qsort(users, n, sizeof(*users), compare_owner_seen);
        for (size_t i = 0; i < n; i++) {
                run = i > 0 && users[i]->owner == users[i - 1]->owner ? run + 1 : 0;
                if (run >= RA_STATE_USER_QUOTA)
                        keep[users[i] - s->entries] = false;
        }
        return 0;
}

/* Clears keep[i] for what goes first (ra-state.h) until the lines kept fit in budget bytes. */
static int apply_budget(const RaState *s, char *const *lines, size_t budget, bool *keep) {
        _cleanup_free_ const RaStateEntry **droppable = NULL;
        size_t total = 0, n = 0;

        for (size_t i = 0; i < s->n_entries; i++)
                if (keep[i])
                        total += strlen(lines[i]);
        if (total <= budget)
                return 0;

        droppable = malloc(s->n_entries * sizeof(*droppable));
        if (!droppable)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_entries; i++)
                if (keep[i] && !is_pinned(&s->entries[i]))
                        droppable[n++] = &s->entries[i];
        if (n > 0)
                qsort(droppable, n, sizeof(*droppable), compare_worth);
        for (size_t i = 0; i < n && total > budget; i++) {
                size_t k = (size_t) (droppable[i] - s->entries);

                keep[k] = false;
                total -= strlen(lines[k]);
        }
        return 0;
}

static void lines_free(char **lines, size_t n) {
        for (size_t i = 0; lines && i < n; i++)
                free(lines[i]);
        free(lines);
}

/* Each entry's lines, kept[i] or NULL, formatted apart so that the budget can weigh them. */
static int format_entries(const RaState *s, const bool *keep, char ***ret) {
        char **lines;
        int r = 0;

        lines = calloc(s->n_entries ?: 1, sizeof(char *));
        if (!lines)
                return -ENOMEM;
        for (size_t i = 0; r == 0 && i < s->n_entries; i++) {
                size_t size = 0;
                FILE *f;

                if (!keep[i])
                        continue;
                f = open_memstream(&lines[i], &size);
                if (!f) {
                        r = -ENOMEM;
                        break;
                }
                r = format_entry(&s->entries[i], f);
                if (fclose(f) != 0 && r == 0)
                        r = -ENOMEM;
        }
        if (r < 0) {
                lines_free(lines, s->n_entries);
                return r;
        }
        *ret = lines;
        return 0;
}

int ra_state_format(const RaState *s, char **ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ bool *keep = NULL;
        char **lines = NULL;
        size_t size = 0, head;
        FILE *f;
        int r = 0;

        keep = calloc(s->n_entries ?: 1, sizeof(bool));
        if (!keep)
                return -ENOMEM;
        r = apply_quota(s, keep);
        if (r < 0)
                return r;
        r = format_entries(s, keep, &lines);
        if (r < 0)
                return r;

        f = open_memstream(&buf, &size);
        if (!f) {
                lines_free(lines, s->n_entries);
                return -ENOMEM;
        }

        if (fprintf(f,
                    "# radaemon state: original, pinned and learned values per device identity.\n"
                    "version %u\n",
                    RA_STATE_VERSION) < 0)
                r = -EIO;
        if (r == 0 && s->restored && fputs("restored\n", f) == EOF)
                r = -EIO;

        if (r == 0)
                r = format_swap(s, f);

        /* The entries get what the rest leaves of the budget. */
        if (r == 0 && fflush(f) != 0)
                r = -ENOMEM;
        head = size;
        for (size_t i = 0; s->unknown_lines && s->unknown_lines[i]; i++)
                head += strlen(s->unknown_lines[i]) + 1;
        if (r == 0)
                r = apply_budget(s, lines, head < RA_STATE_BUDGET ? RA_STATE_BUDGET - head : 0, keep);

        for (size_t i = 0; r == 0 && i < s->n_entries; i++)
                if (keep[i] && fputs(lines[i], f) == EOF)
                        r = -EIO;
        lines_free(lines, s->n_entries);

        for (size_t i = 0; r == 0 && s->unknown_lines && s->unknown_lines[i]; i++)
                if (fprintf(f, "%s\n", s->unknown_lines[i]) < 0)
                        r = -EIO;

        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r < 0)
                return r;

        *ret = TAKE_PTR(buf);
        return 0;
}

int ra_state_load_only(RaState *s, const char *dir, const char *const *identities, char ***errors) {
        _cleanup_close_ int dfd = -1, fd = -1;
        struct stat st;

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
        return ra_state_parse_fd(s, fd, identities, errors);
}

int ra_state_load(RaState *s, const char *dir, char ***errors) {
        return ra_state_load_only(s, dir, NULL, errors);
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

/* ".state.XXXXXX", as ra_state_save() names its temporary file. */
static bool is_temporary(const char *name) {
        size_t n = strlen(RA_STATE_FILE);

        return name[0] == '.' && strncmp(name + 1, RA_STATE_FILE, n) == 0 && name[1 + n] == '.' &&
               strlen(name + 2 + n) == 6;
}

static int remove_temporary(int dfd) {
        _cleanup_close_ int fd = -1;
        struct dirent *de;
        DIR *d;
        int r = 0;

        fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d)
                return negative_errno();
        TAKE_FD(fd);

        while ((errno = 0, de = readdir(d)))
                if (is_temporary(de->d_name) && unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT)
                        r = negative_errno();
        if (errno != 0)
                r = negative_errno();
        closedir(d);
        return r;
}

static int open_lock_file(const char *dir) {
        _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int fd;

        if (dfd < 0)
                return negative_errno();
        fd = openat(dfd, RA_STATE_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0644);
        return fd < 0 ? negative_errno() : fd;
}

int ra_state_tidy(const char *dir) {
        _cleanup_close_ int dfd = -1, fd = -1;
        struct stat st;
        int r;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? 0 : negative_errno();

        r = remove_temporary(dfd);

        fd = openat(dfd, RA_STATE_FILE, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? r : negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISREG(st.st_mode) && (st.st_mode & 0077) != 0 && fchmod(fd, st.st_mode & 0700) < 0)
                return negative_errno();
        return r;
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

        /* What an earlier save left when it was cut short; this one is the only one under way. */
        (void) remove_temporary(dfd);

        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        /* It names serials and other users' mount points. */
        r = write_all(fd, text, strlen(text));
        if (r >= 0 && fchmod(fd, 0600) < 0)
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

int ra_state_lock(const char *dir, int *ret_fd, pid_t *ret_holder) {
        struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        _cleanup_close_ int fd = -1;
        char text[32];
        bool named;
        ssize_t n;
        int len;

        *ret_holder = 0;
        fd = open_lock_file(dir);
        if (fd < 0)
                return fd;
        if (fcntl(fd, F_OFD_SETLK, &lock) < 0) {
                if (errno != EAGAIN && errno != EACCES)
                        return negative_errno();
                n = pread(fd, text, sizeof(text) - 1, 0);
                if (n > 0) {
                        unsigned long pid;
                        char *end;

                        text[n] = '\0';
                        errno = 0;
                        pid = strtoul(text, &end, 10);
                        if (errno == 0 && end != text && *end == '\n' && pid > 0 && pid <= INT32_MAX)
                                *ret_holder = (pid_t) pid;
                }
                return -EBUSY;
        }

        /*
         * Only for the next one to name us: the lock is what counts, and it
         * holds even where the pid cannot be written (a full disk).
         */
        len = snprintf(text, sizeof(text), "%ld\n", (long) getpid());
        named = ftruncate(fd, 0) >= 0 && pwrite(fd, text, (size_t) len, 0) == len;
        (void) named;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int ra_state_mark_observing(const char *dir, bool observing) {
        _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int fd;

        if (dfd < 0)
                return negative_errno();
        if (!observing)
                return unlinkat(dfd, RA_STATE_OBSERVING, 0) < 0 && errno != ENOENT ? negative_errno() : 0;
        fd = openat(dfd, RA_STATE_OBSERVING, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return negative_errno();
        (void) close(fd);
        return 0;
}

bool ra_state_observing(const char *dir) {
        _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

        return dfd >= 0 && faccessat(dfd, RA_STATE_OBSERVING, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}
