/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "ra-bus.h"
#include "ra-log.h"
#include "ra-manager.h"
#include "ra-settings.h"
#include "ra-swapwatch.h"
#include "ra-util.h"

#define SWAPS_PATH "/proc/swaps"
#define VMSTAT_PATH "/proc/vmstat"
/* /proc/vmstat is about 8 KiB on 6.x kernels; /proc/swaps at most MAX_SWAPFILES lines. */
#define PROC_MAX_BYTES (64u * 1024)

/* Someone who changes the value back this often a minute is left to it, as for disks. */
#define REASSERT_MAX 3
#define REASSERT_WINDOW_USEC (60 * UINT64_C(1000000))

/* What clients saw last, so that only what changed is signalled. */
typedef struct Published {
        int current;
        RaSwapDecision decision;
        char *devices;
        RaSwapClass active;
        uint64_t swapin_pages_per_sec;
        uint32_t hit_percent;
        uint64_t avg_read_request_bytes;
} Published;

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

static int read_page_cluster(void) {
        char buf[32];
        uint32_t v;
        int r;

        r = ra_read_file_at(AT_FDCWD, RA_PAGE_CLUSTER_PATH, buf, sizeof(buf));
        if (r < 0)
                return r;
        r = ra_parse_u32(buf, &v);
        if (r < 0 || v > INT_MAX)
                return -EINVAL;
        return (int) v;
}

/* Writes and reads back; returns what the kernel holds, or an error. */
static int write_page_cluster(int value, int *ret_now) {
        char buf[16];
        int r, now;

        (void) snprintf(buf, sizeof(buf), "%d\n", value);
        r = ra_write_file_at(AT_FDCWD, RA_PAGE_CLUSTER_PATH, buf);
        now = read_page_cluster();
        if (now >= 0)
                *ret_now = now;
        if (r < 0)
                return r;
        if (now < 0)
                return now;
        return now == value ? 0 : -EIO;
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

/* "file:prio:class:device ..." — what clients see as Devices, to tell a change. */
static char *describe_areas(const RaSwapWatch *w) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t i = 0; i < w->n_areas; i++)
                fprintf(f, "%s\t%d\t%s\t%s\t%" PRIu64 "\t%" PRIu64 "\n", w->areas[i].filename,
                        w->areas[i].priority, ra_swap_class_to_string(w->areas[i].class),
                        w->areas[i].device ?: "", w->areas[i].size_kb, w->areas[i].used_kb);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
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

/* --- deciding and writing ------------------------------------------------------------------ */

static void snapshot(const RaSwapWatch *w, Published *ret) {
        *ret = (Published){
                .current = w->current,
                .decision = w->decision,
                .devices = describe_areas(w),
                .active = w->active,
                .swapin_pages_per_sec = w->swapin_pages_per_sec,
                .hit_percent = w->hit_percent,
                .avg_read_request_bytes = w->avg_read_request_bytes,
        };
}

static void emit_changes(Manager *m, Published *b) {
        RaSwapWatch *w = m->swap;
        _cleanup_free_ char *devices = describe_areas(w);
        char *names[12];
        size_t n = 0;

#define CHANGED(cond, property)                                                                             \
        do {                                                                                                \
                if (cond)                                                                                   \
                        names[n++] = (char *) (property);                                                   \
        } while (false)

        CHANGED(!ra_streq(b->devices, devices), "Devices");
        CHANGED(b->active != w->active, "ActiveClass");
        CHANGED(b->current != w->current, "PageCluster");
        CHANGED(b->decision.value != w->decision.value, "TargetPageCluster");
        CHANGED(b->decision.source != w->decision.source, "Source");
        CHANGED(strcmp(b->decision.reason, w->decision.reason) != 0, "Reason");
        CHANGED(b->swapin_pages_per_sec != w->swapin_pages_per_sec, "SwapInPagesPerSec");
        CHANGED(b->hit_percent != w->hit_percent, "ReadAheadHitPercent");
        CHANGED(b->avg_read_request_bytes != w->avg_read_request_bytes, "AvgReadRequestBytes");
#undef CHANGED

        b->devices = mfree(b->devices);
        if (n == 0 || !m->bus)
                return;
        names[n] = NULL;
        (void) sd_bus_emit_properties_changed_strv(m->bus, RA_BUS_SWAP_PATH, RA_BUS_SWAP_INTERFACE, names);
}

