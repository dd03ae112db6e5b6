/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "ra-apply.h"
#include "ra-inputs.h"
#include "ra-util.h"

void ra_inputs_clear(RaInputs *in) {
        ra_device_attrs_clear(&in->attrs);
        free(in->identity);
        ra_stack_free(in->stack);
        free(in->leaf_kb);
        ra_strv_free(in->leaf_names);
        ra_strv_free(in->leaf_identities);
        free(in->stack_bad_path);
        ra_bdi_clear(&in->bdi);
        free(in->beneath_kb);
        ra_strv_free(in->beneath_names);
        *in = (RaInputs){};
}

/* The sysfs directory a link resolves to, opened; -ENODEV when it is not there. */
static int open_resolved(const char *link, char syspath[static PATH_MAX]) {
        int fd;

        if (!realpath(link, syspath))
                return errno == ENOENT ? -ENODEV : negative_errno();
        fd = open(syspath, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ENODEV : negative_errno();
        return fd;
}

int ra_inputs_read_disk(RaInputs *in, const char *sysfs_root, const char *name, const RaPropertySource *src,
                        const char **ret_bad_attr, const char **ret_bad_property) {
        _cleanup_close_ int sysfd = -1;
        char link[PATH_MAX], syspath[PATH_MAX];
        int r;

        *ret_bad_attr = *ret_bad_property = NULL;
        if (snprintf(link, sizeof(link), "%s/block/%s", sysfs_root, name) >= (int) sizeof(link))
                return -ENAMETOOLONG;
        sysfd = open_resolved(link, syspath);
        if (sysfd == -ENODEV)
                return 0;
        if (sysfd < 0)
                return sysfd;
        /* A partition's value is its disk's. */
        if (faccessat(sysfd, "partition", F_OK, 0) == 0)
                return 0;

        r = ra_device_read(&in->attrs, name, sysfd, syspath, src->get, src->userdata, ret_bad_attr,
                           ret_bad_property);
        if (r == -ENODEV)
                return 0; /* gone, or without queue/read_ahead_kb */
        if (r < 0 && !(r == -EINVAL && *ret_bad_property))
                return r;
        /*
         * The kernel makes the mq directory for every blk-mq queue, and since
         * Linux 5.0 (the legacy request path gone) every request-based queue
         * is one; bio-based devices have none. (Recent kernels, this 6.18,
         * also hide their queue's scheduler and nr_requests; older ones show
         * both, the scheduler as "none" as for some blk-mq queues.)
         */
        in->bio_based = faccessat(sysfd, "mq", F_OK, 0) < 0 && errno == ENOENT;

        /* A dm or md device from the disks at the bottom of its stack. */
        in->stack_read =
                ra_stack_read_priors(sysfs_root, name, src->read_beneath, src->beneath_userdata, &in->stack,
                                     &in->leaf_kb, &in->leaf_names, &in->stack_bad_path);
        if (in->stack_read == -ENOMEM)
                return -ENOMEM;
        in->kind = ra_settings_block_kind(in->stack_read);
        return 1;
}

/* The disk beneath a bdi with the number dev (a partition stands for its disk), read; -ENODEV when gone. */
static int read_one_beneath(const char *sysfs_root, dev_t dev, RaStackLeafReader read_beneath,
                            void *userdata, RaDeviceAttrs *ret) {
        _cleanup_close_ int sysfd = -1;
        char link[PATH_MAX], syspath[PATH_MAX];

        if (snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sysfs_root, major(dev), minor(dev)) >=
            (int) sizeof(link))
                return -ENAMETOOLONG;
        sysfd = open_resolved(link, syspath);
        if (sysfd < 0)
                return sysfd;
        if (faccessat(sysfd, "partition", F_OK, 0) == 0)
                *strrchr(syspath, '/') = '\0';
        return read_beneath(userdata, strrchr(syspath, '/') + 1, ret);
}

