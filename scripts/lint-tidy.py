#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""lint-tidy.py BUILD_DIR FILE... - clang-tidy on each FILE (scripts/lint.sh's step 3), with
the compile database of BUILD_DIR, remembering the files it found clean.

A file is analysed again unless a clean result of exactly the same input is remembered: the key
is a SHA-256 of this script (the checks and their options are here), clang-tidy's and clang's
versions, the file's compile command, its text, and its preprocessed text with comments kept
(clang -E -C with the same flags: every header it includes, every macro, every NOLINT), each
with the checkout's and the build's directories replaced by fixed names. Only a
clean result (exit status 0) is remembered, so a finding is reported on every run; anything
that stops the key from being made (clang -E failing, no compile command) means no cache for
that file. The cache is a directory of empty files named by key: FG_LINT_CACHE (default
/var/cache/fgcollect-test/tidy; "off": none), made when missing; a cache it cannot write is
not used. Exits 1 if clang-tidy found anything (its findings on stdout), else 0.
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys

# Off on purpose:
#  bugprone-sizeof-expression: clang-tidy 14 flags every `n * sizeof(*p)` where p is an array of
#    pointers to structs ("sizeof(A*)"), the project's allocation idiom; its
#    WarnOnSizeOfPointerToAggregate switch only exists from clang-tidy 15.
#  bugprone-suspicious-string-compare stays on, but without WarnOnImplicitComparison: the code
#    uses `!memcmp(...)` / `memcmp(...) ||` as equality tests throughout.
# Every finding is an error (--warnings-as-errors), so a new one fails the run. The --config
# given here is the whole configuration: clang-tidy reads no .clang-tidy file.
TIDY_ARGS = [
    "--quiet", "--warnings-as-errors=*",
    "--config={CheckOptions: [{key: bugprone-suspicious-string-compare.WarnOnImplicitComparison, value: false}]}",
    "--checks=-*,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,"
    "-bugprone-narrowing-conversions,-bugprone-assignment-in-if-condition,-bugprone-sizeof-expression,"
    "clang-analyzer-*,-clang-analyzer-security.insecureAPI.*,-clang-analyzer-valist.Uninitialized",
]


def out(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def cache_dir():
    d = os.environ.get("FG_LINT_CACHE", "/var/cache/fgcollect-test/tidy")
    if d == "off":
        return None
    try:
        os.makedirs(d, mode=0o755, exist_ok=True)
    except OSError:
        return None
    return d if os.access(d, os.W_OK) else None


def preprocess_cmd(entry):
    """The entry's compile command turned into clang -E -C to stdout, or None."""
    args = entry.get("arguments") or shlex.split(entry.get("command", ""))
    if not args:
        return None
    cmd = ["clang"]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-Werror"):
            continue
        cmd.append(a)
    return cmd + ["-E", "-C", "-Qunused-arguments", "-Wno-unknown-warning-option", "-o", "-"]


def key(common, roots, entry, path):
    cmd = preprocess_cmd(entry)
    if cmd is None:
        return None
    try:
        pre = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, check=True).stdout
        with open(path, "rb") as f:
            text = f.read()
    except (OSError, KeyError, subprocess.CalledProcessError):
        return None
    h = hashlib.sha256(common)
    for part in (json.dumps(entry, sort_keys=True).encode(), text, pre):
        part = unrooted(part, roots)
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def unrooted(data, roots):
    """data with each root directory (longest first) replaced by a fixed name."""
    for i, r in enumerate(roots):
        data = data.replace(r, b"<root%d>" % i)
    return data


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: lint-tidy.py BUILD_DIR FILE...")
    build, files = sys.argv[1], sys.argv[2:]
    cache = cache_dir()
    entries = {}
    common = None
    # The checkout's and the build's directories are taken out of the key, so that a clone
    # elsewhere (a CI checkout) finds the results of the same text: longest first, as the build
    # directory may sit inside the checkout.
    roots = sorted({os.path.realpath(build).encode(),
                    os.path.realpath(os.path.join(os.path.dirname(__file__), "..")).encode()},
                   key=len, reverse=True)
    if cache:
        try:
            with open(os.path.join(build, "compile_commands.json")) as f:
                for e in json.load(f):
                    entries[os.path.realpath(os.path.join(e["directory"], e["file"]))] = e
            with open(os.path.abspath(__file__), "rb") as f:
                me = f.read()
        except (OSError, ValueError, KeyError):
            cache = None
        tv, cv = out(["clang-tidy", "--version"]), out(["clang", "--version"])
        if tv is None or cv is None:
            cache = None
        else:
            common = b"\0".join([me, tv, cv])
    status = 0
    for path in files:
        k = None
        entry = entries.get(os.path.realpath(path))
        if cache and entry:
            k = key(common, roots, entry, path)
            if k and os.path.exists(os.path.join(cache, k)):
                continue
        rc = subprocess.run(["clang-tidy", "-p", build] + TIDY_ARGS + [path],
                            stderr=subprocess.DEVNULL).returncode
        if rc != 0:
            status = 1
        elif k:
            try:
                open(os.path.join(cache, k), "wb").close()
            except OSError:
                pass
    return status


if __name__ == "__main__":
    sys.exit(main())
