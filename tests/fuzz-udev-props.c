/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The udev property parser (ID_* and RADAEMON_*), fed "KEY=VALUE" lines as
 * the udev helper gets them from its environment, then identity and policy
 * on what came out.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ra-device.h"
#include "ra-policy.h"
#include "ra-util.h"

static const char *get(void *userdata, const char *key) {
        size_t len = strlen(key);

        for (char **l = userdata; *l; l++)
                if (strncmp(*l, key, len) == 0 && (*l)[len] == '=')
                        return *l + len + 1;
        return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(ra_strv_freep) char **env = NULL;
        _cleanup_free_ char *text = NULL, *identity = NULL;
        RaDeviceAttrs a = {};
        RaSettings s = { .bounds = { 4, 8192 } };
        RaDecision d;

        text = strndup((const char *) data, size);
        if (!text)
                return 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                if (ra_strv_push(&env, line) < 0)
                        return 0;
        if (!env)
                return 0;

        a.name = strdup("sdz");
        a.size_bytes = UINT64_C(1) << 30;
        (void) ra_device_attrs_read_properties(&a, get, env, NULL);
        ra_device_attrs_guess_transport(&a, "/sys/devices/pci0000:00/usb1/block/sdz");
        (void) ra_device_identity(&a, &identity);
        ra_policy_decide(&a, &s, &d);
        if (d.kb == 0 || d.kb % 4 != 0)
                abort();
        ra_device_attrs_clear(&a);
        return 0;
}
