/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A file copies its window from its device when it is opened and keeps it
 * (the kernel's file_ra_state_init()), so a window decided during a job
 * reached only the files opened after it: a random mmap reader opened at a
 * disk's 1024 KiB prior read whole megabytes around every fault to the end
 * of its job, long after the disk was cut to 4 KiB.
 *
 * Here a new window reaches the files already open whose reads call for it
 * (ra_pcache_followers()): radaemon takes a duplicate of the reader's own
 * open file description (pidfd_getfd(), which shares its readahead state)
 * and tells it POSIX_FADV_NORMAL, by which the kernel sets that file's
 * window to its device's now. The reader is never stopped, attached to or
 * waited for; nothing here calls into the file's file system: the
 * descriptors are matched through their links and fdinfo, and statx() of
 * the duplicate does not sync.
 *
 * Never against the application, as far as its reads tell: a file whose
 * window is not the one the device gave at its open is not a follower
 * (POSIX_FADV_SEQUENTIAL doubles it); one read with O_DIRECT or written only
 * is passed over (fdinfo's flags). A reader that asked POSIX_FADV_RANDOM, or
 * mapped with MADV_RANDOM, reads what it asks and brings no whole window
 * (never cut), and reads no window ahead of itself (never grown); a
 * MADV_SEQUENTIAL mapping's faults read what they ask (never cut), and one
 * that streams grows as any stream, as it asked. What cannot be
 * seen: a random mmap reader that also called POSIX_FADV_RANDOM or NOREUSE
 * on its descriptor, whose faults read whole windows anyway;
 * POSIX_FADV_NORMAL clears those (docs/decisions.md).
 *
 * Closing the copy calls the file's flush: only files of local file systems
 * without one are taken (closes_locally()), never FUSE's, NFS's or CIFS's.
 *
 * pidfd_getfd() asks for ptrace access to the reader (CAP_SYS_PTRACE for
 * another user's, and Yama's ptrace_scope 3 refuses it to everyone): where
 * it is refused, that is said once and the files keep their windows.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "ra-context.h"
#include "ra-disk.h"
#include "ra-log.h"
#include "ra-openfiles.h"
#include "ra-pcache.h"
#include "ra-util.h"

/*
 * The descriptors looked at in one change of a window, over all its
 * readers: 15-20 us each, some 3 to 4 s of radaemon's time in steps of
 * RA_OPENFILES_STEP. A reader holding more keeps the old window on the rest.
 */
#define RA_OPENFILES_SCAN_MAX 200000u
/*
 * The descriptors looked at in one iteration of the event loop: 15-20 us
 * each (a link and an fdinfo read, measured with bench/overhead.py
 * openfiles), so some 30 ms before other events are served.
 */
#define RA_OPENFILES_STEP 2000u
/* The files of one change named at info level; the rest at debug, counted in one line. */
#define RA_OPENFILES_SAID_MAX 8u

static uint32_t kernel_dev(unsigned major, unsigned minor) {
        return (uint32_t) major << 20 | minor;
}

/*
 * The index-th number (from 0) of a line of /proc/PID/status: "Tgid:",
 * "Uid:" (real, effective, saved, file system); -1 when it cannot be read.
 */
static long status_field(pid_t pid, const char *field, unsigned index) {
        char path[64], buf[4096], key[16], *t;
        long v = -1;
        int r;

        (void) snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        (void) snprintf(key, sizeof(key), "\n%s", field);
        /* Tgid and Uid come first: a status cut short by its groups still has them. */
        r = ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf));
        if (r == -EFBIG)
                buf[sizeof(buf) - 1] = '\0';
        else if (r < 0)
                return -1;
        t = strstr(buf, key);
        if (!t)
                return -1;
        t += strlen(key);
        for (unsigned i = 0; i <= index; i++) {
                v = strtol(t, &t, 10);
                if (*t != '\t' && *t != '\n' && *t != ' ')
                        return -1;
        }
        return v >= 0 && v <= INT32_MAX ? v : -1;
}

