/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "ra-util.h"
#include "racontrol.h"

/* A JSON string: quotes, backslashes and control characters escaped. */
void rc_json_string(const char *s) {
        putchar('"');
        for (const unsigned char *p = (const unsigned char *) (s ?: ""); *p; p++)
                switch (*p) {
                case '"':
                        fputs("\\\"", stdout);
                        break;
                case '\\':
                        fputs("\\\\", stdout);
                        break;
                case '\n':
                        fputs("\\n", stdout);
                        break;
                case '\t':
                        fputs("\\t", stdout);
                        break;
                default:
                        if (*p < 0x20 || *p == 0x7f)
                                printf("\\u%04x", *p);
                        else
                                putchar(*p);
                }
        putchar('"');
}

void rc_print_text(const char *s) {
        _cleanup_free_ char *escaped = NULL;

        if (!s || ra_text_is_plain(s)) {
                fputs(s ?: "", stdout);
                return;
        }
        escaped = ra_text_escape(s);
        fputs(escaped ?: "(a name with bytes to escape, and no memory to escape them)", stdout);
}

static void json_key(const char *key, bool first) {
        if (!first)
                putchar(',');
        rc_json_string(key);
        putchar(':');
}

void rc_json_device(const RcDevice *d) {
        rc_json_device_open(d);
        putchar('}');
}

void rc_json_device_open(const RcDevice *d) {
        putchar('{');
        json_key("name", true);
        rc_json_string(d->name);
        json_key("kind", false);
        rc_json_string(d->kind);
        json_key("mount_point", false);
        rc_json_string(d->mount_point);
        json_key("file_system", false);
        rc_json_string(d->file_system);
        json_key("stack", false);
        rc_json_string(d->stack);
        json_key("node", false);
        rc_json_string(d->node);
        json_key("identity", false);
        rc_json_string(d->identity);
        json_key("size_bytes", false);
        printf("%" PRIu64, d->size_bytes);
        json_key("rotational", false);
        fputs(d->rotational ? "true" : "false", stdout);
        json_key("removable", false);
        fputs(d->removable ? "true" : "false", stdout);
        json_key("transport", false);
        rc_json_string(d->transport);
        json_key("vendor", false);
        rc_json_string(d->vendor);
        json_key("model", false);
        rc_json_string(d->model);
        json_key("revision", false);
        rc_json_string(d->revision);
        json_key("read_ahead_kb", false);
        printf("%" PRIu32, d->read_ahead_kb);
        json_key("target_kb", false);
        printf("%" PRIu32, d->target_kb);
        json_key("source", false);
        rc_json_string(d->source);
        json_key("reason", false);
        rc_json_string(d->reason);
        json_key("read_bytes_per_sec", false);
        printf("%" PRIu64, d->read_bytes_per_sec);
        json_key("avg_read_request_bytes", false);
        printf("%" PRIu64, d->avg_read_request_bytes);
        json_key("workload", false);
        rc_json_string(d->workload);
        json_key("evidence", false);
        rc_json_string(d->evidence);
        json_key("calibration", false);
        rc_json_string(d->calibration);
        json_key("calibrated_usec", false);
        printf("%" PRIu64, d->calibrated_usec);
        json_key("cost_model", false);
        rc_json_string(d->cost_model ?: "");
        json_key("cost_model_source", false);
        rc_json_string(d->cost_model_source ?: "");
        json_key("calibrating", false);
        fputs(d->calibrating ? "true" : "false", stdout);
}

/* Evidence as people read it. */
static const char *evidence_text(const char *evidence) {
        if (ra_streq(evidence, "readahead"))
                return "readahead per file (page cache)";
        if (ra_streq(evidence, "page-cache"))
                return "pages added to the page cache per file";
        if (ra_streq(evidence, "block"))
                return "block requests";
        return "nothing yet";
}

/* A disk's calibration, when it has one or one runs; a stack or bdi has none to speak of. */
static void print_calibration(const RcDevice *d) {
        time_t when = (time_t) (d->calibrated_usec / 1000000);
        char date[64] = "";
        struct tm tm;

        if (d->calibrating) {
                printf("Calibration:   under way\n");
                return;
        }
        if (!ra_streq(d->kind, "disk"))
                return;
        if (!d->calibration || !d->calibration[0]) {
                printf("Calibration:   none\n");
                if (ra_streq(d->cost_model_source, "traced"))
                        printf("Cost model:    %s (from its own requests)\n", d->cost_model);
                return;
        }
        if (localtime_r(&when, &tm))
                (void) strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", &tm);
        printf("Calibration:   %s (measured %s)\n", d->calibration, date);
}

void rc_print_device(const RcDevice *d) {
        char size[RA_SIZE_MAX], rate[RA_SIZE_MAX], request[RA_SIZE_MAX];

        if (ra_streq(d->kind, "bdi"))
                printf("Bdi:           %s of %s at %s (/sys/class/bdi/%s)\n", d->name, d->file_system ?: "",
                       d->mount_point ?: "", d->name);
        if (ra_streq(d->kind, "stack"))
                printf("Stack:         %s\n", d->stack ?: "");
        printf("Device:        %s (%s)\n"
               "Identity:      %s\n"
               "Size:          %s\n"
               "Rotational:    %s\n"
               "Removable:     %s\n"
               "Transport:     %s\n"
               "ReadAhead:     %" PRIu32 " KiB in sysfs, %" PRIu32 " KiB wanted\n"
               "Source:        %s\n"
               "Reason:        %s\n"
               "Workload:      %s, %s/s read, %s per request, judged from %s\n",
               d->name, d->node ?: "", d->identity ?: "",
               d->size_bytes == UINT64_MAX ? "unknown" : ra_format_size(d->size_bytes, size),
               d->rotational ? "yes" : "no", d->removable ? "yes" : "no", d->transport ?: "",
               d->read_ahead_kb, d->target_kb, d->source ?: "", d->reason ?: "", d->workload ?: "",
               ra_format_size(d->read_bytes_per_sec, rate),
               ra_format_size(d->avg_read_request_bytes, request), evidence_text(d->evidence));
        /* Where udev names the hardware: what racontrol export keys a fleet's value by. */
        if (d->model && d->model[0])
                printf("Model:         %s%s%s%s%s\n", d->vendor ?: "", d->vendor && d->vendor[0] ? " " : "",
                       d->model, d->revision && d->revision[0] ? ", firmware " : "", d->revision ?: "");
        print_calibration(d);
}

void rc_print_learning(const char *evidence, const char *learning_off) {
        if (learning_off && learning_off[0])
                printf("Learning:      off: %s\n", learning_off);
        else
                printf("Learning:      from %s\n", evidence_text(evidence));
}
