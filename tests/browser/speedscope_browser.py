#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""speedscope_browser.py FILE.speedscope.json SHOTS_DIR - our speedscope file in speedscope.

Checks FILE against the JSON schema speedscope ships (file-format-schema.json of the npm
package `speedscope`, installed by scripts/install-deps.sh into /var/cache/fgcollect-test/npm),
then serves speedscope's page and FILE on 127.0.0.1 and opens it in Debian's headless chromium
(#profileURL=...): speedscope must name the profile in its title and show no error, and the
browser must log none. A screenshot goes to SHOTS_DIR.
Exit 0 pass, 1 fail, 77 skip (only when a tool is missing and FG_ALLOW_MISSING_TOOLS=1).
"""
import base64
import functools
import http.server
import json
import os
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flame_browser import CHROMIUM, DRIVER  # noqa: E402
from timeview_browser import start_browser  # noqa: E402

SPEEDSCOPE = os.environ.get("FG_SPEEDSCOPE_DIR",
                            "/var/cache/fgcollect-test/npm/node_modules/speedscope")


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def missing(msg):
    if os.environ.get("FG_ALLOW_MISSING_TOOLS") == "1":
        print("SKIP: %s (FG_ALLOW_MISSING_TOOLS=1)" % msg)
        return 77
    print("FAIL: %s; scripts/install-deps.sh installs it" % msg, file=sys.stderr)
    return 1


def main():
    if len(sys.argv) != 3:
        print("usage: speedscope_browser.py FILE.speedscope.json SHOTS_DIR", file=sys.stderr)
        return 64
    path, shots = sys.argv[1:]
    release = os.path.join(SPEEDSCOPE, "dist", "release")
    if not os.path.isfile(os.path.join(release, "index.html")):
        return missing("speedscope (npm) not in %s" % SPEEDSCOPE)
    if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
        return missing("%s or %s" % (CHROMIUM, DRIVER))
    try:
        import jsonschema
    except ImportError:
        return missing("python3-jsonschema")
    os.makedirs(shots, exist_ok=True)
    with open(path) as f:
        doc = json.load(f)
    with open(os.path.join(release, "file-format-schema.json")) as f:
        schema = json.load(f)
    try:
        jsonschema.validate(doc, schema)
        print("ok   %s is valid against speedscope's file-format-schema.json" % path)
    except jsonschema.ValidationError as e:
        print("FAIL %s against speedscope's schema: %s at %s" % (
            path, e.message[:300], list(e.absolute_path)[:6]))
        return 1
    # One directory served: speedscope's page and the file beside it.
    root = tempfile.mkdtemp(prefix="fg_speedscope_")
    os.symlink(release, os.path.join(root, "speedscope"))
    os.symlink(os.path.abspath(path), os.path.join(root, "profile.speedscope.json"))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                          functools.partial(Quiet, directory=root))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % srv.server_address[1]
    proc, wd = None, None
    ok = True
    try:
        proc, wd = start_browser(root)
        url = "%s/speedscope/index.html#profileURL=%s" % (
            base, urllib.parse.quote(base + "/profile.speedscope.json", safe=""))
        wd.call("POST", "/url", {"url": url})
        want = doc.get("name", "")
        title = ""
        for _ in range(300):
            title = wd.js("return document.title;")
            if want and want in title:
                break
            time.sleep(0.1)
        print(("ok   " if want in title else "FAIL ") + "speedscope's title names the profile: %r" % title)
        ok &= want in title
        body = wd.js("return document.body.innerText;")
        bad = any(s in body for s in ("Something went wrong", "Failed to load", "Unrecognized format"))
        print(("FAIL " if bad else "ok   ") + "speedscope shows no error")
        ok &= not bad
        png = base64.b64decode(wd.call("GET", "/screenshot"))
        with open(os.path.join(shots, "speedscope.png"), "wb") as f:
            f.write(png)
        errs = wd.console_errors(ignore="favicon")
        print(("FAIL " if errs else "ok   ") + "no console error (%r)" % errs[:3])
        ok &= not errs
    finally:
        if wd:
            wd.quit()
        if proc:
            proc.terminate()
            proc.wait()
        srv.shutdown()
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