static long status_number(pid_t pid, const char *field) {
        return status_field(pid, field, 0);
}

static long status_second(pid_t pid, const char *field) {
        return status_field(pid, field, 1);
}

/* The process a traced task belongs to: pidfd_open() takes a thread group's leader. */
static pid_t thread_group(pid_t tid) {
        long v = status_number(tid, "Tgid:");

        return v > 0 ? (pid_t) v : -1;
}

/* What /proc/PID/fdinfo/N says of a descriptor: its open flags, mount and inode (kernels 5.14 and later). */
static int fdinfo_read(int fdinfo_dir, const char *name, int *ret_flags, int *ret_mnt_id,
                       uint64_t *ret_ino) {
        char buf[512];
        const char *f, *m, *i;
        int r;

        /* An epoll's or inotify's lists its targets after: what is wanted comes first. */
        r = ra_read_file_at(fdinfo_dir, name, buf, sizeof(buf));
        if (r == -EFBIG)
                buf[sizeof(buf) - 1] = '\0';
        else if (r < 0)
                return r;
        f = strstr(buf, "flags:");
        m = strstr(buf, "\nmnt_id:");
        i = strstr(buf, "\nino:");
        if (!f || !m || !i)
                return -EINVAL;
        *ret_flags = (int) strtol(f + strlen("flags:"), NULL, 8);
        *ret_mnt_id = (int) strtol(m + strlen("\nmnt_id:"), NULL, 10);
        *ret_ino = strtoull(i + strlen("\nino:"), NULL, 10);
        return 0;
}

/*
 * Whether mount mnt_id (in pid's mount namespace) is of a file system whose
 * descriptors close without asking anyone. Closing the copy calls the file's
 * flush, and the last close its release: FUSE sends its server a FLUSH and
 * waits, NFS and CIFS write back and may wait on the network. Only local file
 * systems with neither, and block devices' nodes (devtmpfs, or a tmpfs /dev
 * in a container).
 */
static bool closes_locally(pid_t pid, int mnt_id, bool bdev) {
        static const char *const local[] = { "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", NULL };
        static const char *const nodes[] = { "devtmpfs", "tmpfs", NULL };
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        char path[64];
        size_t size = 0;

        (void) snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return false;
        while (getline(&line, &size, f) > 0) {
                char type[32];
                const char *sep;
                int id;

                if (sscanf(line, "%d ", &id) != 1 || id != mnt_id)
                        continue;
                sep = strstr(line, " - ");
                if (!sep || sscanf(sep, " - %31s", type) != 1)
                        return false;
                for (const char *const *t = bdev ? nodes : local; *t; t++)
                        if (strcmp(type, *t) == 0)
                                return true;
                return false;
        }
        return false;
}

/*
 * One change's search for its followers' descriptors, a few at a time
 * (RA_OPENFILES_STEP an event-loop iteration), so that a reader holding
 * 100,000 files does not hold up radaemon's loop for seconds. The disk
 * owns it (RaDisk.openfiles_scan): it ends with the disk, or when the next
 * change of the disk's window starts its own.
 */
struct RaOpenFilesScan {
        RaDisk *d;
        sd_event_source *source;
        uint32_t old_kb, new_kb;
        bool stop; /* the device's window moved meanwhile: no more */
        unsigned scanned, said, more, steps;
        uint64_t start_usec, busy_usec;
        RaPcacheFollower f[RA_PCACHE_STREAMS];
        pid_t tgid[RA_PCACHE_STREAMS]; /* of each follower; -1: taken with an earlier one of its process */
        size_t n, next;                /* the followers, and the next to look for */
        size_t processes;
        /* The process whose descriptors are being read: its followers, and which were said. */
        pid_t pid;
        int pidfd;
        DIR *fds;
        RaPcacheFollower mine[RA_PCACHE_STREAMS];
        bool said_file[RA_PCACHE_STREAMS];
        size_t k;
};
typedef struct RaOpenFilesScan RaOpenFilesScan;

