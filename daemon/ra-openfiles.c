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
 * descriptors are matched through fdinfo, and statx() of the duplicate does
 * not sync (a FUSE server that is the reader is never asked).
 *
 * Never against the application: a file whose window is not the one the
 * device gave at its open is not a follower (POSIX_FADV_SEQUENTIAL doubles
 * it), one read with O_DIRECT or written only is left, and so is one mapped
 * with MADV_RANDOM or MADV_SEQUENTIAL (smaps' VmFlags rr and sr). A reader
 * that asked POSIX_FADV_RANDOM reads no more than it asks and brings no
 * whole windows: never a follower either. What cannot be seen: a random
 * mmap reader that also called POSIX_FADV_RANDOM or NOREUSE on its
 * descriptor, whose faults read whole windows anyway; POSIX_FADV_NORMAL
 * clears those (docs/decisions.md).
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
#include <unistd.h>

#include "ra-context.h"
#include "ra-disk.h"
#include "ra-log.h"
#include "ra-openfiles.h"
#include "ra-pcache.h"
#include "ra-util.h"

/*
 * The descriptors looked at in one change of a window, over all its
 * readers: a few microseconds each (an fdinfo read), so about half a second
 * at most. A file server holding more keeps the old window on the rest.
 */
#define RA_OPENFILES_SCAN_MAX 200000u
/* The files of one change named at info level; the rest at debug, counted in one line. */
#define RA_OPENFILES_SAID_MAX 8u

static uint32_t kernel_dev(unsigned major, unsigned minor) {
        return (uint32_t) major << 20 | minor;
}

/* The process a traced task belongs to: pidfd_open() takes a thread group's leader. */
static pid_t thread_group(pid_t tid) {
        char path[64], buf[4096];
        const char *t;
        long v;

        (void) snprintf(path, sizeof(path), "/proc/%d/status", (int) tid);
        if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
                return -1;
        t = strstr(buf, "\nTgid:");
        if (!t)
                return -1;
        v = strtol(t + strlen("\nTgid:"), NULL, 10);
        return v > 0 && v <= INT32_MAX ? (pid_t) v : -1;
}

/* What /proc/PID/fdinfo/N says of a descriptor: its open flags and inode (kernels 5.14 and later). */
static int fdinfo_read(int fdinfo_dir, const char *name, int *ret_flags, uint64_t *ret_ino) {
        char buf[512];
        const char *f, *i;
        int r;

        r = ra_read_file_at(fdinfo_dir, name, buf, sizeof(buf));
        if (r < 0 && r != -EFBIG)
                return r;
        f = strstr(buf, "flags:");
        i = strstr(buf, "\nino:");
        if (!f || !i)
                return -EINVAL;
        *ret_flags = (int) strtol(f + strlen("flags:"), NULL, 8);
        *ret_ino = strtoull(i + strlen("\nino:"), NULL, 10);
        return 0;
}

/*
 * Whether pid maps the file (dev, ino) with an access pattern of its own:
 * MADV_RANDOM or MADV_SEQUENTIAL ("rr", "sr" in smaps' VmFlags). maps is read
 * first, as smaps walks every page table.
 */
static bool mapped_with_own_pattern(pid_t pid, dev_t dev, uint64_t ino) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        char path[64];
        bool mapped = false, ours = false;
        size_t size = 0;

        for (int pass = 0; pass < 2; pass++) {
                (void) snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, pass == 0 ? "maps" : "smaps");
                if (f)
                        fclose(f);
                f = fopen(path, "re");
                if (!f)
                        return false;
                while (getline(&line, &size, f) > 0) {
                        unsigned major, minor;
                        uint64_t i;

                        if (sscanf(line, "%*x-%*x %*s %*x %x:%x %" SCNu64, &major, &minor, &i) == 3) {
                                ours = makedev(major, minor) == dev && i == ino;
                                mapped = mapped || ours;
                        } else if (ours && strncmp(line, "VmFlags:", 8) == 0 &&
                                   (strstr(line, " rr") || strstr(line, " sr")))
                                return true;
                }
                if (!mapped)
                        return false;
        }
        return false;
}

typedef struct Follow {
        RaDisk *d;
        uint32_t old_kb, new_kb;
        unsigned scanned, said, more;
} Follow;

/*
 * One open description of a follower's file (descriptor fd of pid): its window follows the device's.
 * Said once a file: a description held twice (Python's mmap keeps a duplicate) or opened twice is one.
 */
