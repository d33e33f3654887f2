#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""timeview_browser.py PAGE.html TRUTH SHOTS_DIR [--blocks] - the time view page in a real
browser.

Opens PAGE (a `record -o x.html` page, or one from bench's timeview-gen) in Debian's headless
chromium over WebDriver (chromedriver, Python stdlib only, the driver of flame_browser.py) and:
checks that the page opened without decoding any counting, that a 1 s selection read one time
block's countings, and, when the page has time blocks with sums (always with --blocks), that the
whole recording's flame graph from the blocks' sums equals the one from their countings; then
picks the thread "phases" in the thread filter; for each phase of TRUTH drags a 1 s selection
across the heatmap, inside that phase, with the mouse; reads the flame graph drawn (its frames'
values and parents, from the page's fgTimeview.frames(): the graph is a canvas) and checks
that >= 90% of the selection lies under the method hot then;
then the difference of two phases (one as the baseline), search and zoom; and that the browser
logged no error. Screenshots go to SHOTS_DIR.

TRUTH is a file of lines "NAME START_NS END_NS" (CLOCK_MONOTONIC ns, the clock of the page's
meta.t0): during [START, END) the frame NAME (a label as the page shows it, e.g. Phases.phaseA)
was the hot method of the thread "phases".
Exit 0 pass, 1 fail, 77 skip (only when chromium or chromedriver is missing and
FG_ALLOW_MISSING_TOOLS=1).
"""
import base64
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flame_browser import CHROMIUM, DRIVER, Driver  # noqa: E402

ROWS = 50  # the page's slices of a second
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def start_browser(tmp):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([DRIVER, "--port=%d" % port],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wd = Driver(port)
    for _ in range(100):
        try:
            if wd.call("GET", "/status").get("ready"):
                break
        except (OSError, RuntimeError):
            pass
        time.sleep(0.1)
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--window-size=1400,1000", "--user-data-dir=" + os.path.join(tmp, "profile")]
    caps = {"capabilities": {"alwaysMatch": {
        "browserName": "chrome", "unhandledPromptBehavior": "ignore",
        "goog:loggingPrefs": {"browser": "ALL"},
        "goog:chromeOptions": {"binary": CHROMIUM, "args": args}}}}
    wd.sid = wd.call("POST", "/session", caps)["sessionId"]
    return proc, wd


def settle(wd):
    """Wait until the page has drawn what it was asked (time blocks read, then drawn)."""
    wd.call("POST", "/execute/async", {"script": "fgTimeview.settled().then(arguments[0]);",
                                       "args": []})


def shot(wd, shots, name):
    png = base64.b64decode(wd.call("GET", "/screenshot"))
    with open(os.path.join(shots, name + ".png"), "wb") as f:
        f.write(png)


def drag(wd, c0, c1):
    """Press on cell c0 (second * ROWS + row), move to c1 and release, with the mouse."""
    a = wd.js("return fgTimeview.cellRect(arguments[0], arguments[1]);", c0 // ROWS, c0 % ROWS)
    b = wd.js("return fgTimeview.cellRect(arguments[0], arguments[1]);", c1 // ROWS, c1 % ROWS)
    mid = wd.js("return fgTimeview.cellRect(arguments[0], arguments[1]);",
                (c0 + c1) // 2 // ROWS, (c0 + c1) // 2 % ROWS)
    acts = [{"type": "pointerMove", "duration": 0, "origin": "viewport",
             "x": int(a["x"]), "y": int(a["y"])},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerMove", "duration": 50, "origin": "viewport",
             "x": int(mid["x"]), "y": int(mid["y"])},
            {"type": "pointerMove", "duration": 50, "origin": "viewport",
             "x": int(b["x"]), "y": int(b["y"])},
            {"type": "pointerUp", "button": 0}]
    wd.call("POST", "/actions", {"actions": [{
        "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
        "actions": acts}]})
    wd.call("DELETE", "/actions")
    settle(wd)


def click_at(wd, x, y):
    """A mouse click at client coordinates (x, y)."""
    wd.call("POST", "/actions", {"actions": [{
        "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
        "actions": [{"type": "pointerMove", "duration": 0, "origin": "viewport",
                     "x": int(x), "y": int(y)},
                    {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]})
    wd.call("DELETE", "/actions")


def frames(wd):
    """The flame graph drawn: [(node, parent, value, name, title)] and the selection's total."""
    settle(wd)
    got = wd.js("return document.getElementById('flame-cv') ? fgTimeview.frames() : null;")
    if not got:
        return 0, []
    out = []
    for node, parent, value, title, _ in got["frames"]:
        out.append((node, parent, value, title.rsplit(" (", 1)[0], title))
    return got["total"], out


def share_under(total, fr, name):
    """The share of the selection under a frame called name (not counted twice when nested)."""
    by = {f[0]: f for f in fr}

    def nested(f):
        p = f[1]
        while p in by and p != 0:
            if by[p][3] == name:
                return True
            p = by[p][1]
        return False
    under = sum(f[2] for f in fr if f[3] == name and not nested(f))
    return under / total if total else 0.0


def label(name):
    """A truth name as the page labels Java frames: compiled, inlined or interpreted."""
    return [name + s for s in ("_[j]", "_[i]", "_[0]")]


def select(wd, a, b):
    """Select seconds [a, b) through the page's script and wait for the drawing."""
    wd.call("POST", "/execute/async", {
        "script": "fgTimeview.select(arguments[0], arguments[1]).then(arguments[2]);",
        "args": [a, b]})


def lazy_blocks(wd, duration, must):
    """Opening decoded no counting; a 1 s selection read one block; a whole-recording selection
    from the blocks' sums equals the same from their countings (when the page has sums)."""
    read = wd.js("return fgTimeview.blocksRead;")
    check(read == {"s": 0, "h": 0} and wd.js("return fgTimeview.inflated;") == 1,
          "opened without decoding a counting: blocks read %r, blobs inflated %r" % (
              read, wd.js("return fgTimeview.inflated;")))
    nblocks = wd.js("return fgTimeview.blocks;")
    sums = wd.js("return !!document.getElementById('fg-h0');")
    if nblocks < 2 or not sums:
        check(not must, "the page has time blocks with sums (%d blocks, sums: %s)" % (
            nblocks, sums))
        return
    cols = wd.js("return fgTimeview.meta.block_cols;")
    select(wd, 0.2, 0.2 + min(1, cols - 0.4))  # inside the first block
    read = wd.js("return fgTimeview.blocksRead;")
    check(read == {"s": 1, "h": 0}, "a 1 s selection read one block's countings (%r of %d)" % (
        read, nblocks))
    select(wd, 0, duration + 1)
    by_sum = frames(wd)
    read = wd.js("return fgTimeview.blocksRead;")
    check(read["h"] >= 1, "the whole recording read blocks' sums (%r of %d)" % (read, nblocks))
    wd.js("fgTimeview.useSums = false;")
    select(wd, 0, duration + 1)
    by_countings = frames(wd)
    wd.js("fgTimeview.useSums = true;")
    counts = sum(wd.js("return fgTimeview.cellCounts();"))
    check(by_sum[0] == by_countings[0] == counts and by_sum[1] == by_countings[1],
          "the whole recording from sums equals it from countings: %d and %d of %d samples, "
          "%d and %d frames" % (by_sum[0], by_countings[0], counts, len(by_sum[1]),
                                len(by_countings[1])))


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[4:] not in ([], ["--blocks"]):
        print("usage: timeview_browser.py PAGE.html TRUTH SHOTS_DIR [--blocks]", file=sys.stderr)
        return 64
    page, truth_file, shots = sys.argv[1:4]
    if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
        msg = "%s or %s not installed (Debian packages chromium, chromium-driver)" % (
            CHROMIUM, DRIVER)
        if os.environ.get("FG_ALLOW_MISSING_TOOLS") == "1":
            print("SKIP: %s (FG_ALLOW_MISSING_TOOLS=1)" % msg)
            return 77
        print("FAIL: %s; scripts/install-deps.sh installs them" % msg, file=sys.stderr)
        return 1
    os.makedirs(shots, exist_ok=True)
    truth = []
    with open(truth_file) as f:
        for line in f:
            if line.strip():
                n, a, b = line.split()
                truth.append((n, int(a), int(b)))
    tmp = tempfile.mkdtemp(prefix="fg_timeview_")
    proc, wd = None, None
    try:
        proc, wd = start_browser(tmp)
        t_open = time.time()
        wd.call("POST", "/url", {"url": "file://" + urllib.parse.quote(os.path.abspath(page))})
        for _ in range(300):
            if wd.js("return !!(window.fgTimeview && fgTimeview.ready);"):
                break
            time.sleep(0.05)
        check(wd.js("return !!(window.fgTimeview && fgTimeview.ready);"), "the page loaded")
        print("page ready %.0f ms after opening (its own load: %.0f ms)" % (
            (time.time() - t_open) * 1000, wd.js("return fgTimeview.loadMs;") or -1))
        check(wd.js("return document.getElementById('error').textContent;") == "",
              "no error shown on the page")
        # the heatmap is drawn from the page's head alone, before the countings are parsed
        check(wd.js("return fgTimeview.shownBeforeCountings;") is True,
              "the heatmap drawn before the rest of the page was parsed")
        meta = wd.js("return fgTimeview.meta;")
        t0 = meta["t0"]
        duration = wd.js("return fgTimeview.duration;")
        lazy_blocks(wd, duration, sys.argv[4:] == ["--blocks"])
        # the thread filter: only "phases"
        opt = wd.el("//select[@id='threads']/option[starts-with(., 'phases')]")
        wd.click(opt)
        settle(wd)
        picked = wd.js("return Array.from(document.getElementById('threads').selectedOptions)"
                       ".map(o => o.textContent);")
        check(len(picked) == 1 and picked[0].startswith("phases"),
              "thread filter picks the thread phases (%r)" % picked)
        shot(wd, shots, "0-loaded")
        windows = {}
        for k, (name, a, b) in enumerate(truth):
            if a < t0 or b - a < 2_500_000_000 or (a - t0) / 1e9 + 2.1 > duration:
                continue  # a phase cut by the recording's start or end
            start = (a - t0) / 1e9 + 1.0  # its middle second, away from both edges
            c0 = int(start * ROWS) + 1
            c1 = c0 + ROWS - 1  # 50 cells of 20 ms: 1 s
            drag(wd, c0, c1)
            status = wd.text("status")
            total, fr = frames(wd)
            share = max(share_under(total, fr, n) for n in label(name))
            windows.setdefault(name, (c0, c1))
            check(total > 0 and share >= 0.90,
                  "%.2f-%.2f s (%s): %.1f%% of %d samples under %s" % (
                      c0 / ROWS, (c1 + 1) / ROWS, status.split(":")[0], 100 * share, total, name))
            shot(wd, shots, "%d-%s" % (k + 1, name))
        check(len(windows) >= 2, "at least two phases inside the recording (%d)" % len(windows))
        # the difference: the middle second of a phase as the baseline, a second across its
        # end selected: the next phase's method grew, this one's shrank
        done = [(n, a, b) for (n, a, b) in truth if n in windows]
        names = [n for n, _, _ in done]
        if len(done) >= 2:
            base, a, b = done[0]
            cur = truth[truth.index(done[0]) + 1][0]  # the phase after it
            c0 = int(((b - t0) / 1e9 - 0.5) * ROWS) + 1
            drag(wd, *windows[base])
            wd.click(wd.el("//button[@id='baseline']"))
            settle(wd)
            drag(wd, c0, c0 + ROWS - 1)
            _, fr = frames(wd)
            grew = [f for f in fr if f[3] in label(cur)]
            shrank = [f for f in fr if f[3] in label(base)]
            check(any("+" in f[4] and "points against the baseline" in f[4] for f in grew),
                  "differential: %s grew against the baseline (%s)" % (
                      cur, grew[0][4] if grew else "no frame"))
            check(any(", -" in f[4] and "points against the baseline" in f[4] for f in shrank),
                  "differential: %s shrank against the baseline (%s)" % (
                      base, shrank[0][4] if shrank else "no frame"))
            fills = wd.js("return fgTimeview.frames().frames;")
            fill = {f[3].rsplit(" (", 1)[0]: f[4] for f in fills}
            up = [fill[n] for n in label(cur) if n in fill]
            down = [fill[n] for n in label(base) if n in fill]
            check(up and up[0].startswith("rgb(255,"), "the grown frame is red (%r)" % up)
            check(down and down[0].endswith(",255)"), "the shrunk frame is blue (%r)" % down)
            shot(wd, shots, "9-differential")
            cur = names[1]
            wd.click(wd.el("//button[@id='no-baseline']"))
            settle(wd)
            # search: the phase selected now
            drag(wd, *windows[cur])
            box = wd.el("//input[@id='search']")
            wd.call("POST", "/element/%s/value" % box, {"text": re.escape(cur)})
            wd.click(wd.el("//button[@id='search-btn']"))
            settle(wd)
            matched = wd.text("matched")
            pct = float(matched.split(":")[1].strip().rstrip("%")) if ":" in matched else 0
            check(pct >= 90, "search %s: %s" % (cur, matched))
            # zoom: a click on the hot frame (drawn on the canvas) makes it the full width
            hot = next((n for n in label(cur)
                        if wd.js("return fgTimeview.frameRect(arguments[0]);", n)), None)
            r = wd.js("return fgTimeview.frameRect(arguments[0]);", hot) if hot else None
            if r:
                click_at(wd, r["x"], r["y"])
                settle(wd)
                r = wd.js("return fgTimeview.frameRect(arguments[0]);", hot)
            w, full = (r["width"], r["full"]) if r else (0, 1)
            check(abs(w - full) < 1, "zoomed: %s is %.0f of %.0f px" % (cur, w, full))
            shot(wd, shots, "10-search-zoom")
        t = time.time()
        select(wd, 0, 1)
        print("redraw of a selection: %.0f ms (the page's own: %.1f ms)" % (
            (time.time() - t) * 1000, wd.js("return fgTimeview.redrawMs;")))
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
