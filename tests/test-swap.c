/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <check.h>
#include <stdint.h>

#include "ra-config.h"
#include "ra-macro.h"
#include "ra-state.h"
#include "ra-swap.h"
#include "ra-util.h"
#include "test-helpers.h"

/* As the kernel writes it: the name padded to 40 columns, then tabs. */
static const char swaps[] = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                            "/dev/zram0                              partition\t262140\t\t1024\t\t100\n"
                            "/srv/swap\\040file                       file\t\t1048572\t\t0\t\t-2\n"
                            "/dev/sdb2                               partition\t2097148\t\t4096\t\t-3\n";

START_TEST(test_parse_swaps) {
        RaSwapArea *a = NULL;
        size_t n = 0;

        ck_assert_int_eq(ra_swap_parse_swaps(swaps, sizeof(swaps) - 1, &a, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_str_eq(a[0].filename, "/dev/zram0");
        ck_assert(!a[0].is_file);
        ck_assert_uint_eq(a[0].size_kb, 262140);
        ck_assert_uint_eq(a[0].used_kb, 1024);
        ck_assert_int_eq(a[0].priority, 100);
        ck_assert_str_eq(a[1].filename, "/srv/swap file");
        ck_assert(a[1].is_file);
        ck_assert_int_eq(a[1].priority, -2);
        ck_assert_int_eq(a[2].priority, -3);
        ra_swap_areas_free(a, n);

        /* No swap: the header alone, with or without its newline. */
        ck_assert_int_eq(ra_swap_parse_swaps("Filename\tType\tSize\tUsed\tPriority\n", 33, &a, &n), 0);
        ck_assert_uint_eq(n, 0);
        ra_swap_areas_free(a, n);
}
END_TEST

START_TEST(test_parse_swaps_bad) {
        static const char *const bad[] = {
                "",
                "\n",
                "/dev/sda2 partition 1 0 -2\n",                                     /* no header */
                "Filename Type Size Used Priority\n/dev/sda2 partition 1 0\n",      /* a column short */
                "Filename Type Size Used Priority\n/dev/sda2 partition 1 0 -2 x\n", /* one too many */
                "Filename Type Size Used Priority\n/dev/sda2 disk 1 0 -2\n",        /* unknown type */
                "Filename Type Size Used Priority\n/dev/sda2 partition 1 0 --2\n",  /* not a number */
                "Filename Type Size Used Priority\n/dev/sda2 partition -1 0 -2\n",
                "Filename Type Size Used Priority\nsda2 partition 1 0 -2\n",        /* not a path */
                "Filename Type Size Used Priority\n/a\\09 partition 1 0 -2\n",      /* a bad escape */
                "Filename Type Size Used Priority\n/a\\000 partition 1 0 -2\n",     /* a NUL */
                "Filename Type Size Used Priority\n/a partition 1 0 99999999999\n", /* overflow */
        };
        RaSwapArea *a = NULL;
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(ra_swap_parse_swaps(bad[i], strlen(bad[i]), &a, &n) == -EINVAL, "accepted: %s",
                              bad[i]);
        /* A NUL inside is not text. */
        ck_assert_int_eq(ra_swap_parse_swaps("Filename Priority\n\0", 19, &a, &n), -EINVAL);
}
END_TEST

START_TEST(test_parse_vmstat) {
        static const char text[] =
                "nr_free_pages 5000\npswpin 120\npswpout 300\nswap_ra 80\nswap_ra_hit 60\n"
                "pgfault 9\n";
        RaVmSwapStat s;

        ck_assert_int_eq(ra_swap_parse_vmstat(text, sizeof(text) - 1, &s), 0);
        ck_assert_uint_eq(s.pswpin, 120);
        ck_assert_uint_eq(s.pswpout, 300);
        ck_assert_uint_eq(s.swap_ra, 80);
        ck_assert_uint_eq(s.swap_ra_hit, 60);
        ck_assert(s.has_ra);

        /* Old kernels count no readahead. */
        ck_assert_int_eq(ra_swap_parse_vmstat("pswpin 1\npswpout 2", 18, &s), 0);
        ck_assert(!s.has_ra);

        ck_assert_int_eq(ra_swap_parse_vmstat("pswpin 1\n", 9, &s), -EINVAL);
        ck_assert_int_eq(ra_swap_parse_vmstat("pswpin 1\npswpout x\n", 19, &s), -EINVAL);
        ck_assert_int_eq(ra_swap_parse_vmstat("pswpin 1\npswpin 2\npswpout 1\n", 28, &s), -EINVAL);
        ck_assert_int_eq(ra_swap_parse_vmstat("pswpin 1\npswpout \n", 18, &s), -EINVAL);
        ck_assert_int_eq(ra_swap_parse_vmstat("", 0, &s), -EINVAL);
}
END_TEST

static RaSwapArea area(RaSwapClass c, int prio, uint64_t used) {
        return (RaSwapArea){
                .filename = (char *) "/x", .class = c, .priority = prio, .size_kb = 1024, .used_kb = used
        };
}

START_TEST(test_active_class) {
        RaSwapArea a[3] = {};
        size_t n_in_use;

        ck_assert_int_eq(ra_swap_active_class(a, 0, &n_in_use), RA_SWAP_CLASS_UNKNOWN);
        ck_assert_uint_eq(n_in_use, 0);

        /* Nothing swapped out: the kernel fills the highest priority first. */
        a[0] = area(RA_SWAP_CLASS_ZRAM, 100, 0);
        a[1] = area(RA_SWAP_CLASS_ROT, -2, 0);
        ck_assert_int_eq(ra_swap_active_class(a, 2, &n_in_use), RA_SWAP_CLASS_ZRAM);
        ck_assert_uint_eq(n_in_use, 1);

        /* zram full, the disk holds most: swap-in reads the disk. */
        a[0].used_kb = 100;
        a[1].used_kb = 900;
        ck_assert_int_eq(ra_swap_active_class(a, 2, NULL), RA_SWAP_CLASS_ROT);

        /* Two of equal priority. */
        a[0] = area(RA_SWAP_CLASS_NONROT, 5, 0);
        a[1] = area(RA_SWAP_CLASS_NONROT, 5, 0);
        a[2] = area(RA_SWAP_CLASS_ROT, 1, 0);
        ck_assert_int_eq(ra_swap_active_class(a, 3, &n_in_use), RA_SWAP_CLASS_NONROT);
        ck_assert_uint_eq(n_in_use, 2);
}
END_TEST

START_TEST(test_prior) {
        char reason[RA_REASON_MAX];

        ck_assert_int_eq(ra_swap_prior(RA_SWAP_CLASS_ZRAM, reason), 0);
        ck_assert_ptr_nonnull(strstr(reason, "zram"));
        ck_assert_int_eq(ra_swap_prior(RA_SWAP_CLASS_NONROT, reason), RA_SWAP_KERNEL_DEFAULT);
        ck_assert_int_gt(ra_swap_prior(RA_SWAP_CLASS_ROT, reason), RA_SWAP_KERNEL_DEFAULT);
        ck_assert_int_eq(ra_swap_prior(RA_SWAP_CLASS_UNKNOWN, reason), RA_SWAP_KERNEL_DEFAULT);
}
END_TEST

START_TEST(test_decide) {
        RaSwapSettings s = { .manage = true, .pinned = -1, .config = -1, .learned = -1, .current = 3 };
        RaSwapDecision d;

        ra_swap_decide(RA_SWAP_CLASS_UNKNOWN, 0, &s, &d);
        ck_assert_int_eq(d.value, -1);
        ck_assert_ptr_nonnull(strstr(d.reason, "No swap area"));

        ra_swap_decide(RA_SWAP_CLASS_ZRAM, 1, &s, &d);
        ck_assert_int_eq(d.value, 0);
        ck_assert_int_eq(d.source, RA_SOURCE_PRIOR);

        s.learned = 5;
        s.learned_reason = "Because.";
        ra_swap_decide(RA_SWAP_CLASS_ROT, 1, &s, &d);
        ck_assert_int_eq(d.value, 5);
        ck_assert_int_eq(d.source, RA_SOURCE_LEARNED);
        ck_assert_str_eq(d.reason, "Because.");

        s.config = 2;
        ra_swap_decide(RA_SWAP_CLASS_ROT, 1, &s, &d);
        ck_assert_int_eq(d.value, 2);
        ck_assert_int_eq(d.source, RA_SOURCE_CONFIG);

        /* A pin holds without swap, too: the administrator said so. */
        s.pinned = 0;
        ra_swap_decide(RA_SWAP_CLASS_UNKNOWN, 0, &s, &d);
        ck_assert_int_eq(d.value, 0);
        ck_assert_int_eq(d.source, RA_SOURCE_PINNED);

        s.external = true;
        s.current = 7;
        ra_swap_decide(RA_SWAP_CLASS_ROT, 1, &s, &d);
        ck_assert_int_eq(d.value, 7);
        ck_assert_int_eq(d.source, RA_SOURCE_EXTERNAL);

        s = (RaSwapSettings){ .manage = false, .pinned = -1, .config = -1, .learned = 4, .current = 3 };
        ra_swap_decide(RA_SWAP_CLASS_ROT, 1, &s, &d);
        ck_assert_int_eq(d.value, -1);
}
END_TEST

/* One second of swap-in: pages, of which ra read ahead and hit were used; a disk busy busy_ms. */
static RaSwapObservation second(uint64_t pages, uint64_t ra, uint64_t hit, uint64_t busy_ms) {
        return (RaSwapObservation){
                .seconds = 1,
                .pswpin = pages,
                .swap_ra = ra,
                .swap_ra_hit = hit,
                .has_ra = true,
                .read_ios = pages / 8 + 1,
                .read_sectors = pages * 8,
                .io_ticks_ms = busy_ms,
        };
}

/*
 * Runs the model at page-cluster pc as a simulated device would, pages a
 * second, three quarters of them read ahead; returns where it settles.
 * *ret_max_step (may be NULL) is the largest step taken.
 */
static int simulate(RaSwapModel *m, int pc, uint64_t pages, double hit_ratio, unsigned seconds,
                    int *ret_changes, int *ret_max_step) {
        int changes = 0, max_step = 0;

        for (unsigned i = 0; i < seconds; i++) {
                uint64_t ra = pc > 0 ? pages * 3 / 4 : 0;
                RaSwapObservation o = second(pages, ra, (uint64_t) ((double) ra * hit_ratio), 500);

                if (ra_swap_learn(m, pc, &o) > 0) {
                        ck_assert(m->reason[0] != '\0');
                        ck_assert_int_ge(m->learned, RA_SWAP_LEARN_MIN);
                        ck_assert_int_le(m->learned, RA_SWAP_LEARN_MAX);
                        if (abs(m->learned - pc) > max_step)
                                max_step = abs(m->learned - pc);
                        pc = m->learned;
                        changes++;
                }
        }
        if (ret_changes)
                *ret_changes = changes;
        if (ret_max_step)
                *ret_max_step = max_step;
        return pc;
}

START_TEST(test_learn_sequential) {
        RaSwapModel m;
        int changes, step;

        /* Read-ahead pages are used, one window a second: one step per two agreeing windows, up to the top.
         */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_ROT, -1);
        ck_assert_int_eq(simulate(&m, 3, RA_SWAP_WINDOW_PAGES, 0.95, 3, &changes, &step), 4);
        ck_assert_int_eq(changes, 1);
        ck_assert_int_eq(step, 1);
        ck_assert_ptr_nonnull(strstr(m.reason, "95 %"));
        ck_assert_int_eq(simulate(&m, 4, RA_SWAP_WINDOW_PAGES, 0.95, 60, &changes, &step),
                         RA_SWAP_LEARN_MAX);
        ck_assert_int_eq(changes, 2);
        ck_assert_int_eq(step, 1);

        /*
         * Heavy swap-in, as in the bench's sequential re-read on ssd-ctrl (12,000
         * pages a pass): two steps a second, from 3 to the top in two seconds,
         * and there it stays.
         */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_NONROT, -1);
        ck_assert_int_eq(simulate(&m, 3, 12000, 1.0, 1, &changes, &step), 5);
        ck_assert_int_eq(step, 2);
        ck_assert_int_eq(simulate(&m, 5, 12000, 1.0, 60, &changes, &step), RA_SWAP_LEARN_MAX);
        ck_assert_int_eq(changes, 1);
}
END_TEST