static void write_decision(Manager *m, const char *event) {
        RaSwapWatch *w = m->swap;
        int before = w->current, now = w->current, r;

        /* The original is durable before the first write, so a crash cannot lose it. */
        if (!m->state->swap.has_original && before >= 0) {
                m->state->swap.original = before;
                m->state->swap.has_original = true;
                m->state_dirty = true;
                (void) ra_manager_flush_state(m);
        }

        r = write_page_cluster(w->decision.value, &now);
        w->current = now;
        if (r < 0) {
                if (r != w->write_error)
                        log_warning_errno(r, "Swap: cannot write %d to %s: %m", w->decision.value,
                                          RA_PAGE_CLUSTER_PATH);
                w->write_error = r;
                return;
        }
        if (w->write_error != 0)
                log_info("Swap: %s can be written again.", RA_PAGE_CLUSTER_PATH);
        w->write_error = 0;
        log_info("Swap: vm.page-cluster %d -> %d (%s, on %s): %s", before, now,
                 ra_source_to_string(w->decision.source), event, w->decision.reason);
}

static void decide(Manager *m, const char *event) {
        RaSwapWatch *w = m->swap;
        RaSwapDecision previous = w->decision;
        RaSwapSettings s;
        bool news;

        if (w->model.class != w->active)
                ra_swap_model_reset(&w->model, w->active, m->state->swap.learned[w->active]);

        ra_settings_build_swap(m->config, m->state,
                               &(RaSwapRun){
                                       .learned = w->model.learned,
                                       .learned_reason = w->model.reason,
                                       .external = w->external,
                                       .current = w->current,
                               },
                               &s);
        ra_swap_decide(w->active, w->n_areas, &s, &w->decision);

        news = !w->announced || previous.value != w->decision.value ||
               previous.source != w->decision.source || strcmp(previous.reason, w->decision.reason) != 0;
        w->announced = true;

        if (w->decision.value < 0 || w->current < 0)
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0, "Swap: %s", w->decision.reason);
        else if (w->decision.value == w->current)
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0,
                               "Swap: vm.page-cluster stays at %d (%s, on %s): %s", w->current,
                               ra_source_to_string(w->decision.source), event, w->decision.reason);
        else if (ra_manager_observing(m))
                log_full_errno(news ? LOG_INFO : LOG_DEBUG, 0,
                               "Swap: would change vm.page-cluster %d -> %d (%s, on %s; observe mode): %s",
                               w->current, w->decision.value, ra_source_to_string(w->decision.source), event,
                               w->decision.reason);
        else
                write_decision(m, event);
}

void ra_swapwatch_tune(Manager *m, const char *event) {
        Published before;

        if (!m->swap)
                return;
        snapshot(m->swap, &before);
        m->swap->external = false;
        decide(m, event);
        emit_changes(m, &before);
}

