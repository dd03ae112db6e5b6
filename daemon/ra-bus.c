/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "ra-bus-access.h"
#include "ra-bus-objects.h"
#include "ra-bus-string.h"
#include "ra-bus.h"
#include "ra-context.h"
#include "ra-log.h"
#include "ra-registry.h"
#include "ra-sampler.h"
#include "ra-tracefs.h"
#include "ra-tune.h"
#include "ra-util.h"

/* --- the manager object's methods on a device ---------------------------- */

static RaDisk *lookup_disk(Manager *m, const char *name, sd_bus_error *error) {
        RaDisk *d = ra_device_name_is_valid(name) ? ra_registry_find(m, name) : NULL;

        if (!d)
                ra_bus_error_setf(error, RA_BUS_ERROR_NO_SUCH_DEVICE, "No managed device '%s'.", name);
        return d;
}

/* --- the manager object -------------------------------------------------- */

static int method_list_devices(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(reply, 'a', "(so)");
        for (size_t i = 0; r >= 0 && i < m->n_disks; i++) {
                r = sd_bus_message_open_container(reply, 'r', "so");
                if (r >= 0)
                        r = ra_bus_append_string(reply, m->disks[i]->name);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "o", m->disks[i]->object_path);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;

        return sd_bus_send(NULL, reply, NULL);
}

/* The device a manager method names in its first argument; -ENODEV with error set when there is none. */
static int read_device(sd_bus_message *msg, Manager *m, sd_bus_error *error, RaDisk **ret) {
        const char *name;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        *ret = lookup_disk(m, name, error);
        return *ret ? 0 : -ENODEV;
}

static int method_get_device(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        RaDisk *d;
        int r;

        r = read_device(msg, userdata, error, &d);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "o", d->object_path);
}

static int method_manager_set_read_ahead(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        uint32_t kb;
        int persist, r;
        RaDisk *d;

        r = read_device(msg, userdata, error, &d);
        if (r >= 0)
                r = sd_bus_message_read(msg, "ub", &kb, &persist);
        if (r < 0)
                return r;
        return ra_bus_device_set_read_ahead(d, msg, kb, persist, error);
}

static int method_manager_clear_pin(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        RaDisk *d;
        int r;

        r = read_device(msg, userdata, error, &d);
        if (r < 0)
                return r;
        return ra_bus_device_clear_pin(d, msg, error);
}

static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        uid_t uid;
        int r;

        r = ra_bus_check_authorized(msg, &uid, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 1: polkit is asked, the call comes back with its answer */

        log_info("Reload requested over D-Bus by uid %u.", (unsigned) uid);
        r = ((Manager *) userdata)->on_reload(userdata);
        if (r == -EINVAL)
                return ra_bus_error_setf(error, SD_BUS_ERROR_FAILED,
                                         "The configuration is invalid and was not loaded; see the log.");
        if (r < 0)
                return ra_bus_error_setf(error, SD_BUS_ERROR_FAILED, "Reloading failed: %s.", strerror(-r));

        return sd_bus_reply_method_return(msg, NULL);
}

static int method_restore(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *why = NULL;
        unsigned n;
        uid_t uid;
        int r;

        r = ra_bus_check_authorized(msg, &uid, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 1: polkit is asked, the call comes back with its answer */

        if (asprintf(&why, "restore asked over D-Bus by uid %u", (unsigned) uid) < 0)
                return -ENOMEM;
        n = ra_tune_restore_all(userdata, true, why);
        log_info("Put %u disk%s back to their values before radaemon; observing until a reload.", n,
                 n == 1 ? "" : "s");

        return sd_bus_reply_method_return(msg, "u", n);
}

static bool identity_is_present(const Manager *m, const char *identity) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (ra_streq(m->disks[i]->in.identity, identity))
                        return true;
        return false;
}

/*
 * An absent device's identity names its serial or the image file and mount
 * point it came from: someone else's disk, told to anyone who asks. Only
 * root is told; everyone else gets an empty list rather than an error, so
 * that a Get or GetAll of the Manager (racontrol status) still works for
 * them. A caller we cannot identify is told nothing.
 */
static bool sender_is_root(sd_bus *bus) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        sd_bus_message *msg = sd_bus_get_current_message(bus);
        uid_t uid;

        if (!msg || sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID, &creds) < 0 ||
            sd_bus_creds_get_euid(creds, &uid) < 0)
                return false;
        return uid == 0;
}

