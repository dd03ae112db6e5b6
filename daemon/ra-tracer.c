/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "ra-tracer.h"
#include "ra-util.h"

/* One instance per daemon ("radaemon.<pid>"): two daemons (tests, benchmarks) must not share one. */
#define INSTANCE_PREFIX "radaemon."
#define EVENT "events/block/block_rq_issue/"
/*
 * On only while a bio-based device is managed: it fires for every bio
 * submitted to any device (a request-based disk's bios too, before they are
 * merged into requests), and each one costs a copy of its fields and the
 * filter's test, whether the filter keeps it or not.
 */
#define BIO_EVENT "events/block/block_bio_queue/"
/* Per CPU: some 3500 requests, or as many page-cache reads. */
#define BUFFER_KB "512"
/*
 * The kernel wakes a poll()er of a CPU's trace_pipe_raw once its buffer is
 * this full: half a buffer is read at a time, the other half is the time
 * the daemon has to get there. Read once a second only, the buffer overran
 * at 1 GB/s of cold page-cache reads (31 % of the events lost; 85 % at
 * 3.2 GB/s), and a buffer sized for the fastest reader would be mostly
 * unused memory on every CPU. Waking at a fill level costs nothing while
 * reads are slow (no wake-up before the interval's own drain) and a wake-up
 * per half buffer while they are fast.
 */
#define WAKE_PERCENT "50"
/* One drain's reading per CPU, at most: a storm of tiny requests costs no more than this. */
#define DRAIN_MAX_BYTES (1024 * 1024)
/* The kernel refuses a filter of a page or more. */
#define FILTER_MAX 4000
#define FILTER_SIZE (FILTER_MAX + 64)
/* The format files are a few KiB. */
#define FORMAT_MAX 16384

/* One CPU's buffer. */
typedef struct RaTracerCpu {
        int fd;                /* per_cpu/cpuN/trace_pipe_raw */
        unsigned n;            /* N */
        sd_event_source *wake; /* the kernel's poll says the buffer is WAKE_PERCENT full */
        uint64_t overrun;      /* per_cpu/cpuN/stats when last read: events overwritten unread */
        bool missed;           /* a page read since says the kernel overwrote events */
} RaTracerCpu;

struct RaTracer {
        char *dir;
        /* block_rq_issue's, then block_bio_queue's (id 0 where the kernel has none) */
        RaTraceFormat formats[2];
        bool bio_on;      /* block_bio_queue is enabled */
        size_t page_size; /* what one read of trace_pipe_raw returns */
        RaTracerCpu *cpus;
        size_t n_cpus;
        bool can_wake; /* the kernel took WAKE_PERCENT */
        RaTracerWake wake;
        void *wake_userdata;
        uint64_t read;        /* events handed over since ra_tracer_take_counts() */
        RaTraceEvent *events; /* one drain's, to be put in time order */
        size_t n_events, max_events;

        RaPcacheFormat pformat; /* the page-cache events, where evidence says they are on */
        RaEvidence evidence;
        RaPcacheEvent *pevents;
        size_t n_pevents, max_pevents;
        char *mounted; /* tracefs, where we mounted it */
};

static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static int write_attr(const RaTracer *t, const char *attr, const char *value) {
        _cleanup_close_ int dfd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (dfd < 0)
                return negative_errno();
        return ra_write_file_at(dfd, attr, value);
}

static int read_attr(const RaTracer *t, const char *attr, char *buf, size_t size) {
        _cleanup_close_ int dfd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (dfd < 0)
                return negative_errno();
        return ra_read_file_at(dfd, attr, buf, size);
}

static int write_event_attr(const RaTracer *t, RaPcacheKind k, const char *attr, const char *value) {
        char path[128];

        (void) snprintf(path, sizeof(path), "events/%s/%s", ra_pcache_kind_path(k), attr);
        return write_attr(t, path, value);
}

RaTracer *ra_tracer_close(RaTracer *t) {
        if (!t)
                return NULL;

        /* The instance, its buffers and its event go away with the directory, once nothing is open. */
        for (size_t i = 0; i < t->n_cpus; i++) {
                /* Out of the event loop before the fd it watches is closed. */
                t->cpus[i].wake = sd_event_source_disable_unref(t->cpus[i].wake);
                (void) ra_close(t->cpus[i].fd);
        }
        free(t->cpus);
        free(t->events);
        free(t->pevents);
        if (t->dir) {
                (void) write_attr(t, EVENT "enable", "0");
                if (t->bio_on)
                        (void) write_attr(t, BIO_EVENT "enable", "0");
                for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX; k++)
                        if (t->pformat.events[k].id != 0)
                                (void) write_event_attr(t, k, "enable", "0");
                (void) rmdir(t->dir);
        }
        free(t->dir);
        /* Left as found: a tracefs we mounted goes again (lazily: other readers keep theirs). */
        if (t->mounted)
                (void) umount2(t->mounted, MNT_DETACH);
        free(t->mounted);
        free(t);
        return NULL;
}

