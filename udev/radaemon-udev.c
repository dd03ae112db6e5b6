/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * radaemon-udev: run by 60-radaemon.rules for every "add" and "change" of a
 * block disk. It sets the disk's first read_ahead_kb while udev handles the
 * event, so the value is in place before anything opens the disk, whether or
 * not radaemon runs; and it decides exactly as radaemon would, from the same
 * configuration, state store and policy.
 *
 * It never opens the device (udev has probed it already), so a slow or dying
 * disk cannot hold up udev: it reads sysfs, the properties udev hands it in
 * the environment, two small files, and for a dm or md device, udev's
 * database of the disks beneath it. Stdout is for IMPORT{program} only:
 * KEY=value lines; everything else goes to stderr, which udev logs at debug
 * level.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libudev.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "ra-apply.h"
#include "ra-bdi.h"
#include "ra-config.h"
#include "ra-device-udev.h"
#include "ra-device.h"
#include "ra-policy.h"
#include "ra-settings.h"
#include "ra-stack.h"
#include "ra-state.h"
#include "ra-util.h"
#include "radaemon-udev-fleet.h"

#define EXIT_USAGE 2

static const char *arg_config;
static const char *arg_name;
static bool arg_bdi;

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

/* Returns 1 to go on, 0 to exit successfully, or -EINVAL for a usage error. */
static int parse_argv(int argc, char *argv[]) {
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

static int load_config(RaConfig **ret) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        int r;

        r = ra_config_read(arg_config, ret, &errors);
        for (size_t i = 0; errors && errors[i]; i++)
                fprintf(stderr, "radaemon-udev: %s\n", errors[i]);
        return r;
}

/* What is stored for identities (NULL-terminated) only: this runs on every block event.
 * A state that cannot be read costs the pins, not the value. */
static RaState *load_state(const char *dir, const char *const *identities) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        RaState *s = NULL;
        int r;

        if (ra_state_new(&s) < 0)
                return NULL;

        r = ra_state_load_only(s, dir, identities, &errors);
        for (size_t i = 0; errors && errors[i]; i++)
                fprintf(stderr, "radaemon-udev: %s/%s: %s; ignored.\n", dir, RA_STATE_FILE, errors[i]);
        if (r < 0 && r != -EINVAL)
                fprintf(stderr, "radaemon-udev: cannot read %s/%s, deciding without stored pins: %s\n", dir,
                        RA_STATE_FILE, strerror(-r));
        return s;
}

static const char *get_env(void *userdata, const char *key) {
        return getenv(key);
}

static const char *get_none(void *userdata, const char *key) {
        return NULL;
}

/*
 * Reads what radaemon reads of a disk, with udev's properties from the
 * environment. Returns 1 when the device is a disk with a readahead, 0 when
 * it is not one (or went away), or a negative errno.
 */
