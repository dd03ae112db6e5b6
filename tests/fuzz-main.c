/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs a fuzz target over files, or over every file of directories, without
 * libFuzzer: fuzz-config tests/corpus/fuzz-config.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
        FILE *f = fopen(path, "re");
        uint8_t *data = NULL;
        long size;

        if (!f || fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
                fprintf(stderr, "%s: cannot read\n", path);
                if (f)
                        fclose(f);
                return -1;
        }

        data = malloc((size_t) size + 1);
        if (!data || fread(data, 1, (size_t) size, f) != (size_t) size) {
                fprintf(stderr, "%s: cannot read\n", path);
                free(data);
                fclose(f);
                return -1;
        }
        fclose(f);

        (void) LLVMFuzzerTestOneInput(data, (size_t) size);
        free(data);
        return 0;
}

int main(int argc, char *argv[]) {
        int n = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;
                DIR *d;
                struct dirent *de;

                if (stat(argv[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
                        if (run_file(argv[i]) < 0)
                                return EXIT_FAILURE;
                        n++;
                        continue;
                }

                d = opendir(argv[i]);
                if (!d)
                        return EXIT_FAILURE;
                while ((de = readdir(d))) {
                        char path[4096];

                        if (de->d_name[0] == '.')
                                continue;
                        snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
                        if (run_file(path) < 0) {
                                closedir(d);
                                return EXIT_FAILURE;
                        }
                        n++;
                }
                closedir(d);
        }

        printf("%s: %d inputs\n", argv[0], n);
        return n > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
