/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ra-device.h"
#include "ra-util.h"

uint32_t ra_page_kb(void) {
        static uint32_t kb;

        if (kb == 0) {
                long size = sysconf(_SC_PAGESIZE);

                kb = size >= 4096 ? (uint32_t) (size / 1024) : 4;
        }
        return kb;
}

void ra_device_attrs_clear(RaDeviceAttrs *a) {
        free(a->name);
        free(a->backing_file);
        free(a->bus);
        free(a->vendor);
        free(a->model);
        free(a->revision);
        free(a->serial);
        free(a->wwn);
        free(a->id_path);
        free(a->fs_type);
        free(a->dm_uuid);
        free(a->md_uuid);
        *a = (RaDeviceAttrs){};
}

/* Reads one number; a missing optional attribute leaves *ret at 0. */
static int read_u64_attr(int sysfd, const char *attr, bool required, uint64_t *ret) {
        char buf[32];
        int r;

        r = ra_read_file_at(sysfd, attr, buf, sizeof(buf));
        if (r == -ENOENT && !required) {
                *ret = 0;
                return 0;
        }
        if (r == -EFBIG)
                return -ERANGE;
        if (r < 0)
                return r;

        return ra_parse_u64(buf, ret);
}

static int read_u32_attr(int sysfd, const char *attr, bool required, uint32_t *ret) {
        uint64_t v;
        int r;

        r = read_u64_attr(sysfd, attr, required, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;

        *ret = (uint32_t) v;
        return 0;
}

static int read_bool_attr(int sysfd, const char *attr, bool *ret) {
        uint64_t v;
        int r;

        r = read_u64_attr(sysfd, attr, false, &v);
        if (r < 0)
                return r;
        if (v > 1)
                return -EINVAL;

        *ret = v == 1;
        return 0;
}

int ra_device_attrs_read_sysfs(RaDeviceAttrs *a, int sysfd, const char **ret_bad_attr) {
        const struct {
                const char *attr;
                uint32_t *value;
                bool required;
        } numbers[] = {
                { "queue/read_ahead_kb", &a->read_ahead_kb, true },
                { "queue/max_sectors_kb", &a->max_sectors_kb, false },
                { "queue/max_hw_sectors_kb", &a->max_hw_sectors_kb, false },
                { "queue/optimal_io_size", &a->optimal_io_bytes, false },
                { "queue/logical_block_size", &a->logical_block_size, false },
        };
        const char *bad = NULL;
        char path[4096];
        uint64_t sectors;
        int r;

        /* The size is in 512-byte sectors whatever the logical block size. */
        r = read_u64_attr(sysfd, "size", true, &sectors);
        if (r >= 0 && sectors > UINT64_MAX / 512)
                r = -ERANGE;
        if (r < 0) {
                bad = "size";
                goto finish;
        }
        a->size_bytes = sectors * 512;

        r = read_u64_attr(sysfd, "diskseq", false, &a->diskseq);
        if (r < 0) {
                bad = "diskseq";
                goto finish;
        }

        for (size_t i = 0; i < ELEMENTSOF(numbers); i++) {
                r = read_u32_attr(sysfd, numbers[i].attr, numbers[i].required, numbers[i].value);
                if (r < 0) {
                        bad = numbers[i].attr;
                        goto finish;
                }
        }

        r = read_bool_attr(sysfd, "queue/rotational", &a->rotational);
        if (r < 0) {
                bad = "queue/rotational";
                goto finish;
        }
        r = read_bool_attr(sysfd, "removable", &a->removable);
        if (r < 0) {
                bad = "removable";
                goto finish;
        }

        /* Only attached loop devices have a backing file. */
        r = ra_read_file_at(sysfd, "loop/backing_file", path, sizeof(path));
        if (r > 0) {
                free(a->backing_file);
                a->backing_file = strdup(path);
                if (!a->backing_file)
                        return -ENOMEM;
        } else if (r < 0 && r != -ENOENT && r != -ENXIO) {
                bad = "loop/backing_file";
                goto finish;
        }
        r = 0;

finish:
        if (ret_bad_attr)
                *ret_bad_attr = bad;
        return r;
}

static int parse_kb_property(const char *v, uint32_t *ret) {
        uint32_t kb;
        int r;

        r = ra_parse_u32(v, &kb);
        if (r < 0)
                return r;
        if (!ra_kb_is_valid(kb))
                return -ERANGE;

        *ret = kb;
        return 0;
}

static int dup_property(RaPropertyGetter get, void *userdata, const char *key, char **field) {
        const char *v = get(userdata, key);

        free(*field);
        *field = NULL;
        if (!v || !*v)
                return 0;

        *field = strdup(v);
        return *field ? 0 : -ENOMEM;
}

int ra_device_attrs_read_properties(RaDeviceAttrs *a, RaPropertyGetter get, void *userdata,
                                    const char **ret_bad_property) {
        const struct {
                const char *key;
                char **field;
        } strings[] = {
                { "ID_BUS", &a->bus },         { "ID_MODEL", &a->model },       { "ID_SERIAL", &a->serial },
                { "ID_VENDOR", &a->vendor },   { "ID_REVISION", &a->revision }, { "ID_PATH", &a->id_path },
                { "ID_FS_TYPE", &a->fs_type }, { "DM_UUID", &a->dm_uuid },      { "MD_UUID", &a->md_uuid },
        };
        const struct {
                const char *key;
                uint32_t *value;
        } sizes[] = {
                { "RADAEMON_READ_AHEAD_KB", &a->pin_kb },
                { "RADAEMON_MIN_KB", &a->min_kb },
                { "RADAEMON_MAX_KB", &a->max_kb },
                { "RADAEMON_FLEET_KB", &a->fleet_kb },
        };
        const char *bad = NULL, *v;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(strings); i++) {
                r = dup_property(get, userdata, strings[i].key, strings[i].field);
                if (r < 0)
                        return r;
        }

        /* The WWN with its vendor extension is the more specific of the two. */
        r = dup_property(get, userdata, "ID_WWN_WITH_EXTENSION", &a->wwn);
        if (r < 0)
                return r;
        if (!a->wwn) {
                r = dup_property(get, userdata, "ID_WWN", &a->wwn);
                if (r < 0)
                        return r;
        }

        a->ignore = false;
        v = get(userdata, "RADAEMON_IGNORE");
        if (v && ra_parse_boolean(v, &a->ignore) < 0)
                bad = "RADAEMON_IGNORE";

        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                *sizes[i].value = 0;
                v = get(userdata, sizes[i].key);
                if (v && parse_kb_property(v, sizes[i].value) < 0 && !bad)
                        bad = sizes[i].key;
        }

        /* Any value the kernel held, 0 included. */
        a->has_original = false;
        v = get(userdata, "RADAEMON_ORIGINAL_KB");
        if (v) {
                a->has_original = ra_parse_u32(v, &a->original_kb) >= 0 && a->original_kb <= RA_KB_LIMIT;
                if (!a->has_original && !bad)
                        bad = "RADAEMON_ORIGINAL_KB";
        }

        if (ret_bad_property)
                *ret_bad_property = bad;
        return bad ? -EINVAL : 0;
}

