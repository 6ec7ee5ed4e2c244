#!/bin/sh
# Packs what a GPU machine needs of a build folder (the program, the library,
# the backend modules, the plugins, the test and bench programs, and the
# shared libraries the device image may lack) into DEST/build.tar.xz, small
# enough to carry to the device machine (its working-tree limit is 64 MiB).
# There: tar xJf DEST/build.tar.xz (it unpacks as BUILD_DIR), then
# LD_LIBRARY_PATH=BUILD_DIR/devlibs tests/gpu/run.sh BUILD_DIR cuda.
# Usage: tools/gpu_carry.sh [BUILD_DIR] [DEST]
set -eu
build=${1:-build}
dest=${2:-build-carry}
mkdir -p "$dest" "$build/devlibs"
for lib in libxxhash.so.0 libpng16.so.16 libreadline.so.8 libtinfo.so.6; do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
    [ -n "$path" ] && cp -L "$path" "$build/devlibs/"
done
list=$(mktemp)
trap 'rm -f "$list"' EXIT
{
    echo "$build/devlibs"
    echo "$build/src/repl/hipkit"
    find "$build/src/core" -maxdepth 1 -name 'libhipkit.so*' ! -name '*.p'
    find "$build/src/core/backends" -name '*.so' ! -path '*.p/*'
    find "$build/plugins" -maxdepth 1 -name '*.so'
    find "$build/tests" "$build/tools" -type f -perm -u+x ! -path '*.p/*' ! -path '*meson*'
    find "$build/tests" -name '*.so' ! -path '*.p/*'
} >"$list"
tar cJf "$dest/build.tar.xz" -T "$list"
du -h "$dest/build.tar.xz"
