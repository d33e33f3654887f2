#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""flame_browser.py FGCOLLECT [--index PROFDIR_FIXTURE] - the SVG's script in a real browser.

Renders a small profile with `fgcollect flamegraph`, opens it in Debian's headless chromium
driven over WebDriver (plain HTTP JSON to chromedriver, Python stdlib only), and checks:
hover details, click-to-zoom (geometry, dimmed ancestors, hidden rest, URL state), Ctrl-F
search through the real prompt with the matched percentage equal to the one computed here
from the input, the Search button, Reset Zoom, and restoring zoom + search from the URL.
Exit 0 pass, 1 fail, 77 skip (only when chromium or chromedriver is not installed).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"

# (stack, count): Java-like, annotated, no name repeated among siblings.
PROFILE = [
    ("java;Thread.run_[j];Service.handle_[j];Dao.query_[j];Socket.read_[j];read_[k]", 300),
    ("java;Thread.run_[j];Service.handle_[j];Dao.query_[j];Parser.parse_[i]", 120),
    ("java;Thread.run_[j];Service.handle_[j];Cache.get_[j]", 200),
    ("java;Thread.run_[j];Service.handle_[j]", 30),
    ("java;Thread.run_[j];Scheduler.tick_[j];Dao.query_[j];Socket.read_[j]", 150),
    ("java;Thread.run_[j];Scheduler.tick_[j];Sleep.park_[j]", 100),
    ("java;GC.collect;Heap.mark", 100),
]

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def strip(name):
    return name[:-4] if len(name) >= 4 and name[-4:] in ("_[j]", "_[i]", "_[k]", "_[w]") else name


class Node:
    def __init__(self, name):
        self.name, self.total, self.kids = name, 0, {}


def build_tree():
    root = Node("all")
    for stack, n in PROFILE:
        node = root
        root.total += n
        for fr in stack.split(";"):
            node = node.kids.setdefault(fr, Node(strip(fr)))
            node.total += n
    return root


def find(node, name):
    if node.name == name:
        return node, []
    for k in node.kids.values():
        hit = find(k, name)
        if hit:
            return hit[0], [node] + hit[1]
    return None


def matched_pct(root, zoom_name, regex):
    """What the SVG must show: topmost matches inside the zoomed frame / its samples."""
    import re

    rx = re.compile(regex)
    z, ancestors = find(root, zoom_name) if zoom_name else (root, [])
    if any(rx.search(a.name) for a in ancestors + [z]):
        return "Matched: 100%"

    def walk(n):
        return n.total if rx.search(n.name) else sum(walk(k) for k in n.kids.values())

    pct = 100.0 * sum(walk(k) for k in z.kids.values()) / z.total
    return "Matched: %s%%" % ("100" if pct == 100 else "%.1f" % pct)


class Driver:
    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port
        self.sid = None

    def call(self, method, path, body=None):
        url = self.base + (("/session/" + self.sid) if self.sid else "") + path
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read())["value"]
        except urllib.error.HTTPError as e:
            raise RuntimeError("%s %s: %s" % (method, path, e.read().decode()[:400]))

    def js(self, script, *args):
        return self.call("POST", "/execute/sync", {"script": script, "args": list(args)})

    def console_errors(self, ignore=None):
        """The browser log's SEVERE entries, but those whose message holds ignore."""
        logs = self.call("POST", "/se/log", {"type": "browser"})
        return [e for e in logs if e.get("level") == "SEVERE" and
                not (ignore and ignore in e.get("message", ""))]

    def quit(self):
        """Ends the session, if one was made; a driver already gone is no error."""
        if self.sid:
            try:
                self.call("DELETE", "")
            except (OSError, RuntimeError):
                pass

    def el(self, xpath):
        return self.call("POST", "/element", {"using": "xpath", "value": xpath})[ELEMENT]

    def frame_rect(self, name):
        return self.el("//*[local-name()='g'][*[local-name()='title'][starts-with(., '%s (')]]"
                       "/*[local-name()='rect']" % name)

    def click(self, elem):
        self.call("POST", "/element/%s/click" % elem, {})

    def keys(self, *seq):
        acts = []
        for k in seq:
            acts.append({"type": "keyDown", "value": k})
        for k in reversed(seq):
            acts.append({"type": "keyUp", "value": k})
        self.call("POST", "/actions", {"actions": [{"type": "key", "id": "kb", "actions": acts}]})

    def hover(self, elem):
        self.call("POST", "/actions", {"actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "duration": 0, "origin": {ELEMENT: elem},
                         "x": 0, "y": 0}]}]})

    def answer_prompt(self, text):
        for _ in range(50):
            try:
                self.call("GET", "/alert/text")
                break
            except RuntimeError:
                time.sleep(0.1)
        self.call("POST", "/alert/text", {"text": text})
        self.call("POST", "/alert/accept", {})

    def text(self, elem_id):
        return self.js("return document.getElementById(arguments[0]).textContent;", elem_id)


