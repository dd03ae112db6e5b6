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
 * The udev helper (radaemon-udev, for 60-radaemon.rules) looks up
 *
 *     radaemon:v<ID_VENDOR>:m<ID_MODEL>:r<ID_REVISION>:
 *
 * (a field empty where udev does not say) in udev's hwdb itself, with the
 * properties' bytes as udev hands them over in its environment: no command
 * line of a rule stands between them and the lookup, to split them at a
 * space or end them at a quote. A record matches it with
 *
 *     radaemon:v<vendor>:m<model>:r<revision or *>:*
 *
 * and matches that one model only. How hwdb matches (sd-hwdb, the same in
 * udev's builtin, libudev and "systemd-hwdb query"): bytes are compared as
 * they are up to the first '*', '?' or '[' of a record; from there on the rest
 * of the record is an fnmatch() pattern, where '\' escapes. So a '*', '?' or
 * '[' of a model is written as a bracket, "[*]", which starts the pattern as
 * itself; a '\' as itself before that, as "\\" after. Other bytes, spaces,
 * quotes and bytes beyond ASCII included, are themselves either way: fnmatch
 * compares bytes that are not valid UTF-8 byte by byte. Some bytes no record
 * can hold: '#' ends a hwdb line (a comment starts there, even inside a
 * match), a control character would end it or be stripped from its end, and
 * a ':' in a field would let one model's record match another model whose
 * fields split at another ':'. The helper looks up no key with a ':' or a
 * control character, and export leaves such a disk out, with a comment.
 * The ":*" at the end leaves room for fields a later rule may add.
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
 * The key the helper looks up for a disk, in *ret. -EINVAL when there is no
 * model (loop and virtio disks have none), -EILSEQ when a field has a byte no
 * record could match exactly (see above: ':' or a control character), -ENOMEM.
 */
int ra_fleet_key(const char *vendor, const char *model, const char *revision, char **ret);

/*
 * The hwdb match for a model, that matches its key and no other; without
 * with_revision, any firmware revision matches. -EINVAL when there is no
 * model, -EILSEQ when a field has a byte no record can hold ('#', ':' or a
 * control character: the revision counts even without with_revision, as its
 * key is not looked up either), -ENOMEM.
 */
int ra_fleet_match(const char *vendor, const char *model, const char *revision, bool with_revision,
                   char **ret);

/*
 * One record: a comment saying which disk, on which host, exported when
 * (as given) and why, then the match, then " RADAEMON_FLEET_KB=<kb>", then an
 * empty line. Newlines and other control characters in the comment become
 * spaces. -EINVAL without a model or with a kb radaemon would not take,
 * -EILSEQ as ra_fleet_match().
 */
int ra_fleet_format_entry(const RaFleetEntry *e, bool with_revision, const char *host, const char *when,
                          char **ret);

/* Text for a comment line: s with every control character replaced by a space. */
char *ra_fleet_comment_text(const char *s);