/* Pins that never expire, so that they cannot be forgotten either: those of devices not there. */
static int property_get_absent_pins(sd_bus *bus, const char *path, const char *interface,
                                    const char *property, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(su)");
        if (r >= 0 && !sender_is_root(bus))
                return sd_bus_message_close_container(reply);
        for (size_t i = 0; r >= 0 && i < m->state->n_entries; i++) {
                const RaStateEntry *e = &m->state->entries[i];
                _cleanup_free_ char *identity = NULL;

                if (e->pin_kb == 0 || identity_is_present(m, e->identity))
                        continue;
                r = ra_state_escape_identity(e->identity, &identity);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "(su)", identity, e->pin_kb);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_state_error(sd_bus *bus, const char *path, const char *interface,
                                    const char *property, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error) {
        Manager *m = userdata;

        return ra_bus_append_string(reply, m->state_error);
}

static int property_get_evidence(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        return ra_bus_append_string(
                reply, ra_evidence_to_string(ra_sampler_tracer(m) ? ra_tracefs_evidence(ra_sampler_tracer(m))
                                                                  : RA_EVIDENCE_NONE));
}

static int property_get_learning_off(sd_bus *bus, const char *path, const char *interface,
                                     const char *property, sd_bus_message *reply, void *userdata,
                                     sd_bus_error *error) {
        Manager *m = userdata;

        return ra_bus_append_string(reply, m->learning_off);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return ra_bus_append_string(reply, PACKAGE_VERSION);
}

static int property_get_mode(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        return ra_bus_append_string(reply, ra_context_observing(m) ? "observe" : "auto");
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Mode", "s", property_get_mode, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("StateError", "s", property_get_state_error, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("AbsentPins", "a(su)", property_get_absent_pins, 0, 0),
        SD_BUS_PROPERTY("Evidence", "s", property_get_evidence, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LearningOff", "s", property_get_learning_off, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("ListDevices", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(so)", devices),
                                method_list_devices, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetDevice", SD_BUS_ARGS("s", name), SD_BUS_RESULT("o", device),
                                method_get_device, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetReadAhead", SD_BUS_ARGS("s", name, "u", kb, "b", persist),
                                SD_BUS_NO_RESULT, method_manager_set_read_ahead, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ClearPin", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_manager_clear_pin, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Reload", NULL, NULL, method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Restore", SD_BUS_NO_ARGS, SD_BUS_RESULT("u", restored), method_restore,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* --- connection ---------------------------------------------------------- */

#define RETRY_USEC (5 * UINT64_C(1000000))

static int connect_bus(Manager *m);

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->bus_retry = sd_event_source_unref(m->bus_retry);
        (void) connect_bus(m);
        return 0;
}

static void schedule_retry(Manager *m) {
        int r;

        r = sd_event_add_time_relative(m->event, &m->bus_retry, CLOCK_MONOTONIC, RETRY_USEC, 0, on_retry, m);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule a reconnection to the system bus, giving up: %m");
}

static int on_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        log_warning("Lost the system bus; trying again every %d seconds, tuning goes on.",
                    (int) (RETRY_USEC / 1000000));
        ra_bus_close(m);
        m->bus_retry_logged = true;
        schedule_retry(m);
        return 0;
}

/*
 * Returns 1 when connected, 0 when there is no bus now (a retry is
 * scheduled), and an error when another radaemon owns the name.
 */
static int connect_bus(Manager *m) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        bool retrying = m->bus_retry_logged;
        int r;

        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE,
                                             manager_vtable, m);
        if (r >= 0)
                r = ra_bus_objects_add(m, bus);
        if (r >= 0)
                r = sd_bus_add_object_manager(bus, NULL, RA_BUS_PATH);
        if (r >= 0)
                r = sd_bus_match_signal_async(bus, NULL, "org.freedesktop.DBus.Local", NULL,
                                              "org.freedesktop.DBus.Local", "Disconnected", on_disconnected,
                                              NULL, m);
        if (r >= 0)
                r = sd_bus_attach_event(bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        /* Two daemons writing the same sysfs files would fight: refuse to be the second. */
        if (r >= 0)
                r = sd_bus_request_name(bus, RA_BUS_NAME, 0);
        /* At start that refuses to start; later, this daemon steps aside: two tuners would fight. */
        if (r == -EEXIST) {
                log_error_errno(r, "Another radaemon owns %s on the system bus; exiting.", RA_BUS_NAME);
                (void) sd_event_exit(m->event, r);
                return r;
        }
        if (r < 0) {
                if (!retrying)
                        log_info_errno(
                                r,
                                "No system bus (%m): the D-Bus API is off, tuning goes on; trying again "
                                "every %d seconds.",
                                (int) (RETRY_USEC / 1000000));
                m->bus_retry_logged = true;
                schedule_retry(m);
                return 0;
        }

        m->bus = TAKE_PTR(bus);
        m->bus_retry_logged = false;
        log_info("%s %s on the system bus.", retrying ? "Back, serving" : "Serving", RA_BUS_NAME);
        return 1;
}

int ra_bus_open(Manager *m) {
        int r = connect_bus(m);

        return r < 0 ? r : 0;
}

void ra_bus_close(Manager *m) {
        /* Their calls are gone with the connection. */
        ra_bus_access_close();
        m->bus = sd_bus_flush_close_unref(m->bus);
}

void ra_bus_manager_changed(Manager *m, const char *property) {
        if (m->bus)
                (void) sd_bus_emit_properties_changed(m->bus, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE,
                                                      property, NULL);
}
