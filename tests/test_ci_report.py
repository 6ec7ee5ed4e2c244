#!/usr/bin/env python3
"""TAP test of tools/ci_report.py, CI's count and account of failures, on
meson logs written here: every count is checked against the points the
logs were made of, and every failure kind against what must be said."""
import json
import os
import subprocess
import sys
import tempfile

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "ci_report.py")
n = 0
bad = 0


def ok(cond, what):
    global n, bad
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))
    if not cond:
        bad += 1


def tap(oks, notoks=0, skips=0, todos=0, plan=True):
    lines = ["ok %d - p" % i for i in range(oks)]
    lines += ["ok %d - s # SKIP why" % i for i in range(skips)]
    lines += ["not ok %d - f" % i for i in range(notoks)]
    lines += ["not ok %d - t # TODO gap" % i for i in range(todos)]
    if plan:
        lines.append("1..%d" % (oks + skips + notoks + todos))
    return "\n".join(lines) + "\n"


def rec(name, result, out, rc=0):
    return {"name": "hipkit / " + name, "result": result, "returncode": rc, "duration": 1.0, "stdout": out}


def write(path, recs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")


def run(*args):
    p = subprocess.run([sys.executable, REPORT] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout


with tempfile.TemporaryDirectory() as d:
    logs = os.path.join(d, "build", "meson-logs")
    plain, fibers = os.path.join(logs, "testlog.json"), os.path.join(logs, "testlog-fibers.json")

    # all passed: points, skips and TODOs counted as the old grep counted them
    write(plain, [rec("a", "OK", tap(7, skips=2)), rec("b", "OK", tap(3, todos=1))])
    write(fibers, [rec("a", "OK", tap(7, skips=2)), rec("c", "SKIP", "1..0 # SKIP no device\n")])
    rc, out = run(plain, fibers)
    last = out.strip().splitlines()[-1]
    ok(rc == 0 and last == "17 passed, 0 failed, 4 skipped", "all passed: counts, exit 0 (%s)" % last)
    ok("1 known gaps marked TODO" in out and "FAILED" not in out, "a TODO is reported, not failed")
    rc, out = run("--status", "2", plain, fibers)
    ok(rc == 1 and out.strip().endswith("17 passed, 1 failed, 4 skipped"),
       "another step's failure (--status 2) fails as one")

    # failures: not-ok points, a crash without any, a timeout; names and passes said
    write(fibers, [rec("a", "FAIL", tap(5, notoks=2), 1), rec("d", "ERROR", tap(4, plan=False), -11),
                   rec("e", "TIMEOUT", tap(1, plan=False), -15)])
    rc, out = run(plain, fibers)
    ok(rc == 1 and out.strip().endswith("20 passed, 4 failed, 2 skipped"),
       "2 not-ok points, a crash and a timeout: 4 failed")
    ok("FAILED: hipkit / d (fibers pass): ERROR, exit status -11" in out,
       "the crash is named with its pass and exit status")
    ok("3 test(s) failed: hipkit / a (fibers pass), hipkit / d (fibers pass), hipkit / e (fibers pass)" in out,
       "the closing line names each failed test and its pass")
    ok(out.count("#   not ok") == 2, "the failing test's not-ok points are shown")
    rc, names = run("--failed", fibers)
    ok(rc == 0 and names.split() == ["a", "d", "e"], "--failed gives the names meson test takes")

    # run again: a pass counts the second run, a skip does not, a second failure fails
    write(os.path.join(logs, "rerun-fibers.json"),
          [rec("a", "OK", tap(7)), rec("d", "SKIP", "1..0 # SKIP gone\n"), rec("e", "FAIL", tap(0, notoks=1), 1)])
    rc, out = run(plain, fibers)
    ok(rc == 1 and out.strip().endswith("17 passed, 2 failed, 2 skipped"),
       "rerun: a's 7 points counted, d's skip and e's second failure each fail")
    ok("1 test(s) failed, then passed when run again (flaky" in out and "hipkit / a (fibers pass)" in out,
       "the test that passed when run again is listed as flaky")
    ok("run again: hipkit / e (fibers pass): FAIL" in out, "a second failure is shown too")

    # many not-ok points: capped
    write(plain, [rec("m", "FAIL", tap(0, notoks=45), 1)])
    rc, out = run(plain)
    ok(out.count("#   not ok") == 20 and "and 25 more not-ok points" in out and
       out.strip().endswith("0 passed, 45 failed, 0 skipped"), "45 not-ok points: 20 shown, all counted")

    # a pass whose log is missing (its build failed) counts nothing, and the status fails it
    rc, out = run("--status", "1", os.path.join(d, "nowhere", "testlog.json"))
    ok(rc == 1 and out.strip().endswith("0 passed, 1 failed, 0 skipped"), "a missing log and status 1: failed")

print("1..%d" % n)
sys.exit(1 if bad else 0)
