/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ra-devmodel: serves one emulated device as a file, /disk, in a FUSE mount,
 * and answers each read or write when the modelled device would. Attached
 * as a loop device with direct I/O, the block device above stays real
 * (uevents, sysfs, scheduler, merging) and this server sees the commands a
 * device would see. /stats tells what the model counted.
 *
 *   ra-devmodel --check CLASS.conf              validate, print the class as JSON
 *   ra-devmodel [--transit-us N] CLASS.conf BACKING MOUNTPOINT
 *                                               serve until unmounted or signalled
 *
 * --transit-us: the emulation's own round trip (FUSE, the loop worker, the
 * wake-ups), which a command spends outside this server. A command that finds
 * the device idle is taken to have reached it that much earlier, when it
 * entered the emulation, so at queue depth 1 it costs the modelled time, not
 * the modelled time plus the round trip. A command that waits for a busy
 * device gains nothing: the device's throughput stays the model's.
 *
 * FUSE's threads take requests in no set order, so two commands the block
 * layer sent one after the other can reach the model swapped, and a disk
 * would seek back for the first. A command that finds the device busy
 * therefore waits, and when the device is free the earliest arrival goes
 * first, or a lower offset that arrived within the round trip of it (the
 * block layer sends a batch of readahead in ascending order).
 */
#define FUSE_USE_VERSION 312
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dm-cost.h"
#include "dm-params.h"

#define STATS_MAX 1024

typedef struct Server {
        DmParams params;
        DmModel *model;
        pthread_mutex_t lock;
        pthread_cond_t changed; /* a command came or went: who is next may have changed */
        DmWaiting *waiting;     /* commands waiting for the device, on their threads' stacks */
        int backing;
        uint64_t transit_ns;
} Server;

static Server server = { .lock = PTHREAD_MUTEX_INITIALIZER, .backing = -1 };

static uint64_t now_ns(void);

/* When the command entered the emulation, as far as the model knows. */
static uint64_t arrival_ns(void) {
        uint64_t now = now_ns();

        return now > server.transit_ns ? now - server.transit_ns : 0;
}

static uint64_t now_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static struct timespec timespec_of(uint64_t ns) {
        return (struct timespec){ .tv_sec = (time_t) (ns / 1000000000u),
                                  .tv_nsec = (long) (ns % 1000000000u) };
}

/* Sleeps until the device would be done: the server's own time is hidden
 * while it is below the modelled cost. */
static void wait_until(uint64_t deadline) {
        struct timespec ts = timespec_of(deadline);

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

/* Waits until the device takes this command, and returns when the device
 * completes it. */
static uint64_t admit(uint64_t offset, uint64_t len, bool write) {
        DmWaiting me = { .arrival_ns = arrival_ns(), .offset = offset };
        uint64_t deadline;

        pthread_mutex_lock(&server.lock);
        me.next = server.waiting;
        server.waiting = &me;
        pthread_cond_broadcast(&server.changed);
        for (;;) {
                uint64_t free_at = dm_model_free_at(server.model);

                /* Commands that came within one round trip of each other
                 * may have been swapped on their way here. */
                if (dm_next_command(server.waiting, server.transit_ns) == &me) {
                        struct timespec ts = timespec_of(free_at);

                        if (free_at <= now_ns())
                                break;
                        (void) pthread_cond_timedwait(&server.changed, &server.lock, &ts);
                } else
                        (void) pthread_cond_wait(&server.changed, &server.lock);
        }
        for (DmWaiting **w = &server.waiting; *w; w = &(*w)->next)
                if (*w == &me) {
                        *w = me.next;
                        break;
                }
        /* Started when it arrived or when the device freed, whichever is later. */
        deadline = write ? dm_model_write(server.model, me.arrival_ns, offset, len)
                         : dm_model_read(server.model, me.arrival_ns, offset, len);
        pthread_cond_broadcast(&server.changed);
        pthread_mutex_unlock(&server.lock);
        return deadline;
}

static int format_stats(char *buf, size_t size) {
        DmStats s;

        pthread_mutex_lock(&server.lock);
        s = *dm_model_stats(server.model);
        pthread_mutex_unlock(&server.lock);
        return snprintf(buf, size,
                        "reads %" PRIu64 "\nread_bytes %" PRIu64 "\nwrites %" PRIu64 "\nwrite_bytes %" PRIu64
                        "\nseeks %" PRIu64 "\nskips %" PRIu64 "\ncache_hits %" PRIu64 "\ncontinued %" PRIu64
                        "\nbusy_ns %" PRIu64 "\nmedia_bytes %" PRIu64 "\n",
                        s.reads, s.read_bytes, s.writes, s.write_bytes, s.seeks, s.skips, s.cache_hits,
                        s.continued, s.busy_ns, s.media_bytes);
}

static void *dm_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
        /* One block command (at most max_sectors_kb = 1024) is one request:
         * FUSE splits a direct read at max_pages, which follows max_write. */
        conn->max_write = 1024 * 1024;
        conn->max_readahead = 0;
        if (conn->capable & FUSE_CAP_ASYNC_DIO)
                conn->want |= FUSE_CAP_ASYNC_DIO;
        cfg->direct_io = 1;
        cfg->kernel_cache = 0;
        cfg->attr_timeout = 3600;
        cfg->entry_timeout = 3600;
        return NULL;
}

