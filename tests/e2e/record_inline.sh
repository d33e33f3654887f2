#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_inline.sh - inlined Java frames. InlineChain's a() -> b() -> c() is inlined by C2 into
# its caller; `record` must unfold the compiled method's inline chain from the agent's compile
# info (`..._[j];InlineChain::a_[i];InlineChain::b_[i];InlineChain::c_[i]`), and with
# --no-inline keep only compiled methods (no `_[i]` frame at all, c's time in a `_[j]` frame).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_inline
fg_require_built

FG_SOCK_DIR=$FG_TMP/sock
mkdir -p "$FG_SOCK_DIR"
chmod 0755 "$FG_SOCK_DIR"
fg_jvm_start inl InlineChain 40
fg_wait_log inl 25 'InlineChain ready'
sock=$FG_SOCK_DIR/fgcollect.sock

unfolded=$FG_TMP/unfolded.folded
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 4 --socket "$sock" -o "$unfolded" \
	2>"$FG_TMP/rec1.err" || { cat "$FG_TMP/rec1.err" >&2; fg_fail "record failed"; }
cat "$FG_TMP/rec1.err" >&2
read -r main chain < <(awk '
	{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
	s ~ /;JavaMain;/ { m += n
		if (s ~ /_\[j\];InlineChain::a_\[i\];InlineChain::b_\[i\];InlineChain::c_\[i\]/) h += n }
	END { print m + 0, h + 0 }' "$unfolded")
fg_log "unfolded: $chain of $main main-thread samples show ..._[j];a_[i];b_[i];c_[i]"
((main >= 80)) || fg_fail "only $main main-thread samples"
((chain * 100 >= main * 50)) ||
	{ sort -t' ' -k2 -nr "$unfolded" | head -n 5 | cut -c1-400 >&2; fg_fail "the inline chain is not unfolded in most samples"; }

folded=$FG_TMP/folded.folded
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 3 --no-inline --socket "$sock" -o "$folded" \
	2>"$FG_TMP/rec2.err" || { cat "$FG_TMP/rec2.err" >&2; fg_fail "record --no-inline failed"; }
! grep -q '_\[i\]' "$folded" || fg_fail "--no-inline output still has inlined (_[i]) frames"
read -r main2 java2 < <(awk '
	{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
	s ~ /;JavaMain;/ { m += n; if (s ~ /InlineChain::[a-z]+_\[j\]$/) h += n }
	END { print m + 0, h + 0 }' "$folded")
((main2 >= 50)) || fg_fail "--no-inline: only $main2 main-thread samples"
((java2 * 100 >= main2 * 80)) || fg_fail "--no-inline: only $java2 of $main2 samples end in a compiled InlineChain method"
fg_pass "unfolded chain in $((chain * 100 / main))% of samples; --no-inline keeps $((java2 * 100 / main2))% in compiled frames, no _[i]"
