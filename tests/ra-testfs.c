/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ra-testfs: a read-only FUSE file system for the integration tests, whose
 * bdi (/sys/class/bdi/<maj>:<min>) radaemon manages like any other. Its files
 * go through the page cache, so readahead and the filemap tracepoints apply
 * to them as to a network file system's; their content is computed, not
 * stored, and a test can check every byte it read.
 *
 *   ra-testfs [--files N] [--size-mib M] [--max-readahead-kb K] [--delay-us U]
 *             [--bandwidth-mbs B] [--init-delay-ms D] [--stall-while PATH]
 *             MOUNTPOINT [FUSE options, e.g. -f]
 *
 * The kernel gives a FUSE bdi min(128 KiB, the max_readahead the server
 * answered INIT with) as read_ahead_kb; --max-readahead-kb sets that answer,
 * and --init-delay-ms delays it, as a server still connecting would: what
 * radaemon writes before the answer, the answer lowers.
 *
 * --delay-us and --bandwidth-mbs make it a network file system: every read
 * request takes a round trip of U microseconds, and its data then crosses
 * one link of B MB/s that all requests share. Round trips overlap, the link
 * does not: a request's data starts when both its round trip is over and
 * the link is free. Without a bandwidth a request costs its round trip
 * alone, whatever its size, and the biggest window always wins; with one,
 * a window bigger than the link's bandwidth-delay product only moves
 * bytes nobody asked for (random reads pay for them).
 *
 * --stall-while PATH makes it a device that stops answering: every read
 * waits for as long as PATH exists, as a network server that went away
 * would leave it. A loop device over one of its files then hangs whoever
 * reads it, in an uninterruptible wait, until the test removes PATH. So
 * does the lookup of a name it does not have, as a path is resolved.
 */
#define FUSE_USE_VERSION 312
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ra-macro.h"

/* One read request may carry a whole readahead window: the kernel cuts
 * them at max_read and at max_pages, which libfuse derives from max_write. */
#define MAX_REQUEST 1048576

/* Before the user's -o, which can override them. */
static const char default_options[] = "-oro,fsname=ra-testfs,subtype=ra-testfs,max_read=1048576";

typedef struct TestFs {
        uint64_t files;
        uint64_t size_mib;
        uint64_t max_readahead_kb; /* UINT64_MAX: leave the kernel's offer */
        uint64_t delay_us;
        uint64_t bandwidth_mbs; /* 0: no link, each request costs delay_us alone */
        uint64_t init_delay_ms;
        const char *stall_while; /* reads wait while this path exists; NULL: never */
} TestFs;

static TestFs fs = { .files = 4, .size_mib = 64, .max_readahead_kb = UINT64_MAX };

/* The options as given, parsed strictly once fuse_opt has found them. */
typedef struct Options {
        char *files, *size_mib, *max_readahead_kb, *delay_us, *bandwidth_mbs, *init_delay_ms;
        char *stall_while;
} Options;

/* "--files 8" and "--files=8" alike. fuse_opt applies every template that
 * matches, in order, and "--files %s" takes "--files=8" as "=8": the "="
 * form comes second and has the last word. */
static const struct fuse_opt option_spec[] = {
        { "--files %s", offsetof(Options, files), 0 },
        { "--files=%s", offsetof(Options, files), 0 },
        { "--size-mib %s", offsetof(Options, size_mib), 0 },
        { "--size-mib=%s", offsetof(Options, size_mib), 0 },
        { "--max-readahead-kb %s", offsetof(Options, max_readahead_kb), 0 },
        { "--max-readahead-kb=%s", offsetof(Options, max_readahead_kb), 0 },
        { "--delay-us %s", offsetof(Options, delay_us), 0 },
        { "--delay-us=%s", offsetof(Options, delay_us), 0 },
        { "--bandwidth-mbs %s", offsetof(Options, bandwidth_mbs), 0 },
        { "--bandwidth-mbs=%s", offsetof(Options, bandwidth_mbs), 0 },
        { "--init-delay-ms %s", offsetof(Options, init_delay_ms), 0 },
        { "--init-delay-ms=%s", offsetof(Options, init_delay_ms), 0 },
        { "--stall-while %s", offsetof(Options, stall_while), 0 },
        { "--stall-while=%s", offsetof(Options, stall_while), 0 },
        FUSE_OPT_END,
};

/*
 * The content: the 8-byte word at offset o (a multiple of 8) of file i is
 * the little-endian uint64 (i << 40 | o / 8). Every word differs from every
 * other in the mount, so a page from the wrong file or offset shows.
 */
