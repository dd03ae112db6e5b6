/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "ra-stack.h"
#include "ra-util.h"

#define KiB UINT64_C(1024)

/*
 * What dm-crypt's CPU costs to decrypt a MiB read (aes-xts, LUKS2's
 * default): 1,000 us, stated, not measured on each machine (the udev
 * helper must decide as radaemon does, and neither may spend CPU time on
 * every event). `openssl speed -evp aes-256-xts -bytes 1048576` on one core
 * of this repository's build machine (AMD EPYC, AES-NI) did 3.75 GB/s,
 * 280 us a MiB; 1,000 us leaves room for older cores, for the kernel's
 * work per bio, and for emulators. A larger figure asks a larger window
 * (a longer wait to cover) and caps the bandwidth lower.
 */
#define CRYPT_US_PER_MIB 1000u
/* The most one bio of a window carries: BIO_MAX_VECS, 256 pages. */
#define BIO_MAX_KB 1024u

/* One device's model, and the stripes a window must fill at least. */
typedef struct Cost {
        bool known;
        RaCalib model;
        uint64_t floor_kb; /* a whole chunk of every data disk a read is striped over */
} Cost;

static uint32_t u32_sat(uint64_t v) {
        return v > UINT32_MAX ? UINT32_MAX : (uint32_t) v;
}

/* What a window of one stream needs of a model: its command cost times its bandwidth. */
static uint64_t demand(const RaCalib *c) {
        return (uint64_t) c->command_us * c->bandwidth_kb_s;
}

static Cost cost_of(const RaStack *s, const RaCalib *const *leaf_calib, size_t index, unsigned depth,
                    Cost memo[], bool done[]);

/* As ra_calib_prior() tells a head that moves (ra_calib_seeks()), where any leaf says it is rotational. */
static bool seeks(const RaStack *s, const RaCalib *m) {
        bool rotational = false;

        for (size_t i = 0; i < s->n_leaves; i++)
                rotational = rotational || ra_stack_leaf(s, i)->rotational;
        return ra_calib_seeks(m, rotational);
}

/*
 * dm-crypt decrypts a read's bio when it completes, on a kcryptd worker
 * while the device reads the rest of the window: the decryption of the
 * window's last bio is waited for as a command is, and one CPU's rate
 * caps the bandwidth.
 */
static RaCalib crypt_over(const RaStack *s, const RaStackDevice *d, RaCalib m) {
        uint64_t bio_kb =
                d->max_sectors_kb > 0 && d->max_sectors_kb < BIO_MAX_KB ? d->max_sectors_kb : BIO_MAX_KB;
        uint64_t cpu_kb_s = KiB * 1000000 / CRYPT_US_PER_MIB;

        /*
         * A disk whose head moves is decided by what a jump costs against a
         * command (ra_calib_prior()), which the CPU's time must not blur.
         */
        if (!seeks(s, &m))
                m.command_us = u32_sat(m.command_us + bio_kb * CRYPT_US_PER_MIB / KiB);
        if (m.bandwidth_kb_s > cpu_kb_s)
                m.bandwidth_kb_s = (uint32_t) cpu_kb_s;
        return m;
}

/* A device with slaves: their models, combined as the device spreads a read over them. */
static Cost cost_over_slaves(const RaStack *s, const RaCalib *const *leaf_calib, const RaStackDevice *d,
                             unsigned depth, Cost memo[], bool done[]) {
        uint64_t data = d->kind == RA_STACK_MD && d->md_data_disks > 1 ? d->md_data_disks : 1;
        uint64_t floor = 0, chunk_kb = d->md_chunk_bytes / KiB;
        RaCalib striped = { .bandwidth_kb_s = UINT32_MAX }, best = {}, asks_most = {};

        for (size_t i = 0; i < d->n_slaves; i++) {
                Cost c = cost_of(s, leaf_calib, d->slaves[i].device, depth + 1, memo, done);
                const RaCalib *o = &c.model;

                if (!c.known)
                        return (Cost){};
                floor = floor > c.floor_kb ? floor : c.floor_kb;
                if (i == 0 || o->bandwidth_kb_s > best.bandwidth_kb_s ||
                    (o->bandwidth_kb_s == best.bandwidth_kb_s && o->command_us < best.command_us))
                        best = *o;
                if (i == 0 || demand(o) > demand(&asks_most))
                        asks_most = *o;
                striped.when = o->when > striped.when ? o->when : striped.when;
                striped.command_us = o->command_us > striped.command_us ? o->command_us : striped.command_us;
                striped.jump_us = o->jump_us > striped.jump_us ? o->jump_us : striped.jump_us;
                if (o->bandwidth_kb_s < striped.bandwidth_kb_s)
                        striped.bandwidth_kb_s = o->bandwidth_kb_s;
        }

        if (data > 1) {
                /*
                 * Striped: every data disk reads its share of a window at once,
                 * so the slowest paces the stripe (the bandwidths add, for
                 * equal disks), and a command costs what the slowest one does.
                 */
                striped.bandwidth_kb_s = u32_sat(data * striped.bandwidth_kb_s);
                floor = data * (floor > chunk_kb ? floor : chunk_kb);
                return (Cost){ .known = true, .model = striped, .floor_kb = floor };
        }
        if (d->kind == RA_STACK_MD && d->md_level == RA_MD_LEVEL_RAID1)
                /* A mirror reads one stream from one disk, and md picks the one that serves it best. */
                return (Cost){ .known = true, .model = best, .floor_kb = floor };
        if (d->kind == RA_STACK_DM_CRYPT)
                return (Cost){ .known = true, .model = crypt_over(s, d, asks_most), .floor_kb = floor };
        /* LVM, linear md, multipath: a read goes to any one of them, so the one that asks most. */
        return (Cost){ .known = true, .model = asks_most, .floor_kb = floor };
}