/*
 * Keeps what was done for ListOpenFiles: in the slot of the same reader and
 * file (a later change), else an empty one, else the oldest.
 */
static void remember(RaOpenFilesScan *w, pid_t pid, int fd, const char *link, const char *comm,
                     const RaPcacheFollower *f, const char *why) {
        RaOpenFile *slot = NULL, *files = w->d->open_files;
        char *copy;
        long uid, euid;

        for (size_t i = 0; i < RA_OPENFILES_KEPT && !slot; i++)
                if (files[i].when_usec != 0 && files[i].pid == pid && ra_streq(files[i].path, link))
                        slot = &files[i];
        for (size_t i = 0; i < RA_OPENFILES_KEPT && !slot; i++)
                if (files[i].when_usec == 0)
                        slot = &files[i];
        if (!slot) {
                slot = &files[0];
                for (size_t i = 1; i < RA_OPENFILES_KEPT; i++)
                        if (files[i].when_usec < slot->when_usec)
                                slot = &files[i];
        }
        copy = slot->path && strcmp(slot->path, link) == 0 ? TAKE_PTR(slot->path) : strdup(link);
        if (!copy)
                return; /* kept no more: the log has it */
        uid = status_number(pid, "Uid:");
        euid = status_second(pid, "Uid:");
        free(slot->path);
        *slot = (RaOpenFile){
                .when_usec = ra_realtime_usec(),
                .pid = pid,
                .uid = uid >= 0 ? (uid_t) uid : 0,
                .euid = euid >= 0 ? (uid_t) euid : 0,
                .fd = fd,
                .from_kb = w->old_kb,
                .to_kb = w->new_kb,
                .why = why,
                .s_dev = f->s_dev,
                .ino = f->ino,
                .path = copy,
        };
        (void) snprintf(slot->comm, sizeof(slot->comm), "%s", comm);
}

bool ra_openfiles_still_open(const RaOpenFile *f) {
        char path[64], link[4096];
        ssize_t n;

        (void) snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) f->pid, f->fd);
        n = readlink(path, link, sizeof(link) - 1);
        if (n <= 0)
                return false;
        link[n] = '\0';
        return ra_streq(link, f->path);
}

/* Why a follower follows, and how the log says it. */
static const char *follower_why(const RaPcacheFollower *f) {
        return f->reread ? RA_OPENFILE_EVICTED : f->cut ? RA_OPENFILE_RANDOM : RA_OPENFILE_STREAM;
}

static const char *why_text(const char *why) {
        if (ra_streq(why, RA_OPENFILE_RANDOM))
                return "its random reads bring whole windows";
        if (ra_streq(why, RA_OPENFILE_EVICTED))
                return "pages read ahead for it are evicted before it reads them";
        if (ra_streq(why, RA_OPENFILE_UNDONE))
                return "the growth that gave it that window was undone";
        return "it reads in order, filling each window";
}

/*
 * One open description of a follower's file (descriptor fd of pid): its window follows the device's.
 * Said once a file: a description held twice (Python's mmap keeps a duplicate) or opened twice is one.
 */