static void fill(char *buf, size_t size, uint64_t file, uint64_t off) {
        while (size > 0) {
                uint64_t word = htole64(file << 40 | off / 8);
                size_t skip = off % 8, n = size < 8 - skip ? size : 8 - skip;

                memcpy(buf, (const char *) &word + skip, n);
                buf += n;
                off += n;
                size -= n;
        }
}

/* "/file-007" is file 7; "/file-7" and "/file-0007" are nothing. */
static int file_index(const char *path, unsigned *ret_index) {
        char name[32];
        unsigned i;

        if (sscanf(path, "/file-%u", &i) != 1 || i >= fs.files)
                return -ENOENT;
        (void) snprintf(name, sizeof(name), "/file-%03u", i);
        if (strcmp(name, path) != 0)
                return -ENOENT;
        *ret_index = i;
        return 0;
}

static void *testfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
        struct timespec delay = { .tv_sec = (time_t) (fs.init_delay_ms / 1000),
                                  .tv_nsec = (long) (fs.init_delay_ms % 1000 * 1000000) };

        /* The answer goes out when this returns. */
        while (nanosleep(&delay, &delay) < 0 && errno == EINTR)
                ;
        if (fs.max_readahead_kb != UINT64_MAX)
                conn->max_readahead = (unsigned) fs.max_readahead_kb * 1024u;
        /* max_read must match the max_read= in default_options, or
         * libfuse refuses the INIT. */
        conn->max_read = MAX_REQUEST;
        conn->max_write = MAX_REQUEST;
        /* The files never change: keep their pages across opens (no
         * direct_io, which would bypass the page cache and readahead), and
         * spare the tests' traces the revalidating GETATTRs. */
        cfg->kernel_cache = 1;
        cfg->direct_io = 0;
        cfg->attr_timeout = 3600;
        cfg->entry_timeout = 3600;
        cfg->negative_timeout = 3600;
        return NULL;
}

/* Waits while --stall-while's path exists, looking every 10 ms. */
static void stall(void) {
        const struct timespec pause = { .tv_nsec = 10000000 };

        while (fs.stall_while && access(fs.stall_while, F_OK) == 0)
                (void) nanosleep(&pause, NULL);
}

static int testfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
        unsigned i;

        memset(st, 0, sizeof(*st));
        if (strcmp(path, "/") == 0) {
                st->st_mode = S_IFDIR | 0555;
                st->st_nlink = 2;
                return 0;
        }
        /* A name it does not have: looked up, as a path is resolved, it waits too. */
        if (file_index(path, &i) < 0) {
                stall();
                return -ENOENT;
        }
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = (off_t) (fs.size_mib << 20);
        st->st_blocks = (blkcnt_t) (fs.size_mib << 11);
        return 0;
}

static int testfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill_dir, off_t off,
                          struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
        if (strcmp(path, "/") != 0)
                return -ENOTDIR;
        (void) fill_dir(buf, ".", NULL, 0, 0);
        (void) fill_dir(buf, "..", NULL, 0, 0);
        for (uint64_t i = 0; i < fs.files; i++) {
                char name[32];

                (void) snprintf(name, sizeof(name), "file-%03" PRIu64, i);
                (void) fill_dir(buf, name, NULL, 0, 0);
        }
        return 0;
}

static int testfs_open(const char *path, struct fuse_file_info *fi) {
        unsigned i;

        if (file_index(path, &i) < 0)
                return -ENOENT;
        if ((fi->flags & O_ACCMODE) != O_RDONLY)
                return -EROFS;
        fi->keep_cache = 1;
        return 0;
}

static uint64_t now_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* When the link has sent the last byte asked of it so far. */
static pthread_mutex_t link_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t link_free_ns;

/*
 * What a request of size bytes costs, slept through: its round trip, then
 * its turn on the link. The turn is booked under the lock and slept outside
 * it, so the requests in flight wait side by side, as on a network.
 */
