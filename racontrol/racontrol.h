/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "ra-dbus.h"
#include "ra-macro.h"
#include "ra-path.h"

/* What every verb gets: the options and a connection to the system bus. */
typedef struct RcContext {
        sd_bus *bus;
        bool json;
        bool runtime; /* set --runtime: the pin lasts until radaemon stops */
        /* export: --current, --no-revision */
        bool current;
        bool no_revision;
        /* prefetch: --data, --always, --threads, --budget */
        bool data;
        bool always;
        bool budget_set;
        unsigned threads;
        uint64_t budget;
        /* show, set, auto, calibrate given a path: the path, and the object its files read with */
        const char *path;
        char *path_absolute; /* the path as realpath() made it, for the open files under it */
        RaPathObject path_object;
} RcContext;

#define RC_PREFETCH_THREADS_MAX 1024

/* Exit statuses, as racontrol(1) documents them. */
#define RC_EXIT_FAILURE 1
#define RC_EXIT_USAGE 2

/* A verb gets its arguments after the verb name and returns an exit status. */
int verb_status(RcContext *c, char **args);
int verb_show(RcContext *c, char **args);
int verb_set(RcContext *c, char **args);
int verb_auto(RcContext *c, char **args);
int verb_reload(RcContext *c, char **args);
int verb_monitor(RcContext *c, char **args);
int verb_restore(RcContext *c, char **args);
int verb_metrics(RcContext *c, char **args);
int verb_prefetch(RcContext *c, char **args);
int verb_calibrate(RcContext *c, char **args);
int verb_export(RcContext *c, char **args);

/* --- rc-bus.c: talking to radaemon --------------------------------------- */

/* A device as radaemon publishes it. */
typedef struct RcDevice {
        char *path;
        char *name;
        char *kind;        /* "disk", "stack" or "bdi" */
        char *mount_point; /* a bdi's; "" for a disk or stack */
        char *file_system; /* a bdi's; "" for a disk or stack */
        char *stack;       /* a stack's place in it; "" for a disk or bdi */
        char *node;
        char *identity;
        char *transport;
        char *vendor; /* ID_VENDOR, ID_MODEL, ID_REVISION; "" where udev does not say */
        char *model;
        char *revision;
        char *source;
        char *reason;
        char *workload;
        char *evidence;
        char *calibration; /* what its calibration measured; "" when never */
        uint64_t calibrated_usec;
        char *cost_model; /* its model's figures, calibrated or traced; "" (NULL: an older radaemon) */
        char *cost_model_source; /* "calibrated", "traced"; "" (NULL: an older radaemon) when none */
        bool calibrating;
        uint64_t size_bytes;
        uint64_t read_bytes_per_sec;
        uint64_t avg_read_request_bytes;
        uint32_t read_ahead_kb;
        uint32_t target_kb;
        uint32_t learned_kb;
        uint64_t decisions;
        bool rotational;
        bool removable;
} RcDevice;

void rc_device_clear(RcDevice *d);

/*
 * Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS, when set, says
 * where). Verbs call it after checking their arguments, so a usage error
 * never depends on the bus. Returns 0 or RC_EXIT_FAILURE, having said why.
 */
int rc_connect(RcContext *c);

/* Every managed device, sorted by name, in one round trip. */
int rc_get_devices(RcContext *c, RcDevice **ret, size_t *ret_n);
/* One device by kernel name. */
int rc_get_device(RcContext *c, const char *name, RcDevice *ret);
/* The manager's Version, Mode and StateError. */
int rc_get_manager(RcContext *c, char **ret_version, char **ret_mode, char **ret_state_error);

/* The manager's Evidence and LearningOff ("" while learning works). */
int rc_get_learning(RcContext *c, char **ret_evidence, char **ret_learning_off);
/* One line on what learning sees, or why it is off. */
void rc_print_learning(const char *evidence, const char *learning_off);

/*
 * Reads one property of a device into d; returns 0 when the name is not a
 * device property. Used for GetAll replies and PropertiesChanged signals.
 */
int rc_device_read_property(RcDevice *d, const char *property, sd_bus_message *m);

/*
 * For people, not programs: a name any user may choose (a mount point, a
 * backing file) holding a newline would forge a line of racontrol's output,
 * and an escape sequence would reach the terminal. rc_text_escape() replaces
 * *s by a copy with controls and what is not UTF-8 as "\xNN"
 * (ra_text_escape()); rc_device_escape_text() does so for each of a device's
 * strings, rc_print_text() prints one. JSON escapes them its own way.
 */
int rc_text_escape(char **s);
int rc_device_escape_text(RcDevice *d);
void rc_print_text(const char *s);

/*
 * Says in one line on stderr why a call failed: radaemon is not running, no
 * such device, not permitted, bad value, or the bus's own message. Returns
 * RC_EXIT_FAILURE.
 */
int rc_report_error(const char *what, const sd_bus_error *error, int r);

/* --- rc-path.c: a path where a verb takes a device ---------------------- */

/*
 * When args[0] is a path (it has a '/', or is . or ..), replaces it by the
 * name of the managed object its files read with, and keeps the path in c.
 * Returns 0, or an exit status having said why not (no such path, a tmpfs,
 * an object radaemon does not manage).
 */
int rc_resolve_target(RcContext *c, char **args);
/* "PATH: its files read with dm-2's window (ext4 on /dev/mapper/vg-db, mounted at /srv)". */
void rc_print_path(const RcContext *c);
/* With --json, the path's object opens with the mount; the device follows, then '}'. */
void rc_json_path_begin(const RcContext *c);

/* --- rc-openfiles.c: the files already open radaemon gave a new window --- */

typedef struct RcOpenFile {
        uint64_t when_usec;
        uint32_t pid;
        uint32_t uid;
        char *comm;
        char *path;
        char *why; /* "random", "evicted", "stream", "undone" */
        uint32_t from_kb;
        uint32_t to_kb;
        bool open;
} RcOpenFile;

/*
 * What ListOpenFiles tells this caller of the device at object_path (root:
 * every reader's; anyone else: their own), newest first; under c->path only,
 * when show was given a path. None from a radaemon without the method.
 */
int rc_get_open_files(RcContext *c, const char *object_path, RcOpenFile **ret, size_t *ret_n);
void rc_open_files_free(RcOpenFile *files, size_t n);
/* "Open files:" lines after a device's; nothing when there are none. */
void rc_print_open_files(const RcOpenFile *files, size_t n);
/* A JSON array of them. */
void rc_json_open_files(const RcOpenFile *files, size_t n);

/* --- rc-swap.c: "swap" where a verb takes a device: vm.page-cluster ------- */

#define RC_SWAP_NAME "swap"

int rc_swap_show(RcContext *c);
int rc_swap_set(RcContext *c, const char *value);
int rc_swap_auto(RcContext *c);
/* Status: a line after the table (when there is swap or a pin), or a JSON object. */
int rc_swap_status(RcContext *c, bool json);

/* --- rc-print.c: tables and JSON ----------------------------------------- */

void rc_json_string(const char *s);
/* One device as a JSON object; _open leaves it open for more keys. */
void rc_json_device(const RcDevice *d);
void rc_json_device_open(const RcDevice *d);
/* One device as "key: value" lines. */
void rc_print_device(const RcDevice *d);
