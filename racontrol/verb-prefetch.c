/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ra-prefetch.h"
#include "ra-util.h"
#include "racontrol.h"
#include "rc-prefetch.h"

RA_DEFINE_CLEANUP(RcWalk, rc_walk_free)

static double now(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static uint64_t load(const atomic_uint_fast64_t *v) {
        return atomic_load(v);
}

static int default_budget(uint64_t *ret) {
        char buf[8192];
        int r;

        r = ra_read_file_at(AT_FDCWD, "/proc/meminfo", buf, sizeof(buf));
        if (r == -EFBIG) /* MemAvailable is near the top; the rest does not matter */
                r = 0;
        if (r < 0)
                return r;
        return ra_prefetch_budget_from_meminfo(buf, ret);
}

/* One line, rewritten in place: what is done, how fast, how long is left. */
static void progress(RcWalk *w, double elapsed) {
        const RcWalkCounters *c = rc_walk_counters(w);
        char done[RA_SIZE_MAX], total[RA_SIZE_MAX], left[32] = "";
        double seconds;

        if (atomic_load(&c->data_phase)) {
                uint64_t bytes = load(&c->data_bytes), planned = load(&c->data_planned_bytes);

                seconds = ra_prefetch_seconds_left(bytes, planned, elapsed);
                if (seconds >= 0)
                        (void) snprintf(left, sizeof(left), ", %.0f s left", seconds);
                fprintf(stderr, "\r\033[Kprefetch: reading ahead %" PRIu64 " files, %s of %s%s",
                        load(&c->data_files), ra_format_size(bytes, done), ra_format_size(planned, total),
                        left);
        } else {
                uint64_t entries = load(&c->entries), found = load(&c->found);

                /* Only what the directories read so far hold is known: "left" grows as they are read. */
                seconds = ra_prefetch_seconds_left(entries, found, elapsed);
                if (seconds >= 0)
                        (void) snprintf(left, sizeof(left), ", %.0f s left of those found", seconds);
                fprintf(stderr,
                        "\r\033[Kprefetch: %" PRIu64 " files in %" PRIu64 " directories, %.0f files/s%s",
                        entries, load(&c->directories), elapsed > 0 ? (double) entries / elapsed : 0.0,
                        left);
        }
        fflush(stderr);
}

static void print_json(RcWalk *w, const RcWalkRoot **roots, size_t n_roots, RcContext *rc, double elapsed,
                       bool interrupted) {
        const RcWalkCounters *c = rc_walk_counters(w);
        uint64_t budget, files_over, bytes_over;

        rc_walk_data_summary(w, &budget, &files_over, &bytes_over);

        fputs("{\"paths\":[", stdout);
        for (size_t i = 0; i < n_roots; i++) {
                if (i > 0)
                        putchar(',');
                fputs("{\"path\":", stdout);
                rc_json_string(roots[i]->path);
                fputs(",\"filesystem\":", stdout);
                rc_json_string(roots[i]->fs->name);
                fputs(",\"order\":", stdout);
                rc_json_string(ra_prefetch_order_to_string(roots[i]->fs->order));
                fputs(",\"reason\":", stdout);
                rc_json_string(roots[i]->fs->reason);
                fputs(",\"rotational\":", stdout);
                fputs(roots[i]->rotational < 0 ? "null" : roots[i]->rotational ? "true" : "false", stdout);
                fputs(",\"device_readahead\":", stdout);
                if (roots[i]->device)
                        rc_json_string(roots[i]->device);
                else
                        fputs("null", stdout);
                fputs(",\"left_to_the_walk\":", stdout);
                if (roots[i]->aside)
                        rc_json_string(roots[i]->aside);
                else
                        fputs("null", stdout);
                putchar('}');
        }
        printf("],\"threads\":%u,\"directories\":%" PRIu64 ",\"files\":%" PRIu64 ",\"skipped\":%" PRIu64
               ",\"vanished\":%" PRIu64 ",\"denied\":%" PRIu64 ",\"errors\":%" PRIu64
               ",\"seconds\":%.3f,\"interrupted\":%s",
               rc_walk_threads(w), load(&c->directories), load(&c->entries), load(&c->skipped),
               load(&c->vanished), load(&c->denied), load(&c->errors), elapsed,
               interrupted ? "true" : "false");
        if (rc->data)
                printf(",\"data\":{\"files\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"budget\":%" PRIu64
                       ",\"over_budget_files\":%" PRIu64 ",\"over_budget_bytes\":%" PRIu64 "}",
                       load(&c->data_files), load(&c->data_bytes), budget, files_over, bytes_over);
        fputs(",\"first_error\":", stdout);
        if (rc_walk_first_error(w))
                rc_json_string(rc_walk_first_error(w));
        else
                fputs("null", stdout);
        fputs("}\n", stdout);
}

static void print_summary(RcWalk *w, const RcWalkRoot **roots, size_t n_roots, RcContext *rc,
                          double elapsed) {
        const RcWalkCounters *c = rc_walk_counters(w);
        uint64_t entries = load(&c->entries);

        for (size_t i = 0; i < n_roots; i++) {
                printf("%s: %s, %s order: %s.\n", roots[i]->path, roots[i]->fs->name,
                       ra_prefetch_order_to_string(roots[i]->fs->order), roots[i]->fs->reason);
                if (roots[i]->device)
                        printf("%s: directory blocks and inode tables read ahead from %s in disk order.\n",
                               roots[i]->path, roots[i]->device);
                if (roots[i]->aside)
                        printf("%s: not looked up: %s.\n", roots[i]->path, roots[i]->aside);
        }
        printf("Looked up %" PRIu64 " files in %" PRIu64 " directories in %.1f s (%.0f files/s).\n", entries,
               load(&c->directories), elapsed, elapsed > 0 ? (double) entries / elapsed : 0.0);
        if (load(&c->skipped) > 0)
                printf("Left %" PRIu64 " files found in those directories to the walk.\n",
                       load(&c->skipped));
        if (rc->data) {
                char bytes[RA_SIZE_MAX];

                printf("Read ahead %" PRIu64 " files, %s.\n", load(&c->data_files),
                       ra_format_size(load(&c->data_bytes), bytes));
        }
        if (load(&c->vanished) > 0)
                printf("%" PRIu64 " entries vanished during the walk.\n", load(&c->vanished));
}

/* What went wrong below the roots, one line each on stderr: not fatal. */
static void print_warnings(RcWalk *w, bool data) {
        const RcWalkCounters *c = rc_walk_counters(w);
        uint64_t budget, files_over, bytes_over;

        if (load(&c->denied) > 0)
                fprintf(stderr,
                        "racontrol: prefetch: %" PRIu64 " entries not warmed: permission denied (%s)\n",
                        load(&c->denied), rc_walk_first_error(w) ?: "");
        if (load(&c->errors) > 0)
                fprintf(stderr, "racontrol: prefetch: %" PRIu64 " entries not warmed: %s\n",
                        load(&c->errors), rc_walk_first_error(w) ?: "");

        rc_walk_data_summary(w, &budget, &files_over, &bytes_over);
        if (data && files_over > 0) {
                char b[RA_SIZE_MAX], o[RA_SIZE_MAX];

                fprintf(stderr,
                        "racontrol: prefetch: the page-cache budget of %s is full; %" PRIu64
                        " files (%s) not read ahead\n",
                        ra_format_size(budget, b), files_over, ra_format_size(bytes_over, o));
        }
}

int verb_prefetch(RcContext *c, char **args) {
        _cleanup_(rc_walk_freep) RcWalk *w = NULL;
        _cleanup_free_ const RcWalkRoot **roots = NULL;
        size_t n_roots = ra_strv_length(args);
        bool interrupted = false, tty;
        uint64_t budget = c->budget;
        sigset_t mask, old;
        struct rlimit rl;
        double start;
        int r;

        if (c->data && !c->budget_set) {
                r = default_budget(&budget);
                if (r < 0) {
                        fprintf(stderr,
                                "racontrol: prefetch: cannot read MemAvailable from /proc/meminfo: %s\n",
                                strerror(-r));
                        return RC_EXIT_FAILURE;
                }
        }

        r = rc_walk_new(c->threads, c->data, c->always, budget, &w);
        if (r < 0)
                return RC_EXIT_FAILURE;

        roots = calloc(n_roots, sizeof(*roots));
        if (!roots)
                return RC_EXIT_FAILURE;
        for (size_t i = 0; i < n_roots; i++) {
                r = rc_walk_add_root(w, args[i], &roots[i]);
                if (r == -ENOTDIR) {
                        fprintf(stderr, "racontrol: prefetch: %s is not a directory\n", args[i]);
                        return RC_EXIT_FAILURE;
                }
                if (r < 0) {
                        fprintf(stderr, "racontrol: prefetch: %s: %s\n", args[i], strerror(-r));
                        return RC_EXIT_FAILURE;
                }
        }
        /* A large directory is held open while its chunks are looked up. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }

        /* The threads inherit the mask: Ctrl-C reaches only this one, which stops them. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &mask, &old);

        start = now();
        r = rc_walk_start(w);
        if (r < 0) {
                fprintf(stderr, "racontrol: prefetch: cannot start threads: %s\n", strerror(-r));
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                return RC_EXIT_FAILURE;
        }

        /* Looks for the end every 10 ms (a walk left to the later one ends at
         * once), and redraws the progress line every 200 ms. */
        tty = !c->json && isatty(STDERR_FILENO);
        for (double drawn = start; !rc_walk_done(w);) {
                struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };

                if (sigtimedwait(&mask, NULL, &tick) > 0 && !interrupted) {
                        interrupted = true;
                        rc_walk_stop(w);
                }
                if (tty && now() - drawn >= 0.2) {
                        drawn = now();
                        progress(w, drawn - start);
                }
        }
        rc_walk_join(w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);

        if (tty)
                fputs("\r\033[K", stderr);
        if (c->json)
                print_json(w, roots, n_roots, c, now() - start, interrupted);
        else
                print_summary(w, roots, n_roots, c, now() - start);
        print_warnings(w, c->data);

        if (interrupted) {
                fprintf(stderr, "racontrol: prefetch: interrupted; the summary above is what was done\n");
                return RC_EXIT_FAILURE;
        }
        return load(&rc_walk_counters(w)->errors) > 0 ? RC_EXIT_FAILURE : 0;
}
