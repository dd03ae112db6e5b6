/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>

#include "ra-calib.h"
#include "ra-macro.h"

const char *ra_calib_source_to_string(RaCalibSource s) {
        switch (s) {
        case RA_CALIB_CALIBRATED:
                return "calibrated";
        case RA_CALIB_TRACED:
                return "traced";
        default:
                return "";
        }
}

/* 4 KiB and below: 0; then one class per factor of four, the last taking everything larger. */
static size_t size_class(uint32_t kb) {
        size_t k = 0;

        for (uint32_t top = 16; kb >= top && k + 1 < RA_CALIB_TRACE_CLASSES; top *= 4)
                k++;
        return k;
}

void ra_calib_trace_issue(RaCalibTrace *t, uint64_t sector, uint32_t kb, uint64_t time_ns) {
        size_t slot = 0;

        if (kb == 0 || time_ns == 0)
                return;
        /* A free slot, or else the oldest: its completion was lost (or is so slow it tells nothing). */
        for (size_t i = 0; i < RA_CALIB_TRACE_INFLIGHT; i++) {
                if (t->inflight[i].issued_ns == 0 || t->inflight[i].sector == sector) {
                        slot = i;
                        break;
                }
                if (t->inflight[i].issued_ns < t->inflight[slot].issued_ns)
                        slot = i;
        }
        t->inflight[slot].sector = sector;
        t->inflight[slot].issued_ns = time_ns;
        t->inflight[slot].kb = kb;
}

void ra_calib_trace_complete(RaCalibTrace *t, uint64_t sector, uint64_t time_ns) {
        for (size_t i = 0; i < RA_CALIB_TRACE_INFLIGHT; i++) {
                RaCalibSample *f;
                uint64_t nsec;
                size_t k;

                if (t->inflight[i].issued_ns == 0 || t->inflight[i].sector != sector)
                        continue;
                /* Clocks of two CPUs may disagree a little: a completion "before" its issue tells nothing.
                 */
                nsec = time_ns > t->inflight[i].issued_ns ? time_ns - t->inflight[i].issued_ns : 0;
                k = size_class(t->inflight[i].kb);
                f = &t->fastest[k];
                if (nsec > 0) {
                        t->count[k]++;
                        if (f->nsec == 0 || nsec < f->nsec) {
                                *f = (RaCalibSample){ .kb = t->inflight[i].kb, .nsec = nsec };
                                t->changed = t->changed || t->count[k] >= RA_CALIB_TRACE_MIN;
                        } else if (t->count[k] == RA_CALIB_TRACE_MIN)
                                t->changed = true;
                }
                t->inflight[i].issued_ns = 0;
                return;
        }
}

int ra_calib_trace_fit(RaCalibTrace *t, uint64_t when, RaCalib *ret) {
        RaCalibSample s[RA_CALIB_TRACE_CLASSES];
        size_t n = 0;
        int r;

        for (size_t k = 0; k < RA_CALIB_TRACE_CLASSES; k++)
                if (t->count[k] >= RA_CALIB_TRACE_MIN)
                        s[n++] = t->fastest[k];
        t->changed = false;
        if (n == 0)
                return -ENODATA;
        r = ra_calib_fit(s, n, when, ret);
        if (r < 0)
                return r;
        ret->source = RA_CALIB_TRACED;
        return 0;
}
