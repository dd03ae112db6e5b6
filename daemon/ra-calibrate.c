/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/ioprio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ra-calib.h"
#include "ra-calibrate.h"
#include "ra-log.h"
#include "ra-registry.h"
#include "ra-stats.h"
#include "ra-util.h"

/* A disk that has not read or written for this long may be spun down: it is not woken. */
#define AWAKE_USEC (60 * 1000000ULL)
/* After a calibration other reads interrupted, the quiet to wait for before the next. */
#define RETRY_USEC (60 * 1000000ULL)
#define PASSES 5
#define JUMPS 8
#define JUMP_KB 4

typedef struct RaCalibJob {
        Manager *manager;
        sd_bus_message *request; /* Calibrate() over D-Bus, answered when done; NULL when radaemon chose */

        /* Given to the thread, read-only there. */
        char *name, *identity, *devnode;
        int sysfd; /* the disk's sysfs directory, for its counters */
        uint32_t max_kb;
        uint64_t size_bytes;
        bool rotational;

        /* The thread's results. */
        RaCalibSample samples[RA_CALIB_SAMPLES_MAX];
        size_t n;
        int error;        /* a negative errno: it could not be read, or not at idle priority */
        bool interrupted; /* other I/O came while it ran */

        pthread_t thread;
        int efd;
        sd_event_source *done;
} RaCalibJob;

static RaCalibJob *job_free(RaCalibJob *j) {
        if (!j)
                return NULL;
        sd_event_source_disable_unref(j->done);
        if (j->efd >= 0)
                (void) close(j->efd);
        if (j->sysfd >= 0)
                (void) close(j->sysfd);
        sd_bus_message_unref(j->request);
        free(j->name);
        free(j->identity);
        free(j->devnode);
        return mfree(j);
}
RA_DEFINE_CLEANUP(RaCalibJob, job_free)

static uint64_t now_nsec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* Whether anything but these reads touched the disk since *start: the calibration gives way. */
static bool others_came(const RaCalibJob *j, const RaDiskStat *start, uint64_t our_sectors) {
        RaDiskStat now;

        if (ra_stats_read_at(j->sysfd, &now) < 0)
                return true;
        return now.in_flight > 0 || now.write_ios != start->write_ios ||
               now.read_sectors - start->read_sectors > our_sectors;
}

/* One direct read of kb at offset, timed into the next sample. */
static int timed_read(RaCalibJob *j, int fd, void *buf, uint32_t kb, uint64_t offset, bool jump) {
        size_t len = (size_t) kb * 1024;
        uint64_t start = now_nsec();
        ssize_t got = pread(fd, buf, len, (off_t) offset);

        if (got < 0)
                return -errno;
        if ((size_t) got != len)
                return -EIO;
        j->samples[j->n++] = (RaCalibSample){ .kb = kb, .nsec = now_nsec() - start, .jump = jump };
        return 0;
}

/*
 * The thread: sequential reads of each size in turn, five passes, from the
 * middle of the disk on (a disk's middle zone reads at its middle speed);
 * then, on a rotational disk, small reads an eighth of the disk apart. Each
 * read only if the budget allows it (ra_calib_affordable()) and nothing else
 * came meanwhile.
 */
