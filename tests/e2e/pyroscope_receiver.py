#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pyroscope_receiver.py PORT OUTDIR - a stand-in for a Pyroscope server's ingest endpoint, for
the protocol test of `watch --push` (no Pyroscope can be installed here).

Checks every request against Pyroscope's documented HTTP ingest API for format=pprof
(docs/sources/configure-server/about-server-api.md of grafana/pyroscope):
  POST /ingest with query parameters name (APP{key=value,...}), from and until (Unix seconds,
  from <= until), format=pprof, sampleRate (Hz); a multipart/form-data body whose file field
  "profile" holds the gzip'd profile.proto and whose "sample_type_config" is the JSON sample
  type configuration. The labels fgcollect promises (service_name, container_id, host_pid,
  hostname) must be there.
The optional units and aggregationType parameters, when given, must agree with the sample
type configuration (units) and be sum or average. With format=pprof the server names the profile
type after the sample type's display name (an original Pyroscope server stores APP.cpu,
APP.off_cpu, APP.wall): saved as "profile_type", with "sample_type" and "units". Allocation,
live and lock profiles carry two sample types, each named as pyroscope-java's Java profiles
are (alloc_space as alloc_in_new_tlab_bytes, alloc_objects as alloc_in_new_tlab_objects,
delay as lock_duration, contentions as lock_count; inuse_space and inuse_objects averaged):
every one is checked and saved in "profile_types"; "profile_type" is the one whose units the
query names.
An accepted request is answered 200 and saved as OUTDIR/N.pb.gz plus OUTDIR/N.json (the
query); a refused one is answered 400 and its reason appended to OUTDIR/errors.log.