def check_index(wd, fixture, tmp, svg, folded, nframes):
    d = os.path.join(tmp, "profiles")
    subprocess.run([fixture, d, svg, folded], check=True)
    wd.call("POST", "/url", {"url": "file://" + urllib.parse.quote(os.path.join(d, "index.html"))})
    groups = wd.js("return Array.from(document.querySelectorAll('section.container'))"
                   ".map(s => s.getAttribute('data-container'));")
    check(groups == ["aaaaaaaaaaaa", "bbbbbbbbbbbb", "host"],
          "index: containers ordered by their newest profile (%r)" % groups)
    starts = wd.js("return Array.from(document.querySelectorAll('section.container'))"
                   ".map(s => Array.from(s.querySelectorAll('td.start')).map(t => t.textContent));")
    check(starts == [["2026-11-22 08:12:00", "2026-11-22 08:11:00", "2026-11-22 08:10:00"],
                     ["2026-11-22 08:11:30", "2026-11-22 08:10:30"],
                     ["2026-11-22 08:10:10"]],
          "index: rows newest first in each container (%r)" % starts)
    svcs = wd.js("return Array.from(document.querySelectorAll('section.container'))"
                 ".map(s => Array.from(s.querySelectorAll('td.service, td.pid, td.host'))"
                 ".map(t => t.textContent).join(' '));")
    check(svcs == ["checkout 101 node1 checkout 101 node1 checkout 101 node1",
                   "billing 202 node1 billing 202 node1", "batch 303 node1"],
          "index: service, host PID and host per row (%r)" % svcs)
    heading = wd.js("return document.querySelector('section.container h2').textContent;")
    check("aaaaaaaaaaaa0000000000000000000000000000000000000000000000000001" in heading,
          "index: full container id in the heading (%r)" % heading)
    shown = wd.js("return document.querySelector('table').getBoundingClientRect().height;")
    check(shown and shown > 50, "index: tables rendered (height %r)" % shown)
    link = wd.el("(//section[1]//a[text()='flame graph'])[1]")
    href = wd.js("return arguments[0].href;", {ELEMENT: link})
    wd.click(link)
    time.sleep(0.5)
    if wd.call("GET", "/url").endswith("index.html"):
        print("note: WebDriver click did not navigate; following the link by script")
        wd.js("arguments[0].click();", {ELEMENT: link})
    for _ in range(50):
        if wd.call("GET", "/url").endswith(".svg"):
            break
        time.sleep(0.1)
    here = wd.call("GET", "/url")
    check(here.endswith("20261122T081200Z_checkout_aaaaaaaaaaaa_101_node1.svg"),
          "index: the newest row's link opens its SVG (%s, link %s)" % (here, href))
    got = wd.js("var f = document.getElementById('frames'); return f ? f.children.length : -1;")
    check(got == nframes, "index: the linked flame graph renders (%s frames)" % got)


