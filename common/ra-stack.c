/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdlib.h>

#include "ra-stack.h"
#include "ra-util.h"

static const char *const kind_names[_RA_STACK_KIND_MAX] = {
        [RA_STACK_DISK] = "disk",   [RA_STACK_DM_CRYPT] = "dm-crypt",
        [RA_STACK_DM_LVM] = "lvm",  [RA_STACK_DM_MULTIPATH] = "multipath",
        [RA_STACK_DM_OTHER] = "dm", [RA_STACK_MD] = "md",
};

const char *ra_stack_kind_to_string(RaStackKind k) {
        return k >= 0 && k < _RA_STACK_KIND_MAX ? kind_names[k] : NULL;
}

static const char *const md_level_names[_RA_MD_LEVEL_MAX] = {
        [RA_MD_LEVEL_NONE] = "none",   [RA_MD_LEVEL_LINEAR] = "linear", [RA_MD_LEVEL_RAID0] = "raid0",
        [RA_MD_LEVEL_RAID1] = "raid1", [RA_MD_LEVEL_RAID4] = "raid4",   [RA_MD_LEVEL_RAID5] = "raid5",
        [RA_MD_LEVEL_RAID6] = "raid6", [RA_MD_LEVEL_RAID10] = "raid10", [RA_MD_LEVEL_OTHER] = "other",
};

const char *ra_md_level_to_string(RaMdLevel l) {
        return l >= 0 && l < _RA_MD_LEVEL_MAX ? md_level_names[l] : NULL;
}

static void device_clear(RaStackDevice *d) {
        free(d->name);
        free(d->dm_name);
        free(d->dm_uuid);
        for (size_t i = 0; i < d->n_slaves; i++)
                free(d->slaves[i].name);
        free(d->slaves);
        ra_strv_free(d->holders);
        *d = (RaStackDevice){};
}

RaStack *ra_stack_free(RaStack *s) {
        if (!s)
                return NULL;

        for (size_t i = 0; i < s->n_devices; i++)
                device_clear(&s->devices[i]);
        free(s->devices);
        free(s->leaves);
        return mfree(s);
}
