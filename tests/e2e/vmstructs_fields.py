#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vmstructs_fields.py PID TYPE::FIELD... - which of the fields a running JVM's VMStructs hold.

Reads the JVM's own table, as the agent does from inside: libjvm.so's exported
gHotSpotVMStructs (a pointer to the table) and the gHotSpotVMStructEntry*Offset/ArrayStride
words that lay out its entries, each entry's type and field names read from the process's
memory (/proc/PID/mem) until the entry with no type name. Prints one line a field asked,
"TYPE::FIELD offset N" or "TYPE::FIELD missing", then "entries N". Needs readelf and the
right to read the process's memory (root). Exit 0, or 1 when the table cannot be read.
"""
import os
import re
import struct
import subprocess
import sys

SYMS = ("gHotSpotVMStructs", "gHotSpotVMStructEntryTypeNameOffset",
        "gHotSpotVMStructEntryFieldNameOffset", "gHotSpotVMStructEntryOffsetOffset",
        "gHotSpotVMStructEntryIsStaticOffset", "gHotSpotVMStructEntryArrayStride")
MAX_ENTRIES = 20000
MAX_NAME = 256


def die(msg):
    print("vmstructs_fields: " + msg, file=sys.stderr)
    sys.exit(1)


def libjvm(pid):
    """The base and a readable path of the process's libjvm.so (its mapping at offset 0)."""
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and p[5].endswith("/libjvm.so") and int(p[2], 16) == 0:
                return int(p[0].split("-")[0], 16), "/proc/%d/map_files/%s" % (pid, p[0])
    die("no libjvm.so mapped in %d" % pid)
    return None


def symbols(path):
    out = subprocess.run(["readelf", "-W", "--dyn-syms", path], capture_output=True,
                         text=True, check=False).stdout
    got = {}
    for line in out.splitlines():
        p = line.split()
        name = p[7].split("@", 1)[0] if len(p) >= 8 else ""
        if name in SYMS:
            got[name] = int(p[1], 16)
    missing = [s for s in SYMS if s not in got]
    if missing:
        die("libjvm.so exports no %s" % ", ".join(missing))
    return got


def main():
    if len(sys.argv) < 3:
        die("usage: vmstructs_fields.py PID TYPE::FIELD...")
    pid = int(sys.argv[1])
    want = sys.argv[2:]
    base, path = libjvm(pid)
    sym = symbols(path)
    fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)

    def word(addr):
        return struct.unpack("<Q", os.pread(fd, 8, addr))[0]

    def cstr(addr):
        b = os.pread(fd, MAX_NAME, addr)
        return b.split(b"\0", 1)[0].decode("latin-1")

    table = word(base + sym["gHotSpotVMStructs"])
    off = {k: word(base + sym[k]) for k in SYMS[1:]}
    stride = off["gHotSpotVMStructEntryArrayStride"]
    if not table or not 16 <= stride <= 256:
        die("table %#x, stride %d" % (table, stride))
    fields = {}
    n = 0
    for n in range(MAX_ENTRIES):
        e = table + n * stride
        tname = word(e + off["gHotSpotVMStructEntryTypeNameOffset"])
        if not tname:
            break
        fname = word(e + off["gHotSpotVMStructEntryFieldNameOffset"])
        if not fname:
            continue
        key = cstr(tname) + "::" + cstr(fname)
        if not struct.unpack("<i", os.pread(fd, 4, e + off["gHotSpotVMStructEntryIsStaticOffset"]))[0]:
            fields[key] = word(e + off["gHotSpotVMStructEntryOffsetOffset"])
    else:
        die("no end of the table in %d entries" % MAX_ENTRIES)
    for w in want:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_<>:, ]*::[A-Za-z_][A-Za-z0-9_]*$", w):
            die("'%s' is not TYPE::FIELD" % w)
        print("%s %s" % (w, "offset %d" % fields[w] if w in fields else "missing"))
    print("entries %d" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
