/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#define EXIT_USAGE 2

/* The command line: --config FILE, --bdi, and the device's or bdi's name. */
extern const char *arg_config;
extern const char *arg_name;
extern bool arg_bdi;

/* Returns 1 to go on, 0 to exit successfully (--help, --version), or -EINVAL for a usage error. */
int radaemon_udev_parse_argv(int argc, char *argv[]);
