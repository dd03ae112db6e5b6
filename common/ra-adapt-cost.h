/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ra-adapt.h"

/*
 * The adaptive policy's accounts in the device's time, from its cost model
 * (RaAdaptLimits.calib), for ra-adapt.c alone: what random reads' windows
 * waste, and what a sequential workload would save with a larger window.
 */

/*
 * Growth on the model. A stream reading ahead W at a time pays a command
 * for every W: its reads of S bytes cost S / W x c + S / B of the device's
 * time. A larger window W' saves (S / W - S / W') x c, the commands it
 * does not make. The window the model wants is the smallest doubling of
 * the one in force whose commands cost at most 5 % of a stream's time,
 * c / (c + W' / B) (the calibration's own rule, 95 % of the bandwidth:
 * ra_calib_stream_kb()), and it is taken when what it saves is
 * RA_ADAPT_GROW_PERCENT or more of the time the interval's sequential reads
 * cost: the share within which the trials call two windows equal
 * (RA_ADAPT_GAIN_TIE), so the model grows only where a trial would keep the
 * larger window. Measured: bench/devmodel's ssd-ctrl (seed 004's SSD behind
 * a heavy controller, 250 us a command, 270 MB/s) spends 34 % of a stream's
 * time on commands at 128 KiB, 11 % at 512 and 3 % at 2048, so 128 KiB grows
 * to 2048 at once (saving 32 %) and 512 KiB too (saving 9 %); the rotational
 * disk assumed (50 us, 105 MB/s) spends 4 % at 128 KiB, and a SATA SSD
 * assumed (100 us, 500 MB/s) 27 % at 128 and 4 % at 1024.
 */
#define RA_ADAPT_GROW_PERCENT 5
/*
 * The model tells what a window is worth to the interval's sequential reads
 * only when they cost the device this share of the interval or more (by the
 * model): then a saving of RA_ADAPT_GROW_PERCENT is 5 ms a second or more,
 * and the reads are a workload, not a program's few files. Streams that fill
 * their windows while the device, by its model, sits idle most of the time
 * are held back by something else (a cgroup's throttle, the CPU, a pipe):
 * there the model cannot tell, and a trial measures. Measured: a job of
 * `dd bs=64k` readers on ssd-ctrl (tests/busy-grow.sh) costs it 50-80 % of
 * each second by its traced model (100-180 MB/s through loop and FUSE at
 * 128 and 512 KiB); tests/pagecache.sh's tar on a loop device throttled by a
 * cgroup to a disk's 150 IOPS reads 30 MB/s, 0.6 % of its model's time (5 us
 * a command, 7 GB/s: the throttle is above the requests traced); a cold
 * python3 start, about 178 reads of 128 KiB a second, costs a SATA SSD 5 %.
 */
#define RA_ADAPT_GROW_BUSY_PERCENT 10

/*
 * Streams that take turns on a disk whose head moves (a media server's
 * clients, a backup beside a build) pay a jump each time the disk goes back
 * to one after another's request: a window of W costs a command, the jump
 * and W / B, and a window twice as large takes half the turns. The turns
 * are counted on the block requests (RaTraceSummary.switches), at most one
 * a window, and what each costs is timed on the disk's own requests that
 * jumped (RaCalibTurns): their time less their commands and transfer by the
 * model (measured, or else assumed: a slower transfer than a disk's, so
 * the jump is rather underestimated). A turn that costs under
 * RA_ADAPT_TURN_MIN_US is no jump (a "rotational" device that is not, a
 * disk answering from its cache), and the model alone decides. The window
 * wanted is the smallest doubling whose command and turn cost at most 5 %
 * of a window's time, as for commands alone. Measured: bench/devmodel's
 * hdd-7200 read by four streams in turns (the user suite's pdd-multi) reads
 * 44 MB/s at 512 KiB, a window each 11.9 ms of which its 512 KiB take
 * 2.6 ms at the 205 MB/s one stream reads (9.3 ms a turn; never
 * calibrated, the model assumed says 5 ms and the turn 6.9), 87 at 2048
 * and 109 at 8192. A btrfs bdi's streams take their turns on the disks
 * beneath, whose requests are traced: the disks keep the turns for the bdi
 * (daemon/ra-observe.c). Not counted: a read's wait for a write before it
 * (only reads are traced), and the turns of a dm or md device's bios, which
 * are not timed (its disks beneath are, and grow; the device on top is
 * decided by what it is and by trials).
 */
#define RA_ADAPT_TURN_MIN_US 1000

/*
 * The device's cost model: what was measured of it (at two sizes or more,
 * or given), or what is assumed of its kind. A flash device's traced fit
 * with no command cost is not taken (ra-adapt-cost.c).
 */
void ra_adapt_cost_model(const RaAdaptLimits *l, RaCalib *ret);

/*
 * The model can tell what a window costs: measured (calibrated, or traced
 * from the device's own requests) at two sizes or more, so that a command's
 * cost is told apart from the transfer. One size alone gives no command cost,
 * and neither does a flash device's traced fit that found none.
 */
bool ra_adapt_cost_sure(const RaAdaptLimits *l);

/*
 * The model tells what windows are worth to the interval o whose
 * sequential reads made reads windows (or requests) of bytes in all: it is
 * sure (above), or the disk's turns were timed (RA_ADAPT_TURN_MIN_US), and
 * the reads cost the device RA_ADAPT_GROW_BUSY_PERCENT of the interval.
 */
bool ra_adapt_cost_tells(const RaAdaptLimits *l, const RaObservation *o, uint64_t reads, uint64_t bytes);

/*
 * The device's time the interval's random reads spent on their windows:
 * each read (the mean of what they read) against the same read at the
 * smallest window, min_kb, which reads what was asked for or that window,
 * whichever is more. A jump costs the same at any window and is left out.
 */
double ra_adapt_cost_random_waste_usec(const RaObservation *o, const RaAdaptLimits *l, uint32_t min_kb);

/*
 * The window the model wants for such an interval read under cur_kb, up to
 * hi_kb (see RA_ADAPT_GROW_PERCENT), with the reason for it; 0 when the
 * model cannot tell, or no larger window saves enough.
 */
uint32_t ra_adapt_cost_grow_kb(const RaAdaptLimits *l, const RaObservation *o, uint64_t reads,
                               uint64_t bytes, uint32_t cur_kb, uint32_t hi_kb,
                               char reason[static RA_REASON_MAX]);
