/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Fuzz targets: each file defines LLVMFuzzerTestOneInput(). Built with
 * --enable-fuzzing (clang), libFuzzer drives them; otherwise fuzz-main.c
 * runs them over their corpus in tests/corpus/<target>/, so every input that
 * ever found a bug stays a regression test in every build.
 */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
