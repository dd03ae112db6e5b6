/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "ra-context.h"
#include "ra-log.h"
#include "ra-state-store.h"
#include "ra-swapwatch.h"
#include "ra-tune-swap.h"
#include "ra-util.h"

#define SWAPS_PATH "/proc/swaps"
#define VMSTAT_PATH "/proc/vmstat"
/* /proc/vmstat is about 8 KiB on 6.x kernels; /proc/swaps at most MAX_SWAPFILES lines. */
#define PROC_MAX_BYTES (64u * 1024)

static int read_proc(const char *path, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        buf = malloc(PROC_MAX_BYTES + 1);
        if (!buf)
                return -ENOMEM;

        for (;;) {
                ssize_t n = read(fd, buf + len, PROC_MAX_BYTES - len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len == PROC_MAX_BYTES)
                        return -EFBIG;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

/* --- which disk an area lies on ---------------------------------------------------------- */

/*
 * A partition is its own block device; a file lies on the device of its
 * file system. A file system without one (btrfs, tmpfs) leaves the area
 * unknown.
 */
static void map_area(RaSwapArea *a) {
        _cleanup_free_ char *link = NULL, *real = NULL;
        char buf[16], path[PATH_MAX];
        struct stat st;
        dev_t dev;
        const char *name;
        _cleanup_close_ int dfd = -1;

        a->class = RA_SWAP_CLASS_UNKNOWN;
        if (stat(a->filename, &st) < 0)
                return;
        dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
        if (asprintf(&link, "/sys/dev/block/%u:%u", major(dev), minor(dev)) < 0)
                return;
        real = realpath(link, NULL);
        if (!real)
                return;
        name = strrchr(real, '/');
        if (!name || !ra_device_name_is_valid(name + 1))
                return;
        a->device = strdup(name + 1);
        if (!a->device)
                return;

        if (strncmp(a->device, "zram", 4) == 0) {
                a->class = RA_SWAP_CLASS_ZRAM;
                return;
        }

        /* A partition takes its disk's queue. */
        (void) snprintf(path, sizeof(path), "%s/partition", real);
        dfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return;
        if (ra_read_file_at(dfd, access(path, F_OK) == 0 ? "../queue/rotational" : "queue/rotational", buf,
                            sizeof(buf)) < 0)
                return;
        a->class = strcmp(buf, "1") == 0 ? RA_SWAP_CLASS_ROT : RA_SWAP_CLASS_NONROT;
}

static RaSwapArea *find_area(RaSwapArea *areas, size_t n, const char *filename) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(areas[i].filename, filename) == 0)
                        return &areas[i];
        return NULL;
}

static void free_disks(RaSwapWatch *w) {
        for (size_t i = 0; i < w->n_disks; i++)
                free(w->disks[i].name);
        w->disks = mfree(w->disks);
        w->n_disks = 0;
}

/* The disks beneath the active areas, whose counters tell request sizes. */
static void collect_disks(RaSwapWatch *w) {
        RaSwapDisk *old = w->disks;
        size_t n_old = w->n_disks;

        w->disks = calloc(w->n_areas + 1, sizeof(RaSwapDisk));
        w->n_disks = 0;
        for (size_t i = 0; w->disks && i < w->n_areas; i++) {
                const RaSwapArea *a = &w->areas[i];
                bool seen = false;

                if (a->class != w->active || !a->device)
                        continue;
                for (size_t j = 0; j < w->n_disks; j++)
                        seen = seen || strcmp(w->disks[j].name, a->device) == 0;
                if (seen)
                        continue;
                w->disks[w->n_disks] = (RaSwapDisk){ .name = strdup(a->device) };
                /* A disk that stays keeps its baseline. */
                for (size_t j = 0; j < n_old; j++)
                        if (old[j].name && strcmp(old[j].name, a->device) == 0)
                                w->disks[w->n_disks] = (RaSwapDisk){ .name = w->disks[w->n_disks].name,
                                                                     .stat = old[j].stat,
                                                                     .have_stat = old[j].have_stat };
                if (w->disks[w->n_disks].name)
                        w->n_disks++;
        }
        for (size_t j = 0; j < n_old; j++)
                free(old[j].name);
        free(old);
}

/*
 * Re-reads /proc/swaps. Returns 1 when the set of areas or the class in use
 * changed, 0 when only usage moved, or an error (the old set is kept).
 */