static int dm_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
        memset(st, 0, sizeof(*st));
        if (strcmp(path, "/") == 0) {
                st->st_mode = S_IFDIR | 0755;
                st->st_nlink = 2;
        } else if (strcmp(path, "/disk") == 0) {
                st->st_mode = S_IFREG | 0600;
                st->st_nlink = 1;
                st->st_size = (off_t) server.params.size;
                st->st_blksize = 4096;
        } else if (strcmp(path, "/stats") == 0) {
                st->st_mode = S_IFREG | 0444;
                st->st_nlink = 1;
                st->st_size = STATS_MAX;
        } else
                return -ENOENT;
        return 0;
}

static int dm_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
        if (strcmp(path, "/") != 0)
                return -ENOENT;
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        fill(buf, "disk", NULL, 0, 0);
        fill(buf, "stats", NULL, 0, 0);
        return 0;
}

static int dm_open(const char *path, struct fuse_file_info *fi) {
        if (strcmp(path, "/disk") != 0 && strcmp(path, "/stats") != 0)
                return -ENOENT;
        if (strcmp(path, "/stats") == 0 && (fi->flags & O_ACCMODE) != O_RDONLY)
                return -EACCES;
        fi->direct_io = 1;
        return 0;
}

static int dm_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
        uint64_t deadline;
        ssize_t n;

        if (strcmp(path, "/stats") == 0) {
                char text[STATS_MAX];
                int len = format_stats(text, sizeof(text));

                if (off >= len)
                        return 0;
                n = (ssize_t) size < len - off ? (ssize_t) size : len - off;
                memcpy(buf, text + off, (size_t) n);
                return (int) n;
        }

        if (off < 0 || (uint64_t) off >= server.params.size)
                return 0;
        if ((uint64_t) off + size > server.params.size)
                size = (size_t) (server.params.size - (uint64_t) off);

        deadline = admit((uint64_t) off, size, false);

        n = pread(server.backing, buf, size, off);
        if (n < 0)
                return -errno;
        if ((size_t) n < size) /* a sparse image shorter than the device */
                memset(buf + n, 0, size - (size_t) n);
        wait_until(deadline);
        return (int) size;
}

static int dm_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
        uint64_t deadline;
        ssize_t n;

        if (strcmp(path, "/disk") != 0)
                return -EACCES;
        if (off < 0 || (uint64_t) off + size > server.params.size)
                return -ENOSPC;

        deadline = admit((uint64_t) off, size, true);

        n = pwrite(server.backing, buf, size, off);
        if (n < 0)
                return -errno;
        wait_until(deadline);
        return (int) n;
}

static int dm_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
        return 0; /* the backing file is scratch: what matters is the modelled cost */
}

static int dm_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
        return (uint64_t) size == server.params.size ? 0 : -EPERM;
}

static const struct fuse_operations ops = {
        .init = dm_init,
        .getattr = dm_getattr,
        .readdir = dm_readdir,
        .open = dm_open,
        .read = dm_read,
        .write = dm_write,
        .fsync = dm_fsync,
        .truncate = dm_truncate,
};

static int usage(void) {
        fprintf(stderr, "usage: ra-devmodel --check CLASS.conf\n"
                        "       ra-devmodel [--transit-us N] CLASS.conf BACKING MOUNTPOINT\n");
        return 2;
}