def main():
    fixture = None
    if len(sys.argv) == 4 and sys.argv[2] == "--index":
        fixture = sys.argv[3]
    elif len(sys.argv) != 2:
        print("usage: flame_browser.py FGCOLLECT [--index PROFDIR_FIXTURE]", file=sys.stderr)
        return 64
    if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
        # `make test` installs them (scripts/install-deps.sh): missing is a failure unless
        # the caller says it knowingly runs without them.
        msg = "%s or %s not installed (Debian packages chromium, chromium-driver)" % (
            CHROMIUM, DRIVER)
        if os.environ.get("FG_ALLOW_MISSING_TOOLS") == "1":
            print("SKIP: %s (FG_ALLOW_MISSING_TOOLS=1)" % msg)
            return 77
        print("FAIL: %s; scripts/install-deps.sh installs them, FG_ALLOW_MISSING_TOOLS=1 "
              "skips this test instead" % msg, file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="fg_browser_")
    driver_proc = None
    wd = None
    try:
        folded = os.path.join(tmp, "t.folded")
        svg = os.path.join(tmp, "t.svg")
        with open(folded, "w") as f:
            f.writelines("%s %d\n" % p for p in PROFILE)
        subprocess.run([sys.argv[1], "flamegraph", "--colors", "java", "-o", svg, folded],
                       check=True)
        root = build_tree()

        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        driver_proc = subprocess.Popen([DRIVER, "--port=%d" % port],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wd = Driver(port)
        for _ in range(100):
            try:
                if wd.call("GET", "/status").get("ready"):
                    break
            except (OSError, RuntimeError):
                pass
            time.sleep(0.1)
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1400,900",
                "--user-data-dir=" + os.path.join(tmp, "profile")]
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "unhandledPromptBehavior": "ignore",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args}}}}
        wd.sid = wd.call("POST", "/session", caps)["sessionId"]
        url = "file://" + urllib.parse.quote(svg)
        wd.call("POST", "/url", {"url": url})

        nframes = wd.js("return document.getElementById('frames').children.length;")

        def count(n):
            return 1 + sum(count(k) for k in n.kids.values())

        check(nframes == count(root), "all %d frames drawn (got %s)" % (count(root), nframes))

        # hover: details line shows the title
        rect = wd.frame_rect("Dao.query")
        wd.hover(rect)
        det = wd.text("details")
        check(det.startswith("Function: Dao.query (") and "samples" in det,
              "hover details: %r" % det)

        # click to zoom on Service.handle
        target = wd.frame_rect("Service.handle")
        ox = wd.js("return arguments[0].getAttribute('x');", {ELEMENT: target})
        oy = wd.js("return arguments[0].getAttribute('y');", {ELEMENT: target})
        wd.click(target)
        w = wd.js("return arguments[0].getAttribute('width');", {ELEMENT: target})
        check(w == "1180.0", "zoomed frame fills the width (%s)" % w)
        cls = wd.js("return arguments[0].parentNode.getAttribute('class');",
                    {ELEMENT: wd.frame_rect("Thread.run")})
        check(cls is not None and "parent" in cls, "ancestor dimmed (class %r)" % cls)
        cls = wd.js("return arguments[0].parentNode.getAttribute('class');",
                    {ELEMENT: wd.frame_rect("GC.collect")})
        check(cls is not None and "hide" in cls, "unrelated frame hidden (class %r)" % cls)
        cls = wd.js("return document.getElementById('unzoom').getAttribute('class');")
        check("hide" not in (cls or ""), "Reset Zoom shown")
        q = urllib.parse.parse_qs(urllib.parse.urlparse(wd.call("GET", "/url")).query)
        check(q.get("x") == [ox] and q.get("y") == [oy], "zoom kept in URL %r" % q)

        # Ctrl-F search through the prompt, inside the zoom
        regex = "Dao|Cache"
        wd.keys("\ue009", "f")
        wd.answer_prompt(regex)
        want = matched_pct(root, "Service.handle", regex)
        got = wd.text("matched")
        check(got == want, "Ctrl-F search in zoom: %r, expected %r" % (got, want))
        fill = wd.js("return arguments[0].getAttribute('fill');", {ELEMENT: wd.frame_rect("Cache.get")})
        check(fill == "rgb(230,0,230)", "match highlighted (%s)" % fill)
        q = urllib.parse.parse_qs(urllib.parse.urlparse(wd.call("GET", "/url")).query)
        check(q.get("s") == [regex], "search kept in URL %r" % q)

        # reset zoom: percentage now of the whole graph
        wd.click(wd.el("//*[@id='unzoom']"))
        want = matched_pct(root, None, regex)
        got = wd.text("matched")
        check(got == want, "after Reset Zoom: %r, expected %r" % (got, want))
        q = urllib.parse.parse_qs(urllib.parse.urlparse(wd.call("GET", "/url")).query)
        check("x" not in q and q.get("s") == [regex], "zoom dropped from URL %r" % q)

        # Search button: first click resets, second prompts
        wd.click(wd.el("//*[@id='search']"))
        cls = wd.js("return document.getElementById('matched').getAttribute('class');")
        check("hide" in (cls or ""), "Search button resets the search")
        wd.click(wd.el("//*[@id='search']"))
        wd.answer_prompt("^S")
        want = matched_pct(root, None, "^S")
        got = wd.text("matched")
        check(got == want, "Search button: %r, expected %r" % (got, want))

        # state restored from the URL on load
        wd.call("POST", "/url", {"url": url + "?" + urllib.parse.urlencode(
            {"x": ox, "y": oy, "s": "Socket|Parser"})})
        w = wd.js("return arguments[0].getAttribute('width');",
                  {ELEMENT: wd.frame_rect("Service.handle")})
        check(w == "1180.0", "zoom restored from URL (width %s)" % w)
        want = matched_pct(root, "Service.handle", "Socket|Parser")
        got = wd.text("matched")
        check(got == want, "search restored from URL: %r, expected %r" % (got, want))
        if fixture:
            check_index(wd, fixture, tmp, svg, folded, count(root))
    except Exception as e:  # report, never pass silently
        # repr: an exception without a message (a bare timeout) still names its type
        failures.append("exception: %r" % e)
        print("FAIL exception: %r" % e)
    finally:
        if wd and wd.sid:
            try:
                wd.call("DELETE", "")
            except Exception:
                pass
        if driver_proc:
            driver_proc.terminate()
            try:
                driver_proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                driver_proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("FAIL: %d check(s) failed: %s" % (len(failures), "; ".join(failures)))
        return 1
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