static int refresh_areas(RaSwapWatch *w, bool say) {
        _cleanup_free_ char *text = NULL;
        RaSwapArea *areas = NULL;
        size_t len, n = 0, n_active = 0;
        RaSwapClass active;
        bool changed;
        int r;

        r = read_proc(SWAPS_PATH, &text, &len);
        if (r >= 0)
                r = ra_swap_parse_swaps(text, len, &areas, &n);
        if (r < 0)
                return r;

        /* Mapping stats files: done once per area, kept while it stays. */
        for (size_t i = 0; i < n; i++) {
                RaSwapArea *was = find_area(w->areas, w->n_areas, areas[i].filename);

                if (was && was->device) {
                        areas[i].device = strdup(was->device);
                        areas[i].class = was->class;
                } else
                        map_area(&areas[i]);
        }

        changed = n != w->n_areas;
        for (size_t i = 0; i < n; i++)
                if (!find_area(w->areas, w->n_areas, areas[i].filename)) {
                        changed = true;
                        if (say)
                                log_info("Swap: %s is on (%s, %s, priority %d).", areas[i].filename,
                                         areas[i].device ?: "unknown disk",
                                         ra_swap_class_to_string(areas[i].class), areas[i].priority);
                }
        for (size_t i = 0; i < w->n_areas; i++)
                if (!find_area(areas, n, w->areas[i].filename) && say)
                        log_info("Swap: %s is off.", w->areas[i].filename);

        active = ra_swap_active_class(areas, n, &n_active);
        changed = changed || active != w->active;

        ra_swap_areas_free(w->areas, w->n_areas);
        w->areas = areas;
        w->n_areas = n;
        w->active = active;
        w->n_active = n_active;
        if (changed)
                collect_disks(w);
        return changed;
}

/* --- learning ------------------------------------------------------------------------------ */

static void observe(Manager *m, uint64_t now) {
        RaSwapWatch *w = m->swap;
        _cleanup_free_ char *text = NULL;
        RaSwapObservation o = {};
        RaVmSwapStat vm;
        size_t len;
        bool baseline = w->vm_usec == 0 || now <= w->vm_usec;
        unsigned judgements;
        int r;

        r = read_proc(VMSTAT_PATH, &text, &len);
        if (r >= 0)
                r = ra_swap_parse_vmstat(text, len, &vm);
        if (r < 0) {
                log_debug_errno(r, "Swap: cannot read %s: %m", VMSTAT_PATH);
                w->vm_usec = 0;
                return;
        }

        o.seconds = baseline ? 0 : (double) (now - w->vm_usec) / 1e6;
        o.has_ra = vm.has_ra;
        /* Counters never go back but on a new boot: a step back is no delta. */
        if (vm.pswpin >= w->vm.pswpin && vm.swap_ra >= w->vm.swap_ra &&
            vm.swap_ra_hit >= w->vm.swap_ra_hit) {
                o.pswpin = vm.pswpin - w->vm.pswpin;
                o.swap_ra = vm.swap_ra - w->vm.swap_ra;
                o.swap_ra_hit = vm.swap_ra_hit - w->vm.swap_ra_hit;
        } else
                baseline = true;
        w->vm = vm;
        w->vm_usec = now;

        for (size_t i = 0; i < w->n_disks; i++) {
                RaSwapDisk *d = &w->disks[i];
                _cleanup_free_ char *path = NULL;
                RaDiskStat st, delta;
                char buf[512];

                if (asprintf(&path, "/sys/class/block/%s/stat", d->name) < 0)
                        continue;
                if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0 ||
                    ra_diskstat_parse(buf, &st) < 0) {
                        d->have_stat = false;
                        continue;
                }
                if (d->have_stat && ra_diskstat_delta(&d->stat, &st, &delta) >= 0) {
                        o.read_ios += delta.read_ios;
                        o.read_sectors += delta.read_sectors;
                        o.io_ticks_ms += delta.io_ticks_ms;
                }
                d->stat = st;
                d->have_stat = true;
        }

        if (baseline || o.seconds <= 0)
                return;
        if (o.pswpin > 0)
                log_debug("Swap: %.2f s: %" PRIu64 " pages swapped in, %" PRIu64 " read ahead, %" PRIu64
                          " of them used; %" PRIu64 " reads of %" PRIu64 " sectors, %" PRIu64 " ms busy.",
                          o.seconds, o.pswpin, o.swap_ra, o.swap_ra_hit, o.read_ios, o.read_sectors,
                          o.io_ticks_ms);

        w->swapin_pages_per_sec = (uint64_t) ((double) o.pswpin / o.seconds + 0.5);
        if (o.swap_ra > 0)
                /* Hits of pages read ahead in an earlier interval can outnumber this one's. */
                w->hit_percent =
                        (uint32_t) (o.swap_ra_hit >= o.swap_ra ? 100 : o.swap_ra_hit * 100 / o.swap_ra);
        if (o.read_ios > 0)
                w->avg_read_request_bytes = o.read_sectors * 512 / o.read_ios;

        /*
         * Learning moves only a value radaemon chose itself and wrote: a step
         * it cannot try would be stored untested.
         */
        if (ra_context_observing(m) || w->external || w->current != w->decision.value ||
            !IN_SET(w->decision.source, RA_SOURCE_PRIOR, RA_SOURCE_LEARNED))
                return;
        judgements = w->model.judgements;
        r = ra_swap_learn(&w->model, w->current, &o);
        if (w->model.judgements != judgements)
                log_debug("Swap: judged at %d: %s", w->current, w->model.judged);
        if (r <= 0)
                return;

        log_debug("Swap: learned page-cluster %d for %s swap: %s", w->model.learned,
                  ra_swap_class_to_string(w->active), w->model.reason);
        ra_tune_swap_learned(m);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        RaSwapWatch *w = m->swap;
        RaSwapSnapshot before;
        uint64_t now;
        int r, current;

        r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return log_error_errno(r, "Cannot read the clock: %m");

        ra_tune_swap_begin(m, &before);
        /* Used pages move between areas without a poll event: they say which class is in use. */
        r = refresh_areas(w, true);
        if (r > 0)
                ra_tune_swap_decide(m, "swap change");
        current = ra_tune_swap_read(w);
        if (current >= 0)
                ra_tune_swap_drift(m, current);
        if (w->n_areas > 0)
                observe(m, now);
        else
                w->vm_usec = 0;
        (void) ra_store_flush(m);
        ra_tune_swap_commit(m, &before);

        r = sd_event_source_set_time(s, now + (uint64_t) m->config->interval_ms * 1000);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0)
                return log_error_errno(r, "Cannot schedule the next look at swap: %m");
        return 0;
}

