/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ra-fleet.h"
#include "ra-policy.h"
#include "ra-util.h"
#include "racontrol.h"

/*
 * What one device gives the fleet: its learned value (or, with --current,
 * the value in force) and why; 0 with *ret_why saying why there is none.
 */
static uint32_t export_value(const RcContext *c, const RcDevice *d, char reason[static RA_REASON_MAX],
                             const char **ret_why) {
        *ret_why = NULL;
        if (strcmp(d->kind ?: "", "disk") != 0) {
                /* A stack's or a bdi's value follows from its disks, which carry the model. */
                *ret_why = "not a disk: its value comes from the disks beneath, which have the model";
                return 0;
        }
        if (c->current) {
                if (d->target_kb == 0) {
                        *ret_why = "no value in force (no medium)";
                        return 0;
                }
                ra_reason_format(reason, "%s", d->reason ?: "");
                return d->target_kb;
        }
        if (d->learned_kb == 0) {
                *ret_why = "nothing learned here yet (--current exports the value in force)";
                return 0;
        }
        if (strcmp(d->source ?: "", "learned") == 0)
                ra_reason_format(reason, "%s", d->reason ?: "");
        else
                ra_reason_format(reason,
                                 "Learned from its reads here; its value now is %s (%" PRIu32 " KiB).",
                                 d->source ?: "unknown", d->target_kb);
        return d->learned_kb;
}

/* Prints one record, or a comment saying why there is none; 1 when none was printed. */
static int export_one(const RcContext *c, const RcDevice *d, char ***matches, const char *host,
                      const char *when) {
        _cleanup_free_ char *match = NULL, *text = NULL;
        char reason[RA_REASON_MAX] = "";
        const char *why;
        RaFleetEntry e;
        uint32_t kb;
        int r;

        kb = export_value(c, d, reason, &why);
        r = kb > 0 ? ra_fleet_match(d->vendor, d->model, d->revision, !c->no_revision, &match) : 0;
        if (r == -EINVAL)
                why = "it has no model (ID_MODEL) to know other disks of its kind by";
        else if (r == -EILSEQ)
                /* A record that matched more than this model would hand its value to other disks. */
                why = "its vendor, model or revision has a '#', a ':' or a control character, and no hwdb "
                      "record matches such a model exactly";
        else if (r < 0) {
                fprintf(stderr, "racontrol: cannot export %s: %s\n", d->name, strerror(-r));
                return -1;
        } else if (kb > 0 && ra_strv_contains(*matches, match))
                why = "a disk before it has the same model, and a model takes one value";
        if (why) {
                printf("# %s: not exported: %s.\n\n", d->name, why);
                return 1;
        }

        e = (RaFleetEntry){ .name = d->name,
                            .identity = d->identity,
                            .vendor = d->vendor,
                            .model = d->model,
                            .revision = d->revision,
                            .kb = kb,
                            .reason = reason };
        r = ra_fleet_format_entry(&e, !c->no_revision, host, when, &text);
        if (r >= 0)
                r = ra_strv_push(matches, match);
        if (r < 0) {
                fprintf(stderr, "racontrol: cannot export %s: %s\n", d->name, strerror(-r));
                return -1;
        }
        fputs(text, stdout);
        return 0;
}

int verb_export(RcContext *c, char **args) {
        _cleanup_(ra_strv_freep) char **matches = NULL;
        char host[256] = "", when[64] = "";
        RcDevice *devices = NULL;
        size_t n = 0;
        time_t now = time(NULL);
        int r, failed = 0;

        if (c->json) {
                fputs("racontrol: export has no --json: its output is a udev hwdb file\n", stderr);
                return RC_EXIT_USAGE;
        }

        if (*args) {
                for (; args[n]; n++)
                        ;
                devices = calloc(n, sizeof(RcDevice));
                if (!devices)
                        return RC_EXIT_FAILURE;
                for (size_t i = 0; i < n; i++) {
                        r = rc_get_device(c, args[i], &devices[i]);
                        if (r != 0) {
                                n = i + 1;
                                goto finish;
                        }
                }
        } else {
                r = rc_get_devices(c, &devices, &n);
                if (r != 0)
                        return r;
        }

        (void) gethostname(host, sizeof(host) - 1);
        (void) strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&now));
        printf("# What radaemon learned on %s for these disk models, exported %s by\n"
               "# racontrol export. Every disk of a model below starts at its RADAEMON_FLEET_KB\n"
               "# where this file is /etc/udev/hwdb.d/60-radaemon-fleet.hwdb, after\n"
               "# \"systemd-hwdb update\" (and \"udevadm trigger\" for disks already there),\n"
               "# until it learns its own. See racontrol(1).\n\n",
               host, when);

        for (size_t i = 0; i < n; i++) {
                /* Without names, only what has a value: the others have nothing to say. */
                if (!*args && devices[i].learned_kb == 0 && !c->current)
                        continue;
                r = export_one(c, &devices[i], &matches, host, when);
                if (r < 0 || (r > 0 && *args)) {
                        if (r > 0)
                                fprintf(stderr,
                                        "racontrol: %s was not exported; see the comment in the output\n",
                                        devices[i].name);
                        failed = 1;
                }
        }
        r = failed ? RC_EXIT_FAILURE : 0;

finish:
        for (size_t i = 0; i < n; i++)
                rc_device_clear(&devices[i]);
        free(devices);
        return r;
}