static bool follow_one(Manager *m, Follow *w, pid_t pid, int pidfd, int fd, const RaPcacheFollower *f,
                       bool bdev, bool say) {
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
        if (mapped_with_own_pattern(pid, makedev(stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino)) {
                log_debug("%s: %d maps its descriptor %d with MADV_RANDOM or MADV_SEQUENTIAL: left as it "
                          "chose.",
                          w->d->name, (int) pid, fd);
                return false;
        }
        if (posix_fadvise(dup, 0, 0, POSIX_FADV_NORMAL) != 0)
                return false;
        if (!say)
                return true;

        (void) snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
        n = readlink(path, link, sizeof(link) - 1);
        link[n > 0 ? n : 0] = '\0';
        (void) snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
        if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0)
                buf[0] = '\0';
        file = ra_text_escape(link);
        comm = ra_text_escape(buf);
        log_full_errno(w->said < RA_OPENFILES_SAID_MAX ? LOG_INFO : LOG_DEBUG, 0,
                       "%s: %s (pid %d) reads %s under the %" PRIu32 " KiB it opened with; now %" PRIu32
                       " KiB: %s.",
                       w->d->name, comm ?: "?", (int) pid, file ?: "?", w->old_kb, w->new_kb,
                       f->cut ? "its random reads bring whole windows"
                              : "it reads in order, filling each window");
        if (w->said < RA_OPENFILES_SAID_MAX)
                w->said++;
        else
                w->more++;
        return true;
}

/* The descriptors of pid that read one of its followers' files (f[0..n), all of pid). */
static void follow_process(Manager *m, Follow *w, pid_t pid, const RaPcacheFollower *f, size_t n) {
        _cleanup_close_ int pidfd = -1, dir = -1;
        bool said[RA_PCACHE_STREAMS] = {};
        char path[64];
        DIR *fds;
        struct dirent *de;

        pidfd = pidfd_open(pid, 0);
        (void) snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int) pid);
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pidfd < 0 || dir < 0)
                return;
        fds = fdopendir(dir);
        if (!fds)
                return;
        dir = -1;

        while ((de = readdir(fds)) && w->scanned < RA_OPENFILES_SCAN_MAX) {
                uint64_t ino;
                uint32_t fd;
                int flags;

                if (de->d_name[0] == '.' || ra_parse_u32(de->d_name, &fd) < 0 || fd > INT32_MAX)
                        continue;
                w->scanned++;
                if (fdinfo_read(dirfd(fds), de->d_name, &flags, &ino) < 0 ||
                    (flags & O_ACCMODE) == O_WRONLY || (flags & O_DIRECT))
                        continue;
                for (size_t i = 0; i < n; i++) {
                        /*
                         * The disk read through its node (dd, a raw mmap): its page cache is the
                         * disk's own inode, numbered by its device number.
                         */
                        bool bdev = w->d->devnum != 0 &&
                                    f[i].ino == kernel_dev(major(w->d->devnum), minor(w->d->devnum));
                        char link[64];
                        ssize_t len;

                        if (!bdev && ino != f[i].ino)
                                continue;
                        if (bdev) {
                                (void) snprintf(path, sizeof(path), "/proc/%d/fd/%" PRIu32, (int) pid, fd);
                                len = readlink(path, link, sizeof(link) - 1);
                                if (len <= 0 || strncmp(link, "/dev/", 5) != 0)
                                        continue;
                        }
                        if (follow_one(m, w, pid, pidfd, (int) fd, &f[i], bdev, !said[i]))
                                said[i] = true;
                        break;
                }
        }
        closedir(fds);
}

void ra_openfiles_follow(Manager *m, RaDisk *d, uint32_t old_kb, uint32_t new_kb) {
        RaPcacheFollower f[RA_PCACHE_STREAMS];
        pid_t tgid[RA_PCACHE_STREAMS];
        Follow w = { .d = d, .old_kb = old_kb, .new_kb = new_kb };
        size_t n;

        if (d->settings.leave_open_files)
                return;
        n = ra_pcache_followers(&d->sampled.pcache, old_kb, new_kb, f, ELEMENTSOF(f));
        for (size_t i = 0; i < n; i++)
                tgid[i] = thread_group(f[i].pid);

        /* One scan of a process's descriptors for all its files. */
        for (size_t i = 0; i < n; i++) {
                RaPcacheFollower mine[RA_PCACHE_STREAMS];
                size_t k = 0;

                if (tgid[i] <= 0)
                        continue;
                for (size_t j = i; j < n; j++)
                        if (tgid[j] == tgid[i] && (j == i || tgid[j] > 0)) {
                                mine[k++] = f[j];
                                if (j != i)
                                        tgid[j] = -1;
                        }
                follow_process(m, &w, tgid[i], mine, k);
        }
        if (w.more > 0)
                log_info("%s: and %u more open files now read with %" PRIu32 " KiB (named at debug level).",
                         d->name, w.more, new_kb);
        if (w.scanned >= RA_OPENFILES_SCAN_MAX)
                log_debug("%s: %u open descriptors looked at, the most one change does; the rest keep "
                          "their window.",
                          d->name, w.scanned);
}