START_TEST(test_learn_one_heavy_interval) {
        RaSwapModel m;
        RaSwapObservation two = second(2 * RA_SWAP_WINDOW_PAGES, 1500, 1480, 500);
        RaSwapObservation four = second(4 * RA_SWAP_WINDOW_PAGES, 3000, 2950, 500);

        /* Two windows' worth of pages in one interval agree with themselves: one step. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_NONROT, -1);
        ck_assert_int_eq(ra_swap_learn(&m, 3, &two), 1);
        ck_assert_int_eq(m.learned, 4);
        ck_assert_uint_eq(m.judgements, 1);
        ck_assert_str_eq(m.judged, m.reason);
        /* The first interval at a new value settles it, and is no evidence. */
        ck_assert_int_eq(ra_swap_learn(&m, 4, &four), 0);
        ck_assert_uint_eq(m.judgements, 1);
        /* Four windows' worth is strong evidence: two steps, never past the top. */
        ck_assert_int_eq(ra_swap_learn(&m, 4, &four), 1);
        ck_assert_int_eq(m.learned, 6);
        ck_assert_int_eq(ra_swap_learn(&m, 5, &four), 0);
        ck_assert_int_eq(ra_swap_learn(&m, 5, &four), 0);
        ck_assert_int_eq(m.learned, 6);
}
END_TEST

