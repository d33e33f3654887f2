#!/bin/bash
# README.md, CONTRIBUTING.md and docs/ present fgcollect as it is, and the benchmarks print
# figures of this build: none tells the story of how it got there (development sessions, issue
# numbers or limits, earlier builds' figures, what was tried and left out). This check fails on
# such wording in those documents and in bench/*/*.sh (their output text and comments).
# Usage: tests/readme_history.sh [SOURCE_DIR]
set -u
src=${1:-${FG_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}}
cd "$src" || exit 2
# Case-insensitive extended regexes, one per kind of history.
patterns=(
	'sessions? ?#?[0-9]'             # "session 6", "sessions 4-5", "session #3"
	"session'?s (own |final )?build" # "session 6's build", "the session's build"
	'(in|of|since|before|after) (the )?(last|previous|earlier|this) session'
	'issue ?#?[0-9]'                 # "issue 2 item 5" (an upstream "nng #2100" is fine)
	'issue limit'
	'tried and left out'
	'before (this|the) (session|change|fix)'
)
files=(README.md CONTRIBUTING.md docs/*.md docker/README.md bench/*/*.sh)
fail=0
for re in "${patterns[@]}"; do
	if hits=$(grep -niE -- "$re" "${files[@]}"); then
		printf 'development history (/%s/):\n%s\n' "$re" "$hits" >&2
		fail=1
	fi
done
[ "$fail" = 0 ] && echo "no development history in ${files[*]}"
exit "$fail"