static bool follow_one(Manager *m, RaOpenFilesScan *w, pid_t pid, int pidfd, int fd,
                       const RaPcacheFollower *f, bool bdev, const char *why, bool say) {
        _cleanup_close_ int dup = -1;
        _cleanup_free_ char *file = NULL, *comm = NULL;
        char path[64], link[4096], buf[64];
        struct statx stx;
        ssize_t n;
        bool same;

        dup = pidfd_getfd(pidfd, fd, 0);
        if (dup < 0) {
                if (errno == EPERM && !m->openfiles_refused) {
                        m->openfiles_refused = true;
                        log_notice(
                                "%s: the files %d holds open keep the window they opened with: the kernel "
                                "refused radaemon a copy of its descriptors (pidfd_getfd: %s): "
                                "kernel.yama.ptrace_scope 3, radaemon without CAP_SYS_PTRACE, or a "
                                "system call filter without pidfd_getfd. Said once.",
                                w->d->name, (int) pid, strerror(errno));
                }
                /* ESRCH, EBADF: it exited or closed it meanwhile. */
                return false;
        }
        /* The same file still, not a descriptor number reused meanwhile. */
        if (statx(dup, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &stx) < 0)
                return false;
        same = bdev ? S_ISBLK(stx.stx_mode) && kernel_dev(stx.stx_rdev_major, stx.stx_rdev_minor) == f->ino
                    : S_ISREG(stx.stx_mode) &&
                               kernel_dev(stx.stx_dev_major, stx.stx_dev_minor) == f->s_dev &&
                               stx.stx_ino == f->ino;
        if (!same)
                return false;
        if (posix_fadvise(dup, 0, 0, POSIX_FADV_NORMAL) != 0)
                return false;

        (void) snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
        n = readlink(path, link, sizeof(link) - 1);
        if (n <= 0)
                strcpy(link, "?");
        else
                link[n] = '\0';
        (void) snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
        if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
                buf[0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        remember(w, pid, fd, link, buf, f, why);
        if (!say)
                return true;

        file = ra_text_escape(link);
        comm = ra_text_escape(buf);
        log_full_errno(w->said < RA_OPENFILES_SAID_MAX ? LOG_INFO : LOG_DEBUG, 0,
                       "%s: %s (pid %d) reads %s under the %" PRIu32 " KiB %s; now %" PRIu32 " KiB: %s.",
                       w->d->name, comm ?: "?", (int) pid, file ?: "?", w->old_kb,
                       ra_streq(why, RA_OPENFILE_UNDONE) ? "radaemon gave it" : "it opened with", w->new_kb,
                       why_text(why));
        if (w->said < RA_OPENFILES_SAID_MAX)
                w->said++;
        else
                w->more++;
        return true;
}

/* Whether f is the disk itself, read through its node: its page cache is the disk's inode, numbered by its
 * device number. */
static bool read_through_node(const RaDisk *d, const RaPcacheFollower *f) {
        return ra_kind_is_block(d->kind) && d->devnum != 0 &&
               f->ino == kernel_dev(major(d->devnum), minor(d->devnum));
}

/*
 * A cut that undoes a growth (a trial refuted, a pin cleared): the streams
 * that growth gave old_kb's window and that still hold it go back with the
 * device. Their descriptors are known; none is looked for. (A cut is not
 * undone by a growth: a random reader stays cut, and a stream that fills its
 * windows is found as one.)
 */
static void undo_growth(Manager *m, RaOpenFilesScan *w) {
        RaOpenFile *files = w->d->open_files;

        for (size_t i = 0; i < RA_OPENFILES_KEPT; i++) {
                RaOpenFile *o = &files[i];
                RaPcacheFollower f = { .pid = o->pid, .s_dev = o->s_dev, .ino = o->ino, .cut = true };
                _cleanup_close_ int pidfd = -1;
                pid_t pid = o->pid;
                int fd = o->fd;

                if (o->when_usec == 0 || !ra_streq(o->why, RA_OPENFILE_STREAM) || o->from_kb != w->new_kb ||
                    o->to_kb != w->old_kb || !ra_openfiles_still_open(o))
                        continue;
                pidfd = pidfd_open(pid, 0);
                if (pidfd < 0)
                        continue;
                /* (follow_one() keeps what it did in this slot: o is not read after it.) */
                (void) follow_one(m, w, pid, pidfd, fd, &f, read_through_node(w->d, &f), RA_OPENFILE_UNDONE,
                                  true);
                /* Found here: not looked for again among the change's own followers. */
                for (size_t j = 0; j < w->n; j++)
                        if (w->f[j].s_dev == f.s_dev && w->f[j].ino == f.ino && w->tgid[j] == pid)
                                w->tgid[j] = -1;
        }
}

/* Leaves the process being read, if any. */
static void process_close(RaOpenFilesScan *w) {
        if (w->fds)
                closedir(w->fds);
        w->fds = NULL;
        if (w->pidfd >= 0)
                close(w->pidfd);
        w->pidfd = -1;
        w->pid = 0;
}

/*
 * Starts on the next process with followers: its followers' files (one
 * reading of its descriptors for all), its pidfd and its fdinfo. False
 * when none is left.
 */
static bool process_next(RaOpenFilesScan *w) {
        while (w->next < w->n) {
                size_t i = w->next++;
                _cleanup_close_ int dir = -1;
                char path[64];

                if (w->tgid[i] <= 0)
                        continue;
                w->k = 0;
                for (size_t j = i; j < w->n; j++)
                        if (w->tgid[j] == w->tgid[i] && (j == i || w->tgid[j] > 0)) {
                                w->said_file[w->k] = false;
                                w->mine[w->k++] = w->f[j];
                                if (j != i)
                                        w->tgid[j] = -1;
                        }
                w->pid = w->tgid[i];
                w->pidfd = pidfd_open(w->pid, 0);
                (void) snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int) w->pid);
                dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (w->pidfd >= 0 && dir >= 0)
                        w->fds = fdopendir(dir);
                if (!w->fds) {
                        process_close(w); /* it exited meanwhile */
                        continue;
                }
                dir = -1; /* the stream's now */
                w->processes++;
                return true;
        }
        return false;
}

