/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libmount.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ra-calib-process.h"
#include "ra-calib-safe.h"
#include "ra-calib-sched.h"
#include "ra-calib.h"
#include "ra-log.h"
#include "ra-path.h"
#include "ra-policy.h"
#include "ra-registry.h"
#include "ra-state-store.h"
#include "ra-util.h"

/* A disk that has not read or written for this long may be spun down: it is not woken. */
#define AWAKE_USEC (60 * 1000000ULL)
/*
 * After a calibration other reads interrupted, the quiet to wait for before
 * the next: a few seconds, as a device is often idle for only that long
 * between a first job's parts (of two runs of the same cells, each device
 * idle 10 s before its first job, a minute's wait had two SSDs measured in
 * time in one and not in the other). A retry costs at most a second of the
 * device's time at idle priority, and gives way again at the first read.
 */
#define RETRY_USEC (5 * 1000000ULL)
/*
 * A disk interrupted again waits twice as long each time, and after
 * INTERRUPTS_MAX is not calibrated again this run: one that something reads
 * or writes all the time (a root disk: the system's logs, a package
 * install) would otherwise take the turn every few seconds while idle disks
 * wait behind it (Debian 12's VM: its vda ten times in two minutes, three
 * idle disks not measured), and is busy enough to be modelled from its own
 * traced requests instead (ra-calib.h): three chances, 5 and 10 s of quiet
 * apart.
 */
#define INTERRUPTS_MAX 3
/*
 * How long one read (or the open) may take before the calibration is given
 * up: longer than a disk's spin-up from standby (a few seconds; Calibrate()
 * may wake one) and than the slowest read the budget allows (a second of
 * the device's time), and short enough that the caller hears why well
 * within racontrol's 30 s and D-Bus's 25 s default timeouts. A device that
 * takes longer hangs, or waits on something other than itself.
 */
#define READ_DEADLINE_USEC (10 * 1000000ULL)
/* At exit, how long processes still reading may take to end before they are left behind. */
#define STOP_WAIT_MSEC 1000

typedef struct RaCalibJob {
        Manager *manager;
        struct RaCalibJob *next; /* the list at Manager.calibration */
        sd_bus_message *request; /* Calibrate() over D-Bus, answered when done; NULL when radaemon chose */
        char *name, *identity;

        RaCalibReads reads; /* the process's */
        pid_t pid;
        int exitfd; /* a pipe's read end: hangs up when the process has exited (its write end closes) */
        sd_event_source *exited, *deadline;
        bool abandoned; /* given up on: its process waits on a read, and is reaped when it returns */
} RaCalibJob;

static RaCalibJob *job_free(RaCalibJob *j) {
        if (!j)
                return NULL;
        sd_event_source_disable_unref(j->exited);
        sd_event_source_disable_unref(j->deadline);
        if (j->exitfd >= 0)
                (void) close(j->exitfd);
        if (j->reads.sysfd >= 0)
                (void) close(j->reads.sysfd);
        if (j->reads.shared)
                (void) munmap(j->reads.shared, sizeof(*j->reads.shared));
        sd_bus_message_unref(j->request);
        free(j->name);
        free(j->identity);
        free(j->reads.devnode);
        return mfree(j);
}
RA_DEFINE_CLEANUP(RaCalibJob, job_free)

static const char *figures(const RaCalib *c, char *buf, size_t size) {
        ra_calib_describe(c, buf, size);
        return buf;
}

/*
 * Whether a calibration given up on still waits on its read. None starts on
 * radaemon's own meanwhile: the process of each one given up on can be
 * killed only once its read returns, so devices that all wait on the same
 * dead server (loop devices over its files) would leave one such process
 * each. An administrator's Calibrate() still starts: they asked.
 */
static bool stuck(Manager *m) {
        for (RaCalibJob *j = m->calibration; j; j = j->next)
                if (j->abandoned)
                        return true;
        return false;
}

static void unlink_job(Manager *m, RaCalibJob *j) {
        for (RaCalibJob **p = &m->calibration; *p; p = &(*p)->next)
                if (*p == j) {
                        *p = j->next;
                        return;
                }
}

