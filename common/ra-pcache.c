/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <string.h>

#include "ra-macro.h"
#include "ra-pcache.h"

/* --- the stream model --------------------------------------------------------- */

static uint64_t page_bytes(const RaPcacheAccount *a) {
        return (uint64_t) (a->page_kb ? a->page_kb : 4) * 1024;
}

/* s read again what it had read ahead: evicted before it was used (its window is more than its memory
 * holds). */
static void stream_reread(RaPcacheStream *s, const RaPcacheAccount *a) {
        s->reread_interval = a->interval + 1;
        s->reread_pid = s->pid;
}

/* A random read of s brought pages it did not ask for: counted for it this interval. */
static void stream_waste(RaPcacheAccount *a, RaPcacheStream *s, uint64_t pages) {
        a->now.waste_bytes += pages * page_bytes(a);
        s->waste_interval = a->interval + 1;
        s->waste_pid = s->pid;
}

/* A fallback's run ends: one about a window long, not from the start, was read around a random read. */
static void run_end(RaPcacheAccount *a, RaPcacheStream *s, uint64_t window_pages) {
        if (!s->run_from_start && s->run > 1 && s->run * 2 >= window_pages && s->run <= 2 * window_pages) {
                s->waste_run = s->run;
                stream_waste(a, s, s->run - 1);
        }
}

/*
 * The fallback's page at index was read before by s since its last jump (its
 * run): evicted, and read again. A file's first page is a new open.
 */
static bool run_rereads(const RaPcacheStream *s, uint64_t index) {
        return index > 0 && s->next != UINT64_MAX && index < s->next && index >= s->next - s->run;
}

static RaPcacheStream *stream_get(RaPcacheAccount *a, const RaPcacheEvent *e, uint32_t window_kb) {
        RaPcacheStream *stalest = &a->streams[0], *latest = NULL, *stalest_own = NULL, *reread = NULL;
        unsigned own = 0;

        for (size_t i = 0; i < RA_PCACHE_STREAMS; i++) {
                RaPcacheStream *s = &a->streams[i];

                if (s->used && s->s_dev == e->s_dev && s->ino == e->ino) {
                        /* The fallback's pages that follow one reader's go on with that reader. */
                        if (e->kind == RA_PCACHE_ADD && s->next == e->index)
                                return s;
                        if (e->kind == RA_PCACHE_ADD && !reread && run_rereads(s, e->index))
                                reread = s;
                        own++;
                        if (!latest || s->last_seen > latest->last_seen)
                                latest = s;
                        if (!stalest_own || s->last_seen < stalest_own->last_seen)
                                stalest_own = s;
                }
                if (!s->used || (stalest->used && s->last_seen < stalest->last_seen))
                        stalest = s;
        }

        /*
         * The readahead events name the window of each read: one stream a file. The fallback
         * sees only pages: several readers of one inode (a block device's, read by four dd)
         * would each look like the others' jumps, so a jump in a file read by fewer than
         * RA_PCACHE_READERS takes a stream of its own. Past that, jumps are random reads and
         * go on in the file's stalest stream.
         */
        /* ...and pages it read before, evicted since, go on with it too. */
        if (reread)
                return reread;
        if (latest && (e->kind != RA_PCACHE_ADD || own >= RA_PCACHE_READERS))
                return e->kind == RA_PCACHE_ADD ? stalest_own : latest;

        /* A file not seen lately, or another reader of one: nothing is known of where it reads. */
        if (stalest->used)
                run_end(a, stalest, window_kb / (page_bytes(a) / 1024));
        *stalest = (RaPcacheStream){
                .used = true, .s_dev = e->s_dev, .ino = e->ino, .next = UINT64_MAX, .epoch = a->epoch
        };
        /* Another reader of a file counted this interval is not another file. */
        if (latest) {
                stalest->interval = latest->interval;
                stalest->credited = latest->credited;
        }
        return stalest;
}

