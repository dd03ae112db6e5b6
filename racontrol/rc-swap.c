/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* "swap" where verbs take a device: vm.page-cluster, the Swap object. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ra-util.h"
#include "racontrol.h"

typedef struct RcSwapArea {
        char *filename;
        char *device;
        char *class;
        int32_t priority;
        uint64_t size_bytes;
        uint64_t used_bytes;
} RcSwapArea;

typedef struct RcSwap {
        RcSwapArea *areas;
        size_t n_areas;
        char *active_class;
        char *source;
        char *reason;
        int32_t page_cluster;
        int32_t target;
        uint64_t swapin_pages_per_sec;
        uint32_t hit_percent;
        uint64_t avg_read_request_bytes;
} RcSwap;

static void swap_clear(RcSwap *s) {
        for (size_t i = 0; i < s->n_areas; i++) {
                free(s->areas[i].filename);
                free(s->areas[i].device);
                free(s->areas[i].class);
        }
        free(s->areas);
        free(s->active_class);
        free(s->source);
        free(s->reason);
        *s = (RcSwap){};
}

static int read_string(sd_bus_message *m, char **ret) {
        const char *v;
        int r;

        r = sd_bus_message_read(m, "s", &v);
        if (r < 0)
                return r;
        free(*ret);
        *ret = strdup(v);
        return *ret ? 0 : -ENOMEM;
}

static int read_areas(sd_bus_message *m, RcSwap *s) {
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(sssitt)");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "sssitt")) > 0) {
                RcSwapArea *grown = realloc(s->areas, (s->n_areas + 1) * sizeof(RcSwapArea)), *a;
                const char *filename, *device, *class;

                if (!grown)
                        return -ENOMEM;
                s->areas = grown;
                a = &s->areas[s->n_areas];
                *a = (RcSwapArea){};
                r = sd_bus_message_read(m, "sssitt", &filename, &device, &class, &a->priority,
                                        &a->size_bytes, &a->used_bytes);
                if (r < 0)
                        return r;
                a->filename = strdup(filename);
                a->device = strdup(device);
                a->class = strdup(class);
                s->n_areas++;
                if (!a->filename || !a->device || !a->class)
                        return -ENOMEM;
                r = sd_bus_message_exit_container(m);
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_property(sd_bus_message *m, const char *name, RcSwap *s) {
        static const struct {
                const char *name;
                const char *sig;
        } known[] = {
                { "Devices", "a(sssitt)" },
                { "ActiveClass", "s" },
                { "Source", "s" },
                { "Reason", "s" },
                { "PageCluster", "i" },
                { "TargetPageCluster", "i" },
                { "SwapInPagesPerSec", "t" },
                { "ReadAheadHitPercent", "u" },
                { "AvgReadRequestBytes", "t" },
        };
        const char *sig = NULL;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                if (strcmp(known[i].name, name) == 0)
                        sig = known[i].sig;
        if (!sig)
                return sd_bus_message_skip(m, "v");

        r = sd_bus_message_enter_container(m, 'v', sig);
        if (r < 0)
                return r;
        if (strcmp(name, "Devices") == 0)
                r = read_areas(m, s);
        else if (strcmp(name, "ActiveClass") == 0)
                r = read_string(m, &s->active_class);
        else if (strcmp(name, "Source") == 0)
                r = read_string(m, &s->source);
        else if (strcmp(name, "Reason") == 0)
                r = read_string(m, &s->reason);
        else if (strcmp(name, "PageCluster") == 0)
                r = sd_bus_message_read(m, "i", &s->page_cluster);
        else if (strcmp(name, "TargetPageCluster") == 0)
                r = sd_bus_message_read(m, "i", &s->target);
        else if (strcmp(name, "SwapInPagesPerSec") == 0)
                r = sd_bus_message_read(m, "t", &s->swapin_pages_per_sec);
        else if (strcmp(name, "ReadAheadHitPercent") == 0)
                r = sd_bus_message_read(m, "u", &s->hit_percent);
        else
                r = sd_bus_message_read(m, "t", &s->avg_read_request_bytes);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int get_swap(RcContext *c, RcSwap *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = rc_connect(c);
        if (r != 0)
                return r;

        *ret = (RcSwap){ .page_cluster = -1, .target = -1 };
        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_SWAP_PATH, "org.freedesktop.DBus.Properties",
                               "GetAll", &error, &reply, "s", RA_BUS_SWAP_INTERFACE);
        if (r < 0)
                return rc_report_error("swap", &error, r);

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *name;

                r = sd_bus_message_read(reply, "s", &name);
                if (r >= 0)
                        r = read_property(reply, name, ret);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0) {
                swap_clear(ret);
                fprintf(stderr, "racontrol: cannot read radaemon's reply: %s\n", strerror(-r));
                return RC_EXIT_FAILURE;
        }
        return 0;
}

