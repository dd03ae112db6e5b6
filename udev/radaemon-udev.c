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
 * the environment, two small files, and udev's database of the disks
 * beneath a dm or md device or a btrfs: read as radaemon reads them, through
 * common/ra-inputs.c; what is left here is the command line, the messages
 * and the write. Stdout is for IMPORT{program} only:
 * KEY=value lines; everything else goes to stderr, which udev logs at debug
 * level.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <libudev.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ra-apply.h"
#include "ra-inputs.h"
#include "ra-util.h"
#include "radaemon-udev-args.h"
#include "radaemon-udev-fleet.h"

static int load_config(RaConfig **ret) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        int r;

        /* As radaemon at its start: a bad line costs its section, a bad global key any write. */
        r = ra_config_read_lenient(arg_config, ret, &errors, NULL);
        for (size_t i = 0; errors && errors[i]; i++)
                fprintf(stderr, "radaemon-udev: %s\n", errors[i]);
        if (r > 0)
                r = 0;
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

RA_DEFINE_CLEANUP(struct udev, udev_unref)

/* The udev event being handled, for messages; "request" when run by hand. */
static const char *event_name(void) {
        return getenv("ACTION") ?: "request";
}

/*
 * Reads the disk, or the btrfs bdi being mounted, as radaemon reads it
 * (common/ra-inputs.c): its own properties from this event's environment,
 * those of the devices beneath from udev's database. Returns 1 when there is
 * something to decide, 0 to leave it (to radaemon), or a negative errno.
 */
static int read_inputs(const RaConfig *config, struct udev *udev, RaInputs *in) {
        const RaPropertySource src = {
                .get = get_env,
                .read_beneath = ra_stack_read_leaf_udev,
                .beneath_userdata = udev,
        };
        const char *keys[] = { arg_name, "btrfs", NULL }, *devtype = getenv("DEVTYPE"), *bad = NULL,
                   *bad_attr = NULL;
        int r;

        if (arg_bdi) {
                /*
                 * A bdi's "add" comes while its file system is being mounted, before mountinfo
                 * shows it: only btrfs can be told from sysfs then.
                 */
                if (strncmp(arg_name, "btrfs-", 6) != 0 || !ra_config_manages_bdi(config, keys))
                        return 0;
                r = ra_inputs_read_btrfs(in, "/sys", arg_name, &src, &bad);
                if (r == 0 && !in->bdi.uuid)
                        fprintf(stderr,
                                "radaemon-udev: %s: no btrfs in /sys/fs/btrfs links it yet; radaemon decides "
                                "at the mount.\n",
                                arg_name);
        } else {
                /* The rule asks for disks only; a partition's value is its disk's. */
                if (!ra_config_manages(config, arg_name) || (devtype && strcmp(devtype, "disk") != 0))
                        return 0;
                r = ra_inputs_read_disk(in, "/sys", arg_name, &src, &bad_attr, &bad);
                if (r < 0 && r != -ENOMEM)
                        fprintf(stderr, "radaemon-udev: %s: cannot read %s: %s\n", arg_name, bad_attr ?: "?",
                                strerror(-r));
                if (r > 0 && in->stack_read < 0 && in->stack_read != -EAGAIN)
                        fprintf(stderr,
                                "radaemon-udev: %s: cannot read its stack (%s), deciding from its own "
                                "attributes: %s\n",
                                arg_name, in->stack_bad_path ?: "?", strerror(-in->stack_read));
        }
        if (bad)
                fprintf(stderr,
                        "radaemon-udev: %s: ignoring %s=%s from udev: not a multiple of 4 from %u to %u "
                        "(KiB) or a boolean.\n",
                        arg_name, bad, getenv(bad), RA_KB_MIN, RA_KB_LIMIT);
        return r;
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
        _cleanup_(ra_inputs_clear) RaInputs in = {};
        _cleanup_(ra_state_freep) RaState *state = NULL;
        _cleanup_(ra_strv_freep) char **candidates = NULL;
        _cleanup_(udev_unrefp) struct udev *udev = udev_new();
        _cleanup_close_ int sysfd = -1;
        char path[PATH_MAX];
        RaDecision decision;
        RaSettings settings;
        int r;

        if (!udev)
                return -ENOMEM;
        r = load_config(&config);
        if (r < 0) {
                fprintf(stderr, "radaemon-udev: %s: the configuration is invalid, leaving it alone.\n",
                        arg_name);
                return r;
        }

        /* The same disks and bdis radaemon would manage, and no other. */
        r = read_inputs(config, udev, &in);
        if (r <= 0)
                return r;

        if (in.attrs.ignore) {
                fprintf(stderr,
                        "radaemon-udev: %s: RADAEMON_IGNORE is set by a udev rule; leaving it alone.\n",
                        arg_name);
                return 0;
        }

        r = arg_bdi ? 0 : radaemon_udev_fleet(&in.attrs);
        if (r < 0)
                return r;

        /* One read of the state file: the lines of the object and its leaves only. */
        r = ra_inputs_candidates_udev(&in, udev, &candidates);
        if (r < 0)
                return r;
        state = load_state(config->state_dir, (const char *const *) candidates);
        if (!state)
                return -ENOMEM;
        r = ra_inputs_identify_udev(&in, udev, state);
        if (r < 0)
                return r;
        ra_inputs_decide(config, state, &in, NULL, &settings, &decision);

        if (decision.kb == 0) {
                fprintf(stderr, "radaemon-udev: %s: %s\n", arg_name, decision.reason);
                return 0;
        }

        /* After radaemon's Restore() nothing is written until a reload; in observe mode, never. */
        if (state->restored || config->mode == RA_MODE_OBSERVE || ra_state_observing(config->state_dir)) {
                if (state->restored)
                        fprintf(stderr,
                                "radaemon-udev: %s: radaemon restored every disk to its value before "
                                "radaemon; leaving it alone until 'racontrol reload'.\n",
                                arg_name);
                else
                        fprintf(stderr,
                                "radaemon-udev: %s: would set read_ahead_kb %" PRIu32 " -> %" PRIu32
                                " KiB (%s, on %s; observe mode): %s\n",
                                arg_name, in.attrs.read_ahead_kb, decision.kb,
                                ra_source_to_string(decision.source), event_name(), decision.reason);
                print_original(&in.attrs);
                return 0;
        }

        (void) snprintf(path, sizeof(path), arg_bdi ? "/sys/class/bdi/%s" : "/sys/class/block/%s", arg_name);
        sysfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sysfd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return apply(sysfd, arg_bdi ? RA_APPLY_BDI_ATTR : RA_APPLY_DISK_ATTR, &in.attrs, &decision);
}

int main(int argc, char *argv[]) {
        int r;

        r = radaemon_udev_parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        return run() < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
