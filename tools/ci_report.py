#!/usr/bin/env python3
"""CI's count and its account of what failed (.ci/run).

    ci_report.py --failed LOG.json
        the names of the tests that did not pass in that meson log, one
        line, for `meson test NAMES` to run them again
    ci_report.py [--status N] LOG.json ...
        counts the TAP points of every pass (meson's testlog*.json keep
        each test's output), names each test that failed, in which pass,
        with its result, exit status, "not ok" points and last lines, and
        ends with "N passed, N failed, N skipped"; exits 1 if any failed.

CI keeps only the end of a long run's output, far below the plain pass's
verbose lines, so what failed is said here, last. A test that failed and
was run once more (.ci/run's `again`, into a sibling log named rerun*.json)
is reported with both runs: the first run's not-ok points and last lines,
then the second run's result. When the second run passed (OK, not a
skip), its points are the ones counted and the test is listed as flaky, so
that an intermittent failure is seen and named without holding back
everything else the run landed; a test that fails twice fails CI. N
(--status) is the exit status of CI's other steps (a pass that failed
outside its tests or whose tests failed twice, the sanitizer build, the
fuzz targets): non-zero with no failed point still fails, as one."""
import json
import os
import re
import sys

TAIL = 25
PASSED = ("OK", "SKIP", "EXPECTEDFAIL")
NOTOK_SHOWN = 20


def tests(path):
    """name -> meson's record, in the log's order."""
    out = {}
    if not os.path.isfile(path):
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and "name" in r and "result" in r:
                out[r["name"]] = r
    return out


def short_name(name):
    # "hipkit / lua-test_x" or "hipkit:shell / sdk" -> the name meson test takes
    return name.split(" / ", 1)[-1]


def rerun_log(path):
    # build/meson-logs/testlog-valgrind.json -> build/meson-logs/rerun-valgrind.json
    d, base = os.path.split(path)
    return os.path.join(d, "rerun" + base[len("testlog"):])


def output(r):
    return (r.get("stdout") or "") + (r.get("stderr") or "")


def points(text):
    ok = len(re.findall(r"^ok [0-9]+", text, re.M))
    skip = len(re.findall(r"^ok [0-9]+.*# SKIP", text, re.M))
    notok = len(re.findall(r"^not ok [0-9]+", text, re.M))
    todo = len(re.findall(r"^not ok [0-9]+.*# TODO", text, re.M))
    return ok - skip, notok - todo, skip, todo


def where(path):
    parts = os.path.normpath(path).split(os.sep)
    folder = parts[-3] if len(parts) >= 3 else path
    setup = os.path.basename(path)[len("testlog"):-len(".json")].lstrip("-") or "plain"
    if folder == "build-asan":
        setup = "ASan+UBSan"
    return "%s pass" % setup


def describe(r, label):
    text = output(r)
    lines = text.splitlines()
    print("# %s: %s, exit status %s, %.1f s" % (label, r["result"],
                                                   r.get("returncode"), r.get("duration") or 0.0))
    notok = [ln for ln in lines if ln.startswith("not ok")]
    for ln in notok[:NOTOK_SHOWN]:
        print("#   " + ln[:400])
    if len(notok) > NOTOK_SHOWN:
        print("#   ... and %d more not-ok points" % (len(notok) - NOTOK_SHOWN))
    print("#   its last %d lines:" % min(TAIL, len(lines)))
    for ln in lines[-TAIL:]:
        print("#   | " + ln[:400])


def report(paths, status):
    passed = failed = skipped = todo = 0
    flaky, bad = [], []
    for path in paths:
        first = tests(path)
        again = tests(rerun_log(path))
        for name, r in first.items():
            use, failing = r, False
            if r["result"] not in PASSED:
                label = "%s (%s)" % (name, where(path))
                describe(r, "FAILED: " + label)
                r2 = again.get(name)
                if r2 is None:
                    bad.append(label)
                    failing = True
                elif r2["result"] == "OK":  # not a SKIP: that would hide the failure
                    print("#   run again: OK; its points are the ones counted (flaky)")
                    flaky.append(label)
                    use = r2
                else:
                    describe(r2, "run again: " + label)
                    bad.append(label)
                    use, failing = r2, True
            p, f, s, t = points(output(use))
            if (failing or use["result"] not in PASSED) and f == 0:
                f = 1  # crashed, timed out, never printed its plan, or skipped when run again
            passed, failed, skipped, todo = passed + p, failed + f, skipped + s, todo + t
    if flaky:
        print("# %d test(s) failed, then passed when run again (flaky; the first run is shown "
              "above): %s" % (len(flaky), ", ".join(flaky)))
    if bad:
        print("# %d test(s) failed: %s" % (len(bad), ", ".join(bad)))
    if todo:
        print("# %d known gaps marked TODO (see the test output)" % todo)
    if status != 0 and failed == 0:
        print("# a step other than the tests failed (exit status %d): see above" % status)
        failed = 1
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 0 if failed == 0 else 1


def main(argv):
    if len(argv) == 2 and argv[0] == "--failed":
        names = [short_name(n) for n, r in tests(argv[1]).items() if r["result"] not in PASSED]
        print(" ".join(names))
        return 0
    status = 0
    if len(argv) >= 2 and argv[0] == "--status":
        status = int(argv[1])
        argv = argv[2:]
    return report(argv, status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
