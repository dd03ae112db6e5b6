/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration parser (inih and our checks around it) on any text. */
#include "config.h"

#include "fuzz.h"
#include "ra-config.h"
#include "ra-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        RaSettings s;

        if (ra_config_new(&c) < 0)
                return 0;
        (void) ra_config_parse_text(c, "fuzz.conf", (const char *) data, size, &errors);

        /* What a parse leaves behind must be usable. */
        (void) ra_config_manages(c, "sda");
        ra_config_device_settings(c, "sda", &s);
        return 0;
}
