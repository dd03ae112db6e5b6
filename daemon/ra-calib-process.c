/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ra-calib-process.h"
#include "ra-calib-safe.h"
#include "ra-diskstat.h"
#include "ra-macro.h"
#include "ra-util.h"

#define PASSES 5
#define JUMPS 8
/*
 * A rotational disk's reads of a size are timed as a stream of this many
 * KiB (at least two reads, stream_reads()): its cache reads ahead of the
 * read that brought the head, at the media's rate, from the moment that
 * read ends, and the host's own delay before the next read (a wakeup, the
 * bench's FUSE round trip) is that much read for free. One timed read after
 * it "calibrated" bench/devmodel's hdd-7200 (media 105-210 MB/s) at 201-456
 * MiB/s in six runs on a loaded host, its 256 KiB reads at up to 437 MiB/s;
 * timed as streams, at 164-177 MiB/s in six. What a stream misses is only
 * what was read ahead before the first read's return reached this process,
 * a share of the stream's 5-15 ms, and a slow wakeup there is taken by the
 * median of the passes (ra_calib_fit()).
 */
#define STREAM_KB 1024u

static void set_reading(RaCalibReads *j, bool reading) {
        __atomic_store_n(&j->shared->reading_since, reading ? ra_now_nsec() : 0, __ATOMIC_RELEASE);
}

/* Whether anything but these reads touched the disk since *start: the calibration gives way. */
static bool others_came(const RaCalibReads *j, const RaDiskStat *start, uint64_t our_sectors) {
        RaDiskStat now;

        if (ra_diskstat_read_at(j->sysfd, &now) < 0)
                return true;
        return now.in_flight > 0 || now.write_ios != start->write_ios ||
               now.read_sectors - start->read_sectors > our_sectors;
}

/* After reads that took read_nsec, the pause the scheduler asks for. */
static void pace(const RaCalibReads *j, uint64_t read_nsec) {
        uint64_t pause_nsec = ra_calib_pause_nsec(j->scheduler, read_nsec);
        struct timespec pause = { .tv_sec = (time_t) (pause_nsec / 1000000000ULL),
                                  .tv_nsec = (long) (pause_nsec % 1000000000ULL) };

        while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
                ;
}

/*
 * One direct read of kb at offset, marked in reading_since for the daemon's
 * deadline while it runs; then the pause the scheduler asks for, unless the
 * next read must follow at once (a disk's head brought where it reads next).
 */
static int direct_read(RaCalibReads *j, int fd, void *buf, uint32_t kb, uint64_t offset, uint64_t *ret_nsec,
                       bool pause_after) {
        size_t len = (size_t) kb * 1024;
        uint64_t start = ra_now_nsec(), took;
        ssize_t got;

        set_reading(j, true);
        got = pread(fd, buf, len, (off_t) offset);
        set_reading(j, false);
        if (got < 0)
                return -errno;
        if ((size_t) got != len)
                return -EIO;
        took = ra_now_nsec() - start;
        if (pause_after)
                pace(j, took);
        if (ret_nsec)
                *ret_nsec = took;
        return 0;
}

/* One direct read of kb at offset, timed into the next sample. */
static int timed_read(RaCalibReads *j, int fd, void *buf, uint32_t kb, uint64_t offset, bool jump) {
        RaCalibShared *sh = j->shared;
        uint64_t nsec;
        int r = direct_read(j, fd, buf, kb, offset, &nsec, true);

        if (r < 0)
                return r;
        sh->samples[sh->n++] = (RaCalibSample){ .kb = kb, .nsec = nsec, .jump = jump };
        return 0;
}

/*
 * How many reads of kb a rotational disk's stream makes: STREAM_KB, and at
 * least two, as a single 1 MiB read after the one that brought the head
 * still read at 206 MiB/s on a model whose media reads 200 at most.
 */
static uint32_t stream_reads(uint32_t kb) {
        return kb < STREAM_KB / 2 ? STREAM_KB / kb : 2;
}

/*
 * A stream of reads of kb from offset, one after the other, timed from the
 * return of the read before them (which brought the head) to the last's
 * into the next sample; then the pause the scheduler asks for.
 */
static int timed_stream(RaCalibReads *j, int fd, void *buf, uint32_t kb, uint64_t offset) {
        RaCalibShared *sh = j->shared;
        uint32_t reads = stream_reads(kb);
        uint64_t start = ra_now_nsec(), nsec;
        int r;

        for (uint32_t i = 0; i < reads; i++) {
                r = direct_read(j, fd, buf, kb, offset + (uint64_t) i * kb * 1024, NULL, false);
                if (r < 0)
                        return r;
        }
        nsec = ra_now_nsec() - start;
        sh->samples[sh->n++] = (RaCalibSample){ .kb = kb, .reads = reads, .nsec = nsec };
        pace(j, nsec);
        return 0;
}

/*
 * What a place holds for the largest of the first n_sizes sizes: its read
 * (a disk's stream), and the head's before it.
 */
static uint64_t span_of(const RaCalibReads *j, size_t n_sizes, bool streams) {
        uint32_t kb = j->sizes[n_sizes - 1];
        uint64_t span = (uint64_t) kb * (streams ? stream_reads(kb) : 1) * 1024;

        return j->rotational ? span + (uint64_t) j->jump_kb * 1024 : span;
}

/*
 * The process: reads of each size in turn (a rotational disk's: streams),
 * five passes, each at a place of its own (ra_calib_places()); then, on a
 * rotational disk, small reads far apart, which jump. Each read only if the
 * budget allows it (ra_calib_affordable()) and nothing else came meanwhile.
 */
