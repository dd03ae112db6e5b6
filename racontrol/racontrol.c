/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ra-prefetch.h"
#include "ra-util.h"
#include "racontrol.h"

static const struct {
        const char *name;
        int n_args; /* exactly this many arguments after the verb; -1: one or more; -2: any number */
        int (*run)(RcContext *c, char **args);
        bool takes_path; /* the first argument may be a path instead of a device */
        const char *args;
        const char *summary;
} verbs[] = {
        { "status", 0, verb_status, false, "", "every managed disk and swap, its value and why" },
        { "show", 1, verb_show, true, "DEV|PATH|swap",
          "one disk, or swap, in full; PATH: what it reads with" },
        { "set", 2, verb_set, true, "DEV|PATH KB [--runtime]",
          "pin DEV to KB KiB; set swap N: page-cluster N" },
        { "auto", 1, verb_auto, true, "DEV|PATH|swap", "clear a pin: radaemon decides again" },
        { "reload", 0, verb_reload, false, "", "re-read the configuration" },
        { "calibrate", 1, verb_calibrate, true, "DEV|PATH",
          "measure DEV again: its command cost, bandwidth, jump" },
        { "restore", 0, verb_restore, false, "", "put every disk back as it was before radaemon" },
        { "monitor", 0, verb_monitor, false, "", "print every change as it happens, until Ctrl-C" },
        { "metrics", 0, verb_metrics, false, "", "every disk's numbers for Prometheus (text format)" },
        { "prefetch", -1, verb_prefetch, false, "PATH...", "warm a tree's metadata (--data: and contents)" },
        { "export", -2, verb_export, false, "[DEV...]",
          "what was learned, as a udev hwdb file for a fleet" },
};

