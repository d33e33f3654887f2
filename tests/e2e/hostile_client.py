#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hostile_client - misbehaving peers for the collector's agent socket (nng pull0 over ipc).

    hostile_client.py SOCKET MODE [ARG...]

Modes (each prints one summary line on stdout and exits 0 when it ran as planned):
  flood N              connect and close at once, N times
  half N               send half an SP header (mid-handshake), then close, N times
  idle N SECONDS       hold N connections open without a byte, for SECONDS
  wrongproto N         complete an SP header claiming pair1 (0x11) instead of push0, N times
  oversize             push0 handshake, then message lengths of 1 GiB and 2^40, then close
  garbage N            push0 handshake, then N framed messages of random bytes, then raw noise
  forged PID NAME      push0 handshake, then a valid FGCP hello claiming PID and a code-load
                       record named NAME at 0x7f0000001000; holds the pipe for 2 s
  layoutfile FILE N SEED  write hostile_fp_peer's message file: a HELLO (pid patched by the
                       peer), a DYNAMIC_CODE "Interpreter" (address/size patched by the peer:
                       its own text) and N wild VM_LAYOUT messages
  all                  flood, half, wrongproto, oversize and garbage, in that order

The nng ipc transport: each side sends 8 bytes {0, 'S', 'P', 0, proto_hi, proto_lo, 0, 0},
then every message is a 0x01 byte, a 64-bit big-endian length and the payload.
"""
import os
import random
import socket
import struct
import sys
import time

PUSH0 = 0x50
PAIR1 = 0x11


def sp_header(proto):
    return bytes([0, ord("S"), ord("P"), 0, proto >> 8, proto & 0xFF, 0, 0])


def connect(path, timeout=5.0):
    """Connect, waiting out a full accept backlog (EAGAIN) or a listener being re-created
    (ENOENT, ECONNREFUSED) for up to timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(path)
            return s
        except (BlockingIOError, FileNotFoundError, ConnectionRefusedError):
            s.close()
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def handshake(path, proto=PUSH0):
    s = connect(path)
    s.sendall(sp_header(proto))
    peer = b""
    while len(peer) < 8:
        chunk = s.recv(8 - len(peer))
        if not chunk:
            raise ConnectionError("listener closed during the handshake")
        peer += chunk
    return s, peer


def frame(payload, announced=None):
    n = len(payload) if announced is None else announced
    return b"\x01" + struct.pack(">Q", n) + payload


def fg_str(b):
    return struct.pack("<H", len(b)) + b


def record(rtype, body, flags=0):
    return struct.pack("<HHI", rtype, flags, 8 + len(body)) + body


def fgcp_message(records):
    return b"FGCP" + struct.pack("<HH", 1, 8) + b"".join(records)


def mode_flood(path, n):
    for _ in range(n):
        connect(path).close()
    return "flood: %d connect/close" % n


def mode_half(path, n):
    for _ in range(n):
        s = connect(path)
        s.sendall(sp_header(PUSH0)[:4])
        s.close()
    return "half: %d half handshakes" % n


def mode_idle(path, n, seconds):
    socks = [connect(path) for _ in range(n)]
    time.sleep(seconds)
    for s in socks:
        s.close()
    return "idle: %d silent connections held %.1f s" % (n, seconds)


def mode_wrongproto(path, n):
    refused = 0
    for _ in range(n):
        s = connect(path)
        try:
            s.sendall(sp_header(PAIR1))
            s.settimeout(2.0)
            data = s.recv(64)
            # The listener may send its header, but must then close: a pair1 peer is wrong.
            while data:
                data = s.recv(64)
            refused += 1
        except (socket.timeout, ConnectionError, OSError):
            refused += 1
        finally:
            s.close()
    return "wrongproto: %d pair1 peers" % refused


def mode_oversize(path):
    sent = 0
    for announced in (1 << 30, 1 << 40, (1 << 64) - 1):
        try:
            s, _ = handshake(path)
        except (ConnectionError, OSError):
            continue
        try:
            s.sendall(frame(b"FGCP" + b"\0" * 60, announced))
            sent += 1
            time.sleep(0.2)
        except OSError:
            pass
        finally:
            s.close()
    return "oversize: %d messages announcing >= 1 GiB" % sent


def mode_garbage(path, n):
    rnd = random.Random(1234)
    s, _ = handshake(path)
    sent = 0
    try:
        for i in range(n):
            size = rnd.choice([0, 1, 7, 8, 9, 64, 4096, 65536])
            body = bytes(rnd.getrandbits(8) for _ in range(size))
            if i % 3 == 0 and size >= 8:
                body = b"FGCP" + struct.pack("<HH", 1, 8) + body[8:]
            s.sendall(frame(body))
            sent += 1
        s.sendall(bytes(rnd.getrandbits(8) for _ in range(4096)))
    except OSError:
        pass
    finally:
        s.close()
    return "garbage: %d random messages and 4 KiB of noise" % sent