/* Instances of radaemons that were killed before they could remove them. */
static void remove_stale_instances(const char *instances) {
        _cleanup_close_ int dfd = -1;
        struct dirent *de;
        DIR *d;

        d = opendir(instances);
        if (!d)
                return;
        dfd = dirfd(d);

        while ((de = readdir(d))) {
                char *end;
                long pid;

                if (strncmp(de->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)) != 0)
                        continue;
                pid = strtol(de->d_name + strlen(INSTANCE_PREFIX), &end, 10);
                if (*end || pid <= 0 || kill((pid_t) pid, 0) == 0 || errno != ESRCH)
                        continue;
                (void) unlinkat(dfd, de->d_name, AT_REMOVEDIR);
        }
        dfd = -1; /* closedir() closes it */
        closedir(d);
}

/* event is EVENT or BIO_EVENT. */
static int read_format(const char *root, const char *event, RaTraceFormat *ret) {
        _cleanup_free_ char *header = malloc(FORMAT_MAX), *text = malloc(FORMAT_MAX);
        _cleanup_close_ int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        char path[128];
        int r;

        if (!header || !text)
                return -ENOMEM;
        if (dfd < 0)
                return negative_errno();
        (void) snprintf(path, sizeof(path), "%sformat", event);
        r = ra_read_file_at(dfd, "events/header_page", header, FORMAT_MAX);
        if (r >= 0)
                r = ra_read_file_at(dfd, path, text, FORMAT_MAX);
        if (r < 0)
                return r;
        return ra_trace_format_parse(header, text, ret);
}

/* The page-cache events this kernel has; -ENOENT when it has none this can use. */
/*
 * RADAEMON_PCACHE_FALLBACK=1 reads the page cache as a kernel without the
 * readahead tracepoints would let it (Debian 12's 6.1 has only
 * mm_filemap_add_to_page_cache): the fallback path is then exercised and
 * measured on any kernel.
 */
static bool pcache_fallback_forced(void) {
        const char *e = getenv("RADAEMON_PCACHE_FALLBACK");

        return e && strcmp(e, "1") == 0;
}

static int read_pcache_format(const char *root, RaPcacheFormat *ret) {
        _cleanup_close_ int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        char *texts[_RA_PCACHE_KIND_MAX] = {};
        _cleanup_free_ char *header = malloc(FORMAT_MAX);
        bool fallback = pcache_fallback_forced();
        int r;

        if (!header)
                return -ENOMEM;
        if (dfd < 0)
                return negative_errno();
        r = ra_read_file_at(dfd, "events/header_page", header, FORMAT_MAX);
        if (r < 0)
                return r;

        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX; k++) {
                char path[128];

                if (fallback && k != RA_PCACHE_ADD)
                        continue;
                texts[k] = malloc(FORMAT_MAX);
                if (!texts[k]) {
                        r = -ENOMEM;
                        break;
                }
                (void) snprintf(path, sizeof(path), "events/%s/format", ra_pcache_kind_path(k));
                if (ra_read_file_at(dfd, path, texts[k], FORMAT_MAX) < 0)
                        texts[k] = mfree(texts[k]);
        }
        if (r >= 0)
                r = ra_pcache_format_parse(header, (const char *const *) texts, ret);
        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX; k++)
                free(texts[k]);
        return r;
}

/* Turns the page-cache events on, with a filter that passes nothing until the map is known. */
static void enable_pcache(RaTracer *t) {
        int r = 0;

        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX && r >= 0; k++)
                if (t->pformat.events[k].id != 0) {
                        r = write_event_attr(t, k, "filter", "s_dev == 0");
                        if (r >= 0)
                                r = write_event_attr(t, k, "enable", "1");
                }
        if (r >= 0)
                return;

        /* Half on is worse than off: the block requests remain. */
        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX; k++)
                if (t->pformat.events[k].id != 0)
                        (void) write_event_attr(t, k, "enable", "0");
        t->pformat = (RaPcacheFormat){};
        t->evidence = RA_EVIDENCE_BLOCK;
}