static int on_swaps(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        RaSwapSnapshot before;
        uint64_t now;
        int r;

        ra_tune_swap_begin(m, &before);
        r = refresh_areas(m->swap, true);
        if (r < 0)
                log_warning_errno(r, "Swap: cannot read %s, keeping what was known: %m", SWAPS_PATH);
        else if (r > 0)
                ra_tune_swap_decide(m, "swap change");
        /* The first swap area: the counters from now on, not from the next tick on. */
        if (r > 0 && m->swap->n_areas > 0 && m->swap->vm_usec == 0 && m->swap->current >= 0 &&
            sd_event_now(m->event, CLOCK_MONOTONIC, &now) >= 0)
                observe(m, now);
        ra_tune_swap_commit(m, &before);
        return 0;
}

int ra_swapwatch_start(Manager *m) {
        _cleanup_close_ int fd = -1;
        RaSwapWatch *w;
        uint64_t now;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return log_oom();
        m->swap = w;
        w->manager = m;
        w->current = ra_tune_swap_read(w);
        w->decision.value = -1;
        ra_swap_model_reset(&w->model, RA_SWAP_CLASS_UNKNOWN,
                            ra_store_swap(m)->learned[RA_SWAP_CLASS_UNKNOWN]);

        /* Without swap support there is no /proc/swaps: nothing to watch, nothing to decide. */
        if (w->current < 0)
                log_info_errno(w->current, "Swap: cannot read %s (%m); page-cluster is not managed.",
                               RA_PAGE_CLUSTER_PATH);

        fd = open(SWAPS_PATH, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                log_info_errno(errno, "Swap: cannot open %s (%m); swap devices are not watched.",
                               SWAPS_PATH);
        else {
                /* Reading once arms the poll: the kernel signals changes made after it. */
                char buf[256];

                while (read(fd, buf, sizeof(buf)) > 0)
                        ;
                r = sd_event_add_io(m->event, &w->swaps_source, fd, EPOLLPRI, on_swaps, m);
                if (r < 0)
                        return log_error_errno(r, "Cannot watch %s: %m", SWAPS_PATH);
                r = sd_event_source_set_io_fd_own(w->swaps_source, true);
                if (r < 0)
                        return log_error_errno(r, "Cannot watch %s: %m", SWAPS_PATH);
                TAKE_FD(fd);
        }

        r = refresh_areas(w, true);
        if (r < 0 && w->swaps_source)
                log_warning_errno(r, "Swap: cannot read %s: %m", SWAPS_PATH);
        if (w->current >= 0)
                ra_tune_swap_decide(m, "start");

        r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        /* The counters as they are now: swap-in before the first tick is evidence, not a baseline. */
        if (r >= 0 && w->current >= 0 && w->n_areas > 0)
                observe(m, now);
        if (r >= 0 && w->current >= 0)
                r = sd_event_add_time(m->event, &w->timer, CLOCK_MONOTONIC,
                                      now + (uint64_t) m->config->interval_ms * 1000,
                                      (uint64_t) m->config->interval_ms * 1000 / 20, on_tick, m);
        if (r < 0)
                return log_error_errno(r, "Cannot start watching swap: %m");
        return 0;
}

void ra_swapwatch_free(Manager *m) {
        RaSwapWatch *w = m->swap;

        if (!w)
                return;
        sd_event_source_disable_unref(w->swaps_source);
        sd_event_source_disable_unref(w->timer);
        ra_swap_areas_free(w->areas, w->n_areas);
        free_disks(w);
        free(w);
        m->swap = NULL;
}