static void count_request(RaPcacheAccount *a, uint64_t pages) {
        unsigned b = 0;

        if (pages == 0)
                return;
        while (b + 1 < RA_PCACHE_REQ_BUCKETS && pages > (UINT64_C(1) << b))
                b++;
        a->req_reads[b]++;
        a->req_pages[b] += pages;
}

/* Sequential pages read under a file's window, for the credit and stream_kb. */
static void count_window(RaPcacheAccount *a, uint32_t ra_pages, uint64_t pages) {
        for (size_t i = 0; i < ELEMENTSOF(a->window_seq); i++)
                if (a->window_seq[i][1] == 0 || a->window_seq[i][0] == ra_pages) {
                        a->window_seq[i][0] = ra_pages;
                        a->window_seq[i][1] += pages;
                        return;
                }
}

/* s read in order this interval: one stream more, and its task. */
static void count_stream(RaPcacheAccount *a, RaPcacheStream *s) {
        if (s->seq_interval == a->interval + 1)
                return;
        s->seq_interval = a->interval + 1;
        a->now.seq_streams++;
        if (s->pid <= 0 || a->now.n_pids >= RA_PCACHE_PIDS)
                return;
        for (uint32_t i = 0; i < a->now.n_pids; i++)
                if (a->now.pids[i] == s->pid)
                        return;
        a->now.pids[a->now.n_pids++] = s->pid;
}

/* Sequential bytes of s read under the window in force. */
static void count_in_window(RaPcacheAccount *a, RaPcacheStream *s, uint64_t bytes) {
        a->now.window_bytes += bytes;
        if (s->credited != a->interval + 1) {
                s->credited = a->interval + 1;
                a->now.window_files++;
        }
}

/*
 * A file whose window is ra_pages runs under window_kb: it took it when it
 * was opened, or twice it where its reader advised POSIX_FADV_SEQUENTIAL,
 * as cat and cp do (coreutils 9.1: fadvise64(fd, 0, 0, SEQUENTIAL)), which
 * doubles the file's window. Counted as another window's, sixteen `cat`
 * were never credited to the window they read under, and no trial of it
 * was ever judged. A file advised so under half the window looks like one
 * that took the window itself: its requests are the same size.
 */
static bool under_window(const RaPcacheAccount *a, uint32_t ra_pages, uint32_t window_kb) {
        uint64_t kb = (uint64_t) ra_pages * (page_bytes(a) / 1024);

        return kb == window_kb || kb == 2 * (uint64_t) window_kb;
}

/* A window was read for s: credit it to what caused it. */
static void window_read(RaPcacheAccount *a, RaPcacheStream *s, uint64_t index, uint64_t pages,
                        uint32_t ra_pages, uint32_t window_kb) {
        uint64_t bytes = pages * page_bytes(a), asked;

        if (ra_pages > 0)
                s->ra_pages = ra_pages;

        switch (s->pending) {
        case RA_CAUSE_SEQUENTIAL:
                a->now.seq_reads++;
                a->now.seq_bytes += bytes;
                count_stream(a, s);
                /* The window limits this file: a larger one would read more at once. */
                if (s->ra_pages > 0 && pages * 10 >= (uint64_t) s->ra_pages * 9) {
                        a->now.full_bytes += bytes;
                        /*
                         * Read ahead of the program, not a read of its own larger than the window:
                         * one that advised POSIX_FADV_RANDOM reads whole windows only so.
                         */
                        if (!s->pending_miss) {
                                s->full_interval = a->interval + 1;
                                s->full_pid = s->pid;
                        }
                }
                if (under_window(a, s->ra_pages, window_kb)) {
                        count_in_window(a, s, bytes);
                        /*
                         * What it read since its last jump, missed and read again: evicted before
                         * it was used. A fault's read-around starts before the fault, over pages
                         * it may hold: only a read that missed says so.
                         */
                        if (s->pending_miss && index > 0 && s->next != UINT64_MAX && index < s->next &&
                            index >= s->read_from) {
                                a->now.reread_bytes +=
                                        (s->next - index < pages ? s->next - index : pages) * page_bytes(a);
                                stream_reread(s, a);
                        }
                }
                if (s->next == UINT64_MAX || index > s->next || index < s->read_from)
                        s->read_from = index;
                count_window(a, s->ra_pages, pages);
                break;
        case RA_CAUSE_FAULT_FIRST:
                a->now.random_bytes += bytes;
                break;
        case RA_CAUSE_RANDOM:
        case RA_CAUSE_FAULT_RANDOM:
                /* A fault asks for one page; a read for what it asked. */
                asked = s->pending == RA_CAUSE_FAULT_RANDOM ? 1 : s->req_count;
                a->now.random_bytes += bytes;
                if (pages > asked)
                        stream_waste(a, s, pages - asked);
                break;
        default:
                return;
        }

        s->start = index;
        s->next = index + pages;
        s->pending = RA_CAUSE_NONE;
}