static int read_device(const char *name, int *ret_sysfd, RaDeviceAttrs *a) {
        _cleanup_close_ int sysfd = -1;
        char link[PATH_MAX], syspath[PATH_MAX];
        const char *devtype = getenv("DEVTYPE"), *bad = NULL, *bad_attr = NULL;
        int r;

        /* The rule asks for disks only; a partition's value is its disk's. */
        if (devtype && strcmp(devtype, "disk") != 0)
                return 0;

        (void) snprintf(link, sizeof(link), "/sys/class/block/%s", name);
        if (!realpath(link, syspath))
                return errno == ENOENT ? 0 : negative_errno();

        sysfd = open(syspath, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sysfd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (faccessat(sysfd, "partition", F_OK, 0) == 0)
                return 0;

        r = ra_device_read(a, name, sysfd, syspath, get_env, NULL, &bad_attr, &bad);
        if (r == -ENODEV)
                return 0; /* gone, or without queue/read_ahead_kb */
        if (r == -EINVAL && bad)
                fprintf(stderr,
                        "radaemon-udev: %s: ignoring %s=%s from udev: not a multiple of 4 from %u to %u "
                        "(KiB) or a boolean.\n",
                        name, bad, getenv(bad), RA_KB_MIN, RA_KB_LIMIT);
        else if (r < 0) {
                if (r != -ENOMEM)
                        fprintf(stderr, "radaemon-udev: %s: cannot read %s/%s: %s\n", name, syspath,
                                bad_attr ?: "?", strerror(-r));
                return r;
        }

        *ret_sysfd = TAKE_FD(sysfd);
        return 1;
}

RA_DEFINE_CLEANUP(struct udev, udev_unref)

/* The udev event being handled, for messages; "request" when run by hand. */
static const char *event_name(void) {
        return getenv("ACTION") ?: "request";
}

/*
 * What radaemon would decide: the configuration, what is stored for the
 * disk, the policy. *ret_restored is set when radaemon's Restore() put every
 * disk back: then nothing is written until a reload.
 */
static int decide(const RaConfig *config, const RaDeviceAttrs *a, RaDecision *ret, bool *ret_restored) {
        _cleanup_(ra_state_freep) RaState *state = NULL;
        _cleanup_(ra_stack_freep) RaStack *stack = NULL;
        _cleanup_(ra_strv_freep) char **candidates = NULL, **leaves = NULL, **leaf_ids = NULL;
        _cleanup_free_ char *identity = NULL, *bad = NULL;
        _cleanup_free_ uint32_t *leaf_kb = NULL;
        _cleanup_(udev_unrefp) struct udev *udev = udev_new();
        RaSettings settings;
        int r, stack_read;

        if (!udev)
                return -ENOMEM;
        /*
         * A dm or md device from the disks at the bottom of its stack, read as
         * radaemon reads them: from udev's database, which holds them since
         * their own events (this event's environment is the top's).
         */
        stack_read = ra_stack_read_priors("/sys", a->name, ra_stack_read_leaf_udev, udev, &stack, &leaf_kb,
                                          &leaves, &bad);
        if (stack_read == -ENOMEM)
                return stack_read;
        if (stack_read < 0 && stack_read != -EAGAIN)
                fprintf(stderr,
                        "radaemon-udev: %s: cannot read its stack (%s), deciding from its own "
                        "attributes: %s\n",
                        a->name, bad ?: "?", strerror(-stack_read));

        /* One read of the state: the device's lines, and its leaves', whose calibrations compose its. */
        r = ra_device_candidate_identities(a, &candidates);
        if (r >= 0 && stack_read > 0)
                r = ra_device_leaf_candidates_udev(udev, leaves, &candidates);
        if (r < 0)
                return r;
        state = load_state(config->state_dir, (const char *const *) candidates);
        if (!state)
                return -ENOMEM;
        /* As radaemon will decide it, old keys moved only in this copy: the helper never writes the state.
         */
        r = ra_device_identify_udev(state, a, &identity);
        if (r >= 0 && stack_read > 0)
                r = ra_device_identify_leaves_udev(udev, state, leaves, &leaf_ids);
        if (r < 0)
                return r;

        ra_settings_build(config, state,
                          &(RaSettingsInput){
                                  .kind = ra_settings_block_kind(stack_read),
                                  .attrs = a,
                                  .identity = identity,
                                  .name = a->name,
                                  .stack_read = stack_read,
                                  .stack = stack,
                                  .leaf_kb = leaf_kb,
                                  .leaf_identities = leaf_ids,
                          },
                          &settings);
        ra_policy_decide(a, &settings, ret);
        *ret_restored = state->restored;
        return 0;
}

/* The same for a btrfs bdi: its prior from the devices beneath, as radaemon's. */
static int decide_bdi(const RaConfig *config, const RaBdi *b, const uint32_t *beneath_kb,
                      const RaDeviceAttrs *a, RaDecision *ret, bool *ret_restored) {
        _cleanup_(ra_state_freep) RaState *state = NULL;
        _cleanup_free_ char *identity = NULL;
        RaSettings settings;
        int r;

        r = ra_bdi_identity(b, &identity);
        if (r < 0)
                return r;

        state = load_state(config->state_dir, (const char *const[]){ identity, NULL });
        if (!state)
                return -ENOMEM;

        ra_settings_build(config, state,
                          &(RaSettingsInput){
                                  .kind = RA_SETTINGS_BDI,
                                  .attrs = a,
                                  .identity = identity,
                                  .bdi = b,
                                  .beneath_kb = beneath_kb,
                                  .server_kb = a->has_original ? a->original_kb : a->read_ahead_kb,
                          },
                          &settings);
        ra_policy_decide(a, &settings, ret);
        *ret_restored = state->restored;
        return 0;
}

/* One device beneath a bdi, read into a as a disk is (a partition stands for its disk); its prior, 0 if
 * gone. */
static uint32_t beneath_prior(dev_t dev, RaDeviceAttrs *a) {
        const RaBounds any = { .min_kb = RA_KB_MIN, .max_kb = RA_KB_LIMIT };
        _cleanup_close_ int sysfd = -1;
        char link[64], syspath[PATH_MAX];
        const char *bad = NULL, *bad_attr = NULL, *name;
        RaDecision prior;

        (void) snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(dev), minor(dev));
        if (!realpath(link, syspath))
                return 0;
        sysfd = open(syspath, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sysfd >= 0 && faccessat(sysfd, "partition", F_OK, 0) == 0) {
                char *slash = strrchr(syspath, '/');

                *slash = '\0';
                (void) ra_close(sysfd);
                sysfd = open(syspath, O_PATH | O_DIRECTORY | O_CLOEXEC);
        }
        if (sysfd < 0)
                return 0;
        name = strrchr(syspath, '/') + 1;

        /* The disk's udev properties are in udev's database, not this event's environment. */
        if (ra_device_read(a, name, sysfd, syspath, get_none, NULL, &bad_attr, &bad) < 0 && !bad)
                return 0;
        ra_policy_prior(a, any, &prior);
        return prior.kb;
}