START_TEST(test_learn_random) {
        RaSwapModel m;
        int changes;

        /*
         * Read-ahead pages go unused: shrinks down to two pages a fault and
         * stays; at one page the kernel would read nothing ahead, and
         * nothing could show that more pays again.
         */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_NONROT, -1);
        ck_assert_int_eq(simulate(&m, 3, RA_SWAP_WINDOW_PAGES, 0.1, 60, &changes, NULL), RA_SWAP_LEARN_MIN);
        ck_assert_int_eq(changes, 2);
        ck_assert_ptr_nonnull(strstr(m.reason, "Only 10 %"));
        ra_swap_model_reset(&m, RA_SWAP_CLASS_ROT, -1);
        ck_assert_int_eq(simulate(&m, 5, 8 * RA_SWAP_WINDOW_PAGES, 0.0, 60, NULL, NULL), RA_SWAP_LEARN_MIN);

        /* Two steps down from 2 stop at 1 too. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_NONROT, -1);
        ck_assert_int_eq(simulate(&m, 2, 8 * RA_SWAP_WINDOW_PAGES, 0.0, 1, &changes, NULL),
                         RA_SWAP_LEARN_MIN);
        ck_assert_int_eq(changes, 1);

        /* From 1, sequential swap-in still reads ahead, and grows again. */
        ck_assert_int_eq(simulate(&m, 1, RA_SWAP_WINDOW_PAGES, 1.0, 6, &changes, NULL), 3);
        ck_assert_int_eq(changes, 2);
}
END_TEST