/*
 * The fallback's credit of a file's sequential bytes to the window in force.
 * Read from its start under it, the file was opened under it. Seen first in
 * its middle is not enough where the window grew: a reader opened before
 * keeps the old window and is told apart only by what it reads, which never
 * exceeds the old window (four dd of one device, one inode, opened before a
 * trial: one seen anew after a jump, or after its stream was forgotten, must
 * not speak for the trial). Such a stream is credited once a readahead of it
 * was larger than the old window, with what it read of the interval before
 * (its ramp up to there).
 */
static void grown_credit(RaPcacheAccount *a, RaPcacheStream *s, uint64_t bytes) {
        uint64_t from_pages = a->grown_from_kb / (page_bytes(a) / 1024);

        if (s->held_interval != a->interval + 1) {
                s->held_interval = a->interval + 1;
                s->held_bytes = 0;
        }
        if (from_pages > 0 && !s->run_from_start && s->batch_max <= from_pages) {
                s->held_bytes += bytes;
                return;
        }
        count_in_window(a, s, bytes + s->held_bytes);
        s->held_bytes = 0;
}

/* Without the readahead events: pages that follow the file's last ones continue its stream. */
static void page_added(RaPcacheAccount *a, RaPcacheStream *s, const RaPcacheEvent *e, uint32_t window_kb) {
        uint64_t window_pages = window_kb / (page_bytes(a) / 1024), bytes = e->nr * page_bytes(a);
        bool follows = s->next == e->index;

        /*
         * Pages of its run read again: evicted before they were used. The run goes on from
         * there, as the reader does.
         */
        if (!follows && run_rereads(s, e->index)) {
                if (s->next > s->reread_until)
                        s->reread_until = s->next;
                s->run -= s->next - e->index;
                s->next = e->index;
                follows = true;
        }
        if (!follows)
                s->reread_until = 0;
        else if (e->index < s->reread_until && s->epoch == a->epoch) {
                a->now.reread_bytes += bytes;
                stream_reread(s, a);
        }

        if (!follows) {
                /* A jump ends a run. */
                run_end(a, s, window_pages);
                /* A file read from its start begins a stream, not a jump: opened again, as a rule. */
                s->run_from_start = e->index == 0;
                if (s->run_from_start)
                        s->epoch = a->epoch;
                if (!s->run_from_start)
                        a->now.random_reads++;
                s->run = 0;
        }

        /* Pages right after the file's last ones, and right after them in time: the same readahead. */
        if (!follows || s->batch == 0 || e->time_ns < s->batch_ns ||
            e->time_ns - s->batch_ns > RA_PCACHE_BATCH_GAP_NS)
                s->batch = s->batch_seq = 0;
        s->batch += e->nr;
        s->batch_ns = e->time_ns;
        if (s->batch > s->batch_max)
                s->batch_max = s->batch;
        s->run += e->nr;
        s->next = e->index + e->nr;

        if (!s->run_from_start && s->run <= window_pages) {
                a->now.random_bytes += bytes;
                return;
        }

        if (s->batch_seq == 0)
                a->now.seq_reads++;
        a->now.seq_bytes += bytes;
        count_stream(a, s);
        /*
         * A readahead larger than the window: the file took a larger one at its open. One
         * seen before the window took its value may have taken a smaller one: see the header.
         */
        if (s->batch_max <= window_pages && s->epoch == a->epoch)
                grown_credit(a, s, bytes);
        /*
         * A readahead as large as the window allows: the stream would read more at once
         * with a larger one. Its pages before it got that far count once it does.
         */
        if (window_pages > 0 && s->batch_max <= window_pages && s->batch * 10 >= window_pages * 9) {
                if ((s->batch - e->nr) * 10 < window_pages * 9)
                        a->now.full_bytes += s->batch_seq * page_bytes(a);
                a->now.full_bytes += bytes;
                s->full_interval = a->interval + 1;
                s->full_pid = s->pid;
        }
        s->batch_seq += e->nr;
}