static Cost cost_of(const RaStack *s, const RaCalib *const *leaf_calib, size_t index, unsigned depth,
                    Cost memo[], bool done[]) {
        const RaStackDevice *d = &s->devices[index];

        if (done[index])
                return memo[index];
        /* A stack built by hand may loop; the reader's never does. */
        if (d->n_slaves > 0 && depth >= RA_STACK_DEPTH_MAX)
                return (Cost){};

        memo[index] = (Cost){};
        if (d->n_slaves > 0)
                memo[index] = cost_over_slaves(s, leaf_calib, d, depth, memo, done);
        else
                for (size_t i = 0; i < s->n_leaves; i++)
                        if (s->leaves[i] == index && leaf_calib[i] && leaf_calib[i]->when > 0 &&
                            leaf_calib[i]->bandwidth_kb_s > 0)
                                memo[index] = (Cost){
                                        .known = true,
                                        .model = {
                                                .when = leaf_calib[i]->when,
                                                .command_us = leaf_calib[i]->command_us,
                                                .bandwidth_kb_s = leaf_calib[i]->bandwidth_kb_s,
                                                .jump_us = leaf_calib[i]->jump_us,
                                        },
                                };
        done[index] = true;
        return memo[index];
}

bool ra_stack_cost(const RaStack *s, const RaCalib *const *leaf_calib, RaCalib *ret,
                   uint32_t *ret_floor_kb) {
        Cost memo[RA_STACK_DEVICES_MAX];
        bool done[RA_STACK_DEVICES_MAX] = {};
        Cost top;

        if (!s || s->n_devices == 0 || s->n_devices > RA_STACK_DEVICES_MAX || ra_stack_top(s)->n_slaves == 0)
                return false;
        top = cost_of(s, leaf_calib, 0, 0, memo, done);
        if (!top.known)
                return false;
        *ret = top.model;
        if (ret_floor_kb)
                *ret_floor_kb = u32_sat(top.floor_kb);
        return true;
}

/* "sdc's calibration", "the calibrations of sda, sdb", cut where the names would not fit. */
static void name_leaves(const RaStack *s, char *buf, size_t size) {
        size_t len;

        if (s->n_leaves == 1) {
                (void) snprintf(buf, size, "%s's calibration", ra_stack_leaf(s, 0)->name);
                return;
        }
        (void) snprintf(buf, size, "the calibrations of");
        for (size_t i = 0; i < s->n_leaves; i++) {
                len = strlen(buf);
                if (len + strlen(ra_stack_leaf(s, i)->name) + 8 >= size) {
                        (void) snprintf(buf + len, size - len, " ...");
                        return;
                }
                (void) snprintf(buf + len, size - len, "%s %s", i > 0 ? "," : "", ra_stack_leaf(s, i)->name);
        }
}

/* How the top put its leaves' models together, for the reason. */
static void how(const RaStackDevice *top, char *buf, size_t size) {
        buf[0] = '\0';
        if (top->kind == RA_STACK_DM_CRYPT)
                (void) snprintf(buf, size, ", plus dm-crypt's %u us of CPU a MiB", CRYPT_US_PER_MIB);
        else if (top->kind == RA_STACK_MD && top->md_data_disks > 1)
                (void) snprintf(buf, size, ", striped over %" PRIu32 " data disks", top->md_data_disks);
        else if (top->kind == RA_STACK_MD && top->md_level == RA_MD_LEVEL_RAID1)
                (void) snprintf(buf, size, ", a mirror read from its fastest");
}

bool ra_stack_calibrated(const RaStack *s, const RaCalib *const *leaf_calib, const RaDeviceAttrs *top_attrs,
                         RaBounds bounds, RaDecision *ret) {
        RaDeviceAttrs a = *top_attrs;
        char leaves[96], joined[48], why[RA_REASON_MAX];
        uint32_t floor_kb = 0, cap;
        RaCalib model;

        if (!ra_stack_cost(s, leaf_calib, &model, &floor_kb) || top_attrs->size_bytes == 0)
                return false;

        /* The head that moves is a disk's beneath: the top is rotational where one is. */
        a.rotational = false;
        for (size_t i = 0; i < s->n_leaves; i++)
                a.rotational = a.rotational || ra_stack_leaf(s, i)->rotational;
        ra_calib_prior(&model, &a, bounds, ret);

        /* "Calibrated: ..." says the model; the leaves go before it. */
        name_leaves(s, leaves, sizeof(leaves));
        how(ra_stack_top(s), joined, sizeof(joined));
        (void) snprintf(why, sizeof(why), "%s",
                        strncmp(ret->reason, "Calibrated: ", 12) == 0 ? ret->reason + 12 : ret->reason);
        ra_reason_format(ret->reason, "From %s beneath it%s: %s", leaves, joined, why);

        /* A window that reaches fewer disks than the array is striped over leaves some idle. */
        cap = ra_policy_learned_cap_kb(top_attrs->size_bytes);
        floor_kb = floor_kb < cap ? floor_kb : cap;
        if (ret->kb < floor_kb && ra_policy_clamp_kb(floor_kb, bounds) > ret->kb) {
                size_t len = strlen(ret->reason);

                ret->kb = ra_policy_clamp_kb(floor_kb, bounds);
                if (len > 0 && ret->reason[len - 1] == '.')
                        ret->reason[--len] = '\0';
                (void) snprintf(ret->reason + len, RA_REASON_MAX - len,
                                "; raised to %" PRIu32 " KiB, a whole chunk of every disk a read is striped "
                                "over.",
                                ret->kb);
        }
        return true;
}
