/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include "ra-calib.h"
#include "ra-macro.h"

/*
 * What radaemon remembers about a device across restarts and re-plugs: the
 * value it had before radaemon first touched it, pins, and what was learned
 * from its reads, keyed
 * by its stable identity (see ra_device_identity()). The file is text, one
 * device a line:
 *
 *     version 2
 *     device loop:/srv/disk\x20one.img original=2560 pin=1024 learned=2048
 *     more loop:/srv/disk\x20one.img seen=1764150000
 *     more wwn:0x5000c500a1b2c3d4 traced=1764150000:262:261120:0:4/14234,16/50176
 *     device wwn:0x5000c500a1b2c3d4 calibrated=1764150000:250:263671:0:4/15723,16/45120
 *
 * (calibrated=: when, the command cost in µs, the bandwidth in KiB/s, a
 * disk's jump in µs, then the measured curve, KiB/KiB per second: see
 * ra_calib_format(); traced=, in the same form: the model fitted from the
 * device's own requests, ra_calib_trace_fit(), kept beside a calibration
 * but used only where none ran)
 *
 * and vm.page-cluster, which is one value for the whole system, on a line of
 * its own (learned per class of swap device; 0 is a value, not "none"):
 *
 *     swap original=3 pin=0 learned-rotational=5
 *
 * A "more" line holds the keys added since version 1 (seen=: when the device
 * was last there, seconds since the epoch; traced=, above; owner=: the user
 * who made it, for RA_STATE_USER_QUOTA). The release before version 2
 * dropped a whole line for one key it did not know, and skips a line it does
 * not know with a warning: on their own line, the new keys cost it nothing
 * of the device line, pin and original included.
 *
 * What this release does not know is kept and written back as it was: a
 * line whose first word is unknown, a key that is unknown (on its line). A
 * bad value loses that key only.
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
        RaCalib traced;          /* the model from its traced requests; traced.when 0: none */
        uint64_t seen;           /* when the device was last there, in seconds; 0: not known yet */
        bool user_made;          /* a user, not root, made it (a FUSE mount's user_id=)... */
        uid_t owner;             /* ...this one: its entries count against RA_STATE_USER_QUOTA */
        char *unknown;           /* keys of a later release on the "device" line, as they were; NULL: none */
        char *unknown_more;      /* ...and on the "more" line */
        unsigned lines_read;     /* while a file is parsed: its lines read so far (ra-state-text.c) */
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
        /* entries by identity: slot i holds an index + 1, 0 when free (ra-state.c) */
        size_t *index;
        size_t index_size;
        /*
         * Restore() put every disk back: radaemon and its udev helper write
         * nothing until a reload ends it. A line "restored" in the file.
         */
        bool restored;
        RaStateSwap swap;
        char *unknown_swap;   /* keys of a later release on the "swap" line */
        char **unknown_lines; /* lines of a later release, as they were */
        unsigned version;     /* of the file read; 0: none given (before version 2) */
} RaState;

/* The format this release writes. */
#define RA_STATE_VERSION 2u

/* Entries beyond this are forgotten, users' and the oldest unpinned first (ra_state_forget()). */
#define RA_STATE_MAX_ENTRIES 10000u

/*
 * What users control is bounded, for radaemon runs as root and manages the
 * FUSE mounts any user makes, named as the user likes (docs/decisions.md
 * says why these numbers):
 *
 *  - an identity longer than RA_STATE_IDENTITY_MAX bytes as the file writes
 *    it (escaped) is not stored unless pinned: the device is tuned, its
 *    values kept for this run only;
 *  - of what one user made, the RA_STATE_USER_QUOTA entries seen last are
 *    stored, and those pinned besides;
 *  - a save writes at most RA_STATE_BUDGET bytes (ra_state_format() says
 *    what goes first), pins excepted.
 */
#define RA_STATE_IDENTITY_MAX 1024u
#define RA_STATE_USER_QUOTA 16u
#define RA_STATE_BUDGET (1024u * 1024)

/*
 * A file bigger than this is not one radaemon wrote: only its pins,
 * originals and what was seen are read from it. A line longer than
 * RA_STATE_LINE_MAX (a pinned identity of PATH_MAX bytes, escaped, and its
 * keys) is skipped. Either way the file is read in pieces, in bounded memory.
 */
#define RA_STATE_MAX_BYTES (64u * 1024 * 1024)
#define RA_STATE_LINE_MAX (64u * 1024)

int ra_state_new(RaState **ret);
RaState *ra_state_free(RaState *s);
RA_DEFINE_CLEANUP(RaState, ra_state_free)

/*
 * Parses the text of a state file into s, in time linear in its length. A
 * bad value is reported in *errors as "line N: message" and dropped, its
 * line kept; a line that cannot be read at all (no identity, a NUL byte) is
 * skipped. The return is -EINVAL when there was any.
 */
int ra_state_parse(RaState *s, const char *text, size_t len, char ***errors);

/* The same, reading only the entries of identities (NULL-terminated): see ra_state_load_only(). */
int ra_state_parse_only(RaState *s, const char *text, size_t len, const char *const *only, char ***errors);

