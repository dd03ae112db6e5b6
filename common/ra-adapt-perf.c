/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "ra-adapt-perf.h"

RaPerf *ra_adapt_perf_find(RaModel *m, uint32_t kb) {
        for (size_t i = 0; i < m->n_perf; i++)
                if (m->perf[i].kb == kb)
                        return &m->perf[i];
        return NULL;
}

bool ra_adapt_perf_judged(RaModel *m, uint32_t kb) {
        const RaPerf *p = ra_adapt_perf_find(m, kb);

        return p && p->samples >= RA_ADAPT_SAMPLES;
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
}

double ra_adapt_perf_fastest(const RaModel *m) {
        double fastest = 0;

        for (size_t i = 0; i < m->n_perf; i++)
                if (m->perf[i].samples >= RA_ADAPT_SAMPLES && m->perf[i].bytes_per_sec > fastest)
                        fastest = m->perf[i].bytes_per_sec;
        return fastest;
}

const RaPerf *ra_adapt_perf_best(const RaModel *m) {
        double fastest = ra_adapt_perf_fastest(m);
        const RaPerf *best = NULL;

        for (size_t i = 0; i < m->n_perf; i++)
                if (m->perf[i].samples >= RA_ADAPT_SAMPLES &&
                    m->perf[i].bytes_per_sec >= RA_ADAPT_GAIN_TIE * fastest &&
                    (!best || m->perf[i].kb < best->kb))
                        best = &m->perf[i];
        return best;
}

bool ra_adapt_perf_has_above(const RaModel *m, uint32_t kb) {
        for (size_t i = 0; i < m->n_perf; i++)
                if (m->perf[i].kb > kb)
                        return true;
        return false;
}
