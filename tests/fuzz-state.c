/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state file parser; what parses must format and parse back the same. */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "ra-state.h"
#include "ra-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(ra_state_freep) RaState *s = NULL, *back = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL, **errors2 = NULL;
        _cleanup_free_ char *text = NULL, *again = NULL;

        if (ra_state_new(&s) < 0 || ra_state_new(&back) < 0)
                return 0;
        (void) ra_state_parse(s, (const char *) data, size, &errors);

        if (ra_state_format(s, &text) < 0)
                return 0;
        if (ra_state_parse(back, text, strlen(text), &errors2) != 0)
                abort();
        if (ra_state_format(back, &again) < 0 || strcmp(text, again) != 0)
                abort();
        return 0;
}