START_TEST(test_learn_mix) {
        RaSwapModel m;
        int pc = 3;
        /*
         * What a pass of the bench's mixed re-read did on ssd-ctrl at 3, and
         * at 1: 43 % of the pages read ahead used, at 1 the kernel's own
         * window hardly reads ahead. 1 took 0.45 s, 3 0.76 s.
         */
        RaSwapObservation at3 = second(4522, 2840, 1184, 700);
        RaSwapObservation at1 = second(1161, 12, 19, 400);
        /* The second after 3 -> 1: faults still find pages read ahead at 3. */
        RaSwapObservation after = second(3853, 294, 313, 944);

        /* Partial hits: one heavy interval of four windows takes it from 3 to 1. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_NONROT, -1);
        ck_assert_int_eq(ra_swap_learn(&m, pc, &at3), 1);
        pc = m.learned;
        ck_assert_int_eq(pc, 1);
        ck_assert_ptr_nonnull(strstr(m.reason, "Only 42 %"));
        ck_assert_int_eq(ra_swap_learn(&m, pc, &after), 0);
        ck_assert_uint_eq(m.judgements, 1);
        ck_assert_int_eq(m.learned, 1);

        /* The same on a rotational disk, from its prior 5. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_ROT, -1);
        ck_assert_int_eq(ra_swap_learn(&m, 5, &at3), 1);
        ck_assert_int_eq(m.learned, 3);

        /* At 1 the workload repeats, and radaemon stays. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_NONROT, 1);
        for (unsigned i = 0; i < 60; i++)
                ck_assert_int_eq(ra_swap_learn(&m, 1, &at1), 0);
        ck_assert_ptr_nonnull(strstr(m.judged, "almost no readahead"));
        ck_assert_int_eq(m.learned, 1);
}
END_TEST

START_TEST(test_learn_hysteresis) {
        RaSwapModel m;
        int changes;

        /* Between the thresholds nothing moves; nor does a single window. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_NONROT, -1);
        ck_assert_int_eq(simulate(&m, 3, RA_SWAP_WINDOW_PAGES, 0.6, 60, &changes, NULL), 3);
        ck_assert_int_eq(changes, 0);
        ck_assert_int_eq(simulate(&m, 3, 8 * RA_SWAP_WINDOW_PAGES, 0.6, 60, &changes, NULL), 3);
        ck_assert_int_eq(changes, 0);

        /* Alternating evidence never agrees twice. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_NONROT, -1);
        for (unsigned i = 0; i < 40; i++) {
                RaSwapObservation o = second(RA_SWAP_WINDOW_PAGES, 750, i % 2 ? 740 : 30, 500);

                ck_assert_int_eq(ra_swap_learn(&m, 3, &o), 0);
        }

        /* Idle seconds are no evidence, however many. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_ROT, -1);
        for (unsigned i = 0; i < 1000; i++) {
                RaSwapObservation o = second(100, 100, 0, 10);

                ck_assert_int_eq(ra_swap_learn(&m, 4, &o), 0);
        }
}
END_TEST

START_TEST(test_learn_zram) {
        RaSwapModel m;
        int changes;

        /* zram skips readahead: swap_ra stays 0, and so does the value. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_ZRAM, -1);
        ck_assert_int_eq(simulate(&m, 0, 8 * RA_SWAP_WINDOW_PAGES, 0, 60, &changes, NULL), 0);
        ck_assert_int_eq(changes, 0);
        ck_assert_int_eq(m.learned, -1);
}
END_TEST

START_TEST(test_learn_larger_did_not_pay) {
        RaSwapModel m;
        int pc = 3, changes = 0;

        /*
         * Hits are high everywhere, but above 4 the device swaps in slower per
         * busy second: it climbs to 5, goes back to 4, and stays.
         */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_NONROT, -1);
        for (unsigned i = 0; i < 120; i++) {
                RaSwapObservation o = second(RA_SWAP_WINDOW_PAGES, 750, 725, pc > 4 ? 900 : 500);

                if (ra_swap_learn(&m, pc, &o) > 0) {
                        pc = m.learned;
                        changes++;
                }
        }
        ck_assert_int_eq(pc, 4);
        ck_assert_int_eq(changes, 3);
}
END_TEST