/* One descriptor of the process being read: followed when it reads one of its followers' files. */
static void descriptor_look(Manager *m, RaOpenFilesScan *w, const char *name) {
        char path[64], link[64];
        uint64_t ino;
        uint32_t fd;
        int flags, mnt_id;
        ssize_t len;

        if (name[0] == '.' || ra_parse_u32(name, &fd) < 0 || fd > INT32_MAX)
                return;
        w->scanned++;
        /*
         * A file's link first (a path, no call into anything): fdinfo runs the show_fdinfo of
         * what the descriptor is (an epoll's takes its lock), and only files are wanted.
         */
        (void) snprintf(path, sizeof(path), "/proc/%d/fd/%" PRIu32, (int) w->pid, fd);
        len = readlink(path, link, sizeof(link) - 1);
        if (len <= 0 || link[0] != '/')
                return;
        link[len] = '\0';
        if (fdinfo_read(dirfd(w->fds), name, &flags, &mnt_id, &ino) < 0 || (flags & O_ACCMODE) == O_WRONLY ||
            (flags & O_DIRECT))
                return;
        for (size_t i = 0; i < w->k; i++) {
                const RaPcacheFollower *f = &w->mine[i];
                /*
                 * The disk read through its node (dd, a raw mmap): its page cache is the disk's
                 * own inode, numbered by its device number; the node is checked before its
                 * descriptor is taken (a tape's or a tty's must not be).
                 */
                bool bdev = read_through_node(w->d, f);
                struct stat st;

                if (bdev ? strncmp(link, "/dev/", 5) != 0 : ino != f->ino)
                        continue;
                if (!closes_locally(w->pid, mnt_id, bdev))
                        continue;
                if (bdev && (stat(path, &st) < 0 || !S_ISBLK(st.st_mode) ||
                             kernel_dev(major(st.st_rdev), minor(st.st_rdev)) != f->ino))
                        continue;
                if (follow_one(m, w, w->pid, w->pidfd, (int) fd, f, bdev, follower_why(f), !w->said_file[i]))
                        w->said_file[i] = true;
        }
}

static void scan_free(RaOpenFilesScan *w) {
        if (!w)
                return;
        process_close(w);
        sd_event_source_disable_unref(w->source);
        free(w);
}

