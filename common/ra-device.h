/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-macro.h"

/*
 * Every read-ahead size radaemon accepts, from any source, is a whole number
 * of 4 KiB pages in [RA_KB_MIN, RA_KB_LIMIT]: 0 would turn large reads into
 * page-sized synchronous ones, and the kernel rounds to pages anyway.
 */
#define RA_KB_MIN 4u
#define RA_KB_LIMIT (1024u * 1024u)

static inline bool ra_kb_is_valid(uint32_t kb) {
        return kb >= RA_KB_MIN && kb <= RA_KB_LIMIT && kb % 4 == 0;
}

/* The page size in KiB: 4 on most machines, 16 or 64 on some. */
uint32_t ra_page_kb(void);

/*
 * What radaemon knows about one block disk: its sysfs attributes, the
 * properties udev recorded for it, and what an administrator's udev rule asked
 * for through the RADAEMON_* properties. Strings are owned; NULL when unknown.
 */
typedef struct RaDeviceAttrs {
        char *name; /* kernel name, "sdb" */

        /* sysfs; 0 where the kernel does not report the attribute */
        uint64_t size_bytes;
        bool rotational;
        bool removable;
        uint32_t read_ahead_kb;
        uint32_t max_sectors_kb;
        uint32_t max_hw_sectors_kb;
        uint32_t optimal_io_bytes;
        uint32_t logical_block_size;
        uint64_t diskseq;   /* a new one with every new medium; 0 on kernels without it */
        char *backing_file; /* loop devices only */

        /* udev database, or libblkid where udev does not say */
        char *bus;      /* ID_BUS */
        char *vendor;   /* ID_VENDOR */
        char *model;    /* ID_MODEL */
        char *revision; /* ID_REVISION: the firmware's */
        char *serial;
        char *wwn;
        char *id_path;
        char *fs_type;
        char *dm_uuid;         /* DM_UUID: "LVM-…", "CRYPT-LUKS2-…"; only a dm device's own counts */
        char *md_uuid;         /* MD_UUID: an array's, also set on its members */
        const char *transport; /* a static string, or bus */

        /* RADAEMON_* properties from udev rules; 0 when unset */
        bool ignore;
        uint32_t pin_kb;
        uint32_t min_kb;
        uint32_t max_kb;
        uint32_t fleet_kb; /* RADAEMON_FLEET_KB, from udev's hwdb: a model's starting value */

        /*
         * RADAEMON_ORIGINAL_KB, set by radaemon's own udev helper: the value
         * the disk had before the helper first wrote it on this plug.
         */
        bool has_original;
        uint32_t original_kb;
} RaDeviceAttrs;

void ra_device_attrs_clear(RaDeviceAttrs *a);

/*
 * Reads the attributes below a /sys/block/<name> directory. The size and
 * read_ahead_kb must be there; the others may be missing (they stay 0), but
 * present and unparsable is an error for each of them: -EINVAL, or -ERANGE
 * for numbers that do not fit. ret_bad_attr names the attribute that failed.
 */
int ra_device_attrs_read_sysfs(RaDeviceAttrs *a, int sysfd, const char **ret_bad_attr);

/* A lookup of one udev property: libudev's database, or the environment. */
typedef const char *(*RaPropertyGetter)(void *userdata, const char *key);

/*
 * Reads all radaemon reads of the disk name, whose sysfs directory sysfd is
 * at syspath: the attributes, the udev properties through get, the
 * transport. The daemon and its udev helper both read disks this way, so
 * they decide alike. Returns 0; -ENODEV when the disk is gone or has no
 * read_ahead_kb; -EINVAL with *ret_bad_property naming a RADAEMON_* property
 * that was invalid and skipped (the rest is read); another negative errno
 * with *ret_bad_attr naming the attribute that could not be read.
 */
int ra_device_read(RaDeviceAttrs *a, const char *name, int sysfd, const char *syspath, RaPropertyGetter get,
                   void *userdata, const char **ret_bad_attr, const char **ret_bad_property);

/*
 * Reads the ID_* and RADAEMON_* properties. A RADAEMON_* value that is not a
 * valid size is skipped and reported: the return is -EINVAL and
 * ret_bad_property names it, while every valid property is still taken.
 */
int ra_device_attrs_read_properties(RaDeviceAttrs *a, RaPropertyGetter get, void *userdata,
                                    const char **ret_bad_property);

/*
 * Sets a->transport: "usb", "ata", "nvme", "loop", ... from ID_BUS, else
 * guessed from the device path (anything below a USB port is "usb") and name.
 */
void ra_device_attrs_guess_transport(RaDeviceAttrs *a, const char *syspath);

/*
 * The stable identity under which pins and learned values are kept:
 * "dm:<DM_UUID>" for a device-mapper device, "md:<MD_UUID>" for an md array
 * (their kernel names follow creation order, so they come first), then
 * "wwn:<WWN>/<MODEL>/<SIZE>", "serial:<ID_SERIAL>/<MODEL>/<SIZE>" (SIZE in
 * bytes: a WWN or a serial alone is shared by some units of some makers),
 * "loop:<backing file>", "path:…", or "name:<kernel name>".
 */
int ra_device_identity(const RaDeviceAttrs *a, char **ret);

/*
 * Where two present devices report one identity, each is kept apart under
 * "<identity>@path:<ID_PATH>", or "<identity>@name:<kernel name>" without
 * a path: neither takes the other's state, nor what the identity held.
 */
int ra_device_identity_apart(const RaDeviceAttrs *a, const char *identity, char **ret);

/*
 * The identity an earlier radaemon kept a's state under, where this one's
 * differs: "name:dm-0" for a device now known as "dm:…" or "md:…", "wwn:X"
 * for one now known as "wwn:X/MODEL/SIZE" (the same for a serial). Returns
 * 1 with *ret set, 0 with *ret NULL when there is none.
 */
int ra_device_old_identity(const RaDeviceAttrs *a, char **ret);
