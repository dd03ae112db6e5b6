/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ra-util.h"
#include "racontrol.h"

int rc_connect(RcContext *c) {
        int r;

        if (c->bus)
                return 0;

        r = sd_bus_open_system(&c->bus);
        if (r < 0) {
                fprintf(stderr, "racontrol: cannot connect to the system bus: %s\n", strerror(-r));
                return RC_EXIT_FAILURE;
        }
        return 0;
}

void rc_device_clear(RcDevice *d) {
        free(d->path);
        free(d->name);
        free(d->kind);
        free(d->mount_point);
        free(d->file_system);
        free(d->stack);
        free(d->node);
        free(d->identity);
        free(d->transport);
        free(d->vendor);
        free(d->model);
        free(d->revision);
        free(d->source);
        free(d->reason);
        free(d->workload);
        free(d->evidence);
        free(d->calibration);
        free(d->cost_model);
        free(d->cost_model_source);
        *d = (RcDevice){};
}

static const struct {
        const char *name;
        char type;
        size_t offset;
} properties[] = {
        { "Name", 's', offsetof(RcDevice, name) },
        { "Kind", 's', offsetof(RcDevice, kind) },
        { "MountPoint", 's', offsetof(RcDevice, mount_point) },
        { "FileSystem", 's', offsetof(RcDevice, file_system) },
        { "Stack", 's', offsetof(RcDevice, stack) },
        { "Node", 's', offsetof(RcDevice, node) },
        { "Identity", 's', offsetof(RcDevice, identity) },
        { "Transport", 's', offsetof(RcDevice, transport) },
        { "Vendor", 's', offsetof(RcDevice, vendor) },
        { "Model", 's', offsetof(RcDevice, model) },
        { "Revision", 's', offsetof(RcDevice, revision) },
        { "Source", 's', offsetof(RcDevice, source) },
        { "Reason", 's', offsetof(RcDevice, reason) },
        { "Workload", 's', offsetof(RcDevice, workload) },
        { "Evidence", 's', offsetof(RcDevice, evidence) },
        { "Calibration", 's', offsetof(RcDevice, calibration) },
        { "CalibratedUSec", 't', offsetof(RcDevice, calibrated_usec) },
        { "CostModel", 's', offsetof(RcDevice, cost_model) },
        { "CostModelSource", 's', offsetof(RcDevice, cost_model_source) },
        { "Calibrating", 'b', offsetof(RcDevice, calibrating) },
        { "SizeBytes", 't', offsetof(RcDevice, size_bytes) },
        { "ReadBytesPerSec", 't', offsetof(RcDevice, read_bytes_per_sec) },
        { "AvgReadRequestBytes", 't', offsetof(RcDevice, avg_read_request_bytes) },
        { "ReadAheadKB", 'u', offsetof(RcDevice, read_ahead_kb) },
        { "TargetKB", 'u', offsetof(RcDevice, target_kb) },
        { "LearnedKB", 'u', offsetof(RcDevice, learned_kb) },
        { "Decisions", 't', offsetof(RcDevice, decisions) },
        { "Rotational", 'b', offsetof(RcDevice, rotational) },
        { "Removable", 'b', offsetof(RcDevice, removable) },
};

int rc_text_escape(char **s) {
        char *escaped;

        if (!*s || ra_text_is_plain(*s))
                return 0;
        escaped = ra_text_escape(*s);
        if (!escaped)
                return -ENOMEM;
        free(*s);
        *s = escaped;
        return 0;
}

int rc_device_escape_text(RcDevice *d) {
        for (size_t i = 0; i < ELEMENTSOF(properties); i++) {
                int r;

                if (properties[i].type != 's')
                        continue;
                r = rc_text_escape((char **) ((char *) d + properties[i].offset));
                if (r < 0)
                        return r;
        }
        return 0;
}