static void *measure(void *userdata) {
        RaCalibJob *j = userdata;
        uint32_t sizes[RA_CALIB_POINTS_MAX];
        size_t n_sizes = ra_calib_sizes(j->max_kb, sizes);
        uint64_t offset, our_sectors = 0, one = 1;
        _cleanup_close_ int fd = -1;
        RaDiskStat start = {};
        void *buf = NULL;
        int r = 0;

        /* The thread's own class: reads of anything else on the disk come first. */
        if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) < 0) {
                r = -errno;
                goto finish;
        }
        fd = open(j->devnode, O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                goto finish;
        }
        buf = aligned_alloc(4096, (size_t) sizes[n_sizes - 1] * 1024);
        if (!buf) {
                r = -ENOMEM;
                goto finish;
        }
        r = ra_stats_read_at(j->sysfd, &start);
        if (r < 0)
                goto finish;

        offset = j->size_bytes / 2;
        offset -= offset % (1024 * 1024);
        /* A disk's head goes there first: the seek is not what the sizes cost. */
        if (j->rotational && offset + JUMP_KB * 1024 <= j->size_bytes) {
                if (pread(fd, buf, JUMP_KB * 1024, (off_t) offset) < 0) {
                        r = -errno;
                        goto finish;
                }
                offset += JUMP_KB * 1024;
                our_sectors += JUMP_KB * 2;
        }
        for (unsigned pass = 0; pass < PASSES && r == 0; pass++)
                for (size_t i = 0; i < n_sizes && r == 0; i++) {
                        uint64_t len = (uint64_t) sizes[i] * 1024;

                        if (len > j->size_bytes || !ra_calib_affordable(j->samples, j->n, sizes[i]))
                                goto finish;
                        if (others_came(j, &start, our_sectors)) {
                                j->interrupted = true;
                                goto finish;
                        }
                        if (offset + len > j->size_bytes)
                                offset = 0;
                        r = timed_read(j, fd, buf, sizes[i], offset, false);
                        offset += len;
                        our_sectors += len / 512;
                }

        for (unsigned i = 0; j->rotational && i < JUMPS && r == 0; i++) {
                /* Eighths of the disk in an order that never reads two neighbours in turn. */
                uint64_t at = j->size_bytes / JUMPS * ((i * 3 + 1) % JUMPS);

                at -= at % 4096;
                if (!ra_calib_affordable(j->samples, j->n, JUMP_KB))
                        break;
                if (others_came(j, &start, our_sectors)) {
                        j->interrupted = true;
                        break;
                }
                r = timed_read(j, fd, buf, JUMP_KB, at, true);
                our_sectors += JUMP_KB * 2;
        }

finish:
        /*
         * What came during the last read counts too: a read that queued behind
         * somebody else's (this thread's class is idle) took their time, and
         * the budget may have ended the reads right after it.
         */
        if (r == 0 && j->n > 0 && !j->interrupted && others_came(j, &start, our_sectors))
                j->interrupted = true;
        free(buf);
        j->error = r;
        (void) write(j->efd, &one, sizeof(one));
        return NULL;
}

static const char *figures(const RaCalib *c, char *buf, size_t size) {
        ra_calib_describe(c, buf, size);
        return buf;
}

/* Back in the event loop: what the thread measured goes to the tuning path (on_calibration). */
static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        _cleanup_(job_freep) RaCalibJob *j = userdata;
        Manager *m = j->manager;
        uint64_t now = 0;
        char text[512];
        RaCalib c = {};
        bool measured = false;
        RaDisk *d;
        int r = 0;

        (void) pthread_join(j->thread, NULL);
        m->calibration = NULL;
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);

        d = ra_registry_find(m, j->name);
        if (!d || !ra_streq(d->identity, j->identity)) {
                log_info("%s: calibrated, but it is gone (or another medium came): nothing kept.", j->name);
                r = -ENODEV;
                goto reply;
        }
        if (j->error < 0) {
                r = j->error;
                /* Not again this run: a disk that cannot be read directly will not be readable in a minute.
                 */
                d->calib_after = UINT64_MAX;
                log_warning_errno(r, "%s: cannot calibrate it: %m; it keeps its prior.", d->name);
        } else if (j->interrupted) {
                r = -EBUSY;
                d->calib_after = now + RETRY_USEC;
                log_info("%s: calibration stopped: something else read or wrote the disk meanwhile; "
                         "trying again after a minute of quiet.",
                         d->name);
        } else if (ra_calib_fit(j->samples, j->n, (uint64_t) time(NULL), &c) < 0) {
                r = -ENODATA;
                d->calib_after = UINT64_MAX;
                log_warning(
                        "%s: calibration read nothing in sequence within its budget; it keeps its prior.",
                        d->name);
        } else {
                uint64_t bytes = 0, nsec = 0;

                for (size_t i = 0; i < j->n; i++) {
                        bytes += (uint64_t) j->samples[i].kb * 1024;
                        nsec += j->samples[i].nsec;
                }
                log_disk(LOG_INFO, RA_LOG_CALIBRATION, d->name, d->attrs.read_ahead_kb, "calibrated",
                         "%s: calibrated with %zu direct reads, %" PRIu64 " KiB in %" PRIu64 " ms: %s.",
                         d->name, j->n, bytes / 1024, nsec / 1000000, figures(&c, text, sizeof(text)));
                measured = true;
        }
        m->on_calibration(m, d, false, measured ? &c : NULL);

