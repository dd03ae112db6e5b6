/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who may change settings over D-Bus: root, or a caller polkit authorizes, asked without waiting. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "ra-bus-access.h"
#include "ra-dbus.h"
#include "ra-log.h"
#include "ra-util.h"

/*
 * polkit is asked without waiting for it: a call from a caller other than
 * root starts a CheckAuthorization and returns; polkit's answer puts the
 * call back in the bus's queue, and the method runs again and finds the
 * answer here. polkitd is started by D-Bus activation on a real system, so
 * it is asked whether or not it runs yet: a caller it would authorize is not
 * refused merely for being the first to ask (tests/systemd.sh). The loop
 * never waits: tuning goes on while polkit thinks or hangs.
 *
 * At most POLKIT_MAX_PENDING checks are out at once, and POLKIT_MAX_PER_USER
 * of one user's (all their connections together); a call beyond them is
 * refused at once (LimitsExceeded), so that a flood of unprivileged calls
 * costs a bounded amount of memory and polkit's time, root, who is never
 * asked about, is not held up, and neither is another user, whose checks
 * the flood's do not count against (tests/access.sh). Reading is never
 * checked. Four a user: racontrol makes one call at a time, so an
 * administrator's session with a few at once never meets the bound.
 */
#define POLKIT_TIMEOUT_USEC (5 * UINT64_C(1000000))
#define POLKIT_MAX_PENDING 64
#define POLKIT_MAX_PER_USER 4

typedef struct PolkitQuery {
        sd_bus_message *request;
        uid_t uid;         /* the caller's */
        sd_bus_slot *slot; /* the CheckAuthorization call, until polkit answers */
        bool authorized;   /* polkit's answer, once slot is NULL */
        uint64_t answered; /* CLOCK_MONOTONIC µs; an answer nobody took is dropped after a while */
        struct PolkitQuery *next;
} PolkitQuery;

/* One bus, one list: the checks out and the answers not yet taken by their call. */
static PolkitQuery *polkit_queries;

static PolkitQuery *polkit_query_free(PolkitQuery *q) {
        if (!q)
                return NULL;
        (void) sd_bus_slot_unref(q->slot);
        (void) sd_bus_message_unref(q->request);
        free(q);
        return NULL;
}

static void polkit_query_unlink(PolkitQuery *q) {
        for (PolkitQuery **p = &polkit_queries; *p; p = &(*p)->next)
                if (*p == q) {
                        *p = q->next;
                        return;
                }
}

static uint64_t bus_now(sd_bus *bus) {
        uint64_t now = 0;

        (void) sd_event_now(sd_bus_get_event(bus), CLOCK_MONOTONIC, &now);
        return now;
}

/*
 * Drops the answers whose call never came back to take them (its object went
 * away meanwhile); returns the checks still out, and in *ret_user uid's.
 */
static unsigned polkit_queries_sweep(sd_bus *bus, uid_t uid, unsigned *ret_user) {
        uint64_t now = bus_now(bus);
        unsigned pending = 0;

        *ret_user = 0;
        for (PolkitQuery **p = &polkit_queries; *p;) {
                PolkitQuery *q = *p;

                if (!q->slot && now > q->answered + POLKIT_TIMEOUT_USEC) {
                        *p = q->next;
                        polkit_query_free(q);
                        continue;
                }
                pending += !!q->slot;
                *ret_user += q->slot && q->uid == uid;
                p = &q->next;
        }
        return pending;
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        PolkitQuery *q = userdata;
        sd_bus *bus = sd_bus_message_get_bus(q->request);
        int authorized = 0, challenge = 0, r;

        q->slot = sd_bus_slot_unref(q->slot);
        q->answered = bus_now(bus);

        /* Neither running nor activatable: no polkit on this system, only root may change. */
        if (e && !sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                log_warning("Asking polkit failed, refusing: %s", e->message ?: e->name);
        if (!e) {
                r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
                if (r >= 0)
                        r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
                q->authorized = r >= 0 && authorized;
        }

        /* The call runs again from the start, and finds the answer. */
        r = sd_bus_message_rewind(q->request, true);
        if (r >= 0)
                r = sd_bus_enqueue_for_read(bus, q->request);
        if (r < 0) {
                log_warning_errno(r, "Cannot take up a call again after polkit's answer, refusing it: %m");
                (void) sd_bus_reply_method_errorf(q->request, SD_BUS_ERROR_FAILED,
                                                  "Cannot take up the call after polkit's answer.");
                polkit_query_unlink(q);
                polkit_query_free(q);
        }
        return 0;
}

/*
 * Returns 1 when polkit authorized the sender, 0 when polkit is asked now
 * (the call comes back with the answer), or an error with error set: polkit
 * said no, or too many checks are out.
 */
static int polkit_check(sd_bus_message *msg, uid_t uid, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        sd_bus *bus = sd_bus_message_get_bus(msg);
        unsigned pending, pending_user;
        PolkitQuery *q;
        int r;

        for (q = polkit_queries; q; q = q->next)
                if (q->request == msg)
                        break;
        if (q && q->slot)
                return 0;
        if (q) {
                bool authorized = q->authorized;

                polkit_query_unlink(q);
                polkit_query_free(q);
                return authorized ? 1 : -EACCES;
        }

        pending = polkit_queries_sweep(bus, uid, &pending_user);
        if (pending_user >= POLKIT_MAX_PER_USER)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "Too many of uid %u's authorization checks are pending; try again "
                                         "later.",
                                         (unsigned) uid);
        if (pending >= POLKIT_MAX_PENDING)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "Too many authorization checks are pending; try again later.");

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        /* No interaction: a method call must not wait for somebody to type a password. */
        r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.PolicyKit1",
                                           "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(call, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s",
                                          sd_bus_message_get_sender(msg), RA_POLKIT_ACTION, 0, 0, "");
        /* At most POLKIT_TIMEOUT_USEC (time for its activation), not sd-bus's default 25 s. */
        if (r >= 0)
                r = sd_bus_call_async(bus, &q->slot, call, on_polkit_reply, q, POLKIT_TIMEOUT_USEC);
        if (r < 0) {
                free(q);
                log_warning_errno(r, "Cannot ask polkit, refusing: %m");
                return -EACCES;
        }
        q->request = sd_bus_message_ref(msg);
        q->uid = uid;
        q->next = polkit_queries;
        polkit_queries = q;
        return 0;
}

void ra_bus_access_close(void) {
        while (polkit_queries) {
                PolkitQuery *q = polkit_queries;

                polkit_queries = q->next;
                polkit_query_free(q);
        }
}

int ra_bus_check_authorized(sd_bus_message *msg, uid_t *ret_uid, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID, &creds);
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot tell who is calling: %m");

        *ret_uid = uid;
        if (uid == 0)
                return 1;
        r = polkit_check(msg, uid, error);
        if (r != -EACCES)
                return r;

        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                 "Only root may change radaemon's settings (uid %u may not).",
                                 (unsigned) uid);
}
