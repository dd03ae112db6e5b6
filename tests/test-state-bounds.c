/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What users control in the state file is bounded (ra-state.h): identities, their quota, the bytes. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ra-state.h"
#include "ra-util.h"
#include "test-helpers.h"

/* The numbers docs/decisions.md sets, written out: the tests say what a user may cost. */
#define IDENTITY_MAX 1024u
#define USER_QUOTA 16u
#define BUDGET (1024u * 1024)

static RaState *parse(const char *text) {
        _cleanup_(ra_strv_freep) char **errors = NULL;
        RaState *s = NULL;

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_parse(s, text, strlen(text), &errors), 0);
        return s;
}

static char *format(const RaState *s) {
        char *text = NULL;

        ck_assert_int_eq(ra_state_format(s, &text), 0);
        return text;
}

static size_t count(const char *text, const char *needle) {
        size_t n = 0;

        for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

/* A mount point of n bytes under /home/u, of c. */
static char *long_identity(size_t n, char c) {
        char *id = malloc(n + 1);
        int k;

        ck_assert_ptr_nonnull(id);
        k = snprintf(id, n + 1, "fuse:fuse.sshfs:h:@/home/u/");
        memset(id + k, c, n - (size_t) k);
        id[n] = '\0';
        return id;
}

/* An identity longer than the cap is tuned, not remembered: nor its original, nor what was learned. */
START_TEST(test_identity_cap) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_free_ char *huge = long_identity(4096, 'a'), *fits = long_identity(IDENTITY_MAX, 'b'),
                            *spaces = long_identity(IDENTITY_MAX / 2, ' '), *text = NULL;
        RaStateEntry *e;

        ck_assert_int_eq(ra_state_new(&s), 0);
        ck_assert_int_eq(ra_state_remember_original(s, huge, 128), 1);
        ck_assert_int_eq(ra_state_ensure(s, huge, &e), 0);
        e->learned_kb = 512;
        ck_assert_int_eq(ra_state_remember_original(s, fits, 128), 1);
        /* 4 bytes each in the file: the cap is on what the file holds. */
        ck_assert_int_eq(ra_state_remember_original(s, spaces, 128), 1);
        text = format(s);
        ck_assert_msg(!strstr(text, "aaaa"), "a 4 KiB identity was stored");
        ck_assert_msg(!strstr(text, "\\x20\\x20"), "an identity escaped past the cap was stored");
        ck_assert_msg(strstr(text, fits), "an identity of %u bytes was not stored", IDENTITY_MAX);
        /* This run still has it. */
        ck_assert_uint_eq(ra_state_learned(s, huge), 512);
}
END_TEST

/*
 * 40 FUSE mounts of one user, each with an original: 16 are stored, the most
 * recently seen, and a pin besides. Root's mounts and another user's do not
 * count against them.
 */
START_TEST(test_user_quota) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_free_ char *in = NULL, *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&in, &size);

        ck_assert_ptr_nonnull(f);
        fputs("version 2\n", f);
        for (unsigned i = 0; i < 40; i++)
                fprintf(f,
                        "device fuse:fuse.sshfs:h:@/home/u/m%02u original=128%s\n"
                        "more fuse:fuse.sshfs:h:@/home/u/m%02u seen=%u owner=1000\n",
                        i, i == 3 ? " pin=1024" : "", i, 1764150000 + i);
        for (unsigned i = 0; i < 3; i++)
                fprintf(f,
                        "device fuse:fuse.sshfs:h:@/home/v/m%02u original=128\n"
                        "more fuse:fuse.sshfs:h:@/home/v/m%02u seen=1764150000 owner=1001\n",
                        i, i);
        fputs("device fuse:fuse.sshfs:h:@/srv/root original=128\n", f);
        ck_assert_int_eq(fclose(f), 0);

        s = parse(in);
        text = format(s);
        ck_assert_uint_eq(count(text, "device fuse:fuse.sshfs:h:@/home/u/"), USER_QUOTA + 1);
        ck_assert_msg(strstr(text, "device fuse:fuse.sshfs:h:@/home/u/m03 original=128 pin=1024\n"), "%s",
                      text);
        ck_assert_msg(strstr(text, "device fuse:fuse.sshfs:h:@/home/u/m39 "), "%s", text);
        ck_assert_msg(strstr(text, "device fuse:fuse.sshfs:h:@/home/u/m24 "), "%s", text);
        ck_assert_msg(!strstr(text, "device fuse:fuse.sshfs:h:@/home/u/m23 "), "%s", text);
        ck_assert_uint_eq(count(text, "device fuse:fuse.sshfs:h:@/home/v/"), 3);
        ck_assert_msg(strstr(text, "device fuse:fuse.sshfs:h:@/srv/root "), "%s", text);
        /* The owner is kept, so that the quota counts across restarts. */
        ck_assert_msg(strstr(text, "more fuse:fuse.sshfs:h:@/home/u/m39 seen=1764150039 owner=1000\n"), "%s",
                      text);
}
END_TEST

/*
 * 3,000 entries of 900-byte identities, 3 MiB: the save holds the budget, and
 * what goes first is what was learned of devices not seen for longest; every
 * pin stays, and every original of the devices seen last.
 */
