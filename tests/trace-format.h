/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ra-macro.h"

/*
 * What Linux 6.x prints in events/header_page, events/block/block_rq_issue/format
 * and events/block/block_bio_queue/format (recorded on 6.18).
 */
static const char header_page[] _unused_ = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                                           "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                                           "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                                           "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char event_format[] _unused_ =
        "name: block_rq_issue\n"
        "ID: 2104\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        "\n"
        "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
        "\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
        "\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n"
        "\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n"
        "\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
        "\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;\n"
        "\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n"
        "\n"
        "print fmt: \"%d,%d %s %u (%s) %llu + %u %s,%u,%u [%s]\", ((unsigned int) ((REC->dev) >> 20))\n";

static const char bio_event_format[] _unused_ =
        "name: block_bio_queue\n"
        "ID: 2097\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        "\n"
        "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
        "\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
        "\tfield:char rwbs[10];\toffset:28;\tsize:10;\tsigned:0;\n"
        "\tfield:char comm[16];\toffset:38;\tsize:16;\tsigned:0;\n"
        "\n"
        "print fmt: \"%d,%d %s %llu + %u [%s]\", ((unsigned int) ((REC->dev) >> 20))\n";
