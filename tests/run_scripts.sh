#!/bin/sh
# Runs every scripts-lua example with the hipkit program and reports each as
# a TAP point: a script exits non-zero when what it checked was wrong.
# Usage: run_scripts.sh HIPKIT SCRIPTS_DIR
hipkit=$1
dir=$2
n=0
fail=0
for s in "$dir"/*.lua; do
    n=$((n + 1))
    out=$("$hipkit" "$s" 2>&1)
    rc=$?
    name=$(basename "$s")
    if [ $rc -eq 0 ]; then
        echo "ok $n - $name"
    else
        echo "not ok $n - $name exited $rc"
        fail=1
    fi
    printf '%s\n' "$out" | tail -n 8 | sed 's/^/# /'
done
echo "1..$n"
exit $fail
