/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "ra-calib.h"
#include "ra-macro.h"

/*
 * What radaemon remembers about a device across restarts and re-plugs: the
 * value it had before radaemon first touched it, pins, and what was learned
 * from its reads, keyed
 * by its stable identity (see ra_device_identity()). The file is text, one
 * device a line:
 *
 *     device loop:/srv/disk\x20one.img original=2560 pin=1024 learned=2048
 *     device wwn:0x5000c500a1b2c3d4 calibrated=1764150000:250:263671:0:4/15723,16/45120
 *
 * (calibrated=: when, the command cost in µs, the bandwidth in KiB/s, a
 * disk's jump in µs, then the measured curve, KiB/KiB per second: see
 * ra_calib_format())
 *
 * and vm.page-cluster, which is one value for the whole system, on a line of
 * its own (learned per class of swap device; 0 is a value, not "none"):
 *
 *     swap original=3 pin=0 learned-rotational=5
 *
 * Identities are escaped: bytes outside printable ASCII, blanks and "\" are
 * written as \xHH. Lines starting with "#" are comments.
 */

#define RA_STATE_FILE "state"

typedef struct RaStateEntry {
        char *identity;
        uint32_t pin_kb;         /* a pin that survives restarts; 0: none */
        uint32_t runtime_pin_kb; /* a pin for this run of the daemon only; never stored */
        uint32_t learned_kb;     /* what the adaptive policy learned; 0: nothing */
        uint32_t original_kb;    /* read_ahead_kb before radaemon first wrote it... */
        bool has_original;       /* ...when known (0 is a value someone may have set) */
        RaCalib calib;           /* what a calibration measured; calib.when 0: never calibrated */
} RaStateEntry;

/* vm.page-cluster; -1 for "none" in the ints. */
typedef struct RaStateSwap {
        int pin;           /* survives restarts */
        int runtime_pin;   /* this run only; never stored */
        int learned[4];    /* per RaSwapClass (ra-swap.h) */
        int original;      /* before radaemon first wrote it... */
        bool has_original; /* ...when known */
} RaStateSwap;

typedef struct RaState {
        RaStateEntry *entries;
        size_t n_entries;
        /*
         * Restore() put every disk back: radaemon and its udev helper write
         * nothing until a reload ends it. A line "restored" in the file.
         */
        bool restored;
        RaStateSwap swap;
} RaState;

int ra_state_new(RaState **ret);
RaState *ra_state_free(RaState *s);
RA_DEFINE_CLEANUP(RaState, ra_state_free)

/*
 * Parses the text of a state file into s. A bad line is reported in *errors
 * as "line N: message" and skipped, so one bad line loses one device, not
 * all of them; the return is -EINVAL when there was any.
 */
int ra_state_parse(RaState *s, const char *text, size_t len, char ***errors);

/* Reads <dir>/state; a missing file is an empty state. */
int ra_state_load(RaState *s, const char *dir, char ***errors);

/* The text ra_state_parse() reads back: only what is meant to last. */
int ra_state_format(const RaState *s, char **ret);

/*
 * Writes <dir>/state so that a crash at any moment leaves either the old or
 * the new file: a temporary file, fsync, rename, fsync of the directory.
 * ret_replaced (may be NULL) says whether the rename happened: an error with
 * it set means the new file is in place but its durability unconfirmed (the
 * directory's fsync failed), so the caller must not act as if nothing changed.
 */
int ra_state_save(const RaState *s, const char *dir, bool *ret_replaced);

RaStateEntry *ra_state_find(const RaState *s, const char *identity);
int ra_state_ensure(RaState *s, const char *identity, RaStateEntry **ret);

/* The pin in force for identity: this run's, else the stored one; 0 for none. */
uint32_t ra_state_pin(const RaState *s, const char *identity);

/* What was learned for identity; 0 for nothing. */
uint32_t ra_state_learned(const RaState *s, const char *identity);

/* What a calibration measured of identity; NULL when it never was. */
const RaCalib *ra_state_calib(const RaState *s, const char *identity);

/*
 * Records kb as identity's original value unless one is known. Returns 1
 * when it was recorded (and the state needs saving), 0 when it was known.
 */
int ra_state_remember_original(RaState *s, const char *identity, uint32_t kb);

struct RaDeviceAttrs;

/*
 * An earlier radaemon kept some devices under another identity (a dm or md
 * device under its kernel name: see ra_device_old_identity()). When nothing
 * is stored under identity, a's entry under its old one is moved to it, once:
 * the old key is gone afterwards, so the next device to get that kernel name
 * does not inherit it. Returns 1 when something moved (the state needs
 * saving), 0 when nothing did, -ENOMEM. radaemon's udev helper calls it on its own
 * copy, which it never saves, so it decides with what radaemon will keep.
 */
int ra_state_carry_over(RaState *s, const struct RaDeviceAttrs *a, const char *identity);

/* The page-cluster pin in force: this run's, else the stored one; -1 for none. */
int ra_state_swap_pin(const RaState *s);