/*
 * A bdi's "add" comes while its file system is being mounted, before
 * mountinfo shows it: only btrfs can be told from sysfs then (its UUID
 * directory links the bdi and lists the devices). Returns 1 with the bdi
 * read, 0 to leave it to radaemon at the mount.
 */
static int read_bdi(const RaConfig *config, RaBdi *b, uint32_t **ret_beneath_kb, int *ret_sysfd,
                    RaDeviceAttrs *a) {
        const char *keys[] = { arg_name, "btrfs", NULL }, *bad = NULL;
        _cleanup_(ra_strv_freep) char **disks = NULL;
        _cleanup_free_ uint32_t *kb = NULL;
        _cleanup_close_ int sysfd = -1;
        char path[PATH_MAX];
        int r;

        if (strncmp(arg_name, "btrfs-", 6) != 0 || !ra_config_manages_bdi(config, keys))
                return 0;
        /* Named as radaemon names a btrfs being mounted, so that the same [bdi:GLOB] sections match. */
        b->name = strdup(arg_name);
        b->fs_type = strdup("btrfs");
        if (!b->name || !b->fs_type)
                return -ENOMEM;
        r = ra_bdi_read_btrfs("/sys", NULL, b);
        if (r == -ENOENT) {
                fprintf(stderr,
                        "radaemon-udev: %s: no btrfs in /sys/fs/btrfs links it yet; radaemon decides "
                        "at the mount.\n",
                        arg_name);
                return 0;
        }
        if (r < 0)
                return r;

        (void) snprintf(path, sizeof(path), "/sys/class/bdi/%s", arg_name);
        sysfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sysfd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        a->name = strdup(arg_name);
        if (!a->name)
                return -ENOMEM;
        r = ra_apply_read_current(sysfd, RA_APPLY_BDI_ATTR, &a->read_ahead_kb);
        if (r < 0)
                return r == -ENODEV ? 0 : r;
        a->transport = ra_bdi_kind_to_string(RA_BDI_BTRFS);
        r = ra_device_attrs_read_properties(a, get_env, NULL, &bad);
        if (r == -EINVAL && bad)
                fprintf(stderr, "radaemon-udev: %s: ignoring %s=%s from udev.\n", arg_name, bad,
                        getenv(bad));
        else if (r < 0)
                return r;

        kb = calloc(b->n_beneath + 1, sizeof(uint32_t));
        if (!kb)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_beneath; i++) {
                _cleanup_(ra_device_attrs_clear) RaDeviceAttrs d = {};

                kb[i] = beneath_prior(b->beneath[i], &d);
                if (kb[i] == 0 || ra_strv_contains(disks, d.name))
                        continue; /* gone, or another partition of a disk already counted */
                a->size_bytes += d.size_bytes;
                a->rotational = a->rotational || d.rotational;
                if (ra_strv_push(&disks, d.name) < 0)
                        return -ENOMEM;
        }
        /* A stripe over two partitions of one disk is read one at a time. */
        if (b->stripes > ra_strv_length(disks) && ra_strv_length(disks) > 0)
                b->stripes = (unsigned) ra_strv_length(disks);
        if (a->size_bytes == 0)
                return 0; /* its devices are gone */

        *ret_beneath_kb = TAKE_PTR(kb);
        *ret_sysfd = TAKE_FD(sysfd);
        return 1;
}