/* Back in the event loop: what the process measured goes to the tuning path (on_calibration). */
static void finish(RaCalibJob *j, int error) {
        const RaCalibShared *sh = j->reads.shared;
        Manager *m = j->manager;
        uint64_t now = 0;
        char text[512];
        RaCalib c = {};
        bool measured = false;
        RaDisk *d;
        int r = error;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        d = ra_registry_find(m, j->name);
        if (!d || !ra_streq(d->in.identity, j->identity)) {
                log_info("%s: calibrated, but it is gone (or another medium came): nothing kept.", j->name);
                r = -ENODEV;
                goto reply;
        }
        if (r == -ETIMEDOUT) {
                /* Not again this run: a device that hung once is not risked again. */
                d->calib_after = UINT64_MAX;
                log_warning("%s: the device did not answer a calibration's read within %llu s: calibration "
                            "given up, not tried again this run; it keeps its prior. No other calibration "
                            "starts on its own until that read returns.",
                            d->name, READ_DEADLINE_USEC / 1000000);
        } else if (r < 0 || sh->error < 0) {
                r = r < 0 ? r : sh->error;
                /* Not again this run: a disk that cannot be read directly will not be readable in a minute.
                 */
                d->calib_after = UINT64_MAX;
                log_warning_errno(r, "%s: cannot calibrate it: %m; it keeps its prior.", d->name);
        } else if (sh->interrupted && ++d->calib_interrupted >= INTERRUPTS_MAX) {
                r = -EBUSY;
                d->calib_after = UINT64_MAX;
                log_info("%s: calibration stopped %u times: something else reads or writes the disk all "
                         "the time; not tried again this run, so that other disks take their turn. It is "
                         "modelled from its own requests instead.",
                         d->name, d->calib_interrupted);
        } else if (sh->interrupted) {
                uint64_t wait = RETRY_USEC << (d->calib_interrupted - 1);

                r = -EBUSY;
                d->calib_after = now + wait;
                log_info("%s: calibration stopped: something else read or wrote the disk meanwhile; "
                         "trying again after %llu s of quiet.",
                         d->name, (unsigned long long) (wait / 1000000));
        } else if (ra_calib_fit(sh->samples, sh->n, (uint64_t) time(NULL), &c) < 0) {
                r = -ENODATA;
                d->calib_after = UINT64_MAX;
                log_warning(
                        "%s: calibration read nothing in sequence within its budget; it keeps its prior.",
                        d->name);
        } else {
                uint64_t bytes = 0, nsec = 0;

                for (size_t i = 0; i < sh->n; i++) {
                        bytes += (uint64_t) sh->samples[i].kb * (sh->samples[i].reads ?: 1) * 1024;
                        nsec += sh->samples[i].nsec;
                }
                log_disk(LOG_INFO, RA_LOG_CALIBRATION, d->name, d->in.attrs.read_ahead_kb, "calibrated",
                         "%s: calibrated with %zu direct reads, %" PRIu64 " KiB in %" PRIu64 " ms: %s.",
                         d->name, sh->n, bytes / 1024, nsec / 1000000, figures(&c, text, sizeof(text)));
                measured = true;
        }
        m->on_calibration(m, d, false, measured ? &c : NULL);

reply:
        if (j->request) {
                if (r == -ETIMEDOUT)
                        (void) sd_bus_reply_method_errorf(
                                j->request, SD_BUS_ERROR_FAILED,
                                "Calibration failed: the device did not answer a read "
                                "within %llu s; radaemon does not measure it again "
                                "on its own this run.",
                                READ_DEADLINE_USEC / 1000000);
                else if (r < 0)
                        (void) sd_bus_reply_method_errorf(
                                j->request, SD_BUS_ERROR_FAILED, "Calibration failed: %s.",
                                r == -EBUSY ? "other reads or writes came meanwhile" : strerror(-r));
                else
                        (void) sd_bus_reply_method_return(j->request, "s", figures(&c, text, sizeof(text)));
                j->request = sd_bus_message_unref(j->request);
        }
}

/* The process ended: reaped, and its results taken unless it was given up on. */
static int on_exited(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        _cleanup_(job_freep) RaCalibJob *j = userdata;
        int status = 0;

        (void) waitpid(j->pid, &status, 0);
        unlink_job(j->manager, j);
        if (j->abandoned)
                log_info("%s: the read a calibration gave up on has returned at last%s.", j->name,
                         stuck(j->manager) ? "" : "; calibrations start again");
        else
                finish(j, WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD);
        return 0;
}

/*
 * Whether the read under way has passed its deadline; if not, looked at
 * again when it would. Past it, the process is killed (it dies when the
 * read returns, if ever) and left to be reaped, and the caller answered.
 */
static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        RaCalibJob *j = userdata;
        uint64_t since = __atomic_load_n(&j->reads.shared->reading_since, __ATOMIC_ACQUIRE) / 1000;
        uint64_t now = ra_now_usec();

        if (since == 0 || now - since < READ_DEADLINE_USEC) {
                (void) sd_event_source_set_time(s, (since ?: now) + READ_DEADLINE_USEC);
                return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        (void) kill(j->pid, SIGKILL); /* not reaped yet: the pid is still its */
        j->abandoned = true;
        j->deadline = sd_event_source_disable_unref(j->deadline);
        finish(j, -ETIMEDOUT);
        return 0;
}

