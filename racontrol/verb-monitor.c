/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "racontrol.h"

/* Prints one property value, as JSON or as plain text. */
static int print_value(RcContext *c, sd_bus_message *m) {
        const char *contents;
        char type;
        union {
                const char *s;
                uint32_t u;
                uint64_t t;
                int b;
        } v;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (type != 'v')
                return -EBADMSG;

        r = sd_bus_message_enter_container(m, 'v', contents);
        if (r < 0)
                return r;

        switch (contents[0]) {
        case 's':
        case 'o':
                r = sd_bus_message_read_basic(m, contents[0], &v.s);
                if (r >= 0 && c->json)
                        rc_json_string(v.s);
                else if (r >= 0)
                        rc_print_text(v.s);
                break;
        case 'u':
                r = sd_bus_message_read_basic(m, 'u', &v.u);
                if (r >= 0)
                        printf("%" PRIu32, v.u);
                break;
        case 't':
                r = sd_bus_message_read_basic(m, 't', &v.t);
                if (r >= 0)
                        printf("%" PRIu64, v.t);
                break;
        case 'b':
                r = sd_bus_message_read_basic(m, 'b', &v.b);
                if (r >= 0)
                        fputs(v.b ? (c->json ? "true" : "yes") : (c->json ? "false" : "no"), stdout);
                break;
        default:
                r = sd_bus_message_skip(m, contents);
                if (r >= 0)
                        fputs(c->json ? "null" : "?", stdout);
        }
        if (r < 0)
                return r;

        return sd_bus_message_exit_container(m);
}

/* Prints an a{sv} as "Key=value Key=value" or a JSON object. */
static int print_properties(RcContext *c, sd_bus_message *m) {
        bool first = true;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;

        if (c->json)
                putchar('{');
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *name;

                r = sd_bus_message_read_basic(m, 's', &name);
                if (r < 0)
                        return r;
                if (c->json) {
                        printf("%s\"%s\":", first ? "" : ",", name);
                } else
                        printf(" %s=", name);
                first = false;

                r = print_value(c, m);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        if (c->json)
                putchar('}');

        return sd_bus_message_exit_container(m);
}

static void begin_event(RcContext *c, const char *event, const char *name) {
        if (c->json) {
                fputs("{\"event\":", stdout);
                rc_json_string(event);
                fputs(",\"device\":", stdout);
                rc_json_string(name);
        } else {
                rc_print_text(name);
                printf(": %s", event);
        }
}

static void end_event(void) {
        putchar('\n');
        fflush(stdout);
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *name = NULL;
        RcContext *c = userdata;
        const char *interface;

        if (sd_bus_message_read_basic(m, 's', &interface) < 0)
                return 0;

        if (strcmp(interface, RA_BUS_DEVICE_INTERFACE) == 0) {
                if (sd_bus_path_decode(sd_bus_message_get_path(m), RA_BUS_DEVICE_PREFIX, &name) <= 0)
                        return 0;
        } else if (strcmp(interface, RA_BUS_MANAGER_INTERFACE) == 0) {
                name = strdup("radaemon");
                if (!name)
                        return 0;
        } else
                return 0;

        begin_event(c, "changed", name);
        if (c->json)
                fputs(",\"properties\":", stdout);
        (void) print_properties(c, m);
        if (c->json)
                putchar('}');
        end_event();
        return 0;
}

static int on_interfaces_added(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *name = NULL;
        RcContext *c = userdata;
        const char *path, *interface;

        if (sd_bus_message_read_basic(m, 'o', &path) < 0 ||
            sd_bus_path_decode(path, RA_BUS_DEVICE_PREFIX, &name) <= 0)
                return 0;
        if (sd_bus_message_enter_container(m, 'a', "{sa{sv}}") < 0 ||
            sd_bus_message_enter_container(m, 'e', "sa{sv}") < 0 ||
            sd_bus_message_read_basic(m, 's', &interface) < 0 ||
            strcmp(interface, RA_BUS_DEVICE_INTERFACE) != 0)
                return 0;

        begin_event(c, "added", name);
        if (c->json)
                fputs(",\"properties\":", stdout);
        (void) print_properties(c, m);
        if (c->json)
                putchar('}');
        end_event();
        return 0;
}

