#!/usr/bin/env bash
# The test command: configure (once), build, and run every TAP test with its
# output shown, so each "ok"/"not ok" line is visible.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
meson test -C build --print-errorlogs --verbose --num-processes 2 "$@"