void ra_pcache_account_add(RaPcacheAccount *a, const RaPcacheEvent *e, uint32_t window_kb) {
        uint64_t page = page_bytes(a), prev;
        RaPcacheStream *s;

        a->clock++;
        a->now.events++;
        if (window_kb != a->window_kb) {
                /* A window that grew: readers opened before never read more than the old one at once. */
                a->grown_from_kb = a->window_kb > 0 && window_kb > a->window_kb ? a->window_kb : 0;
                a->window_kb = window_kb;
                a->epoch++;
        }
        s = stream_get(a, e, window_kb);
        s->last_seen = a->clock;
        if (e->pid > 0)
                s->pid = e->pid;
        if (s->interval != a->interval + 1) {
                s->interval = a->interval + 1;
                a->now.files++;
        }

        switch (e->kind) {
        case RA_PCACHE_SYNC:
                count_request(a, e->req_count);
                /*
                 * The kernel's own test: the file's start, a read larger than the
                 * window, or one that starts where the previous read ended.
                 * Where the last window ended goes on too: its mark was missed.
                 */
                prev = e->prev_pos < 0 ? UINT64_MAX : (uint64_t) e->prev_pos / page;
                if (e->index == 0 || (e->ra_pages > 0 && e->req_count > e->ra_pages) ||
                    (prev != UINT64_MAX && e->index >= prev && e->index - prev <= 1) ||
                    (s->next != UINT64_MAX && e->index >= s->start && e->index <= s->next))
                        s->pending = RA_CAUSE_SEQUENTIAL;
                else {
                        s->pending = RA_CAUSE_RANDOM;
                        a->now.random_reads++;
                }
                s->req_count = e->req_count;
                s->ra_pages = e->ra_pages;
                s->pending_miss = true;
                break;
        case RA_PCACHE_ASYNC:
                count_request(a, e->req_count);
                s->pending = RA_CAUSE_SEQUENTIAL;
                s->ra_pages = e->ra_pages;
                s->pending_miss = false;
                break;
        case RA_PCACHE_FAULT:
                /* Faults inside or right after what the file has read follow it. */
                if (s->next == UINT64_MAX)
                        s->pending = RA_CAUSE_FAULT_FIRST;
                else if (e->index >= s->start && e->index <= s->next + s->ra_pages)
                        s->pending = RA_CAUSE_SEQUENTIAL;
                else {
                        s->pending = RA_CAUSE_FAULT_RANDOM;
                        a->now.random_reads++;
                        a->now.random_faults++;
                }
                s->req_count = 1;
                s->pending_miss = false;
                break;
        case RA_PCACHE_ORDER:
        case RA_PCACHE_UNBOUNDED:
                /* An unbounded read after ra_order is that window's tail: counted already. */
                window_read(a, s, e->index, e->nr, e->kind == RA_PCACHE_ORDER ? e->ra_pages : 0, window_kb);
                break;
        case RA_PCACHE_ADD:
                page_added(a, s, e, window_kb);
                break;
        default:
                break;
        }
}