void ra_device_attrs_guess_transport(RaDeviceAttrs *a, const char *syspath) {
        static const struct {
                const char *prefix;
                const char *transport;
        } by_name[] = {
                { "loop", "loop" }, { "nvme", "nvme" },   { "mmcblk", "mmc" }, { "vd", "virtio" },
                { "xvd", "xen" },   { "nbd", "network" }, { "md", "md" },      { "dm-", "dm" },
                { "zram", "zram" }, { "ram", "ram" },     { "sr", "scsi" },    { "sd", "scsi" },
        };

        if (a->bus) {
                a->transport = a->bus;
                return;
        }

        if (syspath && strstr(syspath, "/usb")) {
                a->transport = "usb";
                return;
        }

        for (size_t i = 0; a->name && i < ELEMENTSOF(by_name); i++)
                if (strncmp(a->name, by_name[i].prefix, strlen(by_name[i].prefix)) == 0) {
                        a->transport = by_name[i].transport;
                        return;
                }

        a->transport = "unknown";
}

int ra_device_read(RaDeviceAttrs *a, const char *name, int sysfd, const char *syspath, RaPropertyGetter get,
                   void *userdata, const char **ret_bad_attr, const char **ret_bad_property) {
        int r;

        if (ret_bad_property)
                *ret_bad_property = NULL;

        free(a->name);
        a->name = strdup(name);
        if (!a->name)
                return -ENOMEM;

        r = ra_device_attrs_read_sysfs(a, sysfd, ret_bad_attr);
        if (ra_errno_is_gone(r))
                return -ENODEV;
        if (r < 0)
                return r;

        r = ra_device_attrs_read_properties(a, get, userdata, ret_bad_property);
        ra_device_attrs_guess_transport(a, syspath);
        return r;
}