static int on_interfaces_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *name = NULL;
        RcContext *c = userdata;
        const char *path;

        if (sd_bus_message_read_basic(m, 'o', &path) < 0 ||
            sd_bus_path_decode(path, RA_BUS_DEVICE_PREFIX, &name) <= 0)
                return 0;

        begin_event(c, "removed", name);
        if (c->json)
                putchar('}');
        end_event();
        return 0;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        RcContext *c = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;

        begin_event(c, new_owner[0] ? "started" : "stopped", "radaemon");
        if (c->json)
                putchar('}');
        end_event();
        return 0;
}

/*
 * Prints every device as it is now ("present"), once the signals are
 * subscribed: nothing that happens afterwards can be missed, and a reader of
 * the output knows where the changes start from.
 */
static int print_present(RcContext *c) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_PATH, "org.freedesktop.DBus.ObjectManager",
                               "GetManagedObjects", &error, &reply, NULL);
        if (r < 0)
                return rc_report_error("monitor", &error, r);

        r = sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "oa{sa{sv}}")) > 0) {
                _cleanup_free_ char *name = NULL;
                const char *path, *interface;

                r = sd_bus_message_read_basic(reply, 'o', &path);
                if (r >= 0)
                        r = sd_bus_message_enter_container(reply, 'a', "{sa{sv}}");
                while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sa{sv}")) > 0) {
                        r = sd_bus_message_read_basic(reply, 's', &interface);
                        if (r >= 0 && strcmp(interface, RA_BUS_DEVICE_INTERFACE) == 0 &&
                            sd_bus_path_decode(path, RA_BUS_DEVICE_PREFIX, &name) > 0) {
                                begin_event(c, "present", name);
                                if (c->json)
                                        fputs(",\"properties\":", stdout);
                                r = print_properties(c, reply);
                                if (c->json)
                                        putchar('}');
                                end_event();
                        } else if (r >= 0)
                                r = sd_bus_message_skip(reply, "a{sv}");
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0)
                return rc_report_error("monitor", NULL, r);
        return 0;
}

static int add_match(RcContext *c, const char *rule, sd_bus_message_handler_t handler) {
        return sd_bus_add_match(c->bus, NULL, rule, handler, c);
}

int verb_monitor(RcContext *c, char **args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_event *event = NULL;
        sigset_t mask;
        int has_owner = 0, r;

        r = rc_connect(c);
        if (r != 0)
                return r;

        /* Watching a daemon that is not there would print nothing, forever. */
        r = sd_bus_call_method(c->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus", "NameHasOwner", &error, &reply, "s", RA_BUS_NAME);
        if (r >= 0)
                r = sd_bus_message_read(reply, "b", &has_owner);
        if (r < 0)
                return rc_report_error("monitor", &error, r);
        if (!has_owner) {
                sd_bus_error_set_const(&error, SD_BUS_ERROR_NAME_HAS_NO_OWNER, NULL);
                return rc_report_error("monitor", &error, -ESRCH);
        }

        r = add_match(c,
                      "type='signal',sender='" RA_BUS_NAME "',interface='org.freedesktop.DBus.Properties',"
                      "member='PropertiesChanged',path_namespace='" RA_BUS_PATH "'",
                      on_properties_changed);
        if (r >= 0)
                r = add_match(c,
                              "type='signal',sender='" RA_BUS_NAME "',interface='org.freedesktop.DBus."
                              "ObjectManager',member='InterfacesAdded'",
                              on_interfaces_added);
        if (r >= 0)
                r = add_match(c,
                              "type='signal',sender='" RA_BUS_NAME "',interface='org.freedesktop.DBus."
                              "ObjectManager',member='InterfacesRemoved'",
                              on_interfaces_removed);
        if (r >= 0)
                r = add_match(c,
                              "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
                              "arg0='" RA_BUS_NAME "'",
                              on_owner_changed);
        if (r < 0)
                return rc_report_error("monitor", NULL, r);

        r = print_present(c);
        if (r != 0)
                return r;

        (void) sigemptyset(&mask);
        (void) sigaddset(&mask, SIGINT);
        (void) sigaddset(&mask, SIGTERM);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);

        r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_bus_attach_event(c->bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0) {
                fflush(stdout);
                r = sd_event_loop(event);
        }
        (void) sd_bus_detach_event(c->bus);
        sd_event_unref(event);

        if (r < 0)
                return rc_report_error("monitor", NULL, r);
        return 0;
}
