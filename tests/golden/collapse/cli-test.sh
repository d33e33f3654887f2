#!/bin/sh
# cli-test.sh FGCOLLECT GOLDEN_DIR - `fgcollect collapse` as a command: stdin, files and '-'
# give the golden output; usage errors exit 64, unreadable files exit 1 naming the file.
set -u
fg=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

gzip -dc "$dir/jvm-map.perf.txt.gz" >"$tmp/in.txt" || fail "cannot unpack input"
"$fg" collapse --all <"$tmp/in.txt" >"$tmp/stdin.out" || fail "stdin run exited $?"
cmp -s "$tmp/stdin.out" "$dir/jvm-map.all.folded" || fail "stdin output differs from golden"
"$fg" collapse -all "$tmp/in.txt" >"$tmp/file.out" || fail "file run exited $?"
cmp -s "$tmp/file.out" "$dir/jvm-map.all.folded" || fail "file output differs (single-dash option)"
# Two inputs are one stream, as Perl's <> reads them: the counts add up.
head -n 500 "$tmp/in.txt" >"$tmp/a.txt"
tail -n +501 "$tmp/in.txt" >"$tmp/b.txt"
"$fg" collapse --all "$tmp/a.txt" - <"$tmp/b.txt" >"$tmp/two.out" || fail "two inputs exited $?"
cmp -s "$tmp/two.out" "$dir/jvm-map.all.folded" || fail "split input differs from golden"

"$fg" collapse --bogus </dev/null >/dev/null 2>"$tmp/err"
[ $? -eq 64 ] || fail "unknown option should exit 64"
grep -q -- "--bogus" "$tmp/err" || fail "usage error should name the option"
"$fg" collapse --inline </dev/null >/dev/null 2>&1
[ $? -eq 64 ] || fail "--inline should exit 64"
"$fg" collapse "$tmp/missing.txt" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "missing file should exit 1"
grep -q "missing.txt" "$tmp/err" || fail "error should name the missing file"
"$fg" collapse --help | grep -q "Usage: fgcollect collapse" || fail "--help"
echo "collapse cli: ok"
