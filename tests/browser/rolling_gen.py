#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rolling_gen.py DIR COUNT INTERVAL_S STACKS [--skip K] [--pid PID] [--event EV] - rolling
profiles as `watch --out DIR` writes them (STEM.folded, STEM = "YYYYmmddTHHMMSSZ_SERVICE_CID12_
PID_HOST[.EVENT]"), for `fgcollect view`'s test and bench/render/view.sh.

COUNT profiles of one JVM (service "shop", no container, host "node1"), one every INTERVAL_S
seconds from 2026-11-22 00:00:00 UTC, the K-th left out (--skip, a gap). Each has STACKS
distinct stacks, drawn from the JVM's 4 x STACKS (below thread roots "worker-0".."worker-7", of
depth 8-30, from a pool of Java names), as a service runs the same code all day; profile k's
hottest method is "Hot.m<k % 5>_[j]" (about half its samples). The same arguments give the
same files.
"""
import calendar
import os
import random
import sys
import time


def main():
    args = sys.argv[1:]
    opts = {"--skip": None, "--pid": "4242", "--event": ""}
    for o in list(opts):
        if o in args:
            i = args.index(o)
            opts[o] = args[i + 1]
            del args[i:i + 2]
    out, count, interval, nstacks = args[0], int(args[1]), int(args[2]), int(args[3])
    skip = int(opts["--skip"]) if opts["--skip"] is not None else -1
    suffix = "." + opts["--event"] if opts["--event"] else ""
    os.makedirs(out, exist_ok=True)
    rng = random.Random(42)
    pool = ["com.example.shop.C%d.m%d_[j]" % (i % 97, i) for i in range(3000)]
    t0 = calendar.timegm((2026, 11, 22, 0, 0, 0))
    jvm = []
    for s in range(4 * nstacks):
        depth = rng.randint(8, 30)
        jvm.append(["worker-%d" % (s % 8)] + [rng.choice(pool) for _ in range(depth)])
    for k in range(count):
        if k == skip:
            continue
        stem = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t0 + k * interval))
        stem += "_shop_host_%s_node1%s" % (opts["--pid"], suffix)
        lines = {}
        hot = "Hot.m%d_[j]" % (k % 5)
        for s, stack in enumerate(rng.sample(jvm, nstacks)):
            frames = list(stack)
            if s < max(1, nstacks // 10):
                frames.append(hot)
                n = 1 + rng.randint(0, 2000) * 5 // max(1, nstacks // 10)
            else:
                n = 1 + rng.randint(0, 200) // max(1, nstacks // 100)
            key = ";".join(frames)
            lines[key] = lines.get(key, 0) + n
        with open(os.path.join(out, stem + ".folded"), "w") as f:
            for key in sorted(lines):
                f.write("%s %d\n" % (key, lines[key]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