/* What one change did, once its search is over. */
static void scan_done(RaOpenFilesScan *w) {
        RaDisk *d = w->d;

        if (w->stop)
                log_debug("%s: the search for the files read under %" PRIu32
                          " KiB stopped: the device's window moved meanwhile.",
                          d->name, w->old_kb);

        if (w->more > 0)
                log_info("%s: and %u more open files now read with %" PRIu32 " KiB (named at debug level).",
                         d->name, w->more, w->new_kb);
        if (w->scanned >= RA_OPENFILES_SCAN_MAX)
                log_debug("%s: %u open descriptors looked at, the most one change does; the rest keep "
                          "their window.",
                          d->name, w->scanned);
        /* What bench/overhead.py openfiles reads. */
        if (w->n > 0)
                log_debug("%s: %zu files to follow, %u descriptors of %zu processes looked at in %.1f ms "
                          "(%u steps, %.1f ms in all).",
                          d->name, w->n, w->scanned, w->processes, (double) w->busy_usec / 1000, w->steps,
                          (double) (ra_now_usec() - w->start_usec) / 1000);
        d->openfiles_scan = NULL;
        scan_free(w);
}

/* Up to RA_OPENFILES_STEP descriptors, then back to the loop; the search's end frees it. */
static int on_scan_step(sd_event_source *source, void *userdata) {
        RaOpenFilesScan *w = userdata;
        Manager *m = w->d->manager;
        uint64_t t0 = ra_now_usec();
        unsigned budget = RA_OPENFILES_STEP;

        w->steps++;
        /* The window it was for is no longer the device's: it moved since (a pin, a Restore, a write). */
        if (w->d->in.attrs.read_ahead_kb != w->new_kb)
                w->stop = true;
        while (budget > 0 && w->scanned < RA_OPENFILES_SCAN_MAX && !w->stop) {
                struct dirent *de;

                if (!w->fds && !process_next(w))
                        break;
                de = readdir(w->fds);
                if (!de) {
                        process_close(w);
                        continue;
                }
                descriptor_look(m, w, de->d_name);
                budget--;
        }
        w->busy_usec += ra_now_usec() - t0;
        if (budget > 0 || w->scanned >= RA_OPENFILES_SCAN_MAX || w->stop)
                scan_done(w);
        return 0;
}

/* Takes w as d's search, makes its first step now and the rest from the loop. */
static void scan_start(Manager *m, RaOpenFilesScan *w) {
        RaDisk *d = w->d;
        int r;

        /* The first step now: a reader with few descriptors follows before anything else runs. */
        d->openfiles_scan = w;
        on_scan_step(NULL, w);
        if (d->openfiles_scan != w)
                return;
        r = sd_event_add_defer(m->event, &w->source, on_scan_step, w);
        if (r >= 0)
                r = sd_event_source_set_enabled(w->source, SD_EVENT_ON);
        if (r < 0) {
                log_debug("%s: cannot go on looking for the files read under %" PRIu32 " KiB: %s", d->name,
                          w->old_kb, strerror(-r));
                ra_openfiles_scan_free(d);
        }
}

void ra_openfiles_follow(Manager *m, RaDisk *d, uint32_t old_kb, uint32_t new_kb) {
        RaOpenFilesScan *w;

        if (d->openfiles_scan) {
                log_debug("%s: its window changed again before the files read under %" PRIu32
                          " KiB were all found; those left keep their window.",
                          d->name, d->openfiles_scan->old_kb);
                ra_openfiles_scan_free(d);
        }
        if (d->settings.leave_open_files)
                return;
        w = calloc(1, sizeof(*w));
        if (!w)
                return;
        *w = (RaOpenFilesScan){
                .d = d, .old_kb = old_kb, .new_kb = new_kb, .start_usec = ra_now_usec(), .pidfd = -1
        };
        w->n = ra_pcache_followers(&d->sampled.pcache, old_kb, new_kb, w->f, ELEMENTSOF(w->f));
        for (size_t i = 0; i < w->n; i++)
                w->tgid[i] = thread_group(w->f[i].pid);
        if (new_kb < old_kb)
                undo_growth(m, w);
        if (w->n == 0) {
                scan_done(w);
                return;
        }

        scan_start(m, w);
}

void ra_openfiles_scan_free(RaDisk *d) {
        scan_free(d->openfiles_scan);
        d->openfiles_scan = NULL;
}
