/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A device class for the bench's device model: what the device is, read from
 * a parameter file (INI), with the published source of every figure. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define DM_SOURCES_MAX 12

typedef enum DmKind {
        DM_KIND_NONE,
        DM_KIND_FLASH, /* cost = command overhead + transfer, N commands at once */
        DM_KIND_DISK,  /* seek + rotation when a command jumps; a segmented read cache */
} DmKind;

typedef struct DmParams {
        char name[64];
        char emulates[256];
        DmKind kind;
        uint64_t size;           /* bytes */
        bool rotational;         /* what queue/rotational should say */
        unsigned max_sectors_kb; /* the largest command the device takes */
        unsigned queue;          /* commands served at once (1: no command queueing) */
        double command_us;       /* per-command overhead: protocol, firmware */
        double bus_mb_s;         /* interface rate: what a cache hit costs */

        /* flash */
        double read_mb_s;
        double write_mb_s;

        /* disk */
        double rpm;
        double track_seek_ms; /* single track */
        double average_seek_ms;
        double full_seek_ms; /* full stroke */
        double outer_mb_s;   /* media rate at the outer zone (LBA 0) */
        double inner_mb_s;   /* media rate at the inner zone (the last LBA) */
        unsigned cache_segments;
        unsigned cache_segment_kb;
        double seek_exponent; /* derived: seek(x) = track + (full - track) * x^e */

        /* [source]: where each figure comes from, "key: text" */
        char sources[DM_SOURCES_MAX][512];
        unsigned n_sources;
} DmParams;

/* Parses a class file. On error returns -EINVAL and writes "file:line: what
 * is wrong" to err. The class is named after the file (hdd-7200.conf: hdd-7200). */
int dm_params_parse(FILE *f, const char *filename, DmParams *ret, char *err, size_t errlen);
int dm_params_load(const char *path, DmParams *ret, char *err, size_t errlen);

/* The params as one JSON object on f, for `bench/devmodel classes`. */
void dm_params_print_json(const DmParams *p, FILE *f);

/* The exponent e for which the weighted average over all seek lengths (a
 * datasheet's "average seek") of track + (full - track) * x^e is average. */
double dm_params_seek_exponent(double track, double average, double full);