START_TEST(test_budget) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(ra_state_new(&s), 0);
        for (unsigned i = 0; i < 3000; i++) {
                _cleanup_free_ char *id = long_identity(900, 'a');
                RaStateEntry *e;

                snprintf(id + 880, 20, "%04u", i);
                ck_assert_int_eq(ra_state_ensure(s, id, &e), 0);
                e->seen = 1764150000 + i;
                if (i % 100 == 0)
                        e->pin_kb = 1024;
                if (i >= 2900) {
                        e->original_kb = 128;
                        e->has_original = true;
                } else
                        e->learned_kb = 512;
        }

        text = format(s);
        ck_assert_uint_le(strlen(text), BUDGET);
        ck_assert_uint_eq(count(text, " pin=1024"), 30);
        ck_assert_uint_eq(count(text, " original=128"), 100);
        /* Learned, newest first: the oldest not pinned are gone. */
        ck_assert_msg(strstr(text, "aaa2899 learned=512"), "the newest learned value went");
        ck_assert_msg(!strstr(text, "aaa0001 learned=512"), "the oldest learned value stayed");
        ck_assert_msg(strstr(text, "aaa0000 pin=1024 learned=512"), "a pin went");
}
END_TEST

/*
 * Past the entries' cap, a user's mounts go before the disks unplugged
 * longest ago: 10,000 mounts of one user, newer than every disk, leave the
 * 100 disks' originals.
 */
START_TEST(test_cap_users_first) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_free_ char *in = NULL;
        size_t size = 0, dropped;
        FILE *f = open_memstream(&in, &size);

        ck_assert_ptr_nonnull(f);
        for (unsigned i = 0; i < 100; i++)
                fprintf(f, "device serial:disk%03u original=128\nmore serial:disk%03u seen=1764150000\n", i,
                        i);
        for (unsigned i = 0; i < RA_STATE_MAX_ENTRIES; i++)
                fprintf(f,
                        "device fuse:fuse.sshfs:h:@/home/u/m%05u original=128\n"
                        "more fuse:fuse.sshfs:h:@/home/u/m%05u seen=1764160000 owner=1000\n",
                        i, i);
        ck_assert_int_eq(fclose(f), 0);

        s = parse(in);
        ra_state_forget(s, 1764170000, 0, RA_STATE_MAX_ENTRIES, NULL, &dropped);
        ck_assert_uint_eq(dropped, 100);
        for (unsigned i = 0; i < 100; i++) {
                char id[32];

                snprintf(id, sizeof(id), "serial:disk%03u", i);
                ck_assert_msg(ra_state_find(s, id), "%s was forgotten before a user's mounts", id);
        }
}
END_TEST

/* A file of 70 MiB, a line of 5 MiB in it: read for its pins and originals, not refused. */
static void write_oversized(const char *dir) {
        _cleanup_free_ char *path = NULL, *line = malloc(5 * 1024 * 1024);
        char comment[1024];
        FILE *f;

        ck_assert_ptr_nonnull(line);
        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, RA_STATE_FILE), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs("version 2\ndevice wwn:0xfirst original=256 pin=64 learned=512\n", f);
        memset(comment, 'x', sizeof(comment));
        comment[0] = '#';
        comment[sizeof(comment) - 1] = '\n';
        for (unsigned i = 0; i < 35 * 1024; i++)
                ck_assert_uint_eq(fwrite(comment, 1, sizeof(comment), f), sizeof(comment));
        memset(line, 'y', 5 * 1024 * 1024);
        memcpy(line, "device ", 7);
        ck_assert_uint_eq(fwrite(line, 1, 5 * 1024 * 1024, f), 5 * 1024 * 1024);
        fputc('\n', f);
        for (unsigned i = 0; i < 35 * 1024; i++)
                ck_assert_uint_eq(fwrite(comment, 1, sizeof(comment), f), sizeof(comment));
        fputs("device wwn:0xlast original=128 pin=1024\n", f);
        ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_oversized_load) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *dir = test_mkdtemp();
        const RaStateEntry *e;
        int r;

        write_oversized(dir);
        ck_assert_int_eq(ra_state_new(&s), 0);
        r = ra_state_load(s, dir, &errors);
        test_rm_rf(dir);
        /* The long line is reported. */
        ck_assert_int_eq(r, -EINVAL);
        ck_assert_ptr_nonnull(errors);
        ck_assert_uint_eq(ra_state_pin(s, "wwn:0xlast"), 1024);
        e = ra_state_find(s, "wwn:0xlast");
        ck_assert(e->has_original);
        ck_assert_uint_eq(e->original_kb, 128);
        ck_assert_uint_eq(ra_state_pin(s, "wwn:0xfirst"), 64);
        ck_assert(ra_state_find(s, "wwn:0xfirst")->has_original);
}
END_TEST

/* The udev helper's read, of one device. */
START_TEST(test_oversized_load_only) {
        _cleanup_(ra_state_freep) RaState *s = NULL;
        _cleanup_(ra_strv_freep) char **errors = NULL;
        _cleanup_free_ char *dir = test_mkdtemp();
        const char *const only[] = { "wwn:0xlast", NULL };
        int r;

        write_oversized(dir);
        ck_assert_int_eq(ra_state_new(&s), 0);
        r = ra_state_load_only(s, dir, only, &errors);
        test_rm_rf(dir);
        ck_assert_int_ge(r, -EINVAL);
        ck_assert_uint_eq(ra_state_pin(s, "wwn:0xlast"), 1024);
        ck_assert_uint_eq(s->n_entries, 1);
}
END_TEST

int main(void) {
        Suite *s = suite_create("state-bounds");
        TCase *tc = tcase_create("bounds");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_identity_cap);
        tcase_add_test(tc, test_user_quota);
        tcase_add_test(tc, test_budget);
        tcase_add_test(tc, test_cap_users_first);
        tcase_add_test(tc, test_oversized_load);
        tcase_add_test(tc, test_oversized_load_only);
        suite_add_tcase(s, tc);

        return test_run(s);
}