static int measure(RaCalibReads *j) {
        RaCalibShared *sh = j->shared;
        uint64_t offset, shift, our_sectors = 0, places[PASSES * RA_CALIB_POINTS_MAX + JUMPS];
        size_t n_places, k = 0, n_sizes = j->n_sizes;
        uint32_t jump_bytes = j->jump_kb * 1024;
        _cleanup_close_ int fd = -1;
        _cleanup_free_ void *buf = NULL;
        RaDiskStat start = {};
        bool streams;
        int r;

        /* The process's own class: reads of anything else on the disk come first (bfq, mq-deadline). */
        if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) < 0)
                return -errno;
        /* O_NONBLOCK: a removable drive's open does not wait for its medium; the reads then may. */
        set_reading(j, true);
        fd = open(j->devnode, O_RDONLY | O_DIRECT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        set_reading(j, false);
        if (fd < 0 || fcntl(fd, F_SETFL, O_RDONLY | O_DIRECT) < 0)
                return -errno;
        buf = aligned_alloc(4096, (size_t) j->sizes[j->n_sizes - 1] * 1024);
        if (!buf)
                return -ENOMEM;
        r = ra_diskstat_read_at(j->sysfd, &start);
        if (r < 0)
                return r;

        /*
         * Every read somewhere the device has not read: its cache can answer
         * none. On a disk whose head moves, a small read there first brings
         * the head, so that a size's reads cost what they do in sequence,
         * without the seek (the reads that jump measure that); they are
         * timed as a stream (STREAM_KB). The places move with the clock: a
         * calibration asked for again does not read where the last did.
         */
        /*
         * A small device (a 505 KiB stick) has room for few places of the
         * largest size: the largest sizes go until one pass of those left
         * has a place each.
         */
        /*
         * Streams need room: a device that says it is rotational but holds
         * less than a pass of the smallest size's streams (a 505 KiB loop
         * device over a file on a disk) is timed a read at a time, as it was
         * before streams; no disk with a head and a cache is that small.
         */
        streams = j->rotational && span_of(j, 1, true) * PASSES <= j->size_bytes;
        while (n_sizes > 1 && span_of(j, n_sizes, streams) * n_sizes > j->size_bytes)
                n_sizes--;
        /* The clock times a large odd number (2^64 / the golden ratio): nearby starts, far-apart shifts. */
        shift = ra_now_nsec() * 0x9E3779B97F4A7C15ULL;
        n_places = ra_calib_places(j->size_bytes, PASSES * n_sizes + (j->rotational ? JUMPS : 0),
                                   span_of(j, n_sizes, streams), jump_bytes, shift, places);
        for (unsigned pass = 0; pass < PASSES; pass++)
                for (size_t i = 0; i < n_sizes; i++) {
                        uint32_t kb = j->sizes[i] * (streams ? stream_reads(j->sizes[i]) : 1);

                        if (k == n_places || !ra_calib_affordable(sh->samples, sh->n, kb))
                                goto last_read;
                        if (others_came(j, &start, our_sectors)) {
                                sh->interrupted = true;
                                return 0;
                        }
                        offset = places[k++];
                        if (j->rotational) {
                                r = direct_read(j, fd, buf, j->jump_kb, offset, NULL, false);
                                if (r < 0)
                                        return r;
                                offset += jump_bytes;
                                our_sectors += jump_bytes / 512;
                        }
                        if (streams)
                                r = timed_stream(j, fd, buf, j->sizes[i], offset);
                        else
                                r = timed_read(j, fd, buf, j->sizes[i], offset, false);
                        if (r < 0)
                                return r;
                        our_sectors += (uint64_t) kb * 2;
                }

        for (unsigned i = 0; j->rotational && i < JUMPS && k < n_places; i++) {
                if (!ra_calib_affordable(sh->samples, sh->n, j->jump_kb))
                        break;
                if (others_came(j, &start, our_sectors)) {
                        sh->interrupted = true;
                        break;
                }
                r = timed_read(j, fd, buf, j->jump_kb, places[k++], true);
                if (r < 0)
                        return r;
                our_sectors += jump_bytes / 512;
        }

last_read:
        /*
         * What came during the last read counts too: a read that queued behind
         * somebody else's (this process's class is idle) took their time, and
         * the budget may have ended the reads right after it (a 4 KiB read
         * behind a dd on ssd-ctrl took 2 s, and was "calibrated" at 2 KiB/s).
         */
        if (sh->n > 0 && !sh->interrupted && others_came(j, &start, our_sectors))
                sh->interrupted = true;
        return 0;
}

void ra_calib_process(RaCalibReads *j, pid_t daemon) {
        sigset_t none;

        (void) sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != daemon)
                _exit(EXIT_FAILURE);
        /* sysfd to 3, exit_fd to 4, through copies above them so that neither overwrites the other. */
        j->sysfd = fcntl(j->sysfd, F_DUPFD_CLOEXEC, 5);
        j->exit_fd = fcntl(j->exit_fd, F_DUPFD_CLOEXEC, 5);
        if (j->sysfd < 0 || j->exit_fd < 0 || dup2(j->sysfd, 3) < 0 || dup2(j->exit_fd, 4) < 0)
                _exit(EXIT_FAILURE);
        j->sysfd = 3;
        j->exit_fd = 4;
        (void) close_range(5, ~0U, 0);
        j->shared->error = measure(j);
        _exit(EXIT_SUCCESS);
}
