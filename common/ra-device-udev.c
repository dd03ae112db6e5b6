/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <libudev.h>
#include <string.h>

#include "ra-device-udev.h"
#include "ra-stack.h"
#include "ra-util.h"

/* Counts the other disks udev's database holds with a's identity, and with its old one. */
static int count_others(struct udev *udev, const RaDeviceAttrs *a, const char *identity, const char *old,
                        size_t *ret_same, size_t *ret_old) {
        struct udev_enumerate *e;
        struct udev_list_entry *item;
        int r;

        *ret_same = *ret_old = 0;
        e = udev_enumerate_new(udev);
        if (!e)
                return -ENOMEM;
        /* Matches of properties are alternatives: every disk that could report a's WWN or serial. */
        r = udev_enumerate_add_match_subsystem(e, "block");
        if (r >= 0 && a->wwn)
                r = udev_enumerate_add_match_property(e, "ID_WWN_WITH_EXTENSION", a->wwn);
        if (r >= 0 && a->wwn)
                r = udev_enumerate_add_match_property(e, "ID_WWN", a->wwn);
        if (r >= 0 && a->serial)
                r = udev_enumerate_add_match_property(e, "ID_SERIAL", a->serial);
        if (r >= 0)
                r = udev_enumerate_scan_devices(e);

        udev_list_entry_foreach (item, r >= 0 ? udev_enumerate_get_list_entry(e) : NULL) {
                _cleanup_(ra_device_attrs_clear) RaDeviceAttrs o = {};
                _cleanup_free_ char *id = NULL, *o_old = NULL;
                struct udev_device *dev = udev_device_new_from_syspath(udev, udev_list_entry_get_name(item));
                bool disk = dev && ra_streq(udev_device_get_devtype(dev), "disk");
                char *name = disk ? strdup(udev_device_get_sysname(dev) ?: "") : NULL;

                udev_device_unref(dev);
                if (!name || ra_streq(name, a->name)) {
                        free(name);
                        continue; /* a partition, gone since the scan, or a itself */
                }
                r = ra_stack_read_leaf_udev(udev, name, &o);
                free(name);
                if (r == -ENOMEM)
                        break;
                /* Without a medium there is no device to speak of, as for radaemon. */
                if (r < 0 || o.size_bytes == 0 || ra_device_identity(&o, &id) < 0) {
                        r = 0;
                        continue;
                }
                *ret_same += ra_streq(id, identity);
                *ret_old += old && ra_device_old_identity(&o, &o_old) > 0 && ra_streq(o_old, old);
        }
        udev_enumerate_unref(e);
        return r < 0 ? r : 0;
}

int ra_device_identify_udev(RaState *s, const RaDeviceAttrs *a, char **ret_identity) {
        _cleanup_free_ char *identity = NULL, *old = NULL;
        size_t same = 0, others_old = 0;
        int r;

        r = ra_device_identity(a, &identity);
        if (r < 0)
                return r;
        r = ra_device_old_identity(a, &old);
        if (r < 0)
                return r;

        /* Only a maker's WWN or serial is shared by units that differ; udev's database knows them. */
        if ((a->wwn || a->serial) && a->size_bytes > 0) {
                struct udev *udev = udev_new();

                if (!udev)
                        return -ENOMEM;
                r = count_others(udev, a, identity, old, &same, &others_old);
                udev_unref(udev);
                if (r < 0)
                        return r;
        }

        if (same > 0) {
                _cleanup_free_ char *apart = NULL;

                r = ra_device_identity_apart(a, identity, &apart);
                if (r < 0)
                        return r;
                free(identity);
                identity = TAKE_PTR(apart);
        } else if (others_old == 0) {
                r = ra_state_carry_over(s, a, identity);
                if (r < 0)
                        return r;
        }

        *ret_identity = TAKE_PTR(identity);
        return 0;
}

int ra_device_candidate_identities(const RaDeviceAttrs *a, char ***ret) {
        _cleanup_(ra_strv_freep) char **l = NULL;
        _cleanup_free_ char *identity = NULL, *apart = NULL, *old = NULL;
        int r;

        r = ra_device_identity(a, &identity);
        if (r >= 0)
                r = ra_device_identity_apart(a, identity, &apart);
        if (r >= 0)
                r = ra_device_old_identity(a, &old);
        if (r < 0)
                return r;

        if (ra_strv_push(&l, identity) < 0 || ra_strv_push(&l, apart) < 0 ||
            (old && ra_strv_push(&l, old) < 0))
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

int ra_device_leaf_candidates_udev(void *userdata, char *const *names, char ***candidates) {
        int r;

        for (size_t i = 0; names && names[i]; i++) {
                _cleanup_(ra_device_attrs_clear) RaDeviceAttrs a = {};
                _cleanup_(ra_strv_freep) char **l = NULL;

                r = ra_stack_read_leaf_udev(userdata, names[i], &a);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || ra_device_candidate_identities(&a, &l) < 0)
                        continue; /* no identity: no calibration to compose */
                for (size_t j = 0; l[j]; j++)
                        if (ra_strv_push(candidates, l[j]) < 0)
                                return -ENOMEM;
        }
        return 0;
}

int ra_device_identify_leaves_udev(void *userdata, RaState *s, char *const *names, char ***ret) {
        _cleanup_(ra_strv_freep) char **ids = NULL;
        int r;

        for (size_t i = 0; names && names[i]; i++) {
                _cleanup_(ra_device_attrs_clear) RaDeviceAttrs a = {};
                _cleanup_free_ char *id = NULL;

                r = ra_stack_read_leaf_udev(userdata, names[i], &a);
                if (r == -ENOMEM)
                        return r;
                /* Without a medium there is no device to speak of, as for radaemon. */
                if (r >= 0 && a.size_bytes > 0) {
                        r = ra_device_identify_udev(s, &a, &id);
                        if (r == -ENOMEM)
                                return r;
                }
                if (ra_strv_push(&ids, id ?: "") < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(ids);
        return 0;
}
