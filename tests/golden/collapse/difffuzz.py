#!/usr/bin/env python3
# difffuzz.py - differential check of `fgcollect collapse` against stackcollapse-perf.pl on
# random perf-script-like inputs built from awkward fragments (a development tool, not a ctest:
# it needs a FlameGraph checkout). Prints the first input whose outputs differ and exits 1.
#
#   difffuzz.py FGCOLLECT [ITERATIONS] [SEED]     (FLAMEGRAPH_DIR defaults to /work/FlameGraph)
import os, random, subprocess, sys, tempfile

COMMS = ["java", "alloc worker", "a", "0", "x  12", "V8 WorkerThread", "java 5 x", "javac",
         "foo:bar", "GC Thread#0", "j", "C2 CompilerThre", "kworker/0:1", "t\tab"]
PIDS = ["123", "123/456", "0", "5/0", "00", "12//34", "1/", "7/00", "8/9"]
SEPS = [" ", "  ", "\t", " \t "]
EVENTS = ["cpu-clock:", "cpu-clock:ppp:", "cycles:", "instructions:u:", ":", "a:b:", "cycles: "]
PERIODS = ["", " 1000", " 0", " 00", " 10309278", " 007", "  3"]
SYMS = ["[unknown]", "foo", "foo+0x1a", "Lorg/x/Y;.m(I)V", "void Hot.main(java.lang.String[])+0xac",
        "StubRoutines (1)+0xc9", "a->b->c", "a->", "->a", "->", "(anonymous namespace)::f(int)",
        "net/http.(*Client).Do", "x;y", "\"q'uote\"", "(foo)", "+0x10", "foo+0xAB", "foo+0x1+0x2",
        "f (x", "java.lang.String Hot.text(int)", "a_[i]", "b_[j]", "RegExp:[&<>\"']", "L/x",
        "Lfoo", "a->b_[i]", "[unknown]->[unknown]", "x.().y", ".()", "g(anonymous namespace)(z",
        "Interpreter", "__GI___libc_write+0x4e", " ", "a b", "->->x->"]
MODS = ["[kernel.kallsyms]", "/tmp/perf-123.map", "[unknown]", "/usr/lib/libc.so.6", "/boot/vmlinux",
        "[vdso]", "/x/unknown.so", "", "/tmp/perf-.map", "a (deleted)", "/tmp/perf-12.mapx",
        "perf-1.map", "/a/b/", "vmlinux", "x)"]
PCS = ["7f12ab", "ffffffff8103ce3b", "0", "_x", "", "a b", "4592"]
INDENTS = ["\t    ", "", " ", "\t"]

def header(r):
    cpu = r.choice(["", " [000]", " [1]"])
    return (r.choice(COMMS) + r.choice(SEPS) + r.choice(PIDS) + r.choice(SEPS).rstrip("\t") + cpu +
            " 123.456:" + r.choice(PERIODS) + " " + r.choice(EVENTS) + r.choice(["", " ", "  "]))

def frame(r):
    pc = r.choice(PCS)
    sep = r.choice([" ", "", "  "])
    tail = r.choice(["", "", "", ")", " x", " (y)"])
    return r.choice(INDENTS) + pc + sep + r.choice(SYMS) + " (" + r.choice(MODS) + ")" + tail

def garbage(r):
    return r.choice(["", "#comment", "# cmdline : /usr/bin/perf record -g java", "\r", "zzz",
                     "".join(chr(r.randrange(1, 256)) for _ in range(r.randrange(1, 20)))])

def make_input(r, srcline):
    out = []
    for _ in range(r.randrange(1, 25)):
        out.append(header(r) if r.random() < 0.97 else garbage(r))
        for _ in range(r.randrange(0, 8)):
            out.append(frame(r) if r.random() < 0.95 else garbage(r))
            if srcline and r.random() < 0.9:
                out.append(r.choice(["  file.c:12", "  [x]lib.so[1a]", "", "  a [b] c ", "#c"]))
        if r.random() < 0.93:
            out.append("")
    text = "\n".join(out)
    return text + ("\n" if r.random() < 0.9 else "")

def main():
    fg, iters = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else random.randrange(1 << 30)
    script = os.path.join(os.environ.get("FLAMEGRAPH_DIR", "/work/FlameGraph"), "stackcollapse-perf.pl")
    r = random.Random(seed)
    optsets = [[], ["--pid"], ["--tid"], ["--kernel"], ["--jit"], ["--all"], ["--addrs"],
               ["--all", "--tid", "--addrs"], ["--event-filter=cycles"], ["--srcline"],
               ["--srcline", "--all"]]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "in.txt")
        for i in range(iters):
            opts = r.choice(optsets)
            data = make_input(r, "--srcline" in opts).encode("latin-1")
            with open(path, "wb") as f:
                f.write(data)
            exp = subprocess.run(["perl", script] + opts + [path], capture_output=True).stdout
            got = subprocess.run([fg, "collapse"] + opts + [path], capture_output=True).stdout
            if exp != got:
                sys.stdout.write("seed %d iteration %d opts %s differ\n--- input\n" % (seed, i, opts))
                sys.stdout.write(data.decode("latin-1"))
                sys.stdout.write("\n--- expected\n%s--- got\n%s" % (exp.decode("latin-1"), got.decode("latin-1")))
                return 1
    print("seed %d: %d inputs identical" % (seed, iters))
    return 0

if __name__ == "__main__":
    sys.exit(main())
