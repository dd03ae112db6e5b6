/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tracer's parsers. An input whose first byte is even is two format
 * files (header_page, a NUL, the event's format); an odd one is a page of
 * trace_pipe_raw read with Linux 6's formats of block_rq_issue and
 * block_bio_queue, with the stream accounting on what parses.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ra-trace.h"
#include "trace-format.h"

static void account(void *userdata, const RaTraceEvent *e) {
        ra_trace_account_add(userdata, e, 128);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        RaTraceAccount a = {};
        RaTraceFormat f[2];
        RaTraceSummary s;
        char *text;

        if (size == 0)
                return 0;

        if (data[0] % 2 == 0) {
                text = malloc(size + 1);
                if (!text)
                        return 0;
                memcpy(text, data + 1, size - 1);
                text[size - 1] = '\0';
                text[size] = '\0';
                /* Up to the first NUL the header, after it the event (empty if none). */
                (void) ra_trace_format_parse(text, text + strlen(text) + (strlen(text) < size - 1), &f[0]);
                free(text);
                return 0;
        }

        if (ra_trace_format_parse(header_page, event_format, &f[0]) < 0 ||
            ra_trace_format_parse(header_page, bio_event_format, &f[1]) < 0)
                abort();
        (void) ra_trace_page_parse(f, 2, data + 1, size - 1, account, &a);
        (void) ra_trace_page_missed(&(RaTracePage){ f[0].commit_size, f[0].data_offset }, data + 1,
                                    size - 1);
        ra_trace_account_take(&a, &s);
        return 0;
}