START_TEST(test_learn_workload_change) {
        RaSwapModel m;
        int pc = 4;

        /* Sequential at 4 grows to 5; then random faults that read nothing ahead, slowly. */
        ra_swap_model_reset(&m, RA_SWAP_CLASS_ROT, -1);
        for (unsigned i = 0; i < 2; i++) {
                RaSwapObservation o = second(RA_SWAP_WINDOW_PAGES, 750, 740, 200);

                if (ra_swap_learn(&m, pc, &o) > 0)
                        pc = m.learned;
        }
        ck_assert_int_eq(pc, 5);
        /* Much slower per busy second, but no readahead: not a verdict on 5. */
        for (unsigned i = 0; i < 20; i++) {
                RaSwapObservation o = second(RA_SWAP_WINDOW_PAGES, 0, 0, 1000);

                ck_assert_int_eq(ra_swap_learn(&m, pc, &o), 0);
        }
        ck_assert_ptr_nonnull(strstr(m.judged, "almost no readahead"));
}
END_TEST

START_TEST(test_state_swap_line) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_(ra_state_freep) RaState *s = NULL, *t = NULL;
        _cleanup_free_ char *text = NULL;
        static const char in[] = "swap original=3 pin=0 learned-rotational=5\n";

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_swap_pin(s), -1);
        ck_assert_int_eq(ra_state_parse(s, in, sizeof(in) - 1, &errors), 0);
        ck_assert_int_eq(s->swap.original, 3);
        ck_assert(s->swap.has_original);
        ck_assert_int_eq(ra_state_swap_pin(s), 0);
        ck_assert_int_eq(s->swap.learned[RA_SWAP_CLASS_ROT], 5);
        ck_assert_int_eq(s->swap.learned[RA_SWAP_CLASS_ZRAM], -1);

        s->swap.runtime_pin = 2;
        ck_assert_int_eq(ra_state_swap_pin(s), 2);
        ck_assert_int_eq(ra_state_format(s, &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "\nswap original=3 pin=0 learned-rotational=5\n"));

        /* Round trip; the runtime pin is not stored. */
        ck_assert_int_eq(ra_state_new(&t), 0);
        ck_assert_int_eq(ra_state_parse(t, text, strlen(text), &errors), 0);
        ck_assert_int_eq(ra_state_swap_pin(t), 0);
        ck_assert_int_eq(t->swap.learned[RA_SWAP_CLASS_ROT], 5);
}
END_TEST