int ra_inputs_read_beneath(RaDeviceAttrs *a, RaBdi *b, const char *sysfs_root,
                           RaStackLeafReader read_beneath, void *userdata, uint32_t **ret_kb,
                           char ***ret_names) {
        const RaBounds any = { .min_kb = RA_KB_MIN, .max_kb = RA_KB_LIMIT };
        _cleanup_free_ uint32_t *kb = calloc(b->n_beneath + 1, sizeof(uint32_t));
        _cleanup_(ra_strv_freep) char **names = NULL;

        if (!kb)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_beneath; i++) {
                _cleanup_(ra_device_attrs_clear) RaDeviceAttrs d = {};
                RaDecision prior;
                int r;

                r = read_one_beneath(sysfs_root, b->beneath[i], read_beneath, userdata, &d);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue; /* going away; its file system with it */
                ra_policy_prior(&d, any, &prior);
                kb[i] = prior.kb;
                if (ra_strv_contains(names, d.name))
                        continue; /* another partition of a disk already counted */
                a->size_bytes += d.size_bytes;
                a->rotational = a->rotational || d.rotational;
                a->removable = a->removable || d.removable;
                if (d.max_sectors_kb > 0 && (a->max_sectors_kb == 0 || d.max_sectors_kb < a->max_sectors_kb))
                        a->max_sectors_kb = d.max_sectors_kb;
                if (ra_strv_push(&names, d.name) < 0)
                        return -ENOMEM;
        }
        /* A stripe over two partitions of one disk is read one at a time. */
        if (b->stripes > ra_strv_length(names) && ra_strv_length(names) > 0)
                b->stripes = (unsigned) ra_strv_length(names);
        *ret_kb = TAKE_PTR(kb);
        *ret_names = TAKE_PTR(names);
        return 0;
}

int ra_inputs_read_btrfs(RaInputs *in, const char *sysfs_root, const char *name, const RaPropertySource *src,
                         const char **ret_bad_property) {
        _cleanup_close_ int sysfd = -1;
        char path[PATH_MAX];
        int r;

        *ret_bad_property = NULL;
        in->kind = RA_SETTINGS_BDI;
        /* Named as radaemon names a btrfs being mounted, so that the same [bdi:GLOB] sections match. */
        in->bdi.name = strdup(name);
        in->bdi.fs_type = strdup("btrfs");
        in->attrs.name = strdup(name);
        if (!in->bdi.name || !in->bdi.fs_type || !in->attrs.name)
                return -ENOMEM;
        r = ra_bdi_read_btrfs(sysfs_root, NULL, &in->bdi);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;

        if (snprintf(path, sizeof(path), "%s/class/bdi/%s", sysfs_root, name) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        sysfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sysfd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        r = ra_apply_read_current(sysfd, RA_APPLY_BDI_ATTR, &in->attrs.read_ahead_kb);
        if (r < 0)
                return r == -ENODEV ? 0 : r;
        in->attrs.transport = ra_bdi_kind_to_string(RA_BDI_BTRFS);
        r = ra_device_attrs_read_properties(&in->attrs, src->get, src->userdata, ret_bad_property);
        if (r < 0 && !(r == -EINVAL && *ret_bad_property))
                return r;

        r = ra_inputs_read_beneath(&in->attrs, &in->bdi, sysfs_root, src->read_beneath,
                                   src->beneath_userdata, &in->beneath_kb, &in->beneath_names);
        if (r < 0)
                return r;
        return in->attrs.size_bytes > 0; /* 0: its devices are gone */
}

uint32_t ra_inputs_server_kb(const RaDeviceAttrs *a, const RaState *s, const char *identity) {
        const RaStateEntry *e = s && identity ? ra_state_find(s, identity) : NULL;

        return a->has_original ? a->original_kb : e && e->has_original ? e->original_kb : a->read_ahead_kb;
}

void ra_inputs_settings_input(const RaInputs *in, const RaSettingsRun *run, RaSettingsInput *ret) {
        *ret = (RaSettingsInput){
                .kind = in->kind,
                .attrs = &in->attrs,
                .identity = in->identity,
                .name = in->attrs.name,
                .stack_read = in->stack_read,
                .stack = in->stack,
                .leaf_kb = in->leaf_kb,
                .leaf_identities = in->leaf_identities,
                .bdi = &in->bdi,
                .beneath_kb = in->beneath_kb,
                .server_kb = in->server_kb,
                .run = run,
        };
}

void ra_inputs_decide(const RaConfig *c, const RaState *s, const RaInputs *in, const RaSettingsRun *run,
                      RaSettings *ret_settings, RaDecision *ret) {
        RaSettingsInput input;

        ra_inputs_settings_input(in, run, &input);
        ra_settings_build(c, s, &input, ret_settings);
        ra_policy_decide(&in->attrs, ret_settings, ret);
}