reply:
        if (j->request) {
                if (r < 0)
                        (void) sd_bus_reply_method_errorf(
                                j->request, SD_BUS_ERROR_FAILED, "Calibration failed: %s.",
                                r == -EBUSY ? "other reads or writes came meanwhile" : strerror(-r));
                else
                        (void) sd_bus_reply_method_return(j->request, "s", figures(&c, text, sizeof(text)));
        }
        return 0;
}

static bool calibratable(const RaDisk *d) {
        return d->kind == RA_KIND_DISK && d->devnode && d->identity && d->attrs.size_bytes > 0 &&
               !ra_streq(d->attrs.transport, "zram") && !ra_streq(d->attrs.transport, "ram");
}

static int start(Manager *m, RaDisk *d, sd_bus_message *request) {
        _cleanup_(job_freep) RaCalibJob *j = NULL;
        int r;

        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        *j = (RaCalibJob){
                .manager = m,
                .sysfd = -1,
                .efd = -1,
                .max_kb = d->attrs.max_sectors_kb,
                .size_bytes = d->attrs.size_bytes,
                .rotational = d->attrs.rotational,
                .request = sd_bus_message_ref(request),
        };
        j->name = strdup(d->name);
        j->identity = strdup(d->identity);
        j->devnode = strdup(d->devnode);
        if (!j->name || !j->identity || !j->devnode)
                return -ENOMEM;
        j->sysfd = ra_disk_open_sysfs(d);
        if (j->sysfd < 0)
                return j->sysfd;
        j->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (j->efd < 0)
                return -errno;
        r = sd_event_add_io(m->event, &j->done, j->efd, EPOLLIN, on_done, j);
        if (r < 0)
                return r;
        r = -pthread_create(&j->thread, NULL, measure, j);
        if (r < 0)
                return r;

        log_info("%s: calibrating: direct reads at idle priority, at most %llu MiB and a second of the "
                 "disk's time%s.",
                 d->name, RA_CALIB_BYTES_MAX / 1024 / 1024,
                 d->attrs.rotational ? ", 8 of them small reads far apart" : "");
        m->calibration = TAKE_PTR(j);
        m->on_calibration(m, d, true, NULL);
        return 0;
}

void ra_calibrate_consider(Manager *m, RaDisk *d, uint64_t now) {
        int r;

        if (!m->config->calibrate || ra_context_observing(m) || m->calibration || !calibratable(d))
                return;
        /* Anything that decides it but its prior: a pin, the configuration, a fleet, what it learned. */
        if (d->decision.source != RA_SOURCE_PRIOR || d->model.learned_kb > 0 ||
            ra_state_calib(m->state, d->identity) || ra_state_learned(m->state, d->identity) > 0)
                return;
        if (now < d->calib_after || d->idle_samples == 0 || d->stat.in_flight > 0)
                return;
        if (d->attrs.rotational && (d->active_usec == 0 || now - d->active_usec > AWAKE_USEC))
                return;

        r = start(m, d, NULL);
        if (r < 0) {
                d->calib_after = UINT64_MAX;
                log_warning_errno(r, "%s: cannot start its calibration: %m", d->name);
        }
}

int ra_calibrate_request(Manager *m, RaDisk *d, sd_bus_message *request) {
        if (m->calibration)
                return -EBUSY;
        if (!calibratable(d))
                return -EOPNOTSUPP;
        return start(m, d, request);
}

void ra_calibrate_stop(Manager *m) {
        RaCalibJob *j = m->calibration;

        if (!j)
                return;
        (void) pthread_join(j->thread, NULL);
        m->calibration = job_free(j);
}
