/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * A fleet's values as a udev hwdb fragment: what one machine learned for a
 * disk, keyed by the disk's model, so that every disk of that model on every
 * machine with the file starts there (RADAEMON_FLEET_KB). Pure formatting,
 * for racontrol export and the tests.
 *
 * 60-radaemon.rules looks up
 *
 *     radaemon:v<ID_VENDOR>:m<ID_MODEL>:r<ID_REVISION>:
 *
 * (a field empty where udev does not say), and a record matches it with
 *
 *     radaemon:v<vendor>:m<model>:r<revision or *>:*
 *
 * hwdb matches are shell globs whose escapes its lookup does not honour, and
 * '#' starts a comment even inside a match: every byte that is not plainly
 * safe becomes '?' (any one byte), a run of bytes beyond ASCII '*'. A match
 * so made is a little wider than the model, never narrower. The ":*" at the
 * end leaves room for fields a later rule may add.
 */

#define RA_FLEET_PREFIX "radaemon:"

/* One disk to export. Strings may be NULL or "" where unknown. */
typedef struct RaFleetEntry {
        const char *name;     /* kernel name, "sdb" */
        const char *identity; /* "serial:…", for the comment */
        const char *vendor;
        const char *model;
        const char *revision;
        uint32_t kb;
        const char *reason; /* one sentence: why kb */
} RaFleetEntry;

/*
 * The hwdb match for a model; without with_revision, any firmware revision
 * matches. -EINVAL when there is no model (loop and virtio disks have none),
 * -ENOMEM.
 */
int ra_fleet_match(const char *vendor, const char *model, const char *revision, bool with_revision,
                   char **ret);

/*
 * One record: a comment saying which disk, on which host, exported when
 * (as given) and why, then the match, then " RADAEMON_FLEET_KB=<kb>", then an
 * empty line. Newlines and other control characters in the comment become
 * spaces. -EINVAL without a model or with a kb radaemon would not take.
 */
int ra_fleet_format_entry(const RaFleetEntry *e, bool with_revision, const char *host, const char *when,
                          char **ret);

/* Text for a comment line: s with every control character replaced by a space. */
char *ra_fleet_comment_text(const char *s);