/*
 * udev sets MD_UUID on an array's members as well (mdadm --examine), and a
 * rule could set DM_UUID anywhere: only the device's own kind counts.
 */
static const char *stacked_identity(const RaDeviceAttrs *a, const char **ret_kind) {
        if (!a->name)
                return NULL;
        if (a->dm_uuid && strncmp(a->name, "dm-", 3) == 0) {
                *ret_kind = "dm";
                return a->dm_uuid;
        }
        if (a->md_uuid && strncmp(a->name, "md", 2) == 0) {
                *ret_kind = "md";
                return a->md_uuid;
        }
        return NULL;
}

/* The most stable identity udev and sysfs give a: its kind and its value. */
static const char *identity_of(const RaDeviceAttrs *a, const char **ret_kind) {
        const struct {
                const char *kind, *value;
        } by_rank[] = {
                { "wwn", a->wwn },      { "serial", a->serial }, { "loop", a->backing_file },
                { "path", a->id_path }, { "name", a->name },
        };
        const char *v = stacked_identity(a, ret_kind);

        for (size_t i = 0; !v && i < ELEMENTSOF(by_rank); i++)
                if (by_rank[i].value) {
                        *ret_kind = by_rank[i].kind;
                        v = by_rank[i].value;
                }
        return v;
}

/*
 * A WWN or a serial is the manufacturer's word, and some give one to every
 * unit (cheap USB bridges, some NVMe drives; scsi_debug gives every disk
 * one WWN): with the model and the size, disks that differ in either stay
 * apart.
 */
static bool is_vendor_kind(const char *kind) {
        return ra_streq(kind, "wwn") || ra_streq(kind, "serial");
}

/* "/" separates the parts of an identity: a "/" or "\" inside one is written as \xHH. */
static int append_part(FILE *f, const char *s) {
        for (const char *p = s ?: ""; *p; p++) {
                int r = *p == '/' || *p == '\\' ? fprintf(f, "\\x%02x", (unsigned char) *p) : fputc(*p, f);

                if (r < 0)
                        return -ENOMEM; /* a memory stream fails only for memory */
        }
        return 0;
}

int ra_device_identity(const RaDeviceAttrs *a, char **ret) {
        const char *kind = NULL, *value = identity_of(a, &kind);
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        if (!value)
                return -EINVAL;
        if (!is_vendor_kind(kind))
                return asprintf(ret, "%s:%s", kind, value) < 0 ? -ENOMEM : 0;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        r = fprintf(f, "%s:", kind) < 0 ? -ENOMEM : 0;
        if (r >= 0)
                r = append_part(f, value);
        if (r >= 0 && fputc('/', f) == EOF)
                r = -ENOMEM;
        if (r >= 0)
                r = append_part(f, a->model);
        if (r >= 0 && fprintf(f, "/%" PRIu64, a->size_bytes) < 0)
                r = -ENOMEM;
        if (fclose(f) != 0 || r < 0)
                return -ENOMEM;

        *ret = TAKE_PTR(text);
        return 0;
}

int ra_device_identity_apart(const RaDeviceAttrs *a, const char *identity, char **ret) {
        int r;

        /* ID_PATH is the port: the same two disks in the same two ports find their own state again. */
        if (a->id_path)
                r = asprintf(ret, "%s@path:%s", identity, a->id_path);
        else
                r = asprintf(ret, "%s@name:%s", identity, a->name ?: "");
        return r < 0 ? -ENOMEM : 0;
}

int ra_device_old_identity(const RaDeviceAttrs *a, char **ret) {
        const char *kind = NULL, *value;
        int r;

        *ret = NULL;
        /*
         * Before dm: and md:, a dm or md device was kept by its kernel name:
         * none of the ID_* properties radaemon reads are set on them.
         */
        if (stacked_identity(a, &kind))
                r = asprintf(ret, "name:%s", a->name);
        else {
                /* Before the model and the size, a WWN or a serial was the identity alone. */
                value = identity_of(a, &kind);
                if (!value || !is_vendor_kind(kind))
                        return 0;
                r = asprintf(ret, "%s:%s", kind, value);
        }
        if (r < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 1;
}