def mode_forged(path, pid, name):
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    hello = record(1, struct.pack("<IIIIQ", 1, pid, 1, 0, now) + fg_str(b"17.0.0-forged")
                   + fg_str(b"forged"))
    snap_b = record(5, struct.pack("<QII", now, 1, 0), flags=1)
    load = record(2, struct.pack("<QIIQ", 0x7F0000001000, 0x1000, 0, now) + fg_str(name.encode())
                  + struct.pack("<HI", 0, 0), flags=1)
    snap_e = record(6, struct.pack("<QII", now, 1, 0), flags=1)
    s, _ = handshake(path)
    s.sendall(frame(fgcp_message([hello, snap_b, load, snap_e])))
    time.sleep(2.0)
    s.close()
    return "forged: hello claiming pid %d from pid %d, code named %s" % (pid, os.getpid(), name)


def wild_layout(rng):
    """Half of them plausible (offsets a collector's checks accept, pointing anywhere), half
    anything (missing keys, offsets past any object, slots far from the frame)."""
    caps = rng.choice([0xF, 0x7, 0x3, 0xB])
    vals = {}
    if rng.random() < 0.5:
        cm = rng.randrange(16, 257)
        body = rng.randrange(2, 40)
        vals = {1: 17, 2: rng.randrange(0, 200), 3: rng.randrange(0, cm - 7),
                4: rng.randrange(0, cm - 1), 5: rng.randrange(0, cm - 1), 6: rng.randrange(0, cm - 1),
                7: rng.randrange(0, cm - 1), 8: cm, 9: rng.randrange(0, cm - 3),
                10: rng.choice([2, 4]), 11: 1 << rng.randrange(0, 16),
                12: rng.randrange(0, 200), 13: rng.randrange(8, 256), 14: rng.randrange(0, 200),
                15: rng.randrange(0, body - 1), 16: body, 17: rng.randrange(0, 2),
                18: (-rng.randrange(1, 12)) & 0xFFFFFFFF, 19: (-rng.randrange(1, 12)) & 0xFFFFFFFF,
                20: rng.randrange(0, 1 << 32), 21: rng.randrange(0, 1 << 16)}
    else:
        for k in range(1, 22):
            if rng.random() < 0.1:
                continue
            vals[k] = rng.choice([rng.randrange(0, 300), rng.randrange(0, 1 << 32)])
    entries = b"".join(struct.pack("<HHI", k, 0, v) for k, v in sorted(vals.items()))
    return record(9, struct.pack("<II", caps, len(vals)) + entries)


def mode_layoutfile(path, n, seed):
    rng = random.Random(seed)
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    hello = record(1, struct.pack("<IIIIQ", 1, 0, 1, 0, now) + fg_str(b"17.0.0-wild")
                   + fg_str(b"wild"))
    interp = record(4, struct.pack("<QIIQ", 0x400000, 0x1000, 0, now) + fg_str(b"Interpreter"))
    msgs = [hello, interp] + [wild_layout(rng) for _ in range(n)]
    with open(path, "wb") as f:
        for m in msgs:
            b = frame(fgcp_message([m]))
            f.write(struct.pack("<I", len(b)) + b)
    return "layoutfile: %d messages in %s" % (len(msgs), path)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 64
    path, mode, args = argv[1], argv[2], argv[3:]
    if mode == "flood":
        out = mode_flood(path, int(args[0]))
    elif mode == "half":
        out = mode_half(path, int(args[0]))
    elif mode == "idle":
        out = mode_idle(path, int(args[0]), float(args[1]))
    elif mode == "wrongproto":
        out = mode_wrongproto(path, int(args[0]))
    elif mode == "oversize":
        out = mode_oversize(path)
    elif mode == "garbage":
        out = mode_garbage(path, int(args[0]))
    elif mode == "forged":
        out = mode_forged(path, int(args[0]), args[1])
    elif mode == "layoutfile":
        out = mode_layoutfile(path, int(args[0]), int(args[1]))
    elif mode == "all":
        out = "; ".join([mode_flood(path, 200), mode_half(path, 100), mode_wrongproto(path, 20),
                         mode_oversize(path), mode_garbage(path, 200)])
    else:
        sys.stderr.write("hostile_client: unknown mode %r\n" % mode)
        return 64
    print(out, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
