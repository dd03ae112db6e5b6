/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace_pipe lines of block_rq_issue, and the stream accounting on what parses. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ra-trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        RaTraceAccount a = {};
        RaTraceSummary s;
        char *text, *save = NULL;

        text = strndup((const char *) data, size);
        if (!text)
                return 0;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                RaTraceEvent e;

                if (ra_trace_parse_line(line, &e) >= 0)
                        ra_trace_account_add(&a, &e, 128);
        }
        ra_trace_account_take(&a, &s);
        free(text);
        return 0;
}
