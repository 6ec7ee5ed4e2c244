#!/bin/sh
# Builds and runs the CPU backend's device-language tests (TAP on stdout).
# Usage: tests/host_lang/run.sh   (from the repository root; CC/CXX honoured)
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${TMPDIR:-/tmp}/hk_host_lang_build.$$
mkdir -p "$out"
[ -n "$HK_KEEP" ] || trap 'rm -rf "$out"' EXIT
inc="-I$root/include -I$root/src/core -I$root/src/core/backends/host -I$root/src/core/backends/host/include"
${CC:-gcc} -std=c11 -O2 -Wall -Wextra $inc -c "$root/src/core/backends/host/host_source.c" -o "$out/host_source.o"
${CC:-gcc} -std=gnu11 -O2 -Wall -Wextra $inc -c "$root/src/core/strbuf.c" -o "$out/strbuf.o"
${CXX:-g++} -std=c++17 -O2 -Wall -Wextra $inc "$root/tests/host_lang/test_host_lang.cpp" \
    "$root/tests/host_lang/test_runtime.cpp" "$out/host_source.o" "$out/strbuf.o" \
    -ldl -lpthread -o "$out/test_host_lang"
"$out/test_host_lang" "$root"; echo "exit $?" >&2
