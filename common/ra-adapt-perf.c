/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>

#include "ra-adapt-perf.h"

/* Read under for RA_ADAPT_SAMPLES intervals or more: its throughput counts. */
static bool judged(const RaPerf *p) {
        return p->samples >= RA_ADAPT_SAMPLES;
}

RaPerf *ra_adapt_perf_find(RaModel *m, uint32_t kb) {
        for (size_t i = 0; i < m->n_perf; i++)
                if (m->perf[i].kb == kb)
                        return &m->perf[i];
        return NULL;
}

bool ra_adapt_perf_judged(RaModel *m, uint32_t kb) {
        const RaPerf *p = ra_adapt_perf_find(m, kb);

        return p && judged(p);
}

void ra_adapt_perf_record(RaModel *m, uint32_t kb, double bytes_per_sec) {
        RaPerf *p = ra_adapt_perf_find(m, kb);

        if (!p) {
                /* Full: forget the least measured window. */
                if (m->n_perf == RA_ADAPT_PERF_SLOTS) {
                        p = &m->perf[0];
                        for (size_t i = 1; i < m->n_perf; i++)
                                if (m->perf[i].samples < p->samples)
                                        p = &m->perf[i];
                } else
                        p = &m->perf[m->n_perf++];
                *p = (RaPerf){ .kb = kb };
        }

        if (bytes_per_sec > p->bytes_per_sec)
                p->bytes_per_sec = bytes_per_sec;
        p->samples++;

        if (m->recheck_kb != 0 && kb != m->recheck.kb)
                m->recheck_kb = 0;
        else if (m->recheck_kb != 0) {
                if (bytes_per_sec > m->recheck.bytes_per_sec)
                        m->recheck.bytes_per_sec = bytes_per_sec;
                m->recheck.samples++;
        }
}

void ra_adapt_perf_recheck(RaModel *m, uint32_t trial_kb, uint32_t back_kb) {
        m->recheck_kb = trial_kb;
        m->recheck = (RaPerf){ .kb = back_kb };
}

double ra_adapt_perf_fastest(const RaModel *m) {
        double fastest = 0;

        for (size_t i = 0; i < m->n_perf; i++)
                if (judged(&m->perf[i]) && m->perf[i].bytes_per_sec > fastest)
                        fastest = m->perf[i].bytes_per_sec;
        return fastest;
}

const RaPerf *ra_adapt_perf_best(const RaModel *m) {
        double fastest = ra_adapt_perf_fastest(m);
        const RaPerf *best = NULL;

        for (size_t i = 0; i < m->n_perf; i++)
                if (judged(&m->perf[i]) && m->perf[i].bytes_per_sec >= RA_ADAPT_GAIN_TIE * fastest &&
                    (!best || m->perf[i].kb < best->kb))
                        best = &m->perf[i];
        return best;
}

bool ra_adapt_perf_has_above(const RaModel *m, uint32_t kb) {
        for (size_t i = 0; i < m->n_perf; i++)
                if (m->perf[i].kb > kb && judged(&m->perf[i]))
                        return true;
        return false;
}

void ra_adapt_perf_trial_wait(RaModel *m, const RaPcacheSummary *p, bool paged) {
        if (m->trial_waited++ > 0)
                return;
        if (!paged)
                ra_reason_format(m->reason,
                                 "%" PRIu32 " KiB on trial: no stream has read under it yet (those reading "
                                 "began before it), so it is neither kept nor refuted.",
                                 m->trial_kb);
        else if (p->window_files == 0)
                ra_reason_format(m->reason,
                                 "%" PRIu32 " KiB on trial: no file has read under it yet (the %" PRIu64
                                 " %s reading opened before it), so it is neither kept nor refuted.",
                                 m->trial_kb, p->files, p->files == 1 ? "file" : "files");
        else
                ra_reason_format(m->reason,
                                 "%" PRIu32 " KiB on trial: %" PRIu64 " of the %" PRIu64
                                 " files reading opened under it, too few of the reads to judge it by, "
                                 "so it is neither kept nor refuted.",
                                 m->trial_kb, p->window_files, p->files);
}

void ra_adapt_perf_trial_kept(RaModel *m) {
        const RaPerf *trial = ra_adapt_perf_find(m, m->trial_kb),
                     *from = ra_adapt_perf_find(m, m->trial_from_kb);

        if (from && judged(from) && from->bytes_per_sec > 0)
                ra_reason_format(m->reason,
                                 "Files opened under %" PRIu32 " KiB read %.0f%% as fast as with %" PRIu32
                                 " KiB (%.1f MB/s), so %" PRIu32 " KiB stays.",
                                 m->trial_kb, trial->bytes_per_sec / from->bytes_per_sec * 100,
                                 m->trial_from_kb, trial->bytes_per_sec / 1e6, m->trial_kb);
        else
                ra_reason_format(m->reason,
                                 "Files opened under %" PRIu32 " KiB read %.1f MB/s, so %" PRIu32
                                 " KiB stays.",
                                 m->trial_kb, trial->bytes_per_sec / 1e6, m->trial_kb);
}
