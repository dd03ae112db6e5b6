/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-macro.h"
#include "ra-policy.h"

#define RA_CONFIG_FILE SYSCONFDIR "/radaemon/radaemon.conf"
#define RA_CONFIG_DROPIN_DIR SYSCONFDIR "/radaemon/radaemon.conf.d"

typedef enum RaMode {
        RA_MODE_AUTO,    /* decide and write */
        RA_MODE_OBSERVE, /* decide and report, never write */
        _RA_MODE_MAX,
} RaMode;

const char *ra_mode_to_string(RaMode m);

/* What to do when read_ahead_kb changes behind radaemon's back, without a uevent. */
typedef enum RaExternal {
        RA_EXTERNAL_YIELD,    /* leave it, report Source=external */
        RA_EXTERNAL_REASSERT, /* write radaemon's value again */
        _RA_EXTERNAL_MAX,
} RaExternal;

const char *ra_external_to_string(RaExternal e);

/* Whether the files already open take a device's new window (daemon/ra-openfiles.c). */
typedef enum RaOpenFiles {
        RA_OPEN_FILES_UNSET, /* a section that does not say */
        RA_OPEN_FILES_FOLLOW,
        RA_OPEN_FILES_LEAVE,
        _RA_OPEN_FILES_MAX,
} RaOpenFiles;

/* A [device:GLOB], [bdi:GLOB] or [path:PATH] section; 0 means the key was not given. */
typedef struct RaDeviceSection {
        char *glob;
        bool bdi;  /* [bdi:GLOB]: the glob is on a bdi's name, mount point or file system type */
        bool path; /* [path:PATH]: glob is an absolute path, the section is for what its files read with */
        bool ignore;
        uint32_t read_ahead_kb;
        uint32_t min_kb;
        uint32_t max_kb;
        RaOpenFiles open_files;
        /* [path:PATH]: the object its files read with now (ra_config_resolve_paths); NULL: none yet */
        char *resolved;
        bool resolved_bdi;
        int chase_error; /* why its path's links were not followed (ra_path_chase()); 0 when they were */
        bool invalid;    /* a line of it had an error: ra_config_read_lenient() drops it */
} RaDeviceSection;

typedef struct RaConfig {
        char **devices; /* globs on kernel names to manage */
        char **ignore;  /* globs never managed, even when in devices */
        char **bdis;    /* globs on a bdi's name, mount point or file system type, to manage */
        RaMode mode;
        uint32_t interval_ms;
        char *state_dir;
        bool restore_on_exit;       /* put every device back to its original value at exit */
        uint32_t forget_after_days; /* an unpinned identity not seen for this long is forgotten; 0: never */
        RaBounds bounds;
        RaExternal external;
        bool calibrate; /* measure each new disk once, for its first window */
        RaOpenFiles open_files;

        RaDeviceSection *sections;
        size_t n_sections;

        /* [swap]: vm.page-cluster */
        bool swap_manage;      /* decide page-cluster from the swap devices in use */
        int swap_page_cluster; /* a pin; -1 when unset */

        /* A line of [daemon], [policy] or [swap] had an error (ra_config_read_lenient()). */
        bool invalid_global;
} RaConfig;

/* A configuration holding the documented defaults. */
int ra_config_new(RaConfig **ret);
RaConfig *ra_config_free(RaConfig *c);
RA_DEFINE_CLEANUP(RaConfig, ra_config_free)

/*
 * Parses one file on top of c. Every problem is appended to *errors as
 * "file:line: message" and parsing goes on, so one run reports them all;
 * returns -EINVAL when there was any, or a negative errno when the file could
 * not be read at all.
 */
int ra_config_parse_file(RaConfig *c, const char *path, char ***errors);

/* The same, for text in memory (tests, fuzzing); name is used in errors. */
int ra_config_parse_text(RaConfig *c, const char *name, const char *text, size_t len, char ***errors);

/*
 * Loads the main file (a missing one means defaults) and then the *.conf files
 * of dropin_dir in lexical order; dropin_dir may be NULL.
 */
int ra_config_load(RaConfig *c, const char *path, const char *dropin_dir, char ***errors);

/*
 * The configuration radaemon and its udev helper run with: path alone when
 * given (--config), else RA_CONFIG_FILE and its drop-ins, on the defaults.
 */
int ra_config_read(const char *path, RaConfig **ret, char ***errors);

/*
 * As ra_config_read(), but a bad line costs its section, not the whole: at
 * boot a daemon that does not start tunes nothing, and nobody may be there
 * to see why. A [device:], [bdi:] or [path:] section with an error (or a
 * bad header) is dropped, and its name added to *ret_dropped; a bad line of
 * [daemon], [policy] or [swap] keeps that key's default and puts the whole
 * in observe mode, which decides and writes nothing, as a value meant
 * otherwise (mode = observe mistyped, say) must not be written. Returns 0
 * when the files had no error, 1 when they had and *ret is what is left;
 * a file that cannot be read is an error still.
 */
int ra_config_read_lenient(const char *path, RaConfig **ret, char ***errors, char ***ret_dropped);

/*
 * Finds again, for every [path:PATH] section, the object the files under
 * PATH read with (ra_path_object() over sysfs_root, mountinfo and fstab);
 * a path whose mount is not made yet resolves to nothing. chased holds, for
 * each section, its path with the links resolved (ra_path_chase(), by the
 * daemon in a child): NULL to keep what it names (its chase did not end in
 * time), "" when its links were refused (it then names nothing); chased
 * NULL: chased here. ret_changed (may be NULL) is set when any section now
 * names another object than before.
 */
int ra_config_resolve_paths(RaConfig *c, const char *sysfs_root, const char *mountinfo, const char *fstab,
                            char *const *chased, bool *ret_changed);

/* True when name is in devices, not in ignore, and no section with ignore = yes is for it. */
bool ra_config_manages(const RaConfig *c, const char *name);

/* Bounds and pin for one device: [policy], then every matching section in order. */
void ra_config_device_settings(const RaConfig *c, const char *name, RaSettings *ret);

/*
 * The same for a bdi, which keys name: its name, mount point and file
 * system type (NULL-terminated; a NULL key is skipped). A [bdi:GLOB] section
 * and bdis= match when the glob matches any of them.
 */
bool ra_config_manages_bdi(const RaConfig *c, const char *const *keys);
void ra_config_bdi_settings(const RaConfig *c, const char *const *keys, RaSettings *ret);