int rc_device_read_property(RcDevice *d, const char *property, sd_bus_message *m) {
        char sig[2] = {};
        int r;

        for (size_t i = 0; i < ELEMENTSOF(properties); i++) {
                void *field = (char *) d + properties[i].offset;

                if (strcmp(properties[i].name, property) != 0)
                        continue;

                sig[0] = properties[i].type;
                r = sd_bus_message_enter_container(m, 'v', sig);
                if (r < 0)
                        return r;

                switch (properties[i].type) {
                case 's': {
                        const char *s;
                        char *copy;

                        r = sd_bus_message_read_basic(m, 's', &s);
                        if (r < 0)
                                return r;
                        copy = strdup(s);
                        if (!copy)
                                return -ENOMEM;
                        free(*(char **) field);
                        *(char **) field = copy;
                        break;
                }
                case 'b': {
                        int b;

                        r = sd_bus_message_read_basic(m, 'b', &b);
                        if (r < 0)
                                return r;
                        *(bool *) field = b;
                        break;
                }
                default:
                        r = sd_bus_message_read_basic(m, properties[i].type, field);
                        if (r < 0)
                                return r;
                }

                r = sd_bus_message_exit_container(m);
                return r < 0 ? r : 1;
        }

        return 0;
}

/* Reads an a{sv} of device properties; unknown ones are skipped. */
static int read_device_properties(sd_bus_message *m, RcDevice *d) {
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;

        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *property;

                r = sd_bus_message_read_basic(m, 's', &property);
                if (r < 0)
                        return r;
                r = rc_device_read_property(d, property, m);
                if (r == 0)
                        r = sd_bus_message_skip(m, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;

        return sd_bus_message_exit_container(m);
}

static int compare_devices(const void *a, const void *b) {
        const RcDevice *x = a, *y = b;

        return strcmp(x->name ?: "", y->name ?: "");
}

/* One object of a GetManagedObjects reply; *added is set when it was a device. */
static int read_managed_object(sd_bus_message *reply, RcDevice *d, bool *added) {
        const char *path;
        int r;

        *added = false;
        r = sd_bus_message_read_basic(reply, 'o', &path);
        if (r < 0)
                return r;

        r = sd_bus_message_enter_container(reply, 'a', "{sa{sv}}");
        if (r < 0)
                return r;

        while ((r = sd_bus_message_enter_container(reply, 'e', "sa{sv}")) > 0) {
                const char *interface;

                r = sd_bus_message_read_basic(reply, 's', &interface);
                if (r < 0)
                        return r;

                if (strcmp(interface, RA_BUS_DEVICE_INTERFACE) == 0) {
                        d->path = strdup(path);
                        if (!d->path)
                                return -ENOMEM;
                        r = read_device_properties(reply, d);
                        *added = true;
                } else
                        r = sd_bus_message_skip(reply, "a{sv}");
                if (r < 0)
                        return r;

                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;

        return sd_bus_message_exit_container(reply);
}

int rc_get_devices(RcContext *c, RcDevice **ret, size_t *ret_n) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        RcDevice *devices = NULL;
        size_t n = 0;
        int r;

        r = rc_connect(c);
        if (r != 0)
                return r;

        /* One call for every device and every property: status stays fast with hundreds. */
        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_PATH, "org.freedesktop.DBus.ObjectManager",
                               "GetManagedObjects", &error, &reply, NULL);
        if (r < 0)
                return rc_report_error("listing devices", &error, r);

        r = sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "oa{sa{sv}}")) > 0) {
                RcDevice *grown = realloc(devices, (n + 1) * sizeof(RcDevice));
                bool added;

                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                devices = grown;
                devices[n] = (RcDevice){};

                r = read_managed_object(reply, &devices[n], &added);
                if (added)
                        n++;
                else
                        rc_device_clear(&devices[n]);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }

        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        rc_device_clear(&devices[i]);
                free(devices);
                fprintf(stderr, "racontrol: cannot read radaemon's reply: %s\n", strerror(-r));
                return RC_EXIT_FAILURE;
        }

        if (n > 1)
                qsort(devices, n, sizeof(RcDevice), compare_devices);
        *ret = devices;
        *ret_n = n;
        return 0;
}

