#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""timeview_load.py [--baseline PAGE0.html] PAGE.html [SVG] - Chromium's time to open a time
view page and redraw selections, and (the baselines) to open the flame graph SVG of the same
stacks and, with --baseline, a small page (the browser's fixed cost), each in a browser of its
own, and the ratios of the page's figures to the small page's.

Headless Debian chromium over chromedriver (tests/browser/flame_browser.py's driver). Prints
one line per figure, each as wall-clock ms and as the CPU ms Chromium's processes spent (the
CPU figure holds on a machine shared with other work; the wall one does not): the heatmap shown
(the page's head decoded, its cells drawn) and the page ready (the stack tree read after it: a
selection can be drawn; its "open") since navigation began; the first selection's redraw (a 1 s
range: its time blocks read, flame graph summed, built and painted) and open plus it; the
redraw of a selection of 1 s, 10 s, 60 s and all of it, the median of 5 (each at another
place: most read blocks not read before); the SVG's load event (when an SVG is given).
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "browser"))
from flame_browser import CHROMIUM, DRIVER, Driver  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_ms(root, renderer=False):
    """CPU ms (user + system) of root's descendants so far (chromium and its children), or of
    its renderer processes only (where the page's parsing, script and drawing run)."""
    kids, total = {}, 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/stat" % pid) as f:
                    st = f.read().rsplit(")", 1)[1].split()
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    rend = b"--type=renderer" in f.read()
                kids.setdefault(int(st[1]), []).append(
                    (int(pid), int(st[11]) + int(st[12]), rend))
            except (OSError, IndexError, ValueError):
                pass
    todo = [root]
    while todo:
        for pid, ticks, rend in kids.get(todo.pop(), []):
            if rend or not renderer:
                total += ticks
            todo.append(pid)
    return total * 1000 / TICK


REDRAW = """
const [a, b, done] = arguments;
const t = performance.now();
fgTimeview.select(a, b).then(() =>
    requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t))));
"""


def measure(page, svg=None):
    """Prints the figures of one page; returns {name: (wall ms, renderer CPU ms)}."""
    out = {}
    tmp = tempfile.mkdtemp(prefix="fg_tvbench_")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([DRIVER, "--port=%d" % port], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wd = Driver(port)
    try:
        for _ in range(100):
            try:
                if wd.call("GET", "/status").get("ready"):
                    break
            except (OSError, RuntimeError):
                pass
            time.sleep(0.1)
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--window-size=1400,1000",
                "--user-data-dir=" + os.path.join(tmp, "profile")]
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": {"binary": CHROMIUM, "args": args}}}}
        wd.sid = wd.call("POST", "/session", caps)["sessionId"]
        wd.call("POST", "/timeouts", {"script": 120000, "pageLoad": 300000})
        c0, r0 = cpu_ms(proc.pid), cpu_ms(proc.pid, True)
        wd.call("POST", "/url", {"url": "file://" + urllib.parse.quote(os.path.abspath(page))})
        for _ in range(1200):
            if wd.js("return !!(window.fgTimeview && fgTimeview.ready);"):
                break
            time.sleep(0.05)
        c1, r1 = cpu_ms(proc.pid), cpu_ms(proc.pid, True)
        out["open"] = (wd.js("return fgTimeview.readyAt;"), r1 - r0)
        print("heatmap_shown_ms %.0f page_ready_ms %.0f cpu_ms %.0f renderer_cpu_ms %.0f" % (
            wd.js("return fgTimeview.shownAt;"), wd.js("return fgTimeview.readyAt;"), c1 - c0,
            r1 - r0))
        print("script_start_ms %.0f heatmap_painted_ms %.0f page_load_parts_ms %r countings_ms %r" % (
            wd.js("return fgTimeview.scriptAt;"), wd.js("return fgTimeview.paintedAt || 0;"), wd.js("return fgTimeview.loadParts;"), wd.js("return fgTimeview.eventParts;")))
        dur = wd.js("return fgTimeview.duration;")
        ms = wd.call("POST", "/execute/async", {"script": REDRAW, "args": [dur / 3, dur / 3 + 1]})
        out["first"] = (ms, cpu_ms(proc.pid, True) - r1)
        out["open_redraw"] = tuple(a + b for a, b in zip(out["open"], out["first"]))
        print("first_redraw_1s_ms %.0f cpu_ms %.0f renderer_cpu_ms %.0f parts_ms %r" % (
            ms, cpu_ms(proc.pid) - c1, cpu_ms(proc.pid, True) - r1,
            wd.js("return fgTimeview.redrawParts;")))
        for span in (1, 10, 60, dur):
            runs = []
            for k in range(5):
                a = min(dur - span, (k + 1) * dur / 7) if span < dur else 0
                c = cpu_ms(proc.pid)
                ms = wd.call("POST", "/execute/async", {"script": REDRAW, "args": [a, a + span]})
                runs.append((ms, cpu_ms(proc.pid) - c))
            ms, cpu = sorted(runs)[2]
            out["all" if span == dur else "%ds" % span] = (ms, cpu)
            print("redraw_%s_ms %.0f cpu_ms %.0f parts_ms %r" % (
                "all" if span == dur else "%ds" % span, ms, cpu,
                wd.js("return fgTimeview.redrawParts;")))
        print("open_plus_first_redraw_ms %.0f renderer_cpu_ms %.0f" % out["open_redraw"])
        if not svg:
            return out
        c = cpu_ms(proc.pid)
        wd.call("POST", "/url", {"url": "file://" + urllib.parse.quote(os.path.abspath(svg))})
        print("svg_load_ms %.0f cpu_ms %.0f" % (wd.js(
            "const t = performance.timing; return t.loadEventEnd - t.navigationStart;"),
            cpu_ms(proc.pid) - c))
    finally:
        wd.quit()
        proc.terminate()
        proc.wait()
    return out


def main():
    args = sys.argv[1:]
    base = None
    if args[:1] == ["--baseline"]:
        base, args = args[1], args[2:]
    if base:
        print("baseline page %s:" % os.path.basename(base))
        b = measure(base)
        print("page %s:" % os.path.basename(args[0]))
    got = measure(args[0], args[1] if len(args) > 1 else None)
    if base:
        for k, what in (("open", "open (ready)"), ("first", "first 1 s redraw"),
                        ("open_redraw", "open + first 1 s redraw")):
            print("ratio_to_baseline %-24s wall %.2f (%.0f / %.0f ms) renderer_cpu %.2f "
                  "(%.0f / %.0f ms)" % (
                      what, got[k][0] / max(b[k][0], 1), got[k][0], b[k][0],
                      got[k][1] / max(b[k][1], 1), got[k][1], b[k][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