START_TEST(test_state_swap_bad) {
        static const char *const bad[] = {
                "swap pin=11\n",            /* above what radaemon sets */
                "swap original=32\n",       /* above what the kernel takes */
                "swap pin=1 pin=2\n",       /* twice */
                "swap learned-ssd=2\n",     /* no such class */
                "swap pin\n",               /* no value */
                "swap pin=1\nswap pin=2\n", /* a second line */
                "swap original=-1\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(ra_strv_freep) char **errors = NULL;
                _cleanup_(ra_state_freep) RaState *s = NULL;

                ck_assert_int_eq(ra_state_new(&s), 0);
                ck_assert_msg(ra_state_parse(s, bad[i], strlen(bad[i]), &errors) == -EINVAL, "accepted: %s",
                              bad[i]);
                ck_assert_ptr_nonnull(errors);
        }
}
END_TEST

START_TEST(test_config_swap) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_(ra_config_freep) RaConfig *c = NULL;
        static const char good[] = "[swap]\npage_cluster = 0\nmanage = no\n";
        static const char bad[] = "[swap]\npage_cluster = 11\nmanage = maybe\nfoo = 1\n";

        ck_assert_int_eq(ra_config_new(&c), 0);
        ck_assert(c->swap_manage);
        ck_assert_int_eq(c->swap_page_cluster, -1);
        ck_assert_int_eq(ra_config_parse_text(c, "t.conf", good, sizeof(good) - 1, &errors), 0);
        ck_assert_int_eq(c->swap_page_cluster, 0);
        ck_assert(!c->swap_manage);

        ck_assert_int_eq(ra_config_parse_text(c, "t.conf", bad, sizeof(bad) - 1, &errors), -EINVAL);
        ck_assert_uint_eq(ra_strv_length(errors), 3);
        ck_assert_str_eq(errors[0], "t.conf:2: page_cluster must be a number from 0 to 10, not '11'");
        ck_assert_str_eq(errors[2], "t.conf:4: unknown key 'foo' in [swap]");
        ck_assert_int_eq(c->swap_page_cluster, 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("swap");
        TCase *parse = tcase_create("parse"), *policy = tcase_create("policy"),
              *store = tcase_create("store");

        tcase_add_test(parse, test_parse_swaps);
        tcase_add_test(parse, test_parse_swaps_bad);
        tcase_add_test(parse, test_parse_vmstat);
        tcase_add_test(policy, test_active_class);
        tcase_add_test(policy, test_prior);
        tcase_add_test(policy, test_decide);
        tcase_add_test(policy, test_learn_sequential);
        tcase_add_test(policy, test_learn_one_heavy_interval);
        tcase_add_test(policy, test_learn_random);
        tcase_add_test(policy, test_learn_mix);
        tcase_add_test(policy, test_learn_hysteresis);
        tcase_add_test(policy, test_learn_zram);
        tcase_add_test(policy, test_learn_larger_did_not_pay);
        tcase_add_test(policy, test_learn_workload_change);
        tcase_add_test(store, test_state_swap_line);
        tcase_add_test(store, test_state_swap_bad);
        tcase_add_test(store, test_config_swap);
        suite_add_tcase(s, parse);
        suite_add_tcase(s, policy);
        suite_add_tcase(s, store);

        return test_run(s);
}
