#!/usr/bin/env python3
"""What failed in CI's passes, said last: CI keeps only the tail of a long
run, and the plain pass's verbose output scrolls a failure far above it.
For every meson test log given (testlog*.json), each test that did not end
OK or SKIP is named with its pass, result and exit status, its "not ok"
points, and the last lines it printed (a crash or a timeout shows there).
Prints nothing when every test passed."""
import json
import os
import sys

TAIL = 25


def rows(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and "result" in r:
                yield r


def main(paths):
    bad = 0
    for path in paths:
        if not os.path.isfile(path):
            continue
        # build/meson-logs/testlog-valgrind.json -> "build, valgrind"
        folder = path.split(os.sep)[-3] if path.count(os.sep) >= 2 else path
        setup = os.path.basename(path)[len("testlog"):-len(".json")].lstrip("-") or "plain"
        for r in rows(path):
            if r["result"] in ("OK", "SKIP", "EXPECTEDFAIL"):
                continue
            bad += 1
            out = (r.get("stdout") or "") + (r.get("stderr") or "")
            lines = out.splitlines()
            print("# FAILED in %s (%s pass): %s: %s, exit status %s, %.1f s" %
                  (folder, setup, r.get("name"), r["result"], r.get("returncode"),
                   r.get("duration") or 0.0))
            for ln in lines:
                if ln.startswith("not ok"):
                    print("#   " + ln[:400])
            print("#   its last %d lines:" % min(TAIL, len(lines)))
            for ln in lines[-TAIL:]:
                print("#   | " + ln[:400])
    if bad:
        print("# %d test(s) failed in all; each is named above" % bad)


if __name__ == "__main__":
    main(sys.argv[1:])
