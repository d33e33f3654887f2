#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""freeze_thread.py TID SECONDS - stop one thread (not its process) for SECONDS, then let it go.

PTRACE_SEIZE + PTRACE_INTERRUPT act on a single thread: the others keep running. Prints
"frozen" once the thread is stopped. Exit 0, or 1 with the errno of the failing call.
"""
import ctypes
import os
import sys
import time

PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


def call(req, tid):
    if libc.ptrace(req, tid, None, None) != 0:
        e = ctypes.get_errno()
        print("ptrace(%#x, %d): %s" % (req, tid, os.strerror(e)), file=sys.stderr)
        sys.exit(1)


def main():
    tid, secs = int(sys.argv[1]), float(sys.argv[2])
    call(PTRACE_SEIZE, tid)
    call(PTRACE_INTERRUPT, tid)
    os.waitpid(tid, WALL)
    print("frozen", flush=True)
    time.sleep(secs)
    call(PTRACE_DETACH, tid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
