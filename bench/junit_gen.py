#!/usr/bin/python3
"""Write a JUnit XML file for the ingest benchmark and tests.

    junit_gen.py FILE big BYTES [SEED]   about BYTES: suites of passing and
                                          failing tests, tracebacks of 2 KB
    junit_gen.py FILE many CASES [SEED]  CASES tiny passing tests

The same arguments give the same bytes; SEED makes files that differ (so
that ingest stores each, rather than skipping a copy)."""
import sys


def big(out, limit, seed):
    tb = "".join("  File \"pkg/mod%d.py\", line %d, in f%d\n    x = y[%d]\n"
                 % (k, k * 7, k, k) for k in range(30))
    out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n')
    i = 0
    while out.tell() < limit:
        out.write('<testsuite name="s%d-%d" tests="1000" '
                  'timestamp="2026-11-20T10:00:00">\n' % (seed, i // 1000))
        for _ in range(1000):
            cls = "com.example.s%d.m%d.Test%d" % (seed, i // 5000, i // 100)
            if i % 20 == 0:
                out.write('<testcase classname="%s" name="test_%d" '
                          'time="0.%03d"><failure message="assert %d == %d" '
                          'type="AssertionError">%s</failure></testcase>\n'
                          % (cls, i, i % 1000, i, i + 1, tb))
            elif i % 97 == 0:
                out.write('<testcase classname="%s" name="test_%d" '
                          'time="0.2"><flakyFailure message="timeout %d" '
                          'type="T"/></testcase>\n' % (cls, i, i))
            else:
                out.write('<testcase classname="%s" name="test_%d" '
                          'time="0.%03d"/>\n' % (cls, i, i % 1000))
            i += 1
        out.write('</testsuite>\n')
    out.write('</testsuites>\n')


def many(out, cases, seed):
    out.write('<?xml version="1.0"?>\n<testsuite name="s%d" tests="%d">\n'
              % (seed, cases))
    for i in range(cases):
        out.write('<testcase classname="m%d.C%d" name="t%d" time="0.001"/>\n'
                  % (seed, i // 1000, i))
    out.write('</testsuite>\n')


def main():
    path, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    with open(path, "w", buffering=1 << 20) as out:
        if mode == "big":
            big(out, n, seed)
        else:
            many(out, n, seed)


if __name__ == "__main__":
    main()
