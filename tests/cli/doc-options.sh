#!/bin/sh
# doc-options.sh FGCOLLECT DOC - the options tables of DOC (docs/commands.md) are what each
# command's table prints (`fgcollect CMD --help-markdown`): every block between
# `<!-- fgcollect CMD --help-markdown -->` and `<!-- end -->` is compared with it. FG_BLESS=1
# rewrites the blocks instead.
set -u
fg=$1
doc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fg="$fg" awk 'BEGIN { fg = ENVIRON["fg"] }
	/^<!-- end -->$/ { skip = 0 }
	skip { next }
	{ print }
	/^<!-- fgcollect [a-z]+ --help-markdown -->$/ {
		cmd = "\"" fg "\" " $3 " --help-markdown"
		n = 0
		while ((cmd | getline line) > 0) { print line; n++ }
		if (close(cmd) != 0 || n == 0) { print "cannot run " cmd > "/dev/stderr"; exit 2 }
		skip = 1
		blocks++
	}
	END { if (!blocks) { print "no options blocks found" > "/dev/stderr"; exit 2 } }
' "$doc" >"$tmp/want" || exit 1

if [ "${FG_BLESS:-}" = 1 ]; then
	cp "$tmp/want" "$doc" && echo "rewrote the options tables of $doc"
	exit $?
fi
if ! cmp -s "$tmp/want" "$doc"; then
	echo "FAIL: the options tables of $doc differ from the commands' tables" \
		"(FG_BLESS=1 $0 $fg $doc rewrites them):"
	diff -u "$doc" "$tmp/want" | head -60
	exit 1
fi
echo "options tables of $(basename "$doc"): equal to every command's table"