/*
 * The value the disk had before this helper first wrote it on this plug:
 * the rule imports it from udev's database, where an earlier event of the
 * same plug left it, so radaemon learns the kernel's value, not ours.
 */
static void print_original(const RaDeviceAttrs *a) {
        printf("RADAEMON_ORIGINAL_KB=%" PRIu32 "\n", a->has_original ? a->original_kb : a->read_ahead_kb);
}

/* Writes the value unless it is there already, and hands udev the KEY=value lines. */
static int apply(int sysfd, const char *attr, const RaDeviceAttrs *a, const RaDecision *d) {
        const char *source = ra_source_to_string(d->source);
        uint32_t now = a->read_ahead_kb;
        int r;

        if (d->kb != now) {
                r = ra_apply_read_ahead(sysfd, attr, d->kb, &now);
                if (r == -ENODEV)
                        return 0; /* gone meanwhile: nothing to tell udev */
                if (r < 0) {
                        fprintf(stderr,
                                "radaemon-udev: %s: cannot write %" PRIu32 " KiB to read_ahead_kb: %s\n",
                                a->name, d->kb, strerror(-r));
                        return r;
                }
        }

        fprintf(stderr, "radaemon-udev: %s: read_ahead_kb %" PRIu32 " -> %" PRIu32 " KiB (%s, on %s): %s\n",
                a->name, a->read_ahead_kb, now, source, event_name(), d->reason);
        print_original(a);
        printf("RADAEMON_FIRST_KB=%" PRIu32 "\n"
               "RADAEMON_SOURCE=%s\n",
               now, source);
        return fflush(stdout) == 0 ? 0 : -EIO;
}

static int run(void) {
        _cleanup_(ra_config_freep) RaConfig *config = NULL;
        _cleanup_(ra_device_attrs_clear) RaDeviceAttrs a = {};
        _cleanup_(ra_bdi_clear) RaBdi b = {};
        _cleanup_free_ uint32_t *beneath_kb = NULL;
        _cleanup_close_ int sysfd = -1;
        RaDecision decision;
        bool restored = false;
        int r;

        r = load_config(&config);
        if (r < 0) {
                fprintf(stderr, "radaemon-udev: %s: the configuration is invalid, leaving it alone.\n",
                        arg_name);
                return r;
        }

        /* The same disks and bdis radaemon would manage, and no other. */
        if (arg_bdi)
                r = read_bdi(config, &b, &beneath_kb, &sysfd, &a);
        else if (!ra_config_manages(config, arg_name))
                return 0;
        else
                r = read_device(arg_name, &sysfd, &a);
        if (r <= 0)
                return r;

        if (a.ignore) {
                fprintf(stderr,
                        "radaemon-udev: %s: RADAEMON_IGNORE is set by a udev rule; leaving it alone.\n",
                        arg_name);
                return 0;
        }

        r = arg_bdi ? 0 : radaemon_udev_fleet(&a);
        if (r < 0)
                return r;

        r = arg_bdi ? decide_bdi(config, &b, beneath_kb, &a, &decision, &restored)
                    : decide(config, &a, &decision, &restored);
        if (r < 0)
                return r;

        if (decision.kb == 0) {
                fprintf(stderr, "radaemon-udev: %s: %s\n", arg_name, decision.reason);
                return 0;
        }

        if (restored) {
                fprintf(stderr,
                        "radaemon-udev: %s: radaemon restored every disk to its value before radaemon; "
                        "leaving it alone until 'racontrol reload'.\n",
                        arg_name);
                print_original(&a);
                return 0;
        }

        if (config->mode == RA_MODE_OBSERVE) {
                fprintf(stderr,
                        "radaemon-udev: %s: would set read_ahead_kb %" PRIu32 " -> %" PRIu32
                        " KiB (%s, on %s; observe mode): %s\n",
                        arg_name, a.read_ahead_kb, decision.kb, ra_source_to_string(decision.source),
                        event_name(), decision.reason);
                print_original(&a);
                return 0;
        }

        return apply(sysfd, arg_bdi ? RA_APPLY_BDI_ATTR : RA_APPLY_DISK_ATTR, &a, &decision);
}

int main(int argc, char *argv[]) {
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        return run() < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
