/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "ra-config.h"
#include "ra-util.h"
#include "radaemon-udev-args.h"

const char *arg_config;
const char *arg_name;
bool arg_bdi;

static void help(void) {
        printf("Usage: radaemon-udev [--config FILE] [--bdi] NAME\n\n"
               "Sets the first read_ahead_kb of the block disk NAME as radaemon would, and prints\n"
               "RADAEMON_FIRST_KB= and RADAEMON_SOURCE= for udev. Run by 60-radaemon.rules, which\n"
               "passes the disk's udev properties in the environment.\n\n"
               "  -c, --config FILE   read FILE instead of %s and its drop-ins\n"
               "      --bdi           NAME is a bdi (/sys/class/bdi/NAME) being registered: a btrfs\n"
               "                      file system's gets its first value from the devices beneath\n"
               "  -h, --help          show this help\n"
               "      --version       show the version\n",
               RA_CONFIG_FILE);
}

int radaemon_udev_parse_argv(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_BDI };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "bdi", no_argument, NULL, ARG_BDI },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {},
        };
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":c:h", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        arg_config = optarg;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        puts(PACKAGE_STRING);
                        return 0;
                case ARG_BDI:
                        arg_bdi = true;
                        break;
                case ':':
                        fprintf(stderr, "radaemon-udev: option '%s' needs an argument\n", argv[optind - 1]);
                        return -EINVAL;
                default:
                        fprintf(stderr, "radaemon-udev: unknown option '%s'; see radaemon-udev --help\n",
                                argv[optind - 1]);
                        return -EINVAL;
                }

        if (argc - optind != 1) {
                fprintf(stderr, "radaemon-udev: expected one device name; see radaemon-udev --help\n");
                return -EINVAL;
        }
        arg_name = argv[optind];
        if (!ra_device_name_is_valid(arg_name)) {
                fprintf(stderr, "radaemon-udev: '%s' is not a kernel device name\n", arg_name);
                return -EINVAL;
        }
        return 1;
}
