#!/bin/bash
# README.md, CONTRIBUTING.md and docs/ present fgcollect as it is, and the benchmarks print
# figures of this build: none tells the story of how it got there (development sessions, issue
# numbers or limits, earlier builds' figures, what was tried and left out). This check fails on
# such wording in those documents and in bench/*/*.sh (their output text and comments), on lab
# notes in README.md and docs/ ("here", "this VM", "went from"), and on a sentence longer than
# 40 words in README.md or 60 words in docs/.
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
# The prose of README.md and docs/ (code blocks and code spans are not prose: a program's own
# output may say "here"), checked by awk: lab notes, which say where and when a figure was taken
# instead of giving its command ("here", "this VM", "a build that", "went from", "earlier
# run"), and sentences over MAX words. A sentence ends at '.', '!' or '?' before a space or the
# line's end, at a blank line, a heading, a list item and a table cell; a code span is one word.
prose_check() {
	MAX="$1" awk '
BEGIN { MAX = ENVIRON["MAX"] + 0 }
function flush() {
	if (nw > MAX)
		printf "%s:%d: sentence of %d words (at most %d): %s ...\n", FILENAME, start, nw, MAX, substr(text, 1, 80)
	nw = 0; text = ""
}
function add(s,    n, w, i, t) {
	n = split(s, w, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		t = w[i]
		if (t == "")
			continue
		if (nw == 0) start = FNR
		nw++
		text = text (text == "" ? "" : " ") t
		if (t ~ /[.!?]["'\'')\]*_]*$/ && t !~ /^(e\.g|i\.e|etc|vs|cf)\.$/)
			flush()
	}
}
function notes(s,    l) {
	l = " " tolower(s) " "
	if (l ~ /[^a-z]here[^a-z]/ || l ~ /[^a-z]this (vm|machine)[^a-z]/ || l ~ /[^a-z]a build that[^a-z]/ ||
	    l ~ /[^a-z]went from[^a-z]/ || l ~ /[^a-z]earlier runs?[^a-z]/)
		printf "%s:%d: lab note: %s\n", FILENAME, FNR, s
}
FNR == 1 { flush(); fence = 0; prevblank = 1 }
/^[ \t]*```/ { flush(); fence = !fence; next }
fence { next }
/^(    |\t)/ && prevblank { flush(); next }
{
	line = $0
	prevblank = line ~ /^[ \t]*$/
	if (prevblank || line ~ /^#/ || line ~ /^[ \t]*([*+-]|[0-9]+\.) / || line ~ /^ *\|/)
		flush()
	gsub(/`[^`]*`/, "CODE", line)
	gsub(/\]\([^)]*\)/, "]", line)
	notes(line)
	if (line ~ /^ *\|/) {
		if (line ~ /^ *\|[ :|-]*$/)
			next
		nc = split(line, cell, "|")
		for (c = 2; c < nc; c++) { add(cell[c]); flush() }
		next
	}
	head = sub(/^#+ /, "", line)
	add(line)
	if (head)
		flush()
}
END { flush() }' "${@:2}"
}
if hits=$(prose_check 40 README.md; prose_check 60 docs/*.md) && [ -n "$hits" ]; then
	printf 'lab notes, or sentences over 40 words (README.md) or 60 (docs/):\n%s\n' "$hits" >&2
	fail=1
fi
[ "$fail" = 0 ] && echo "no development history in ${files[*]}; no lab note or sentence too long in README.md and docs/"
exit "$fail"
