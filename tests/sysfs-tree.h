/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Builds a sysfs tree in a temporary directory from a manifest
 * (tests/sysfs/NAME.tree, written by tests/sysfs/record.sh), with real relative
 * links, as the kernel makes them. The trees are kept as manifests because
 * make dist packs with "tar -h": it would copy what sysfs's links point to
 * and fail on a dangling link.
 *
 * One entry a line, paths relative to the root; "#" starts a comment:
 *   d PATH            a directory
 *   f PATH CONTENTS   a file, written with a newline, as sysfs does
 *   l PATH TARGET     a symbolic link
 */

#include <errno.h>
#include <unistd.h>

#include "test-helpers.h"

static inline void test_mkdir_p(const char *path) {
        char buf[4096];

        ck_assert_int_lt(snprintf(buf, sizeof(buf), "%s", path), (int) sizeof(buf));
        for (char *slash = strchr(buf + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                ck_assert_msg(mkdir(buf, 0755) == 0 || errno == EEXIST, "mkdir %s", buf);
                *slash = '/';
        }
        ck_assert_msg(mkdir(buf, 0755) == 0 || errno == EEXIST, "mkdir %s", buf);
}

/* A path inside the root: relative, with no ".." in it. */
static inline bool test_tree_path_is_safe(const char *path) {
        if (!*path || path[0] == '/')
                return false;
        for (const char *p = path; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
                if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0'))
                        return false;
        return true;
}

/* Adds the entries of a manifest's text to the tree at root. */
static inline void test_tree_apply(const char *root, const char *text) {
        const char *line = text;

        while (*line) {
                const char *end = strchrnul(line, '\n');
                char entry[4096], full[8192], *path, *rest;

                ck_assert_uint_lt((size_t) (end - line), sizeof(entry));
                memcpy(entry, line, (size_t) (end - line));
                entry[end - line] = '\0';
                line = *end ? end + 1 : end;

                if (entry[0] == '\0' || entry[0] == '#')
                        continue;
                ck_assert_msg(strchr("dfl", entry[0]) && entry[1] == ' ', "bad manifest line: %s", entry);

                path = entry + 2;
                rest = strchr(path, ' ');
                if (rest)
                        *rest++ = '\0';
                ck_assert_msg(test_tree_path_is_safe(path), "unsafe manifest path: %s", path);
                ck_assert_int_lt(snprintf(full, sizeof(full), "%s/%s", root, path), (int) sizeof(full));

                switch (entry[0]) {
                case 'd':
                        ck_assert_msg(!rest, "bad manifest line: d %s", path);
                        test_mkdir_p(full);
                        break;
                case 'f': {
                        char contents[4096];
                        int n = snprintf(contents, sizeof(contents), "%s\n", rest ? rest : "");

                        ck_assert_int_lt(n, (int) sizeof(contents));
                        test_write_n(root, path, contents, (size_t) n);
                        break;
                }
                case 'l': {
                        char *slash = strrchr(full, '/');

                        ck_assert_msg(rest && *rest, "link without a target: %s", path);
                        *slash = '\0';
                        test_mkdir_p(full);
                        *slash = '/';
                        ck_assert_msg(symlink(rest, full) == 0, "symlink %s: %s", full, strerror(errno));
                        break;
                }
                }
        }
}

/* A new temporary root with the manifest tests/sysfs/<name>.tree built in it; test_rm_rf() it. */
static inline char *test_tree_load(const char *name) {
        char path[4096], *text, *root;
        FILE *f;
        long size;

        ck_assert_int_lt(snprintf(path, sizeof(path), "%s/tests/sysfs/%s.tree", ABS_TOP_SRCDIR, name),
                         (int) sizeof(path));
        f = fopen(path, "re");
        ck_assert_msg(f, "cannot open %s", path);
        ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        ck_assert_int_ge(size, 0);
        rewind(f);
        text = calloc(1, (size_t) size + 1);
        ck_assert_ptr_nonnull(text);
        ck_assert_uint_eq(fread(text, 1, (size_t) size, f), (size_t) size);
        ck_assert_int_eq(fclose(f), 0);

        root = test_mkdtemp();
        test_tree_apply(root, text);
        free(text);
        return root;
}
