#!/bin/bash
# The tests, benchmarks and scripts must give the same answers under any POSIX awk (mawk,
# gawk, busybox). `awk -v NAME=VALUE` does not: it processes backslash escapes in VALUE, and
# gawk then turns a regex's `\[` into `[` (with a warning) where mawk keeps it. Values go in
# through the environment instead, which no awk rewrites:
#     re="$2" awk 'BEGIN { re = ENVIRON["re"] } $0 ~ re { ... }'
# This check fails on any `awk -v` (or --assign) under tests/, bench/ and scripts/, and shows
# with every awk installed that a regex passed the environment's way arrives intact.
# Usage: tests/awk_portable.sh [SOURCE_DIR]
set -u
src=${1:-${FG_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}}
cd "$src" || exit 2
fail=0

# 1. No value through awk's command line. A call may continue over backslash-newlines; the
# options end at the program text's opening quote.
hits=$(find tests bench scripts -type f \( -name '*.sh' -o -name '*.cmake' -o -name '*.bash' \) \
	-not -name awk_portable.sh -print0 | xargs -0 perl -0ne '
	while (/\b[gm]?awk\b((?:[^\x27"\n#]|\\\n)*)/g) {
		my ($opts, $at) = ($1, $-[0]);
		next unless $opts =~ /(?:^|\s)(?:-v|--assign)(?:\s|[A-Za-z_])/;
		my $line = 1 + (substr($_, 0, $at) =~ tr/\n//);
		print "$ARGV:$line\n";
	}')
if [ -n "$hits" ]; then
	echo "awk -v passes a value through escape processing (gawk rewrites regexes); use ENVIRON:" >&2
	echo "$hits" >&2
	fail=1
fi

# 2. Every awk on the machine: a regex through the environment matches as written.
re='main:[0-9]+_\[0\];spin_\[j\]'
n=0
for a in mawk gawk original-awk nawk "busybox awk"; do
	command -v "${a%% *}" >/dev/null 2>&1 || continue
	n=$((n + 1))
	got=$(printf 'x;main:12_[0];spin_[j] 7\nx;main:12_0;spin_j 5\n' |
		re="$re" $a 'BEGIN { re = ENVIRON["re"] } $0 ~ re { c += $NF } END { print c + 0 }' 2>&1)
	if [ "$got" != 7 ]; then
		echo "$a: a regex through ENVIRON matched $got samples, want 7" >&2
		fail=1
	fi
done
[ "$n" -gt 0 ] || { echo "no awk found" >&2; exit 1; }
[ "$fail" = 0 ] && echo "no awk -v under tests/, bench/, scripts/; ENVIRON regexes intact under $n awk(s)"
exit "$fail"