/*
 * Where a loop device's file is, from its path and the mount table alone:
 * asking the file (stat, or LOOP_GET_STATUS, which stats it) would wait on
 * a server that has stopped answering, inside the event loop.
 */
static void loop_backing(const char *backing_file, RaCalibDevice *ret) {
        _cleanup_(ra_path_mounts_clear) RaPathMounts mounts = {};
        struct libmnt_fs *fs;

        if (ra_path_mounts_load("/proc/self/mountinfo", NULL, &mounts) < 0)
                return;
        fs = ra_path_mount_of(mounts.mounted, backing_file);
        if (fs)
                ra_calib_backing_from_mount(ret, mnt_fs_get_fstype(fs), mnt_fs_get_fs_options(fs));
}

/* NULL when d may be calibrated; else why not. */
static const char *unsafe(Manager *m, const RaDisk *d, RaCalibDevice *ret) {
        _cleanup_close_ int sysfd = -1;
        struct udev_device *dev;

        *ret = (RaCalibDevice) RA_CALIB_DEVICE_INIT;
        if (d->kind != RA_KIND_DISK)
                return d->kind == RA_KIND_STACK ? "a stack: its disks are calibrated themselves"
                                                : "not a disk";
        if (!d->devnode || !d->in.identity)
                return "a disk without a device node or identity";
        if (ra_streq(d->in.attrs.transport, "zram") || ra_streq(d->in.attrs.transport, "ram"))
                return "a disk in memory";
        ret->name = d->name;
        ret->syspath = d->syspath;
        ret->id_path = d->in.attrs.id_path;
        ret->size_bytes = d->in.attrs.size_bytes;
        dev = udev_device_new_from_syspath(m->udev, d->syspath);
        ret->cdrom = dev && udev_device_get_property_value(dev, "ID_CDROM");
        udev_device_unref(dev);
        sysfd = ra_disk_open_sysfs(d);
        if (sysfd < 0 || ra_calib_device_read_sysfs(sysfd, ret) < 0)
                return "a disk whose attributes cannot be read";
        if (d->in.attrs.backing_file)
                loop_backing(d->in.attrs.backing_file, ret);
        return ra_calib_unsafe(ret);
}