int rc_get_device(RcContext *c, const char *name, RcDevice *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *path;
        int r;

        r = rc_connect(c);
        if (r != 0)
                return r;

        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE, "GetDevice",
                               &error, &reply, "s", name);
        if (r < 0)
                return rc_report_error(name, &error, r);

        r = sd_bus_message_read(reply, "o", &path);
        if (r < 0)
                return rc_report_error(name, &error, r);

        *ret = (RcDevice){ .path = strdup(path) };
        if (!ret->path)
                return rc_report_error(name, NULL, -ENOMEM);
        reply = sd_bus_message_unref(reply);

        r = sd_bus_call_method(c->bus, RA_BUS_NAME, ret->path, "org.freedesktop.DBus.Properties", "GetAll",
                               &error, &reply, "s", RA_BUS_DEVICE_INTERFACE);
        if (r >= 0)
                r = read_device_properties(reply, ret);
        if (r < 0) {
                rc_device_clear(ret);
                return rc_report_error(name, &error, r);
        }
        return 0;
}

int rc_get_manager(RcContext *c, char **ret_version, char **ret_mode, char **ret_state_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = rc_connect(c);
        if (r != 0)
                return r;

        r = sd_bus_get_property_string(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE, "Version",
                                       &error, ret_version);
        if (r >= 0)
                r = sd_bus_get_property_string(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE,
                                               "Mode", &error, ret_mode);
        if (r >= 0)
                r = sd_bus_get_property_string(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE,
                                               "StateError", &error, ret_state_error);
        if (r < 0)
                return rc_report_error("reading the manager", &error, r);
        return 0;
}

int rc_get_learning(RcContext *c, char **ret_evidence, char **ret_learning_off) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = rc_connect(c);
        if (r != 0)
                return r;

        r = sd_bus_get_property_string(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE,
                                       "Evidence", &error, ret_evidence);
        if (r >= 0)
                r = sd_bus_get_property_string(c->bus, RA_BUS_NAME, RA_BUS_PATH, RA_BUS_MANAGER_INTERFACE,
                                               "LearningOff", &error, ret_learning_off);
        if (r < 0)
                return rc_report_error("reading the manager", &error, r);
        return 0;
}

int rc_report_error(const char *what_raw, const sd_bus_error *error, int r) {
        const char *name = error ? error->name : NULL;
        /* A message names what users named: escaped as the tables are. */
        _cleanup_free_ char *what = ra_text_escape(what_raw ?: ""),
                            *message = ra_text_escape(error && error->message ? error->message
                                                                              : strerror(r < 0 ? -r : r));

        if (!what || !message) {
                fprintf(stderr, "racontrol: out of memory\n");
                return RC_EXIT_FAILURE;
        }

        if (sd_bus_error_has_names(error, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                fprintf(stderr, "racontrol: radaemon is not running (nobody owns %s on the system bus)\n",
                        RA_BUS_NAME);
        else if (sd_bus_error_has_name(error, RA_BUS_ERROR_NO_SUCH_DEVICE))
                fprintf(stderr, "racontrol: no such device: radaemon manages no disk or bdi named '%s'\n",
                        what);
        else if (sd_bus_error_has_name(error, SD_BUS_ERROR_ACCESS_DENIED))
                fprintf(stderr, "racontrol: not permitted: %s\n", message);
        else if (sd_bus_error_has_name(error, RA_BUS_ERROR_INVALID_VALUE))
                fprintf(stderr, "racontrol: bad value: %s\n", message);
        else if (name)
                fprintf(stderr, "racontrol: %s: %s\n", what, message);
        else
                fprintf(stderr, "racontrol: %s: %s\n", what, strerror(r < 0 ? -r : r));

        return RC_EXIT_FAILURE;
}