static void transfer(size_t size) {
        uint64_t finish = now_ns() + fs.delay_us * 1000u;
        struct timespec until;

        if (fs.bandwidth_mbs > 0) {
                (void) pthread_mutex_lock(&link_lock);
                if (finish < link_free_ns)
                        finish = link_free_ns;
                /* Bytes at B MB/s: size * 1000 / B nanoseconds. */
                finish += (uint64_t) size * 1000u / fs.bandwidth_mbs;
                link_free_ns = finish;
                (void) pthread_mutex_unlock(&link_lock);
        }
        until = (struct timespec){ .tv_sec = (time_t) (finish / 1000000000u),
                                   .tv_nsec = (long) (finish % 1000000000u) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
                ;
}

static int testfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
        uint64_t file_size = fs.size_mib << 20;
        unsigned i;

        if (file_index(path, &i) < 0)
                return -ENOENT;
        stall();
        if (off < 0 || (uint64_t) off >= file_size)
                return 0;
        if (size > file_size - (uint64_t) off)
                size = (size_t) (file_size - (uint64_t) off);

        if (fs.delay_us > 0 || fs.bandwidth_mbs > 0)
                transfer(size);
        fill(buf, size, i, (uint64_t) off);
        return (int) size;
}

static const struct fuse_operations ops = {
        .init = testfs_init,
        .getattr = testfs_getattr,
        .readdir = testfs_readdir,
        .open = testfs_open,
        .read = testfs_read,
};

static void help(void) {
        printf("usage: ra-testfs [--files N] [--size-mib M] [--max-readahead-kb K] [--delay-us U]\n"
               "                 [--bandwidth-mbs B] [--init-delay-ms D] [--stall-while PATH]\n"
               "                 MOUNTPOINT [FUSE options]\n"
               "\n"
               "Serves N read-only files, file-000, file-001, ..., of M MiB each, through the\n"
               "page cache. In file i, the 8-byte word at offset o (a multiple of 8) is the\n"
               "little-endian uint64 (i << 40 | o / 8).\n"
               "\n"
               "  --files N             how many files (1 to 1000; default 4)\n"
               "  --size-mib M          each file's size in MiB (1 to 1048576; default 64)\n"
               "  --max-readahead-kb K  max_readahead to answer INIT with (0 to 1048576); the\n"
               "                        bdi's read_ahead_kb becomes min(128, K). Default: the\n"
               "                        kernel's offer, 128\n"
               "  --delay-us U          every read request's round trip, in microseconds (0 to\n"
               "                        1000000; default 0); round trips overlap\n"
               "  --bandwidth-mbs B     one link of B MB/s (10^6 bytes) that every read's data\n"
               "                        crosses after its round trip, one request at a time (1\n"
               "                        to 100000; default none: a request costs its round\n"
               "                        trip alone, whatever its size). --delay-us 400\n"
               "                        --bandwidth-mbs 110 is sshfs over 1 GbE\n"
               "  --init-delay-ms D     answer INIT D milliseconds late (0 to 10000; default 0)\n"
               "  --stall-while PATH    every read, and the lookup of a name it does not have,\n"
               "                        waits for as long as PATH exists: a server that\n"
               "                        stopped answering (an absolute path)\n"
               "\n"
               "Without -f it returns once the mount answers. fusermount3 -u or umount stops it.\n"
               "\n");
}

/* Strictly an integer from min to max, if given; says which option and value if not. */
static int parse_option(const char *name, const char *value, uint64_t min, uint64_t max, uint64_t *ret) {
        char *end;
        uint64_t v;

        if (!value)
                return 0;
        errno = 0;
        v = strtoull(value, &end, 10);
        if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno != 0 || v < min || v > max) {
                fprintf(stderr,
                        "ra-testfs: --%s must be an integer from %" PRIu64 " to %" PRIu64 ", not '%s'\n",
                        name, min, max, value);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int parse_options(const Options *o) {
        if (parse_option("files", o->files, 1, 1000, &fs.files) < 0 ||
            parse_option("size-mib", o->size_mib, 1, 1u << 20, &fs.size_mib) < 0 ||
            parse_option("max-readahead-kb", o->max_readahead_kb, 0, 1u << 20, &fs.max_readahead_kb) < 0 ||
            parse_option("delay-us", o->delay_us, 0, 1000000, &fs.delay_us) < 0 ||
            parse_option("bandwidth-mbs", o->bandwidth_mbs, 1, 100000, &fs.bandwidth_mbs) < 0 ||
            parse_option("init-delay-ms", o->init_delay_ms, 0, 10000, &fs.init_delay_ms) < 0)
                return -EINVAL;
        /* The server runs from "/" once in the background: a relative path would move. */
        if (o->stall_while && o->stall_while[0] != '/') {
                fprintf(stderr, "ra-testfs: --stall-while needs an absolute path, not '%s'\n",
                        o->stall_while);
                return -EINVAL;
        }
        fs.stall_while = o->stall_while;
        return 0;
}

/*
 * Goes to the background as fuse_daemonize() does, except that the command
 * returns only once the server has answered: the kernel sets the bdi's
 * read_ahead_kb from the INIT reply, which comes after mount(2) returns, and
 * a test that looked at once would see the kernel's default. Every request,
 * the parent's stat() too, waits for INIT.
 */
static int daemonize_when_served(struct fuse_session *se, const char *mountpoint) {
        struct stat st;
        pid_t pid;
        int fd;

        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid > 0) {
                /* Should the server die, its connection must die with it,
                 * not hang this stat() on our copy of /dev/fuse. */
                (void) close(fuse_session_fd(se));
                if (stat(mountpoint, &st) < 0) {
                        fprintf(stderr, "ra-testfs: %s does not answer: %m\n", mountpoint);
                        _exit(EXIT_FAILURE);
                }
                _exit(EXIT_SUCCESS);
        }

        (void) setsid();
        (void) chdir("/");
        fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        (void) dup2(fd, STDIN_FILENO);
        (void) dup2(fd, STDOUT_FILENO);
        (void) dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
                (void) close(fd);
        return 0;
}

