#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""timeview_shot.py PAGE.html OUT.png [FROM TO] - a screenshot of a time view page in headless
chromium (the driver of timeview_browser.py), with the seconds [FROM, TO) selected when given:
how docs/images/timeview-demo.png is made from `make demo`'s build/demo/primes-timeview.html.
"""
import base64
import os
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timeview_browser import start_browser  # noqa: E402


def main():
    if len(sys.argv) not in (3, 5):
        print("usage: timeview_shot.py PAGE.html OUT.png [FROM TO]", file=sys.stderr)
        return 64
    page, out = sys.argv[1:3]
    proc, wd = start_browser(tempfile.mkdtemp(prefix="fg_tvshot_"))
    try:
        wd.call("POST", "/url", {"url": "file://" + urllib.parse.quote(os.path.abspath(page))})
        for _ in range(600):
            if wd.js("return !!(window.fgTimeview && fgTimeview.ready);"):
                break
            time.sleep(0.05)
        if len(sys.argv) == 5:
            wd.call("POST", "/execute/async", {
                "script": "fgTimeview.select(arguments[0], arguments[1]).then(arguments[2]);",
                "args": [float(sys.argv[3]), float(sys.argv[4])]})
        with open(out, "wb") as f:
            f.write(base64.b64decode(wd.call("GET", "/screenshot")))
    finally:
        wd.quit()
        proc.terminate()
        proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
