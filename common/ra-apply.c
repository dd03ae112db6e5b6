/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "ra-apply.h"
#include "ra-util.h"

static int gone_to_enodev(int r) {
        return ra_errno_is_gone(r) ? -ENODEV : r;
}

int ra_apply_read_current(int sysfd, const char *attr, uint32_t *ret_kb) {
        char buf[32];
        int r;

        r = ra_read_file_at(sysfd, attr, buf, sizeof(buf));
        if (r < 0)
                return gone_to_enodev(r);

        return ra_parse_u32(buf, ret_kb);
}

int ra_apply_read_ahead(int sysfd, const char *attr, uint32_t kb, uint32_t *ret_now) {
        char value[16];
        uint32_t now;
        int r;

        (void) snprintf(value, sizeof(value), "%" PRIu32 "\n", kb);

        r = gone_to_enodev(ra_write_file_at(sysfd, attr, value));
        if (r < 0) {
                if (ret_now && ra_apply_read_current(sysfd, attr, &now) >= 0)
                        *ret_now = now;
                return r;
        }

        r = ra_apply_read_current(sysfd, attr, &now);
        if (r < 0)
                return r;

        if (ret_now)
                *ret_now = now;
        return now == kb ? 0 : -EIO;
}