static void help(void) {
        printf("Usage: racontrol [--json] [VERB [ARGS]]\n\n"
               "Shows and steers radaemon, the block device readahead tuner, over D-Bus.\n\n"
               "Verbs (the default is status):\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                printf("  %-9s %-18s %s\n", verbs[i].name, verbs[i].args, verbs[i].summary);
        printf("\nOptions:\n"
               "  --json       print JSON a program can parse\n"
               "  --runtime    with set: do not keep the pin across restarts\n"
               "  --data       with prefetch: read file contents ahead too, up to a budget\n"
               "  --always     with prefetch: warm also where a later walk would read as fast\n"
               "               by itself (a tree in disk order on a rotational disk)\n"
               "  --threads N  with prefetch: walk with N threads (default 1 on a rotational\n"
               "               disk, one per CPU where ext4 is read ahead from it, else 16)\n"
               "  --budget SIZE  with prefetch --data: read ahead at most SIZE bytes (K, M, G;\n"
               "               default half of MemAvailable)\n"
               "  --current    with export: the value in force, where nothing is learned too\n"
               "  --no-revision  with export: match every firmware revision of a model\n"
               "  -h, --help   show this help\n"
               "  --version    show the version\n\n"
               "Anyone may look; changing anything needs root. Exit status: 0 on success,\n"
               "1 on failure, 2 on a usage error. prefetch needs no daemon: it runs with the\n"
               "caller's own rights.\n");
}

/* Returns 1 to go on, 0 to exit successfully, RC_EXIT_USAGE on a bad option. */
static int parse_argv(int argc, char *argv[], RcContext *c) {
        enum {
                ARG_JSON = 0x100,
                ARG_RUNTIME,
                ARG_VERSION,
                ARG_DATA,
                ARG_ALWAYS,
                ARG_THREADS,
                ARG_BUDGET,
                ARG_CURRENT,
                ARG_NO_REVISION,
        };
        static const struct option options[] = {
                { "json", no_argument, NULL, ARG_JSON },
                { "runtime", no_argument, NULL, ARG_RUNTIME },
                { "data", no_argument, NULL, ARG_DATA },
                { "always", no_argument, NULL, ARG_ALWAYS },
                { "threads", required_argument, NULL, ARG_THREADS },
                { "budget", required_argument, NULL, ARG_BUDGET },
                { "current", no_argument, NULL, ARG_CURRENT },
                { "no-revision", no_argument, NULL, ARG_NO_REVISION },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {},
        };
        uint32_t threads;
        int opt;

        opterr = 0;
        while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (opt) {
                case ARG_JSON:
                        c->json = true;
                        break;
                case ARG_RUNTIME:
                        c->runtime = true;
                        break;
                case ARG_DATA:
                        c->data = true;
                        break;
                case ARG_ALWAYS:
                        c->always = true;
                        break;
                case ARG_THREADS:
                        if (ra_parse_u32(optarg, &threads) < 0 || threads == 0 ||
                            threads > RC_PREFETCH_THREADS_MAX) {
                                fprintf(stderr,
                                        "racontrol: --threads takes a number from 1 to %d, not '%s'\n",
                                        RC_PREFETCH_THREADS_MAX, optarg);
                                return RC_EXIT_USAGE;
                        }
                        c->threads = threads;
                        break;
                case ARG_BUDGET:
                        if (ra_prefetch_parse_size(optarg, &c->budget) < 0) {
                                fprintf(stderr,
                                        "racontrol: --budget takes a size in bytes (K, M, G, T), not '%s'\n",
                                        optarg);
                                return RC_EXIT_USAGE;
                        }
                        c->budget_set = true;
                        break;
                case ARG_CURRENT:
                        c->current = true;
                        break;
                case ARG_NO_REVISION:
                        c->no_revision = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        puts(PACKAGE_STRING);
                        return 0;
                case ':':
                        fprintf(stderr, "racontrol: option '%s' needs a value; see racontrol --help\n",
                                argv[optind - 1]);
                        return RC_EXIT_USAGE;
                default:
                        fprintf(stderr, "racontrol: unknown option '%s'; see racontrol --help\n",
                                argv[optind - 1]);
                        return RC_EXIT_USAGE;
                }

        return 1;
}

int main(int argc, char *argv[]) {
        RcContext c = {};
        const char *verb;
        char **args;
        int n_args, r;

        r = parse_argv(argc, argv, &c);
        if (r != 1)
                return r;

        verb = optind < argc ? argv[optind] : "status";
        n_args = optind < argc ? argc - optind - 1 : 0;

        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                if (strcmp(verbs[i].name, verb) != 0)
                        continue;

                if (verbs[i].n_args == -1 && n_args == 0) {
                        fprintf(stderr, "racontrol: %s takes at least 1 argument; usage: racontrol %s %s\n",
                                verb, verb, verbs[i].args);
                        return RC_EXIT_USAGE;
                }
                if (verbs[i].n_args >= 0 && n_args != verbs[i].n_args) {
                        fprintf(stderr, "racontrol: %s takes %d argument%s; usage: racontrol %s %s\n", verb,
                                verbs[i].n_args, verbs[i].n_args == 1 ? "" : "s", verb, verbs[i].args);
                        return RC_EXIT_USAGE;
                }
                if (c.runtime && verbs[i].run != verb_set) {
                        fprintf(stderr, "racontrol: --runtime only goes with set\n");
                        return RC_EXIT_USAGE;
                }
                if ((c.data || c.always || c.threads > 0 || c.budget_set) && verbs[i].run != verb_prefetch) {
                        fprintf(stderr,
                                "racontrol: --data, --always, --threads and --budget only go with prefetch\n");
                        return RC_EXIT_USAGE;
                }
                if ((c.current || c.no_revision) && verbs[i].run != verb_export) {
                        fprintf(stderr, "racontrol: --current and --no-revision only go with export\n");
                        return RC_EXIT_USAGE;
                }
                if (c.budget_set && !c.data) {
                        fprintf(stderr, "racontrol: --budget only goes with prefetch --data\n");
                        return RC_EXIT_USAGE;
                }

                args = argv + optind + (optind < argc ? 1 : 0);
                r = verbs[i].takes_path ? rc_resolve_target(&c, args) : 0;
                if (r == 0)
                        r = verbs[i].run(&c, args);
                ra_path_object_clear(&c.path_object);
                free(c.path_absolute);
                sd_bus_flush_close_unref(c.bus);
                return r;
        }

        fprintf(stderr, "racontrol: unknown verb '%s'; see racontrol --help\n", verb);
        return RC_EXIT_USAGE;
}
