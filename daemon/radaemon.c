/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#ifdef HAVE_MALLOPT
#include <malloc.h>
#endif

#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "ra-log.h"
#include "ra-manager.h"
#include "ra-state.h"
#include "ra-tune.h"

static const char *arg_config;
static bool arg_foreground;
static bool arg_observe;
static bool arg_debug;

static void help(void) {
        printf("Usage: radaemon [OPTIONS]\n\n"
               "Keeps every block disk's read_ahead_kb right for the device and its work.\n\n"
               "  -f, --foreground    log plainly to stderr (radaemon never forks)\n"
               "  -c, --config FILE   read FILE instead of %s and its drop-ins\n"
               "  -o, --observe       decide and log, but write nothing\n"
               "  -d, --debug         log debug messages too\n"
               "  -h, --help          show this help\n"
               "      --version       show the version\n",
               RA_CONFIG_FILE);
}

/* Returns 1 to go on, 0 to exit successfully, or -EINVAL for a usage error. */
static int parse_argv(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100 };
        static const struct option options[] = {
                { "foreground", no_argument, NULL, 'f' },
                { "config", required_argument, NULL, 'c' },
                { "observe", no_argument, NULL, 'o' },
                { "debug", no_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {},
        };
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":fc:odh", options, NULL)) >= 0)
                switch (c) {
                case 'f':
                        arg_foreground = true;
                        break;
                case 'c':
                        arg_config = optarg;
                        break;
                case 'o':
                        arg_observe = true;
                        break;
                case 'd':
                        arg_debug = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        puts(PACKAGE_STRING);
                        return 0;
                case ':':
                        fprintf(stderr, "radaemon: option '%s' needs an argument\n", argv[optind - 1]);
                        return -EINVAL;
                default:
                        fprintf(stderr, "radaemon: unknown option '%s'; see radaemon --help\n",
                                argv[optind - 1]);
                        return -EINVAL;
                }

        if (optind < argc) {
                fprintf(stderr, "radaemon: unexpected argument '%s'; see radaemon --help\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        log_info("Received SIG%s, exiting.", sigabbrev_np((int) si->ssi_signo));
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int on_reload_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        log_info("Received SIGHUP, reloading the configuration.");
        (void) ra_manager_reload(userdata);
        return 0;
}

static int add_signals(Manager *m) {
        sigset_t mask;
        int r;

        /* sd-event wants the signals blocked, so they arrive through its signalfd. */
        (void) sigemptyset(&mask);
        (void) sigaddset(&mask, SIGTERM);
        (void) sigaddset(&mask, SIGINT);
        (void) sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Cannot block signals: %m");

        r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGHUP, on_reload_signal, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch signals: %m");

        return 0;
}

static int run(void) {
        _cleanup_(ra_manager_freep) Manager *m = NULL;
        int r;

        r = ra_manager_new(arg_config, arg_observe, &m);
        if (r == -ENOMEM)
                return log_error_errno(r, "Not starting: %m");
        if (r < 0)
                return r; /* said already */

        /* Its udev helper reads the configuration: --observe it learns from the state directory. */
        r = ra_state_mark_observing(m->config->state_dir, arg_observe);
        if (r < 0)
                log_warning_errno(
                        r, "Cannot %s %s/" RA_STATE_OBSERVING ", ignoring: the udev helper may %s: %m",
                        arg_observe ? "create" : "remove", m->config->state_dir,
                        arg_observe ? "write windows" : "write nothing");

        r = add_signals(m);
        if (r < 0)
                return r;

        /* Pings systemd's watchdog from the loop when WATCHDOG_USEC is set. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Cannot enable the watchdog, ignoring: %m");

        r = ra_manager_start(m);
        if (r < 0)
                return r;

        r = sd_event_loop(m->event);
        (void) sd_notify(false, "STOPPING=1");
        if (r == -EEXIST)
                return r; /* another radaemon took the bus name: said already */
        /*
         * Learned values and calibrations wait for the sampler's next save,
         * a second away: a stop now would measure the device again at the
         * next start.
         */
        (void) ra_manager_save(m, "before exiting");
        if (arg_observe)
                (void) ra_state_mark_observing(m->config->state_dir, false);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");

        if (m->config->restore_on_exit) {
                unsigned n = ra_tune_restore_all(m, false, "restore_on_exit");

                log_info("Put %u disk%s back to their values before radaemon (restore_on_exit).", n,
                         n == 1 ? "" : "s");
        }
        return 0;
}

/*
 * Hundreds of disks coming and going leave small long-lived allocations
 * spread over a heap that grew for them all; glibc's defaults then keep the
 * pages between them. Freed small chunks are merged at once (no fastbins),
 * large buffers come from mmap and go back whole (a fixed threshold, not one
 * that grows after every large free), and the top of the heap is trimmed
 * early.
 */
static void tune_malloc(void) {
#ifdef HAVE_MALLOPT
        (void) mallopt(M_MXFAST, 0);
        (void) mallopt(M_MMAP_THRESHOLD, 64 * 1024);
        (void) mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
}

int main(int argc, char *argv[]) {
        int r;

        tune_malloc();
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? 2 : EXIT_SUCCESS;

        ra_log_open(arg_foreground);
        if (arg_debug)
                ra_log_set_max_level(LOG_DEBUG);

        return run() < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