static void options_clear(Options *o) {
        free(o->files);
        free(o->size_mib);
        free(o->max_readahead_kb);
        free(o->delay_us);
        free(o->bandwidth_mbs);
        free(o->init_delay_ms);
        free(o->stall_while);
}

int main(int argc, char *argv[]) {
        _cleanup_(options_clear) Options o = {};
        struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
        struct fuse_cmdline_opts cmd = {};
        struct fuse_loop_config *loop;
        struct fuse *fuse = NULL;
        int r;

        /* Our options first, wherever they are: what is left is FUSE's. */
        if (fuse_opt_parse(&args, &o, option_spec, NULL) < 0) {
                r = 2;
                goto finish;
        }
        if (fuse_opt_insert_arg(&args, 1, default_options) < 0) {
                r = EXIT_FAILURE;
                goto finish;
        }
        if (fuse_parse_cmdline(&args, &cmd) < 0) {
                r = 2;
                goto finish;
        }
        if (cmd.show_help) {
                help();
                fuse_cmdline_help();
                fuse_lib_help(&args);
                r = EXIT_SUCCESS;
                goto finish;
        }
        if (cmd.show_version) {
                printf("ra-testfs %s (libfuse %s)\n", PACKAGE_VERSION, fuse_pkgversion());
                r = EXIT_SUCCESS;
                goto finish;
        }
        if (parse_options(&o) < 0) {
                r = 2;
                goto finish;
        }
        if (!cmd.mountpoint) {
                fprintf(stderr, "ra-testfs: no mount point given (see --help)\n");
                r = 2;
                goto finish;
        }

        /* fuse_new() fails on options it does not know, having named them. */
        fuse = fuse_new(&args, &ops, sizeof(ops), NULL);
        if (!fuse) {
                r = 2;
                goto finish;
        }
        if (fuse_mount(fuse, cmd.mountpoint) != 0) {
                fprintf(stderr, "ra-testfs: cannot mount at %s\n", cmd.mountpoint);
                r = EXIT_FAILURE;
                goto finish;
        }
        r = cmd.foreground ? 0 : daemonize_when_served(fuse_get_session(fuse), cmd.mountpoint);
        if (r < 0 || fuse_set_signal_handlers(fuse_get_session(fuse)) != 0) {
                fuse_unmount(fuse);
                r = EXIT_FAILURE;
                goto finish;
        }

        /* Threads, so that readahead's requests in flight wait their
         * --delay-us side by side, as on a network. */
        if (cmd.singlethread)
                r = fuse_loop(fuse);
        else {
                loop = fuse_loop_cfg_create();
                fuse_loop_cfg_set_clone_fd(loop, (unsigned) cmd.clone_fd);
                /* libfuse 3.14 leaves UINT_MAX here for "not given", and
                 * warns of it if passed on. */
                if (cmd.max_idle_threads != UINT_MAX)
                        fuse_loop_cfg_set_idle_threads(loop, cmd.max_idle_threads);
                fuse_loop_cfg_set_max_threads(loop, cmd.max_threads);
                r = fuse_loop_mt(fuse, loop);
                fuse_loop_cfg_destroy(loop);
        }
        /* 0 when unmounted, the signal's number when SIGTERM or SIGINT
         * stopped it: both are clean stops. */
        r = r >= 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        fuse_remove_signal_handlers(fuse_get_session(fuse));
        fuse_unmount(fuse);
finish:
        if (fuse)
                fuse_destroy(fuse);
        free(cmd.mountpoint);
        fuse_opt_free_args(&args);
        return r;
}
