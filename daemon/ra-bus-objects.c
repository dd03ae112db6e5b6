/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "ra-bus-access.h"
#include "ra-bus-objects.h"
#include "ra-bus-string.h"
#include "ra-bus.h"
#include "ra-calib-sched.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-openfiles.h"
#include "ra-registry.h"
#include "ra-tune-swap.h"
#include "ra-tune.h"
#include "ra-util.h"

/* --- methods shared by the manager and the device objects ---------------- */

int ra_bus_device_set_read_ahead(RaDisk *d, sd_bus_message *msg, uint32_t kb, int persist,
                                 sd_bus_error *error) {
        RaBounds b = ra_policy_bounds(&d->in.attrs, &d->settings);
        uid_t uid;
        int r;

        if (!ra_kb_is_valid(kb) || kb < b.min_kb || kb > b.max_kb)
                return ra_bus_error_setf(error, RA_BUS_ERROR_INVALID_VALUE,
                                         "%s: the value must be a multiple of 4 from %" PRIu32 " to %" PRIu32
                                         " KiB, not %" PRIu32 ".",
                                         d->name, b.min_kb, b.max_kb, kb);

        r = ra_bus_check_authorized(msg, &uid, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 1: polkit is asked, the call comes back with its answer */

        /* SD_BUS_ERROR_FAILED, whatever the errno: EACCES must not read as "not permitted". */
        r = ra_tune_pin(d->manager, d, kb, persist, uid);
        if (r < 0)
                return ra_bus_error_setf(error, SD_BUS_ERROR_FAILED, "Cannot store the pin under %s: %s",
                                         d->manager->state_dir, strerror(-r));

        return sd_bus_reply_method_return(msg, NULL);
}

int ra_bus_device_clear_pin(RaDisk *d, sd_bus_message *msg, sd_bus_error *error) {
        uid_t uid;
        int r;

        r = ra_bus_check_authorized(msg, &uid, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 1: polkit is asked, the call comes back with its answer */

        r = ra_tune_unpin(d->manager, d, uid);
        if (r < 0)
                return ra_bus_error_setf(error, SD_BUS_ERROR_FAILED, "Cannot remove the pin under %s: %s",
                                         d->manager->state_dir, strerror(-r));

        return sd_bus_reply_method_return(msg, NULL);
}

/* --- the device objects -------------------------------------------------- */

static int method_device_set_read_ahead(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        uint32_t kb;
        int persist, r;

        r = sd_bus_message_read(msg, "ub", &kb, &persist);
        if (r < 0)
                return r;

        return ra_bus_device_set_read_ahead(userdata, msg, kb, persist, error);
}

static int method_device_clear_pin(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return ra_bus_device_clear_pin(userdata, msg, error);
}

/* Measures the disk again; the reply comes when the reads are done (ra-calib-sched.c). */
static int method_device_calibrate(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        RaDisk *d = userdata;
        const char *why;
        uid_t uid;
        int r;

        r = ra_bus_check_authorized(msg, &uid, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 1: polkit is asked, the call comes back with its answer */
        r = ra_calib_sched_request(d->manager, d, msg, &why);
        if (r == -EBUSY)
                return sd_bus_error_set(error, RA_BUS_ERROR_BUSY,
                                        "Another disk is being calibrated; try again in a second.");
        if (r == -EAGAIN)
                return sd_bus_error_set(error, RA_BUS_ERROR_BUSY,
                                        "Its last calibration's read has not returned yet.");
        if (r == -EOPNOTSUPP)
                return ra_bus_error_setf(error, RA_BUS_ERROR_INVALID_VALUE,
                                         "%s: cannot be calibrated: it is %s.", d->name, why);
        if (r < 0)
                return ra_bus_error_setf(error, SD_BUS_ERROR_FAILED, "Cannot start a calibration: %s.",
                                         strerror(-r));
        return 1; /* answered by ra-calib-sched.c */
}

/*
 * The files already open it gave a new window, latest first: to root all of
 * them, to anyone else only their own (a file's path is its reader's to tell).
 */
static int method_device_list_open_files(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const RaOpenFile *files = ((RaDisk *) userdata)->open_files, *order[RA_OPENFILES_KEPT];
        size_t n = 0;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID, &creds);
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot tell who is calling: %m");

        for (size_t i = 0; i < RA_OPENFILES_KEPT; i++)
                /* Both its uids: a set-uid program's files are not its caller's to list. */
                if (files[i].when_usec != 0 && (uid == 0 || (files[i].uid == uid && files[i].euid == uid)))
                        order[n++] = &files[i];
        for (size_t i = 1; i < n; i++) /* insertion sort, newest first: 16 at most */
                for (size_t j = i; j > 0 && order[j]->when_usec > order[j - 1]->when_usec; j--) {
                        const RaOpenFile *t = order[j];

                        order[j] = order[j - 1];
                        order[j - 1] = t;
                }

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(tuusssuub)");
        for (size_t i = 0; i < n && r >= 0; i++) {
                const RaOpenFile *f = order[i];

                r = sd_bus_message_open_container(reply, 'r', "tuusssuub");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "tuu", f->when_usec, (uint32_t) f->pid,
                                                  (uint32_t) f->uid);
                if (r >= 0)
                        r = ra_bus_append_string(reply, f->comm);
                if (r >= 0)
                        r = ra_bus_append_string(reply, f->path);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "suub", f->why, f->from_kb, f->to_kb,
                                                  (int) ra_openfiles_still_open(f));
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* sd-bus reads an int for "b"; our flags are bool. */
static int property_get_bool(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "b", (int) *(bool *) userdata);
}

static int property_get_source(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return ra_bus_append_string(reply, ra_source_to_string(*(RaSource *) userdata));
}

/* Calibration: "" when it was never calibrated; CostModel: the figures of its model, whatever its source. */
static int property_get_calibration(sd_bus *bus, const char *path, const char *interface,
                                    const char *property, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error) {
        const RaCalib *c = userdata;
        char text[512] = "";

        if (c->source == RA_CALIB_CALIBRATED || strcmp(property, "CostModel") == 0)
                ra_calib_describe(c, text, sizeof(text));
        return ra_bus_append_string(reply, text);
}

static int property_get_calibrated_usec(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        const RaCalib *c = userdata;

        /* A model from traced requests was fitted, not calibrated. */
        return sd_bus_message_append(reply, "t",
                                     c->source == RA_CALIB_CALIBRATED ? c->when * UINT64_C(1000000) : 0);
}

static int property_get_cost_model_source(sd_bus *bus, const char *path, const char *interface,
                                          const char *property, sd_bus_message *reply, void *userdata,
                                          sd_bus_error *error) {
        return ra_bus_append_string(reply, ra_calib_source_to_string(*(RaCalibSource *) userdata));
}

static int property_get_bandwidth(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "t", (uint64_t) * (uint32_t *) userdata * 1024);
}