static void json_swap(const RcSwap *s) {
        printf("{\"page_cluster\":%" PRIi32 ",\"target_page_cluster\":%" PRIi32 ",\"source\":",
               s->page_cluster, s->target);
        rc_json_string(s->source);
        fputs(",\"reason\":", stdout);
        rc_json_string(s->reason);
        fputs(",\"active_class\":", stdout);
        rc_json_string(s->active_class);
        printf(",\"swapin_pages_per_sec\":%" PRIu64 ",\"read_ahead_hit_percent\":%" PRIu32
               ",\"avg_read_request_bytes\":%" PRIu64 ",\"devices\":[",
               s->swapin_pages_per_sec, s->hit_percent, s->avg_read_request_bytes);
        for (size_t i = 0; i < s->n_areas; i++) {
                const RcSwapArea *a = &s->areas[i];

                fputs(i > 0 ? ",{\"filename\":" : "{\"filename\":", stdout);
                rc_json_string(a->filename);
                fputs(",\"device\":", stdout);
                rc_json_string(a->device);
                fputs(",\"class\":", stdout);
                rc_json_string(a->class);
                printf(",\"priority\":%" PRIi32 ",\"size_bytes\":%" PRIu64 ",\"used_bytes\":%" PRIu64 "}",
                       a->priority, a->size_bytes, a->used_bytes);
        }
        fputs("]}", stdout);
}

static void print_swap(const RcSwap *s) {
        char size[RA_SIZE_MAX], used[RA_SIZE_MAX], request[RA_SIZE_MAX];

        printf("Swap:          vm.page-cluster %" PRIi32 " in force, ", s->page_cluster);
        if (s->target >= 0)
                printf("%" PRIi32 " wanted\n", s->target);
        else
                printf("nothing wanted\n");
        printf("Source:        %s\n"
               "Reason:        %s\n"
               "In use:        %s\n"
               "Swap-in:       %" PRIu64 " pages/s, %" PRIu32
               " %% of read-ahead pages used, %s per request\n",
               s->source ?: "", s->reason ?: "",
               s->active_class && s->active_class[0] ? s->active_class : "-", s->swapin_pages_per_sec,
               s->hit_percent, ra_format_size(s->avg_read_request_bytes, request));
        for (size_t i = 0; i < s->n_areas; i++) {
                const RcSwapArea *a = &s->areas[i];

                printf("Device:        %s on %s (%s), priority %" PRIi32 ", %s of %s used\n", a->filename,
                       a->device[0] ? a->device : "an unknown disk", a->class, a->priority,
                       ra_format_size(a->used_bytes, used), ra_format_size(a->size_bytes, size));
        }
        if (s->n_areas == 0)
                printf("Device:        (no swap area is active)\n");
}

int rc_swap_show(RcContext *c) {
        RcSwap s;
        int r;

        r = get_swap(c, &s);
        if (r != 0)
                return r;
        if (c->json) {
                json_swap(&s);
                putchar('\n');
        } else
                print_swap(&s);
        swap_clear(&s);
        return 0;
}

int rc_swap_status(RcContext *c, bool json) {
        RcSwap s;
        int r;

        r = get_swap(c, &s);
        if (r != 0)
                return r;
        if (json)
                json_swap(&s);
        else if (s.n_areas > 0 || s.target >= 0)
                printf("\nswap: vm.page-cluster %" PRIi32 ", target %" PRIi32 " (%s, %zu area%s, %s): %s\n",
                       s.page_cluster, s.target, s.source ?: "", s.n_areas, s.n_areas == 1 ? "" : "s",
                       s.active_class && s.active_class[0] ? s.active_class : "no swap", s.reason ?: "");
        swap_clear(&s);
        return 0;
}

int rc_swap_set(RcContext *c, const char *arg) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        uint32_t value;
        int r;

        r = ra_parse_u32(arg, &value);
        if (r == -EINVAL) {
                fprintf(stderr, "racontrol: '%s' is not a page-cluster (0 to 10); see racontrol --help\n",
                        arg);
                return RC_EXIT_USAGE;
        }
        if (r < 0) {
                fprintf(stderr, "racontrol: bad value: page-cluster %s is far too large\n", arg);
                return RC_EXIT_FAILURE;
        }

        r = rc_connect(c);
        if (r != 0)
                return r;
        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_SWAP_PATH, RA_BUS_SWAP_INTERFACE,
                               "SetPageCluster", &error, NULL, "ub", value, (int) !c->runtime);
        if (r < 0)
                return rc_report_error("swap", &error, r);
        if (c->json)
                return rc_swap_show(c);

        printf("swap: vm.page-cluster pinned to %" PRIu32 "%s.\n", value,
               c->runtime ? " until radaemon stops" : "; the pin survives restarts");
        return 0;
}

int rc_swap_auto(RcContext *c) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = rc_connect(c);
        if (r != 0)
                return r;
        r = sd_bus_call_method(c->bus, RA_BUS_NAME, RA_BUS_SWAP_PATH, RA_BUS_SWAP_INTERFACE, "ClearPin",
                               &error, NULL, "");
        if (r < 0)
                return rc_report_error("swap", &error, r);
        if (c->json)
                return rc_swap_show(c);

        printf("swap: no longer pinned; radaemon decides vm.page-cluster.\n");
        return 0;
}