/* A read of trace_pipe_raw returns one sub-buffer: a page, unless the kernel says otherwise. */
static size_t read_page_size(const RaTracer *t) {
        char buf[32];
        unsigned kb;

        if (read_attr(t, "buffer_subbuf_size_kb", buf, sizeof(buf)) >= 0 && sscanf(buf, "%u", &kb) == 1 &&
            kb > 0 && kb <= 1024)
                return (size_t) kb * 1024;
        return (size_t) sysconf(_SC_PAGESIZE);
}

static int open_cpus(RaTracer *t) {
        _cleanup_free_ char *path = NULL;
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (asprintf(&path, "%s/per_cpu", t->dir) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        d = opendir(path);
        if (!d)
                return negative_errno();

        while ((de = readdir(d))) {
                char file[sizeof(de->d_name) + 32];
                RaTracerCpu *cpus;
                unsigned n;
                int fd;

                if (sscanf(de->d_name, "cpu%u", &n) != 1)
                        continue;
                (void) snprintf(file, sizeof(file), "%s/trace_pipe_raw", de->d_name);
                fd = openat(dirfd(d), file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0) {
                        r = negative_errno();
                        break;
                }
                cpus = reallocarray(t->cpus, t->n_cpus + 1, sizeof(*cpus));
                if (!cpus) {
                        (void) ra_close(fd);
                        r = -ENOMEM;
                        break;
                }
                t->cpus = cpus;
                t->cpus[t->n_cpus++] = (RaTracerCpu){ .fd = fd, .n = n };
        }
        closedir(d);
        if (r >= 0 && t->n_cpus == 0)
                r = -ENOENT;
        return r;
}

int ra_tracer_open(RaTracer **ret) {
        _cleanup_(ra_tracer_closep) RaTracer *t = NULL;
        const char *root = NULL;
        char path[256];
        int r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;

        for (size_t i = 0; i < ELEMENTSOF(roots) && !root; i++) {
                (void) snprintf(path, sizeof(path), "%s/instances", roots[i]);
                if (access(path, F_OK) == 0)
                        root = roots[i];
        }

        /* Where nobody mounted tracefs (a machine without systemd, a container), we may. */
        if (!root) {
                if (mount("tracefs", roots[0], "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                        return errno == ENOENT || errno == ENODEV ? -ENOENT : negative_errno();
                t->mounted = strdup(roots[0]);
                if (!t->mounted) {
                        (void) umount2(roots[0], MNT_DETACH);
                        return -ENOMEM;
                }
                root = roots[0];
        }

        (void) snprintf(path, sizeof(path), "%s/instances", root);
        remove_stale_instances(path);

        r = read_format(root, EVENT, &t->formats[0]);
        if (r < 0)
                return r;
        /* Without it, bio-based devices are seen through their counters only. */
        if (read_format(root, BIO_EVENT, &t->formats[1]) < 0 || !t->formats[1].bio)
                t->formats[1] = (RaTraceFormat){};
        if (asprintf(&t->dir, "%s/instances/" INSTANCE_PREFIX "%d", root, (int) getpid()) < 0) {
                t->dir = NULL;
                return -ENOMEM;
        }

        if (mkdir(t->dir, 0700) < 0) {
                r = negative_errno();
                free(t->dir);
                t->dir = NULL;
                return r;
        }

        r = write_attr(t, "buffer_size_kb", BUFFER_KB);
        /* Older kernels have no such file: their poll() wakes at every event, so it is not used there. */
        if (r >= 0)
                t->can_wake = write_attr(t, "buffer_percent", WAKE_PERCENT) >= 0;
        if (r >= 0)
                r = ra_tracer_set_devices(t, NULL, 0, NULL, 0);
        if (r >= 0)
                r = write_attr(t, EVENT "enable", "1");
        if (r >= 0)
                r = open_cpus(t);
        if (r < 0)
                return r;

        t->evidence = RA_EVIDENCE_BLOCK;
        if (read_pcache_format(root, &t->pformat) >= 0) {
                t->evidence = t->pformat.evidence;
                enable_pcache(t);
        }
        t->page_size = read_page_size(t);

        *ret = TAKE_PTR(t);
        return 0;
}

const char *ra_tracer_path(const RaTracer *t) {
        return t->dir;
}

RaEvidence ra_tracer_evidence(const RaTracer *t) {
        return t->evidence;
}

const char *ra_tracer_mounted(const RaTracer *t) {
        return t->mounted;
}

bool ra_tracer_sees_bios(const RaTracer *t) {
        return t->formats[1].id != 0;
}

int ra_tracer_set_superblocks(RaTracer *t, const RaSbMap *map) {
        char filter[FILTER_MAX];
        int r;

        if (t->evidence < RA_EVIDENCE_FILEMAP)
                return 0;
        r = ra_sbmap_filter(map, filter, sizeof(filter));
        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX && r >= 0; k++)
                if (t->pformat.events[k].id != 0)
                        r = write_event_attr(t, k, "filter", filter);
        return r;
}

/* The reads of these devices, in the kernel's filter language. */
static void device_filter(const dev_t *devices, size_t n, char filter[static FILTER_SIZE]) {
        size_t len;

        strcpy(filter, "(dev == 0");
        len = strlen(filter);

        /* The tracepoint's dev is the kernel's encoding: major << 20 | minor. */
        for (size_t i = 0; i < n; i++) {
                unsigned long dev = (unsigned long) major(devices[i]) << 20 | minor(devices[i]);
                int k = snprintf(filter + len, FILTER_SIZE - len, " || dev == %lu", dev);

                if (k < 0 || len + (size_t) k >= FILTER_MAX) {
                        /* Too many to name: take every read, and pick ours when reading. */
                        (void) snprintf(filter, FILTER_SIZE, "(dev != 0");
                        len = strlen(filter);
                        break;
                }
                len += (size_t) k;
        }

        (void) snprintf(filter + len, FILTER_SIZE - len, ") && rwbs ~ \"*R*\"");
}

int ra_tracer_set_devices(RaTracer *t, const dev_t *requests, size_t n_requests, const dev_t *bios,
                          size_t n_bios) {
        char filter[FILTER_SIZE];
        int r;

        device_filter(requests, n_requests, filter);
        r = write_attr(t, EVENT "filter", filter);
        if (r < 0 || !ra_tracer_sees_bios(t))
                return r;

        if (n_bios == 0) {
                if (t->bio_on) {
                        r = write_attr(t, BIO_EVENT "enable", "0");
                        t->bio_on = r < 0;
                }
                return r;
        }
        device_filter(bios, n_bios, filter);
        r = write_attr(t, BIO_EVENT "filter", filter);
        if (r >= 0 && !t->bio_on) {
                r = write_attr(t, BIO_EVENT "enable", "1");
                t->bio_on = r >= 0;
        }
        return r;
}

static void collect(void *userdata, const RaTraceEvent *e) {
        RaTracer *t = userdata;

        if (!e->read)
                return;
        if (t->n_events == t->max_events) {
                size_t n = t->max_events ? t->max_events * 2 : 1024;
                RaTraceEvent *events = reallocarray(t->events, n, sizeof(*events));

                if (!events)
                        return; /* statistics can afford to lose a request */
                t->events = events;
                t->max_events = n;
        }
        t->events[t->n_events++] = *e;
}

static void collect_pcache(void *userdata, const RaPcacheEvent *e) {
        RaTracer *t = userdata;

        if (t->n_pevents == t->max_pevents) {
                size_t n = t->max_pevents ? t->max_pevents * 2 : 1024;
                RaPcacheEvent *events = reallocarray(t->pevents, n, sizeof(*events));

                if (!events)
                        return;
                t->pevents = events;
                t->max_pevents = n;
        }
        t->pevents[t->n_pevents++] = *e;
}

static int pcache_by_time(const void *a, const void *b) {
        const RaPcacheEvent *x = a, *y = b;

        /* Same time: what caused a window comes before the window (the kinds are in that order). */
        if (x->time_ns != y->time_ns)
                return x->time_ns < y->time_ns ? -1 : 1;
        return (x->kind > y->kind) - (x->kind < y->kind);
}

static int by_time(const void *a, const void *b) {
        const RaTraceEvent *x = a, *y = b;

        /* Same time (a clock too coarse): a stream reads upward. */
        if (x->time_ns != y->time_ns)
                return x->time_ns < y->time_ns ? -1 : 1;
        return x->sector < y->sector ? -1 : x->sector > y->sector;
}

/* Every page one CPU's buffer holds, up to DRAIN_MAX_BYTES. */
static int drain_cpu(RaTracer *t, RaTracerCpu *c, uint8_t *page) {
        RaTracePage layout = { .commit_size = t->formats[0].commit_size,
                               .data_offset = t->formats[0].data_offset };

        for (size_t total = 0; total < DRAIN_MAX_BYTES; total += t->page_size) {
                ssize_t n = read(c->fd, page, t->page_size);

                if (n < 0)
                        return errno == EAGAIN ? 0 : negative_errno();
                if (n == 0)
                        return 0;
                c->missed = c->missed || ra_trace_page_missed(&layout, page, (size_t) n);
                /* A page cut short or not understood is skipped: the next one starts afresh. */
                (void) ra_trace_page_parse(t->formats, t->bio_on ? 2 : 1, page, (size_t) n, collect, t);
                if (t->evidence >= RA_EVIDENCE_FILEMAP)
                        (void) ra_pcache_page_parse(&t->pformat, page, (size_t) n, collect_pcache, t);
        }
        return 0;
}

int ra_tracer_drain(RaTracer *t, RaTraceHandler fn, RaPcacheHandler pfn, void *userdata) {
        _cleanup_free_ uint8_t *page = malloc(t->page_size);
        int r = 0;

        if (!page)
                return -ENOMEM;

        /* Each CPU's buffer is in time order; a stream's requests may be spread over several. */
        t->n_events = t->n_pevents = 0;
        for (size_t i = 0; i < t->n_cpus && r >= 0; i++)
                r = drain_cpu(t, &t->cpus[i], page);
        t->read += t->n_events + t->n_pevents;
        if (t->n_events > 1)
                qsort(t->events, t->n_events, sizeof(*t->events), by_time);
        for (size_t i = 0; i < t->n_events; i++)
                fn(userdata, &t->events[i]);
        if (t->n_pevents > 1)
                qsort(t->pevents, t->n_pevents, sizeof(*t->pevents), pcache_by_time);
        for (size_t i = 0; i < t->n_pevents; i++)
                pfn(userdata, &t->pevents[i]);
        if (t->max_pevents > 4096) {
                t->pevents = mfree(t->pevents);
                t->max_pevents = 0;
        }
        t->n_pevents = 0;

        /* A burst's worth of events is not kept for the quiet intervals after it. */
        if (t->max_events > 4096) {
                t->events = mfree(t->events);
                t->max_events = 0;
        }
        t->n_events = 0;
        return r;
}

static int on_cpu_full(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        RaTracer *t = userdata;

        /* A buffer that cannot be polled would wake us in a loop: it is read once an interval instead. */
        if (revents & (EPOLLERR | EPOLLHUP)) {
                for (size_t i = 0; i < t->n_cpus; i++)
                        if (t->cpus[i].wake == s)
                                t->cpus[i].wake = sd_event_source_disable_unref(t->cpus[i].wake);
                return 0;
        }
        t->wake(t->wake_userdata);
        return 0;
}

int ra_tracer_watch(RaTracer *t, sd_event *event, RaTracerWake wake, void *userdata) {
        int r = 0;

        if (!t->can_wake)
                return 0;
        t->wake = wake;
        t->wake_userdata = userdata;
        for (size_t i = 0; i < t->n_cpus && r >= 0; i++)
                if (!t->cpus[i].wake)
                        r = sd_event_add_io(event, &t->cpus[i].wake, t->cpus[i].fd, EPOLLIN, on_cpu_full, t);
        if (r >= 0)
                return 0;
        for (size_t i = 0; i < t->n_cpus; i++)
                t->cpus[i].wake = sd_event_source_disable_unref(t->cpus[i].wake);
        return r;
}

void ra_tracer_set_watching(RaTracer *t, bool on) {
        for (size_t i = 0; i < t->n_cpus; i++)
                if (t->cpus[i].wake)
                        (void) sd_event_source_set_enabled(t->cpus[i].wake, on ? SD_EVENT_ON : SD_EVENT_OFF);
}

/* The kernel's count of one CPU's events overwritten unread: the line "overrun: N" of its stats. */
static int read_overrun(const RaTracer *t, unsigned cpu, uint64_t *ret) {
        char path[64], buf[1024], *p;
        int r;

        (void) snprintf(path, sizeof(path), "per_cpu/cpu%u/stats", cpu);
        r = read_attr(t, path, buf, sizeof(buf));
        if (r < 0)
                return r;
        /* At the start of a line: "commit overrun:" counts something else. */
        p = strncmp(buf, "overrun:", strlen("overrun:")) == 0 ? buf : strstr(buf, "\noverrun:");
        if (!p)
                return -EINVAL;
        p = strchr(p, ':') + 1;
        p += strspn(p, " ");
        p[strcspn(p, "\n")] = '\0';
        return ra_parse_u64(p, ret);
}

void ra_tracer_take_counts(RaTracer *t, uint64_t *ret_read, uint64_t *ret_lost) {
        uint64_t lost = 0;

        /* Only a CPU whose pages said so is asked: the count costs a file read a CPU. */
        for (size_t i = 0; i < t->n_cpus; i++) {
                RaTracerCpu *c = &t->cpus[i];
                uint64_t v;

                if (!c->missed)
                        continue;
                c->missed = false;
                if (read_overrun(t, c->n, &v) < 0 || v < c->overrun)
                        continue;
                lost += v - c->overrun;
                c->overrun = v;
        }
        *ret_read = t->read;
        *ret_lost = lost;
        t->read = 0;
}