void ra_pcache_account_take(RaPcacheAccount *a, RaPcacheSummary *ret) {
        uint64_t best = 0;

        *ret = a->now;
        for (unsigned b = 0; b < RA_PCACHE_REQ_BUCKETS; b++)
                if (a->req_reads[b] > best) {
                        best = a->req_reads[b];
                        ret->req_kb = (uint32_t) (a->req_pages[b] * page_bytes(a) / a->req_reads[b] / 1024);
                }

        best = 0;
        for (size_t i = 0; i < ELEMENTSOF(a->window_seq); i++)
                if (a->window_seq[i][1] > best) {
                        best = a->window_seq[i][1];
                        ret->stream_kb = (uint32_t) (a->window_seq[i][0] * (page_bytes(a) / 1024));
                }

        a->now = (RaPcacheSummary){};
        a->interval++;
        memset(a->req_reads, 0, sizeof(a->req_reads));
        memset(a->req_pages, 0, sizeof(a->req_pages));
        memset(a->window_seq, 0, sizeof(a->window_seq));
}

/*
 * The window s reads under, in pages: the one the readahead events name, or
 * under the fallback the largest readahead it made, where that was no larger
 * than the old window (a larger one: it took another at its open).
 */
static bool reads_under(const RaPcacheAccount *a, const RaPcacheStream *s, uint64_t old_pages) {
        if (s->ra_pages > 0)
                return s->ra_pages == old_pages;
        return s->batch_max > 0 && s->batch_max <= old_pages;
}

size_t ra_pcache_followers(const RaPcacheAccount *a, uint32_t old_kb, uint32_t new_kb, RaPcacheFollower *ret,
                           size_t n) {
        uint64_t page_kb = page_bytes(a) / 1024, old_pages = old_kb / page_kb;
        bool cut = new_kb < old_kb;
        size_t k = 0;

        if (old_kb == new_kb || old_pages == 0)
                return 0;
        for (size_t i = 0; i < RA_PCACHE_STREAMS && k < n; i++) {
                const RaPcacheStream *s = &a->streams[i];
                uint64_t when = cut ? s->waste_interval : s->full_interval, seen;
                int32_t pid = cut ? s->waste_pid : s->full_pid;
                bool reread = false, dup = false;

                /*
                 * On a cut, a stream whose window its memory does not hold (it read again what it
                 * had read ahead) too: it holds less under the cut's.
                 */
                if (cut && s->reread_interval > when) {
                        when = s->reread_interval;
                        pid = s->reread_pid;
                        reread = true;
                }
                /* Read this interval or the last (intervals are counted +1 in the streams). */
                if (!s->used || pid <= 0 || when == 0 || when + 1 < a->interval + 1 ||
                    !reads_under(a, s, old_pages))
                        continue;
                /*
                 * What grows is a stream, not random faults that sometimes land beside the last
                 * (those read whole windows in order too).
                 */
                if (!cut && s->waste_interval > 0 && s->waste_interval + 1 >= a->interval + 1)
                        continue;
                /*
                 * The fallback sees a file's window only from above: one that read windows as
                 * large as the old was under it; a smaller one may have opened under another.
                 */
                /*
                 * A random read's window is also the run read around it, whose pages may come in
                 * several batches (Debian 12's 6.1 in an emulated CPU: 11-18 us apart, never more
                 * than 15 in one); one longer than the old is not under it.
                 */
                seen = cut && s->waste_run > s->batch_max ? s->waste_run : s->batch_max;
                if (s->ra_pages == 0 && (seen * 10 < old_pages * 9 || (cut && s->waste_run > old_pages)))
                        continue;
                /* A file read by one task is one follower, however many of its streams say so. */
                for (size_t j = 0; j < k && !dup; j++)
                        dup = ret[j].pid == pid && ret[j].s_dev == s->s_dev && ret[j].ino == s->ino;
                if (dup)
                        continue;
                ret[k++] = (RaPcacheFollower){
                        .pid = pid, .s_dev = s->s_dev, .ino = s->ino, .cut = cut, .reread = reread
                };
        }
        return k;
}
