#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""timeview_load.py PAGE.html SVG - Chromium's time to open a time view page and redraw
selections, and (the baseline) to open the flame graph SVG of the same stacks.

Headless Debian chromium over chromedriver (tests/browser/flame_browser.py's driver). Prints
one line per figure, each as wall-clock ms and as the CPU ms Chromium's processes spent (the
CPU figure holds on a machine shared with other work; the wall one does not): the page ready
(data inflated and decoded, heatmap drawn) since navigation began; the redraw of a selection of
1 s, 10 s, 60 s and all of it (flame graph summed, built and painted), the median of 5; the
SVG's load event.
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


def cpu_ms(root):
    """CPU ms (user + system) of root's descendants so far (chromium and its children)."""
    kids, total = {}, 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/stat" % pid) as f:
                    st = f.read().rsplit(")", 1)[1].split()
                kids.setdefault(int(st[1]), []).append((int(pid), int(st[11]) + int(st[12])))
            except (OSError, IndexError, ValueError):
                pass
    todo = [root]
    while todo:
        for pid, ticks in kids.get(todo.pop(), []):
            total += ticks
            todo.append(pid)
    return total * 1000 / TICK


REDRAW = """
const [a, b, done] = arguments;
const t = performance.now();
fgTimeview.select(a, b);
requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t)));
"""


def main():
    page, svg = sys.argv[1:3]
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
        c0 = cpu_ms(proc.pid)
        wd.call("POST", "/url", {"url": "file://" + urllib.parse.quote(os.path.abspath(page))})
        for _ in range(1200):
            if wd.js("return !!(window.fgTimeview && fgTimeview.ready);"):
                break
            time.sleep(0.05)
        print("page_ready_ms %.0f cpu_ms %.0f" % (wd.js("return fgTimeview.readyAt;"),
                                                  cpu_ms(proc.pid) - c0))
        print("page_load_parts_ms %r" % wd.js("return fgTimeview.loadParts;"))
        dur = wd.js("return fgTimeview.duration;")
        for span in (1, 10, 60, dur):
            runs = []
            for k in range(5):
                a = min(dur - span, (k + 1) * dur / 7) if span < dur else 0
                c = cpu_ms(proc.pid)
                ms = wd.call("POST", "/execute/async", {"script": REDRAW, "args": [a, a + span]})
                runs.append((ms, cpu_ms(proc.pid) - c))
            ms, cpu = sorted(runs)[2]
            print("redraw_%s_ms %.0f cpu_ms %.0f frames %d" % (
                "all" if span == dur else "%ds" % span, ms, cpu,
                wd.js("return fgTimeview.redrawParts.frames;")))
        c = cpu_ms(proc.pid)
        wd.call("POST", "/url", {"url": "file://" + urllib.parse.quote(os.path.abspath(svg))})
        print("svg_load_ms %.0f cpu_ms %.0f" % (wd.js(
            "const t = performance.timing; return t.loadEventEnd - t.navigationStart;"),
            cpu_ms(proc.pid) - c))
    finally:
        try:
            wd.call("DELETE", "")
        except (OSError, RuntimeError):
            pass
        proc.terminate()
        proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
