/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "racontrol.h"

/*
 * The Prometheus text exposition format (version 0.0.4), which
 * node_exporter's textfile collector reads and promtool check metrics
 * checks: HELP and TYPE once before each metric's samples, counters named
 * *_total, label values escaped.
 */

static void label_value(const char *s) {
        putchar('"');
        for (; s && *s; s++)
                switch (*s) {
                case '\\':
                        fputs("\\\\", stdout);
                        break;
                case '"':
                        fputs("\\\"", stdout);
                        break;
                case '\n':
                        fputs("\\n", stdout);
                        break;
                default:
                        putchar(*s);
                }
        putchar('"');
}

static void family(const char *name, const char *type, const char *help) {
        printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The labels of a device's samples; the value labels only on the window's own metrics. */
static void device_labels(const RcDevice *d, bool why) {
        fputs("{device=", stdout);
        label_value(d->name);
        if (why) {
                fputs(",source=", stdout);
                label_value(d->source);
                fputs(",workload=", stdout);
                label_value(d->workload);
        }
        putchar('}');
}

/* Prometheus wants base units: sizes in bytes, not KiB as sysfs has them. */
#define EACH_DEVICE(name, why, value)                                                                       \
        for (size_t i = 0; i < n; i++) {                                                                    \
                const RcDevice *d = &devices[i];                                                            \
                fputs(name, stdout);                                                                        \
                device_labels(d, why);                                                                      \
                printf(" %" PRIu64 "\n", (uint64_t) (value));                                               \
        }

int verb_metrics(RcContext *c, char **args) {
        _cleanup_free_ char *version = NULL, *mode = NULL, *state_error = NULL;
        RcDevice *devices = NULL;
        size_t n = 0;
        int r;

        if (c->json) {
                fputs("racontrol: metrics has no --json: its output is Prometheus' text format\n", stderr);
                return RC_EXIT_USAGE;
        }

        r = rc_get_manager(c, &version, &mode, &state_error);
        if (r != 0)
                return r;
        r = rc_get_devices(c, &devices, &n);
        if (r != 0)
                return r;

        family("radaemon_info", "gauge", "radaemon's version and mode (auto or observe); always 1.");
        fputs("radaemon_info{version=", stdout);
        label_value(version);
        fputs(",mode=", stdout);
        label_value(mode);
        puts("} 1");
        family("radaemon_devices_managed", "gauge", "Disks radaemon manages.");
        printf("radaemon_devices_managed %zu\n", n);
        family("radaemon_state_error", "gauge",
               "1 while radaemon cannot write its state store (racontrol status says why), else 0.");
        printf("radaemon_state_error %d\n", state_error[0] ? 1 : 0);

        if (n > 0) {
                family("radaemon_device_read_ahead_bytes", "gauge",
                       "read_ahead_kb in sysfs, in bytes; source says where radaemon's value comes from.");
                EACH_DEVICE("radaemon_device_read_ahead_bytes", true, d->read_ahead_kb * UINT64_C(1024));
                family("radaemon_device_target_bytes", "gauge",
                       "The value radaemon wants, in bytes; 0 when it has nothing to decide (no medium).");
                EACH_DEVICE("radaemon_device_target_bytes", true, d->target_kb * UINT64_C(1024));
                family("radaemon_device_read_bytes_per_second", "gauge",
                       "Bytes read per second in the last interval sampled.");
                EACH_DEVICE("radaemon_device_read_bytes_per_second", false, d->read_bytes_per_sec);
                family("radaemon_device_avg_read_request_bytes", "gauge",
                       "Bytes per completed read request in the last interval sampled; 0 without reads.");
                EACH_DEVICE("radaemon_device_avg_read_request_bytes", false, d->avg_read_request_bytes);
                family("radaemon_device_decisions_total", "counter",
                       "Values radaemon wrote to the disk's read_ahead_kb since it started.");
                EACH_DEVICE("radaemon_device_decisions_total", false, d->decisions);
                family("radaemon_device_learned_bytes", "gauge",
                       "What learning from the disk's reads found best, in bytes; 0 while the prior stands.");
                EACH_DEVICE("radaemon_device_learned_bytes", false, d->learned_kb * UINT64_C(1024));
        }

        for (size_t i = 0; i < n; i++)
                rc_device_clear(&devices[i]);
        free(devices);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : RC_EXIT_FAILURE;
}
