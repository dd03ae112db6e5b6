/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ra-tracefs-internal.h"
#include "ra-tracefs.h"
#include "ra-util.h"

/* One drain's reading per CPU, at most: a storm of tiny requests costs no more than this. */
#define DRAIN_MAX_BYTES (1024 * 1024)

static void collect(void *userdata, const RaTraceEvent *e) {
        RaTracefs *t = userdata;

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
        RaTracefs *t = userdata;

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
static int drain_cpu(RaTracefs *t, RaTracefsCpu *c, uint8_t *page) {
        RaTracePage layout = { .commit_size = t->formats[0].commit_size,
                               .data_offset = t->formats[0].data_offset };
        RaTraceFormat formats[3] = { t->formats[0] };
        size_t n_formats = 1;

        /* The events on now, side by side, as the parser takes them. */
        if (t->formats[2].id != 0)
                formats[n_formats++] = t->formats[2];
        if (t->bio_on)
                formats[n_formats++] = t->formats[1];

        for (size_t total = 0; total < DRAIN_MAX_BYTES; total += t->page_size) {
                ssize_t n = read(c->fd, page, t->page_size);

                if (n < 0)
                        return errno == EAGAIN ? 0 : negative_errno();
                if (n == 0)
                        return 0;
                c->missed = c->missed || ra_trace_page_missed(&layout, page, (size_t) n);
                /* A page cut short or not understood is skipped: the next one starts afresh. */
                (void) ra_trace_page_parse(formats, n_formats, page, (size_t) n, collect, t);
                if (t->evidence >= RA_EVIDENCE_FILEMAP)
                        (void) ra_pcache_page_parse(&t->pformat, page, (size_t) n, collect_pcache, t);
        }
        return 0;
}

int ra_tracefs_drain(RaTracefs *t, RaTraceHandler fn, RaPcacheHandler pfn, void *userdata) {
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
        RaTracefs *t = userdata;

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

int ra_tracefs_watch(RaTracefs *t, sd_event *event, RaTracefsWake wake, void *userdata) {
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

void ra_tracefs_set_watching(RaTracefs *t, bool on) {
        for (size_t i = 0; i < t->n_cpus; i++)
                if (t->cpus[i].wake)
                        (void) sd_event_source_set_enabled(t->cpus[i].wake, on ? SD_EVENT_ON : SD_EVENT_OFF);
}

/* The kernel's count of one CPU's events overwritten unread: the line "overrun: N" of its stats. */
static int read_overrun(const RaTracefs *t, unsigned cpu, uint64_t *ret) {
        char path[64], buf[1024], *p;
        int r;

        (void) snprintf(path, sizeof(path), "per_cpu/cpu%u/stats", cpu);
        r = ra_tracefs_read_attr(t, path, buf, sizeof(buf));
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

void ra_tracefs_take_counts(RaTracefs *t, uint64_t *ret_read, uint64_t *ret_lost) {
        uint64_t lost = 0;

        /* Only a CPU whose pages said so is asked: the count costs a file read a CPU. */
        for (size_t i = 0; i < t->n_cpus; i++) {
                RaTracefsCpu *c = &t->cpus[i];
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
