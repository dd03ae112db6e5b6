/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "ra-log.h"
#include "ra-tracefs-internal.h"
#include "ra-tracefs.h"
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
/*
 * A request's completion: with its issue, how long the device took, for the
 * cost model of a device never calibrated (ra_calib_trace_complete()). As
 * many events again as block_rq_issue, filtered alike.
 */
#define COMPLETE_EVENT "events/block/block_rq_complete/"
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
/* The kernel refuses a filter of a page or more. */
#define FILTER_MAX 4000
#define FILTER_SIZE (FILTER_MAX + 64)
/* The format files are a few KiB. */
#define FORMAT_MAX 16384

static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static int write_attr(const RaTracefs *t, const char *attr, const char *value) {
        _cleanup_close_ int dfd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (dfd < 0)
                return negative_errno();
        return ra_write_file_at(dfd, attr, value);
}

int ra_tracefs_read_attr(const RaTracefs *t, const char *attr, char *buf, size_t size) {
        _cleanup_close_ int dfd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (dfd < 0)
                return negative_errno();
        return ra_read_file_at(dfd, attr, buf, size);
}

static int write_event_attr(const RaTracefs *t, RaPcacheKind k, const char *attr, const char *value) {
        char path[128];

        (void) snprintf(path, sizeof(path), "events/%s/%s", ra_pcache_kind_path(k), attr);
        return write_attr(t, path, value);
}

RaTracefs *ra_tracefs_close(RaTracefs *t) {
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
                if (t->formats[2].id != 0)
                        (void) write_attr(t, COMPLETE_EVENT "enable", "0");
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

/*
 * Whether pid is a radaemon still running: its command is ours. Not merely
 * alive: a crashed radaemon's pid is soon another process's, and its
 * instance would stay enabled for as long as that one runs. In the unit's
 * sandbox another user's process, or a root one with capabilities, is
 * hidden (ProtectProc=invisible): not a radaemon either.
 */
static bool is_live_radaemon(long pid, const char *comm) {
        char path[64], buf[32];

        (void) snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
        return ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) >= 0 && strcmp(buf, comm) == 0;
}

/*
 * Instances of radaemons that were killed before they could remove them.
 * Should a live one be taken for dead, the kernel refuses to remove an
 * instance whose buffers are open (EBUSY).
 */
static void remove_stale_instances(const char *instances) {
        _cleanup_close_ int dfd = -1;
        struct dirent *de;
        char comm[32];
        DIR *d;

        if (ra_read_file_at(AT_FDCWD, "/proc/self/comm", comm, sizeof(comm)) < 0)
                return;
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
                if (*end || pid <= 0 || pid == (long) getpid() || is_live_radaemon(pid, comm))
                        continue;
                if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) < 0)
                        log_debug_errno(errno, "Cannot remove the stale tracefs instance %s: %m",
                                        de->d_name);
        }
        dfd = -1; /* closedir() closes it */
        closedir(d);
}

/* event is EVENT, BIO_EVENT or COMPLETE_EVENT. */
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
static void enable_pcache(RaTracefs *t) {
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
static size_t read_page_size(const RaTracefs *t) {
        char buf[32];
        unsigned kb;

        if (ra_tracefs_read_attr(t, "buffer_subbuf_size_kb", buf, sizeof(buf)) >= 0 &&
            sscanf(buf, "%u", &kb) == 1 && kb > 0 && kb <= 1024)
                return (size_t) kb * 1024;
        return (size_t) sysconf(_SC_PAGESIZE);
}

static int open_cpus(RaTracefs *t) {
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
                RaTracefsCpu *cpus;
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
                t->cpus[t->n_cpus++] = (RaTracefsCpu){ .fd = fd, .n = n };
        }
        closedir(d);
        if (r >= 0 && t->n_cpus == 0)
                r = -ENOENT;
        return r;
}

int ra_tracefs_open(RaTracefs **ret) {
        _cleanup_(ra_tracefs_closep) RaTracefs *t = NULL;
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
        /* Without it, a device is modelled from its calibration only. */
        if (read_format(root, COMPLETE_EVENT, &t->formats[2]) < 0 || !t->formats[2].complete)
                t->formats[2] = (RaTraceFormat){};
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
                r = ra_tracefs_set_devices(t, NULL, 0, NULL, 0);
        if (r >= 0)
                r = write_attr(t, EVENT "enable", "1");
        if (r >= 0 && t->formats[2].id != 0 && write_attr(t, COMPLETE_EVENT "enable", "1") < 0)
                t->formats[2] = (RaTraceFormat){};
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

const char *ra_tracefs_path(const RaTracefs *t) {
        return t->dir;
}

RaEvidence ra_tracefs_evidence(const RaTracefs *t) {
        return t->evidence;
}

const char *ra_tracefs_mounted(const RaTracefs *t) {
        return t->mounted;
}

bool ra_tracefs_sees_bios(const RaTracefs *t) {
        return t->formats[1].id != 0;
}

int ra_tracefs_set_superblocks(RaTracefs *t, const RaSbMap *map) {
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

int ra_tracefs_set_devices(RaTracefs *t, const dev_t *requests, size_t n_requests, const dev_t *bios,
                           size_t n_bios) {
        char filter[FILTER_SIZE];
        int r;

        device_filter(requests, n_requests, filter);
        r = write_attr(t, EVENT "filter", filter);
        if (r >= 0 && t->formats[2].id != 0)
                r = write_attr(t, COMPLETE_EVENT "filter", filter);
        if (r < 0 || !ra_tracefs_sees_bios(t))
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