/* Someone else wrote the sysctl: yield, or write radaemon's value again. */
static void check_drift(Manager *m, int now_value) {
        RaSwapWatch *w = m->swap;
        int was = w->current;
        uint64_t now;

        if (now_value == was)
                return;
        w->current = now_value;

        if (w->external) {
                decide(m, "external change");
                return;
        }
        if (ra_manager_observing(m) || w->decision.value < 0 || now_value == w->decision.value)
                return;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (now - w->reassert_since > REASSERT_WINDOW_USEC) {
                w->reassert_since = now;
                w->reasserts = 0;
        }
        if (m->config->external == RA_EXTERNAL_REASSERT && w->reasserts < REASSERT_MAX) {
                w->reasserts++;
                log_info("Swap: vm.page-cluster went from %d to %d behind radaemon's back; writing %d again "
                         "(external_changes = reassert).",
                         was, now_value, w->decision.value);
                write_decision(m, "reassert");
                return;
        }
        log_info("Swap: vm.page-cluster went from %d to %d behind radaemon's back; leaving it.", was,
                 now_value);
        w->external = true;
        decide(m, "external change");
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
                if (ra_read_file_at(AT_FDCWD, path, buf, sizeof(buf)) < 0 || ra_stats_parse(buf, &st) < 0) {
                        d->have_stat = false;
                        continue;
                }
                if (d->have_stat && ra_stats_delta(&d->stat, &st, &delta) >= 0) {
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
        if (ra_manager_observing(m) || w->external || w->current != w->decision.value ||
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
        if (w->active >= 0 && w->active < _RA_SWAP_CLASS_MAX) {
                m->state->swap.learned[w->active] = w->model.learned;
                m->state_dirty = true;
        }
        decide(m, "learning");
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        RaSwapWatch *w = m->swap;
        Published before;
        uint64_t now;
        int r, current;

        r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return log_error_errno(r, "Cannot read the clock: %m");

        snapshot(w, &before);
        /* Used pages move between areas without a poll event: they say which class is in use. */
        r = refresh_areas(w, true);
        if (r > 0)
                decide(m, "swap change");
        current = read_page_cluster();
        if (current >= 0)
                check_drift(m, current);
        if (w->n_areas > 0)
                observe(m, now);
        else
                w->vm_usec = 0;
        (void) ra_manager_flush_state(m);
        emit_changes(m, &before);

        r = sd_event_source_set_time(s, now + (uint64_t) m->config->interval_ms * 1000);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0)
                return log_error_errno(r, "Cannot schedule the next look at swap: %m");
        return 0;
}

static int on_swaps(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        Published before;
        uint64_t now;
        int r;

        snapshot(m->swap, &before);
        r = refresh_areas(m->swap, true);
        if (r < 0)
                log_warning_errno(r, "Swap: cannot read %s, keeping what was known: %m", SWAPS_PATH);
        else if (r > 0)
                decide(m, "swap change");
        /* The first swap area: the counters from now on, not from the next tick on. */
        if (r > 0 && m->swap->n_areas > 0 && m->swap->vm_usec == 0 && m->swap->current >= 0 &&
            sd_event_now(m->event, CLOCK_MONOTONIC, &now) >= 0)
                observe(m, now);
        emit_changes(m, &before);
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
        w->current = read_page_cluster();
        w->decision.value = -1;
        ra_swap_model_reset(&w->model, RA_SWAP_CLASS_UNKNOWN, m->state->swap.learned[RA_SWAP_CLASS_UNKNOWN]);

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
                decide(m, "start");

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

int ra_swapwatch_restore(Manager *m, const char *why) {
        RaSwapWatch *w = m->swap;
        Published before;
        int now = -1, r;

        if (!w || !m->state->swap.has_original)
                return 0;

        snapshot(w, &before);
        r = write_page_cluster(m->state->swap.original, &now);
        if (r < 0)
                log_warning_errno(r, "Swap: cannot put back the original page-cluster %d: %m",
                                  m->state->swap.original);
        else
                log_info("Swap: vm.page-cluster %d -> %d, its value before radaemon (%s).", w->current, now,
                         why);
        if (now >= 0)
                w->current = now;
        emit_changes(m, &before);
        return r >= 0;
}

int ra_swapwatch_set_pin(Manager *m, int value, bool persist, uid_t uid) {
        RaStateSwap saved = m->state->swap;
        int r = 0;

        if (persist) {
                m->state->swap.pin = value;
                m->state->swap.runtime_pin = -1;
                m->state_dirty = true;
                r = ra_manager_flush_state(m);
                if (r < 0) {
                        m->state->swap = saved;
                        return r;
                }
        } else
                m->state->swap.runtime_pin = value;

        log_info("Swap: page-cluster pinned to %d by uid %u over D-Bus%s.", value, (unsigned) uid,
                 persist ? ", stored" : ", until radaemon stops");
        ra_swapwatch_tune(m, "pin");
        return 0;
}

int ra_swapwatch_clear_pin(Manager *m, uid_t uid) {
        RaStateSwap saved = m->state->swap;
        int r;

        m->state->swap.runtime_pin = -1;
        if (saved.pin >= 0) {
                m->state->swap.pin = -1;
                m->state_dirty = true;
                r = ra_manager_flush_state(m);
                if (r < 0) {
                        m->state->swap = saved;
                        return r;
                }
        }
        if (saved.pin >= 0 || saved.runtime_pin >= 0)
                log_info("Swap: page-cluster pin cleared by uid %u over D-Bus; radaemon decides again.",
                         (unsigned) uid);
        ra_swapwatch_tune(m, "unpin");
        return 0;
}

/* --- the Swap object ------------------------------------------------------------------------ */

static int property_get_devices(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const RaSwapWatch *w = ((Manager *) userdata)->swap;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sssitt)");
        for (size_t i = 0; r >= 0 && w && i < w->n_areas; i++) {
                const RaSwapArea *a = &w->areas[i];

                r = sd_bus_message_append(reply, "(sssitt)", a->filename, a->device ?: "",
                                          ra_swap_class_to_string(a->class), (int32_t) a->priority,
                                          a->size_kb * 1024, a->used_kb * 1024);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const RaSwapWatch *w = ((Manager *) userdata)->swap;

        if (!w)
                return -ENODEV;
        if (strcmp(property, "ActiveClass") == 0)
                return sd_bus_message_append(reply, "s",
                                             w->n_areas > 0 ? ra_swap_class_to_string(w->active) : "");
        if (strcmp(property, "PageCluster") == 0)
                return sd_bus_message_append(reply, "i", (int32_t) w->current);
        if (strcmp(property, "TargetPageCluster") == 0)
                return sd_bus_message_append(reply, "i", (int32_t) w->decision.value);
        if (strcmp(property, "Source") == 0)
                return sd_bus_message_append(reply, "s", ra_source_to_string(w->decision.source));
        if (strcmp(property, "Reason") == 0)
                return sd_bus_message_append(reply, "s", w->decision.reason);
        if (strcmp(property, "SwapInPagesPerSec") == 0)
                return sd_bus_message_append(reply, "t", w->swapin_pages_per_sec);
        if (strcmp(property, "ReadAheadHitPercent") == 0)
                return sd_bus_message_append(reply, "u", w->hit_percent);
        if (strcmp(property, "AvgReadRequestBytes") == 0)
                return sd_bus_message_append(reply, "t", w->avg_read_request_bytes);
        return -EINVAL;
}

static int method_set_page_cluster(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        uint32_t value;
        int persist, r;
        uid_t uid;

        r = sd_bus_message_read(msg, "ub", &value, &persist);
        if (r < 0)
                return r;
        if (value > RA_SWAP_PAGE_CLUSTER_MAX)
                return sd_bus_error_setf(error, RA_BUS_ERROR_INVALID_VALUE,
                                         "swap: page-cluster must be from 0 to %d, not %" PRIu32 ".",
                                         RA_SWAP_PAGE_CLUSTER_MAX, value);

        r = ra_bus_check_authorized(msg, &uid, error);
        if (r < 0)
                return r;

        r = ra_swapwatch_set_pin(m, (int) value, persist, uid);
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_FAILED, "Cannot store the pin under %s: %s",
                                         m->state_dir, strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_clear_pin(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        uid_t uid;
        int r;

        r = ra_bus_check_authorized(msg, &uid, error);
        if (r < 0)
                return r;

        r = ra_swapwatch_clear_pin(m, uid);
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_FAILED, "Cannot remove the pin under %s: %s",
                                         m->state_dir, strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

#define SWAP_PROPERTY(name, sig)                                                                            \
        SD_BUS_PROPERTY(name, sig, property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

static const sd_bus_vtable swap_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Devices", "a(sssitt)", property_get_devices, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SWAP_PROPERTY("ActiveClass", "s"),
        SWAP_PROPERTY("PageCluster", "i"),
        SWAP_PROPERTY("TargetPageCluster", "i"),
        SWAP_PROPERTY("Source", "s"),
        SWAP_PROPERTY("Reason", "s"),
        SWAP_PROPERTY("SwapInPagesPerSec", "t"),
        SWAP_PROPERTY("ReadAheadHitPercent", "u"),
        SWAP_PROPERTY("AvgReadRequestBytes", "t"),
        SD_BUS_METHOD_WITH_ARGS("SetPageCluster", SD_BUS_ARGS("u", value, "b", persist), SD_BUS_NO_RESULT,
                                method_set_page_cluster, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ClearPin", NULL, NULL, method_clear_pin, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

int ra_swapwatch_bus_add(Manager *m, sd_bus *bus) {
        return sd_bus_add_object_vtable(bus, NULL, RA_BUS_SWAP_PATH, RA_BUS_SWAP_INTERFACE, swap_vtable, m);
}
