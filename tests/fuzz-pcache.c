/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The page-cache parsers and the stream model. By the first byte of an
 * input, modulo 3: 0, format files (header_page, then the events' formats,
 * separated by NULs); 1, a page of trace_pipe_raw read with Linux 6.18's
 * readahead events; 2, one read with only mm_filemap_add_to_page_cache (the
 * fallback). Every event that parses goes through the stream model.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pcache-format.h"
#include "ra-pcache.h"
#include "trace-format.h"

static void account(void *userdata, const RaPcacheEvent *e) {
        ra_pcache_account_add(userdata, e, 128);
}

static void parse_formats(const uint8_t *data, size_t size) {
        const char *texts[_RA_PCACHE_KIND_MAX] = {};
        RaPcacheFormat f;
        char *text = malloc(size + 1), *p, *end;

        if (!text)
                return;
        memcpy(text, data, size);
        text[size] = '\0';
        end = text + size;

        /* The header up to the first NUL, then one event each; the missing ones are missing. */
        p = text + strlen(text) + 1;
        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX && p < end; k++) {
                texts[k] = p;
                p += strlen(p) + 1;
        }
        (void) ra_pcache_format_parse(text, texts, &f);
        free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *texts[_RA_PCACHE_KIND_MAX] = {};
        RaPcacheAccount a = { .page_kb = 4 };
        RaPcacheSummary s;
        RaPcacheFormat f;

        if (size == 0)
                return 0;
        if (data[0] % 3 == 0) {
                parse_formats(data + 1, size - 1);
                return 0;
        }

        for (RaPcacheKind k = 0; k < _RA_PCACHE_KIND_MAX; k++)
                if (data[0] % 3 == 1 || k == RA_PCACHE_ADD)
                        texts[k] = pcache_formats[k];
        if (ra_pcache_format_parse(header_page, texts, &f) < 0)
                abort();
        (void) ra_pcache_page_parse(&f, data + 1, size - 1, account, &a);
        /* Twice: the second interval starts from the streams the first left. */
        ra_pcache_account_take(&a, &s);
        (void) ra_pcache_page_parse(&f, data + 1, size - 1, account, &a);
        ra_pcache_account_take(&a, &s);
        return 0;
}