static int property_get_kind(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return ra_bus_append_string(reply, ra_kind_to_string(*(RaKind *) userdata));
}

/* A stack's leaves or what lies beneath a bdi; userdata is the RaDisk. */
static int property_get_beneath(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return ra_bus_append_strv(reply, ra_disk_beneath(userdata));
}

#define DISK_PROPERTY(name, sig, getter, field, flags)                                                      \
        SD_BUS_PROPERTY(name, sig, getter, offsetof(RaDisk, field), flags)
/*
 * Every string through ra-bus-string.c, which escapes what is not UTF-8:
 * sd-bus's own getter would send any bytes, and fail. Strings a disk does
 * not have (a bdi's mount point) are empty, as the XML says.
 */
#define DISK_STRING(name, field, flags) DISK_PROPERTY(name, "s", ra_bus_property_get_string, field, flags)
#define DISK_CHARS(name, field, flags) DISK_PROPERTY(name, "s", ra_bus_property_get_char_array, field, flags)
#define CHANGES SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

static const sd_bus_vtable device_vtable[] = {
        SD_BUS_VTABLE_START(0),
        DISK_STRING("Name", name, SD_BUS_VTABLE_PROPERTY_CONST),
        DISK_PROPERTY("Kind", "s", property_get_kind, kind, CHANGES),
        DISK_STRING("MountPoint", in.bdi.mountpoint, SD_BUS_VTABLE_PROPERTY_CONST),
        DISK_STRING("FileSystem", in.bdi.fs_type, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Beneath", "as", property_get_beneath, 0, 0),
        DISK_CHARS("Stack", as_stack.text, 0),
        DISK_STRING("Node", devnode, CHANGES),
        DISK_STRING("Identity", in.identity, CHANGES),
        DISK_PROPERTY("SizeBytes", "t", NULL, in.attrs.size_bytes, CHANGES),
        DISK_PROPERTY("Rotational", "b", property_get_bool, in.attrs.rotational, CHANGES),
        DISK_PROPERTY("Removable", "b", property_get_bool, in.attrs.removable, CHANGES),
        DISK_STRING("Transport", in.attrs.transport, CHANGES),
        /* What udev calls the hardware, for racontrol export's hwdb keys: read when asked. */
        DISK_STRING("Vendor", in.attrs.vendor, 0),
        DISK_STRING("Model", in.attrs.model, 0),
        DISK_STRING("Revision", in.attrs.revision, 0),
        DISK_PROPERTY("ReadAheadKB", "u", NULL, in.attrs.read_ahead_kb, CHANGES),
        DISK_PROPERTY("TargetKB", "u", NULL, decision.kb, CHANGES),
        DISK_PROPERTY("Source", "s", property_get_source, decision.source, CHANGES),
        DISK_CHARS("Reason", decision.reason, CHANGES),
        DISK_PROPERTY("ReadBytesPerSec", "t", NULL, sampled.read_bytes_per_sec, CHANGES),
        DISK_PROPERTY("AvgReadRequestBytes", "t", NULL, sampled.avg_read_request_bytes, CHANGES),
        DISK_STRING("Workload", sampled.workload, CHANGES),
        DISK_PROPERTY("LearnedKB", "u", NULL, model.learned_kb, CHANGES),
        DISK_PROPERTY("Decisions", "t", NULL, decisions, CHANGES),
        DISK_STRING("Evidence", sampled.evidence, CHANGES),
        DISK_PROPERTY("Calibrating", "b", property_get_bool, calibrating, CHANGES),
        DISK_PROPERTY("Calibration", "s", property_get_calibration, calib, CHANGES),
        DISK_PROPERTY("CalibratedUSec", "t", property_get_calibrated_usec, calib, CHANGES),
        DISK_PROPERTY("CostModel", "s", property_get_calibration, calib, CHANGES),
        DISK_PROPERTY("CostModelSource", "s", property_get_cost_model_source, calib.source, CHANGES),
        DISK_PROPERTY("CommandUSec", "u", NULL, calib.command_us, CHANGES),
        DISK_PROPERTY("BandwidthBytesPerSec", "t", property_get_bandwidth, calib.bandwidth_kb_s, CHANGES),
        DISK_PROPERTY("JumpUSec", "u", NULL, calib.jump_us, CHANGES),
        SD_BUS_METHOD_WITH_ARGS("SetReadAhead", SD_BUS_ARGS("u", kb, "b", persist), SD_BUS_NO_RESULT,
                                method_device_set_read_ahead, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ClearPin", NULL, NULL, method_device_clear_pin, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Calibrate", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", figures),
                                method_device_calibrate, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListOpenFiles", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(tuusssuub)", files),
                                method_device_list_open_files, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

static int find_device(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                       sd_bus_error *error) {
        _cleanup_free_ char *name = NULL;
        RaDisk *d;

        if (sd_bus_path_decode(path, RA_BUS_DEVICE_PREFIX, &name) <= 0)
                return 0;

        d = ra_registry_find(userdata, name);
        if (!d)
                return 0;

        *found = d;
        return 1;
}

static int enumerate_devices(sd_bus *bus, const char *path, void *userdata, char ***nodes,
                             sd_bus_error *error) {
        _cleanup_(ra_strv_freep) char **l = NULL;
        Manager *m = userdata;

        l = calloc(m->n_disks + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;

        for (size_t i = 0; i < m->n_disks; i++) {
                l[i] = strdup(m->disks[i]->object_path);
                if (!l[i])
                        return -ENOMEM;
        }

        *nodes = TAKE_PTR(l);
        return 1;
}

/* --- the Swap object -------------------------------------------------- */

static int swap_property_get_devices(sd_bus *bus, const char *path, const char *interface,
                                     const char *property, sd_bus_message *reply, void *userdata,
                                     sd_bus_error *error) {
        const RaSwapWatch *w = ((Manager *) userdata)->swap;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sssitt)");
        for (size_t i = 0; r >= 0 && w && i < w->n_areas; i++) {
                const RaSwapArea *a = &w->areas[i];

                r = sd_bus_message_open_container(reply, 'r', "sssitt");
                if (r >= 0)
                        r = ra_bus_append_string(reply, a->filename);
                if (r >= 0)
                        r = ra_bus_append_string(reply, a->device);
                if (r >= 0)
                        r = ra_bus_append_string(reply, ra_swap_class_to_string(a->class));
                if (r >= 0)
                        r = sd_bus_message_append(reply, "itt", (int32_t) a->priority, a->size_kb * 1024,
                                                  a->used_kb * 1024);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int swap_property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const RaSwapWatch *w = ((Manager *) userdata)->swap;

        if (!w)
                return -ENODEV;
        if (strcmp(property, "ActiveClass") == 0)
                return ra_bus_append_string(reply, w->n_areas > 0 ? ra_swap_class_to_string(w->active) : "");
        if (strcmp(property, "PageCluster") == 0)
                return sd_bus_message_append(reply, "i", (int32_t) w->current);
        if (strcmp(property, "TargetPageCluster") == 0)
                return sd_bus_message_append(reply, "i", (int32_t) w->decision.value);
        if (strcmp(property, "Source") == 0)
                return ra_bus_append_string(reply, ra_source_to_string(w->decision.source));
        if (strcmp(property, "Reason") == 0)
                return ra_bus_append_string(reply, w->decision.reason);
        if (strcmp(property, "SwapInPagesPerSec") == 0)
                return sd_bus_message_append(reply, "t", w->swapin_pages_per_sec);
        if (strcmp(property, "ReadAheadHitPercent") == 0)
                return sd_bus_message_append(reply, "u", w->hit_percent);
        if (strcmp(property, "AvgReadRequestBytes") == 0)
                return sd_bus_message_append(reply, "t", w->avg_read_request_bytes);
        return -EINVAL;
}

static int method_set_page_cluster(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        uint32_t value;
        int persist, r;
        uid_t uid;

        r = sd_bus_message_read(msg, "ub", &value, &persist);
        if (r < 0)
                return r;
        if (value > RA_SWAP_PAGE_CLUSTER_MAX)
                return ra_bus_error_setf(error, RA_BUS_ERROR_INVALID_VALUE,
                                         "swap: page-cluster must be from 0 to %d, not %" PRIu32 ".",
                                         RA_SWAP_PAGE_CLUSTER_MAX, value);

        r = ra_bus_check_authorized(msg, &uid, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 1: polkit is asked, the call comes back with its answer */

        r = ra_tune_swap_pin(m, (int) value, persist, uid);
        if (r < 0)
                return ra_bus_error_setf(error, SD_BUS_ERROR_FAILED, "Cannot store the pin under %s: %s",
                                         m->state_dir, strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_swap_clear_pin(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        uid_t uid;
        int r;

        r = ra_bus_check_authorized(msg, &uid, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 1: polkit is asked, the call comes back with its answer */

        r = ra_tune_swap_unpin(m, uid);
        if (r < 0)
                return ra_bus_error_setf(error, SD_BUS_ERROR_FAILED, "Cannot remove the pin under %s: %s",
                                         m->state_dir, strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

#define SWAP_PROPERTY(name, sig)                                                                            \
        SD_BUS_PROPERTY(name, sig, swap_property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

static const sd_bus_vtable swap_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Devices", "a(sssitt)", swap_property_get_devices, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SWAP_PROPERTY("ActiveClass", "s"),
        SWAP_PROPERTY("PageCluster", "i"),
        SWAP_PROPERTY("TargetPageCluster", "i"),
        SWAP_PROPERTY("Source", "s"),
        SWAP_PROPERTY("Reason", "s"),
        SWAP_PROPERTY("SwapInPagesPerSec", "t"),
        SWAP_PROPERTY("ReadAheadHitPercent", "u"),
        SWAP_PROPERTY("AvgReadRequestBytes", "t"),
        SD_BUS_METHOD_WITH_ARGS("SetPageCluster", SD_BUS_ARGS("u", value, "b", persist), SD_BUS_NO_RESULT,
                                method_set_page_cluster, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ClearPin", NULL, NULL, method_swap_clear_pin, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

int ra_bus_objects_add(Manager *m, sd_bus *bus) {
        int r;

        r = sd_bus_add_fallback_vtable(bus, NULL, RA_BUS_DEVICE_PREFIX, RA_BUS_DEVICE_INTERFACE,
                                       device_vtable, find_device, m);
        if (r >= 0)
                r = sd_bus_add_node_enumerator(bus, NULL, RA_BUS_DEVICE_PREFIX, enumerate_devices, m);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, RA_BUS_SWAP_PATH, RA_BUS_SWAP_INTERFACE, swap_vtable,
                                             m);
        return r;
}

/* --- what changed ---------------------------------------------------------- */

void ra_bus_disk_added(Manager *m, RaDisk *d) {
        d->published = true;
        if (m->bus)
                (void) sd_bus_emit_interfaces_added(m->bus, d->object_path, RA_BUS_DEVICE_INTERFACE, NULL);
}

void ra_bus_disk_removed(Manager *m, const RaDisk *d) {
        if (m->bus)
                (void) sd_bus_emit_interfaces_removed(m->bus, d->object_path, RA_BUS_DEVICE_INTERFACE, NULL);
}

void ra_bus_disk_changed(Manager *m, const RaDisk *d, const RaDiskSnapshot *b) {
        const RaDecision *now = &d->decision;
        char *names[26];
        size_t n = 0;

        if (!m->bus)
                return;

#define CHANGED(cond, property)                                                                             \
        do {                                                                                                \
                if (cond)                                                                                   \
                        names[n++] = (char *) (property);                                                   \
        } while (false)

        CHANGED(b->kind != d->kind, "Kind");
        CHANGED(!ra_streq(b->node, d->devnode) && (b->node || d->devnode), "Node");
        CHANGED(!ra_streq(b->identity, d->in.identity) && (b->identity || d->in.identity), "Identity");
        CHANGED(b->size_bytes != d->in.attrs.size_bytes, "SizeBytes");
        CHANGED(b->rotational != d->in.attrs.rotational, "Rotational");
        CHANGED(b->removable != d->in.attrs.removable, "Removable");
        CHANGED(!ra_streq(b->transport, d->in.attrs.transport) && (b->transport || d->in.attrs.transport),
                "Transport");
        CHANGED(b->read_ahead_kb != d->in.attrs.read_ahead_kb, "ReadAheadKB");
        CHANGED(b->decision.kb != now->kb, "TargetKB");
        CHANGED(b->decision.source != now->source, "Source");
        CHANGED(strcmp(b->decision.reason, now->reason) != 0, "Reason");
        CHANGED(!ra_streq(b->workload, d->sampled.workload), "Workload");
        CHANGED(!ra_streq(b->evidence, d->sampled.evidence), "Evidence");
        CHANGED(b->read_bytes_per_sec != d->sampled.read_bytes_per_sec, "ReadBytesPerSec");
        CHANGED(b->avg_read_request_bytes != d->sampled.avg_read_request_bytes, "AvgReadRequestBytes");
        CHANGED(b->learned_kb != d->model.learned_kb, "LearnedKB");
        CHANGED(b->decisions != d->decisions, "Decisions");
        CHANGED(b->calibrating != d->calibrating, "Calibrating");
        if (b->calibrated != d->calib.when) {
                CHANGED(true, "Calibration");
                CHANGED(true, "CalibratedUSec");
                CHANGED(true, "CostModel");
                CHANGED(true, "CostModelSource");
                CHANGED(true, "CommandUSec");
                CHANGED(true, "BandwidthBytesPerSec");
                CHANGED(true, "JumpUSec");
        }
#undef CHANGED

        if (n == 0)
                return;
        names[n] = NULL;
        (void) sd_bus_emit_properties_changed_strv(m->bus, d->object_path, RA_BUS_DEVICE_INTERFACE, names);
}

void ra_bus_swap_changed(Manager *m, const RaSwapSnapshot *b) {
        const RaSwapWatch *w = m->swap;
        _cleanup_free_ char *devices = NULL;
        char *names[12];
        size_t n = 0;

        if (!m->bus || !w)
                return;
        devices = ra_swapobj_describe_areas(w);

#define CHANGED(cond, property)                                                                             \
        do {                                                                                                \
                if (cond)                                                                                   \
                        names[n++] = (char *) (property);                                                   \
        } while (false)

        CHANGED(!ra_streq(b->devices, devices), "Devices");
        CHANGED(b->active != w->active, "ActiveClass");
        CHANGED(b->current != w->current, "PageCluster");
        CHANGED(b->decision.value != w->decision.value, "TargetPageCluster");
        CHANGED(b->decision.source != w->decision.source, "Source");
        CHANGED(strcmp(b->decision.reason, w->decision.reason) != 0, "Reason");
        CHANGED(b->swapin_pages_per_sec != w->swapin_pages_per_sec, "SwapInPagesPerSec");
        CHANGED(b->hit_percent != w->hit_percent, "ReadAheadHitPercent");
        CHANGED(b->avg_read_request_bytes != w->avg_read_request_bytes, "AvgReadRequestBytes");
#undef CHANGED

        if (n == 0)
                return;
        names[n] = NULL;
        (void) sd_bus_emit_properties_changed_strv(m->bus, RA_BUS_SWAP_PATH, RA_BUS_SWAP_INTERFACE, names);
}
