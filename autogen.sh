#!/bin/sh
# Generates ./configure from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
mkdir -p m4
autoreconf --force --install