/*
 * Reads the state file open at fd in pieces, as ra_state_parse_only() reads
 * text (only may be NULL). What was read before an error stays in s.
 */
int ra_state_parse_fd(RaState *s, int fd, const char *const *only, char ***errors);

/* Reads <dir>/state; a missing file is an empty state. What was read before an error stays in s. */
int ra_state_load(RaState *s, const char *dir, char ***errors);

/*
 * The same, reading only the entries of identities (NULL-terminated), the
 * swap line and "restored": for a reader that never saves, such as the udev
 * helper, and needs one device of many thousands.
 */
int ra_state_load_only(RaState *s, const char *dir, const char *const *identities, char ***errors);

/*
 * Removes the temporary files a crash during ra_state_save() left behind, and
 * makes an existing file readable by its owner only (it names serials and
 * mount points). For the one process that saves, at its start.
 */
int ra_state_tidy(const char *dir);

/*
 * radaemon started with --observe says so in <dir>/observing while it runs,
 * so that its udev helper writes nothing either: the helper reads the
 * configuration, not radaemon's command line. A crash leaves the file until
 * the next start, which errs on the side of writing nothing.
 */
#define RA_STATE_OBSERVING "observing"
/*
 * One daemon per state directory: the lock file is locked (an open file
 * description lock) for as long as ret_fd stays open, and holds that
 * daemon's pid. -EBUSY when another holds it, with *ret_holder its pid
 * (0 where that file does not tell).
 */
#define RA_STATE_LOCK "lock"
int ra_state_lock(const char *dir, int *ret_fd, pid_t *ret_holder);
int ra_state_mark_observing(const char *dir, bool observing);
bool ra_state_observing(const char *dir);

/*
 * The text ra_state_parse() reads back: only what is meant to last, within
 * RA_STATE_USER_QUOTA and RA_STATE_BUDGET. Over the budget, what goes first
 * is the entries without a pin nor an original (learned values,
 * calibrations), then those with an original, each the least recently seen
 * first; a pin is never dropped. radaemon marks every device present seen
 * before its saves at an interval's end, so their originals go last.
 */
int ra_state_format(const RaState *s, char **ret);

/*
 * Writes <dir>/state so that a crash at any moment leaves either the old or
 * the new file: a temporary file, fsync, rename, fsync of the directory.
 * ret_replaced (may be NULL) says whether the rename happened: an error with
 * it set means the new file is in place but its durability unconfirmed (the
 * directory's fsync failed), so the caller must not act as if nothing changed.
 */
int ra_state_save(const RaState *s, const char *dir, bool *ret_replaced);

/* identity as the file writes it: printable ASCII, which any client can show. */
int ra_state_escape_identity(const char *identity, char **ret);

/* The length of that, in bytes, for RA_STATE_IDENTITY_MAX. */
size_t ra_state_escaped_length(const char *identity);

RaStateEntry *ra_state_find(const RaState *s, const char *identity);
int ra_state_ensure(RaState *s, const char *identity, RaStateEntry **ret);

/*
 * identity's device is there at now (seconds since the epoch). What was seen
 * moves by a day or more at a time: returns 1 when it moved and the entry is
 * one written to the file (worth a save), 0 otherwise.
 */
int ra_state_touch(RaState *s, const char *identity, uint64_t now);

/*
 * Forgets what is worth keeping no more: an entry not seen for max_age
 * seconds (0: kept however old), then, while there are more than
 * max_entries, those not stored, then those users made, then the rest, each
 * the oldest first. A pinned entry is never forgotten. An entry not known to be
 * seen (from a file before version 2) counts as seen at now. Sets
 * *ret_expired and *ret_dropped (may be NULL) to the number forgotten for
 * each reason.
 */
void ra_state_forget(RaState *s, uint64_t now, uint64_t max_age, size_t max_entries, size_t *ret_expired,
                     size_t *ret_dropped);

/*
 * Whether e is written to the file. A file system mounted under /tmp,
 * /var/tmp, /run/user or /dev/shm (an AppImage's FUSE mount in
 * /tmp/.mount_XXXXXX) gets a new identity at every mount: its original is
 * kept for this run only, unless it is pinned or learned. Nor is one whose
 * identity is longer than RA_STATE_IDENTITY_MAX, unless pinned.
 */
bool ra_state_entry_is_stored(const RaStateEntry *e);

/* The pin in force for identity: this run's, else the stored one; 0 for none. */
uint32_t ra_state_pin(const RaState *s, const char *identity);

/* What was learned for identity; 0 for nothing. */
uint32_t ra_state_learned(const RaState *s, const char *identity);

/* What a calibration measured of identity; NULL when it never was. */
const RaCalib *ra_state_calib(const RaState *s, const char *identity);

/* identity's cost model: its calibration, else the model from its traced requests; NULL: neither. */
const RaCalib *ra_state_cost_model(const RaState *s, const char *identity);

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

/* An empty swap line (-1 everywhere), and whether w is one. */
void ra_state_swap_init(RaStateSwap *w);
bool ra_state_swap_is_empty(const RaStateSwap *w);

/* The page-cluster pin in force: this run's, else the stored one; -1 for none. */
int ra_state_swap_pin(const RaState *s);
