#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""view_browser.py DIR SHOTS_DIR - `fgcollect view DIR`'s page of rolling profiles in a real
browser.

DIR holds rolling profiles as `watch --out` writes them (rolling_gen.py: 12 one-minute
profiles of PID 4242 with the 8th missing) and the page `fgcollect view DIR` wrote for them,
view_shop_host_4242_node1.html. Opens it in Debian's headless chromium over WebDriver (the
driver of timeview_browser.py) and checks: a heatmap column per interval (12, the missing one
empty, each labelled with its interval's UTC start); a mouse drag over one column draws that
profile's flame graph, every frame's value equal to the sum of its file's counts under that
path; a drag over three columns draws the sum of three files; no console error. Screenshots go
to SHOTS_DIR. Exit 0 pass, 1 fail, 77 skip (chromium or chromedriver missing and
FG_ALLOW_MISSING_TOOLS=1).
"""
import glob
import os
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flame_browser import CHROMIUM, DRIVER  # noqa: E402
from timeview_browser import check, failures, frames, settle, shot, start_browser  # noqa: E402

PAGE = "view_shop_host_4242_node1.html"


def expected(files):
    """Every path's value (root first, "all" the root) summed over folded files."""
    want = {}
    for path in files:
        with open(path) as f:
            for line in f:
                stack, n = line.rsplit(" ", 1)
                fr = ["all"] + stack.split(";")
                for i in range(1, len(fr) + 1):
                    want[tuple(fr[:i])] = want.get(tuple(fr[:i]), 0) + int(n)
    return want


def drawn(fr):
    """The frames drawn as {path: value}."""
    by = {f[0]: f for f in fr}
    out = {}
    for f in fr:
        path, p = [f[3]], f
        while p[1] in by:
            p = by[p[1]]
            path.append(p[3])
        out[tuple(reversed(path))] = f[2]
    return out


def drag_cols(wd, c0, c1):
    a = wd.js("return fgTimeview.cellRect(arguments[0], 0);", c0)
    b = wd.js("return fgTimeview.cellRect(arguments[0], 0);", c1)
    acts = [{"type": "pointerMove", "duration": 0, "origin": "viewport",
             "x": int(a["x"]), "y": int(a["y"])},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerMove", "duration": 50, "origin": "viewport",
             "x": int(b["x"]), "y": int(b["y"])},
            {"type": "pointerUp", "button": 0}]
    wd.call("POST", "/actions", {"actions": [{
        "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
        "actions": acts}]})
    wd.call("DELETE", "/actions")
    settle(wd)


def main():
    if len(sys.argv) != 3:
        print("usage: view_browser.py DIR SHOTS_DIR", file=sys.stderr)
        return 64
    d, shots = sys.argv[1:]
    if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
        msg = "%s or %s not installed (Debian packages chromium, chromium-driver)" % (
            CHROMIUM, DRIVER)
        if os.environ.get("FG_ALLOW_MISSING_TOOLS") == "1":
            print("SKIP: %s (FG_ALLOW_MISSING_TOOLS=1)" % msg)
            return 77
        print("FAIL: %s; scripts/install-deps.sh installs them" % msg, file=sys.stderr)
        return 1
    os.makedirs(shots, exist_ok=True)
    files = sorted(glob.glob(os.path.join(d, "*_shop_host_4242_node1.folded")))
    by_col = {}
    for path in files:
        hh, mm = os.path.basename(path)[9:11], os.path.basename(path)[11:13]
        by_col[int(hh) * 60 + int(mm)] = path  # one-minute intervals from 00:00
    tmp = tempfile.mkdtemp(prefix="fg_view_")
    proc, wd = None, None
    try:
        proc, wd = start_browser(tmp)
        wd.call("POST", "/url", {"url": "file://" + urllib.parse.quote(
            os.path.abspath(os.path.join(d, PAGE)))})
        for _ in range(300):
            if wd.js("return !!(window.fgTimeview && fgTimeview.ready);"):
                break
            time.sleep(0.05)
        check(wd.js("return !!(window.fgTimeview && fgTimeview.ready);"), "the page loaded")
        meta = wd.js("return fgTimeview.meta;")
        ncols = max(by_col) + 1
        check(meta["ncols"] == ncols and meta["rows"] == 1 and len(meta["columns"]) == ncols,
              "a column per interval: %d columns of %d row(s) for %d intervals" % (
                  meta["ncols"], meta["rows"], ncols))
        check(meta["col_s"] == 60 and all(meta["columns"][k] - meta["columns"][0] == 60 * k
                                          for k in range(ncols)),
              "each column's start is its interval's (every 60 s)")
        counts = wd.js("return fgTimeview.cellCounts();")
        empty = [k for k in range(ncols) if k not in by_col]
        check(all(counts[k] == 0 for k in empty) and all(counts[k] > 0 for k in by_col),
              "the missing interval's column is empty, the others are not (%r)" % counts)
        shot(wd, shots, "0-loaded")
        for col in (0, 3, ncols - 1):
            drag_cols(wd, col, col)
            total, fr = frames(wd)
            want, got = expected([by_col[col]]), drawn(fr)
            bad = [p for p in got if got[p] != want.get(p)]
            check(total == want[("all",)] and got and not bad,
                  "column %d: the flame graph is %s (%d frames, total %d of %d%s)" % (
                      col, os.path.basename(by_col[col]), len(got), total, want[("all",)],
                      ", differ: %r" % bad[:2] if bad else ""))
            hot = "Hot.m%d_[j]" % (col % 5)
            check(any(p[-1] == hot for p in got), "column %d shows its hot method %s" % (
                col, hot))
            shot(wd, shots, "col-%d" % col)
        drag_cols(wd, 2, 4)
        total, fr = frames(wd)
        want, got = expected([by_col[k] for k in (2, 3, 4)]), drawn(fr)
        bad = [p for p in got if got[p] != want.get(p)]
        check(total == want[("all",)] and not bad,
              "columns 2-4: the sum of their three profiles (total %d of %d)" % (
                  total, want[("all",)]))
        shot(wd, shots, "cols-2-4")
        errs = wd.console_errors()
        check(not errs, "no console error (%r)" % errs[:3])
    finally:
        if wd:
            wd.quit()
        if proc:
            proc.terminate()
            proc.wait()
    print("screenshots in %s" % shots)
    if failures:
        print("FAIL: %d check(s): %s" % (len(failures), "; ".join(failures)))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