static int start(Manager *m, RaDisk *d, const RaCalibDevice *dev, sd_bus_message *request) {
        _cleanup_(job_freep) RaCalibJob *j = NULL;
        pid_t daemon = getpid();
        int exit_pipe[2], r;

        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        *j = (RaCalibJob){
                .manager = m,
                .exitfd = -1,
                .request = sd_bus_message_ref(request),
                .reads = { .sysfd = -1,
                           .jump_kb = ra_calib_jump_kb(dev->logical_block_size),
                           .size_bytes = d->in.attrs.size_bytes,
                           .rotational = d->in.attrs.rotational },
        };
        j->reads.n_sizes = ra_calib_whole_blocks(j->reads.sizes,
                                                 ra_calib_sizes(d->in.attrs.max_sectors_kb, j->reads.sizes),
                                                 dev->logical_block_size);
        if (j->reads.n_sizes == 0)
                return -EOPNOTSUPP;
        (void) snprintf(j->reads.scheduler, sizeof(j->reads.scheduler), "%s", dev->scheduler);
        j->name = strdup(d->name);
        j->identity = strdup(d->in.identity);
        j->reads.devnode = strdup(d->devnode);
        if (!j->name || !j->identity || !j->reads.devnode)
                return -ENOMEM;
        j->reads.sysfd = ra_disk_open_sysfs(d);
        if (j->reads.sysfd < 0)
                return j->reads.sysfd;
        j->reads.shared =
                mmap(NULL, sizeof(RaCalibShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (j->reads.shared == MAP_FAILED) {
                j->reads.shared = NULL;
                return -errno;
        }

        /*
         * Its exit is seen as the hang-up of a pipe whose write end only it
         * holds (a pidfd would do, but valgrind does not know pidfd_open).
         */
        if (pipe2(exit_pipe, O_CLOEXEC) < 0)
                return -errno;
        j->exitfd = exit_pipe[0];
        j->reads.exit_fd = exit_pipe[1];

        /* A process, not a thread: one stuck in a read would keep the daemon from exiting. */
        j->pid = fork();
        if (j->pid < 0) {
                r = -errno;
                (void) close(exit_pipe[1]);
                return r;
        }
        if (j->pid == 0)
                ra_calib_process(&j->reads, daemon);
        (void) close(exit_pipe[1]);
        /*
         * Should radaemon fail to watch it (out of memory), it is killed and
         * not waited for, as it may be in a read already: a zombie until exit.
         */
        r = sd_event_add_io(m->event, &j->exited, j->exitfd, EPOLLIN, on_exited, j);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &j->deadline, CLOCK_MONOTONIC, READ_DEADLINE_USEC,
                                               100000, on_deadline, j);
        if (r < 0) {
                (void) kill(j->pid, SIGKILL);
                return r;
        }

        log_info("%s: calibrating: direct reads at idle priority, at most %llu MiB and a second of the "
                 "disk's time%s%s.",
                 d->name, RA_CALIB_BYTES_MAX / 1024 / 1024,
                 d->in.attrs.rotational ? ", 8 of them small reads far apart" : "",
                 ra_calib_pause_nsec(j->reads.scheduler, 1) > 0 ? ", paced to a quarter of its time" : "");
        j->next = m->calibration;
        m->calibration = TAKE_PTR(j);
        m->on_calibration(m, d, true, NULL);
        return 0;
}

/* Whether a calibration runs (not one given up on), or one given up on still waits on name's read. */
static bool running(Manager *m, const char *name) {
        for (RaCalibJob *j = m->calibration; j; j = j->next)
                if (name ? j->abandoned && ra_streq(j->name, name) : !j->abandoned)
                        return true;
        return false;
}

void ra_calib_sched_consider(Manager *m, RaDisk *d, uint64_t now) {
        const RaStateEntry *stored;
        RaCalibDevice dev;
        const char *why;
        int r;

        if (!m->config->calibrate || ra_context_observing(m) || running(m, NULL) || stuck(m) ||
            d->kind != RA_KIND_DISK)
                return;
        /* Anything that decides it but its prior: a pin, the configuration, a fleet, what it learned. */
        if (d->decision.source != RA_SOURCE_PRIOR || d->model.learned_kb > 0 || !d->in.identity)
                return;
        stored = ra_store_entry(m, d->in.identity);
        if (stored && (stored->calib.when > 0 || stored->learned_kb > 0))
                return;
        if (now < d->calib_after || d->sampled.idle_samples == 0 || d->sampled.stat.in_flight > 0)
                return;
        /*
         * No measurement moves a window its size holds at the least there is (under 1 MiB):
         * the bench's 505 KiB tiny-stick at 15 kB/s paid 274 ms for one read of a calibration
         * that began as a job did, and its window stayed 4 KiB.
         */
        if (d->in.attrs.size_bytes > 0 && ra_policy_learned_cap_kb(d->in.attrs.size_bytes) <= RA_KB_MIN) {
                d->calib_after = UINT64_MAX;
                log_info("%s: not calibrated: at %" PRIu64 " KiB its window is %u KiB at most, which "
                         "no measurement would move.",
                         d->name, d->in.attrs.size_bytes / 1024, RA_KB_MIN);
                return;
        }
        if (d->in.attrs.rotational && (d->active_usec == 0 || now - d->active_usec > AWAKE_USEC))
                return;

        why = unsafe(m, d, &dev);
        if (why) {
                d->calib_after = UINT64_MAX;
                log_info("%s: not calibrated: it is %s.", d->name, why);
                return;
        }
        r = start(m, d, &dev, NULL);
        if (r < 0) {
                d->calib_after = UINT64_MAX;
                log_warning_errno(r, "%s: cannot start its calibration: %m", d->name);
        }
}

int ra_calib_sched_request(Manager *m, RaDisk *d, sd_bus_message *request, const char **ret_why) {
        RaCalibDevice dev;
        int r;

        *ret_why = NULL;
        if (running(m, NULL))
                return -EBUSY;
        if (running(m, d->name))
                return -EAGAIN;
        *ret_why = unsafe(m, d, &dev);
        if (*ret_why)
                return -EOPNOTSUPP;
        r = start(m, d, &dev, request);
        if (r == -EOPNOTSUPP)
                *ret_why = "a disk of blocks larger than a calibration's reads";
        return r;
}

void ra_calib_sched_stop(Manager *m) {
        uint64_t until = ra_now_nsec() + STOP_WAIT_MSEC * 1000000ULL;

        for (RaCalibJob *j = m->calibration; j; j = j->next)
                (void) kill(j->pid, SIGKILL);
        /* Each has a share of the wait left; one still in a read after it is left behind. */
        while (m->calibration) {
                RaCalibJob *j = m->calibration;
                struct pollfd p = { .fd = j->exitfd, .events = POLLIN };
                uint64_t now = ra_now_nsec();

                if (poll(&p, 1, now < until ? (int) ((until - now) / 1000000) : 0) > 0)
                        (void) waitpid(j->pid, NULL, 0);
                else
                        log_warning("%s: a calibration's read has not returned; leaving its process %d "
                                    "behind, to die when it does.",
                                    j->name, (int) j->pid);
                m->calibration = j->next;
                job_free(j);
        }
}