pyroscope_receiver.py PORT OUTDIR MODEFILE - the same, misbehaving as MODEFILE says when a
request arrives (read each time, so a test switches modes while it runs): "500" answers HTTP 500
and keeps nothing (counted in OUTDIR/refused.count), "slow S" waits S seconds before it reads and
answers the request, anything else (or no file) is the normal service.
"""
import email.parser
import gzip
import http.server
import json
import os
import re
import sys
import time
import urllib.parse

NAME_RE = re.compile(r"^([A-Za-z0-9._-]+)\{((?:[A-Za-z_][A-Za-z0-9_]*=[^,{}=]+)"
                     r"(?:,[A-Za-z_][A-Za-z0-9_]*=[^,{}=]+)*)\}$")
LABELS = ("service_name", "container_id", "host_pid", "hostname")
# Sample types and the display name each must have ("" when any will do).
DISPLAY = {"samples": "", "off_cpu": "", "wall": "",
           "alloc_objects": "alloc_in_new_tlab_objects", "alloc_space": "alloc_in_new_tlab_bytes",
           "inuse_objects": "inuse_objects", "inuse_space": "inuse_space",
           "contentions": "lock_count", "delay": "lock_duration"}
PAIRS = [{"alloc_objects", "alloc_space"}, {"inuse_objects", "inuse_space"},
         {"contentions", "delay"}]
UNITS = ("samples", "objects", "bytes", "nanoseconds", "lock_samples", "lock_nanoseconds")
OUT = sys.argv[2]
count = 0
refused = 0


def check(handler, body):
    """The reason a request breaks the documented API, or None; also the saved query."""
    u = urllib.parse.urlsplit(handler.path)
    if u.path != "/ingest":
        return "path %r is not /ingest" % u.path, None
    q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
    for k in ("name", "from", "until", "format", "sampleRate"):
        if len(q.get(k, [])) != 1:
            return "query parameter %s missing or repeated" % k, None
    q = {k: v[0] for k, v in q.items()}
    m = NAME_RE.match(q["name"])
    if not m:
        return "name %r is not APP{key=value,...}" % q["name"], None
    labels = dict(kv.split("=", 1) for kv in m.group(2).split(","))
    for k in LABELS:
        if not labels.get(k):
            return "label %s missing from name %r" % (k, q["name"]), None
    if not re.fullmatch(r"[0-9]+", labels["host_pid"]):
        return "host_pid %r is not a number" % labels["host_pid"], None
    try:
        t0, t1, hz = int(q["from"]), int(q["until"]), int(q["sampleRate"])
    except ValueError:
        return "from/until/sampleRate are not integers", None
    if not (1500000000 < t0 <= t1 < 4000000000) or abs(time.time() - t1) > 600 or hz <= 0:
        return "from=%d until=%d sampleRate=%d make no sense" % (t0, t1, hz), None
    if q["format"] != "pprof":
        return "format %r is not pprof" % q["format"], None
    ctype = handler.headers.get("Content-Type", "")
    if not ctype.startswith("multipart/form-data") or "boundary=" not in ctype:
        return "Content-Type %r is not multipart/form-data with a boundary" % ctype, None
    msg = email.parser.BytesParser().parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    parts = {}
    for part in msg.get_payload() if msg.is_multipart() else []:
        name = part.get_param("name", header="content-disposition")
        if part.get_param("filename", header="content-disposition") is None:
            return "form field %r is not a file field" % name, None
        parts[name] = part.get_payload(decode=True)
    if set(parts) != {"profile", "sample_type_config"}:
        return "form fields %r, expected profile and sample_type_config" % sorted(parts), None
    prof = parts["profile"]
    if prof[:2] != b"\x1f\x8b":
        return "profile is not gzip'd", None
    try:
        gzip.decompress(prof)
        cfg = json.loads(parts["sample_type_config"])
    except (OSError, ValueError) as e:
        return "unreadable profile or sample_type_config: %s" % e, None
    if not isinstance(cfg, dict) or not 1 <= len(cfg) <= 2:
        return "sample_type_config %r does not name one or two sample types" % cfg, None
    if len(cfg) == 2 and set(cfg) not in PAIRS:
        return "sample_type_config %r is not one of the Java profiles' pairs" % cfg, None
    types = {}
    for stype, st in cfg.items():
        if stype not in DISPLAY or not isinstance(st, dict) or \
                st.get("units") not in UNITS or \
                st.get("aggregation") not in ("sum", "average") or \
                not isinstance(st.get("sampled"), bool) or not st.get("display-name"):
            return "sample_type_config %r does not follow the documented form" % cfg, None
        if DISPLAY[stype] and st["display-name"] != DISPLAY[stype]:
            return "sample type %s shown as %r, not as pyroscope-java's %r" % (
                stype, st["display-name"], DISPLAY[stype]), None
        if stype.encode() not in gzip.decompress(prof):
            return "the profile has no sample type %r" % stype, None
        types[stype] = st
    if "units" in q and q["units"] not in [st["units"] for st in types.values()]:
        return "units=%s but the sample types' units are %s" % (
            q["units"], [st["units"] for st in types.values()]), None
    if q.get("aggregationType", "sum") not in ("sum", "average"):
        return "aggregationType %r is not sum or average" % q["aggregationType"], None
    stype = next((k for k, st in types.items() if st["units"] == q.get("units")),
                 next(iter(types)))
    q["sample_type"] = stype
    q["profile_type"] = m.group(1) + "." + types[stype]["display-name"]
    q["profile_types"] = sorted(m.group(1) + "." + st["display-name"] for st in types.values())
    q["labels"] = labels
    q["app"] = m.group(1)
    q["received"] = time.time()
    return None, (q, prof)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def reply(self, code, text):
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def mode(self):
        try:
            with open(sys.argv[3]) as f:
                return f.read().split()
        except (IndexError, OSError):
            return []

    def do_POST(self):
        global count, refused
        m = self.mode()
        if m[:1] == ["slow"]:
            time.sleep(float(m[1]))
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        if len(body) < n:
            # The client hung up before sending it all (a push that gave up on the "slow"
            # mode's server): no request was made, so nothing to judge.
            with open(os.path.join(OUT, "abandoned.log"), "a") as f:
                f.write("%d of %d bytes\n" % (len(body), n))
            return
        if m[:1] == ["500"]:
            refused += 1
            with open(os.path.join(OUT, "refused.count"), "w") as f:
                f.write("%d\n" % refused)
            self.reply(500, "overloaded")
            return
        why, got = check(self, body)
        if why:
            with open(os.path.join(OUT, "errors.log"), "a") as f:
                f.write(why + "\n")
            self.reply(400, why)
            return
        q, prof = got
        count += 1
        with open(os.path.join(OUT, "%d.pb.gz" % count), "wb") as f:
            f.write(prof)
        with open(os.path.join(OUT, "%d.json" % count), "w") as f:
            json.dump(q, f)
        self.reply(200, "OK")

    def do_GET(self):
        with open(os.path.join(OUT, "errors.log"), "a") as f:
            f.write("GET %s: ingest takes POST\n" % self.path)
        self.reply(405, "POST only")


def main():
    os.makedirs(OUT, exist_ok=True)
    srv = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("listening on 127.0.0.1:%d since %.3f" % (srv.server_address[1], time.time()),
          flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