int main(int argc, char *argv[]) {
        char err[512];
        struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
        struct fuse_loop_config *loop;
        struct fuse *fuse;
        struct stat st;
        int r;

        if (argc == 3 && strcmp(argv[1], "--check") == 0) {
                DmParams p;

                if (dm_params_load(argv[2], &p, err, sizeof(err)) < 0) {
                        fprintf(stderr, "ra-devmodel: %s\n", err);
                        return 1;
                }
                dm_params_print_json(&p, stdout);
                return fflush(stdout) == 0 ? 0 : 1;
        }
        if (argc == 6 && strcmp(argv[1], "--transit-us") == 0) {
                char *end;
                unsigned long us;

                errno = 0;
                us = strtoul(argv[2], &end, 10);
                if (errno != 0 || end == argv[2] || *end != '\0' || us > 100000) {
                        fprintf(stderr,
                                "ra-devmodel: --transit-us must be 0 to 100000 microseconds, not '%s'\n",
                                argv[2]);
                        return 2;
                }
                server.transit_ns = (uint64_t) us * 1000u;
                argv += 2;
                argc -= 2;
        }
        if (argc != 4)
                return usage();

        if (dm_params_load(argv[1], &server.params, err, sizeof(err)) < 0) {
                fprintf(stderr, "ra-devmodel: %s\n", err);
                return 1;
        }
        {
                pthread_condattr_t attr;

                if (pthread_condattr_init(&attr) != 0 ||
                    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
                    pthread_cond_init(&server.changed, &attr) != 0) {
                        fprintf(stderr, "ra-devmodel: cannot make a condition variable\n");
                        return 1;
                }
                (void) pthread_condattr_destroy(&attr);
        }
        server.model = dm_model_new(&server.params);
        if (!server.model) {
                fprintf(stderr, "ra-devmodel: out of memory\n");
                return 1;
        }
        server.backing = open(argv[2], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (server.backing < 0 || fstat(server.backing, &st) < 0) {
                fprintf(stderr, "ra-devmodel: %s: %m\n", argv[2]);
                return 1;
        }
        if ((uint64_t) st.st_size < server.params.size &&
            ftruncate(server.backing, (off_t) server.params.size) < 0) {
                fprintf(stderr, "ra-devmodel: %s: cannot make it %" PRIu64 " bytes: %m\n", argv[2],
                        server.params.size);
                return 1;
        }
        /* libfuse allocates a buffer for every read: at 1 MiB, glibc would
         * mmap and unmap it each time, and the page faults cost more than
         * the command it serves. Keep such buffers on the heap. */
        (void) mallopt(M_MMAP_THRESHOLD, 64 * 1024 * 1024);
        (void) mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);

        /* Deadlines of tens of microseconds: no timer slack. */
        (void) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

        if (fuse_opt_add_arg(&args, argv[0]) < 0 || fuse_opt_add_arg(&args, "-ofsname=ra-devmodel") < 0 ||
            fuse_opt_add_arg(&args, "-osubtype=devmodel") < 0) {
                fprintf(stderr, "ra-devmodel: out of memory\n");
                return 1;
        }
        fuse = fuse_new(&args, &ops, sizeof(ops), NULL);
        if (!fuse)
                return 1;
        if (fuse_mount(fuse, argv[3]) != 0) {
                fprintf(stderr, "ra-devmodel: cannot mount at %s\n", argv[3]);
                fuse_destroy(fuse);
                return 1;
        }
        if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0) {
                fuse_unmount(fuse);
                fuse_destroy(fuse);
                return 1;
        }
        fprintf(stderr, "ra-devmodel: serving %s (%s) at %s/disk\n", server.params.name,
                server.params.emulates, argv[3]);

        /* Commands wait out their deadlines in worker threads: enough of
         * them for every command a loop device has in flight. */
        loop = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(loop, 128);
        fuse_loop_cfg_set_idle_threads(loop, 16);
        r = fuse_loop_mt(fuse, loop);
        fuse_loop_cfg_destroy(loop);

        fuse_remove_signal_handlers(fuse_get_session(fuse));
        fuse_unmount(fuse);
        fuse_destroy(fuse);
        fuse_opt_free_args(&args);
        {
                char text[STATS_MAX];
                (void) format_stats(text, sizeof(text));
                fprintf(stderr, "ra-devmodel: stopped; counted:\n%s", text);
        }
        server.model = dm_model_free(server.model);
        return r == 0 ? 0 : 1;
}
