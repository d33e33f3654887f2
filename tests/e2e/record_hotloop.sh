#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_hotloop.sh - `fgcollect record` (and `top`) without a watch daemon on a JVM in a namespace
# container running one hot loop: >= 90% of the main thread's samples must be in the loop's
# methods (HotLoop::run/step/mix, compiled or inlined), with Java names from our own socket.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_hotloop
fg_require_built

fg_sock_dir
fg_jvm_start hot HotLoop 40
fg_wait_log hot 20 'HotLoop ready'

out=$FG_TMP/hot.folded
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 5 --socket "$FG_SOCK_DIR/fgcollect.sock" \
	-o "$out" 2>"$FG_TMP/record.err" || { cat "$FG_TMP/record.err" >&2; fg_fail "record failed"; }
cat "$FG_TMP/record.err" >&2
[[ -s $out ]] || fg_fail "record wrote no $out"
grep -q 'samples in' "$FG_TMP/record.err" || fg_fail "no end-of-run summary on stderr"
grep -q 'unresolved frames: java' "$FG_TMP/record.err" || fg_fail "summary lacks unresolved shares"

# Samples of the thread running main() (the launcher's JavaMain path; HotSpot leaves that
# thread named "java"), and those with a frame of the loop's methods.
read -r main inloop < <(awk '
	{ n = $NF; stack = $0; sub(/ [0-9]+$/, "", stack) }
	stack ~ /;JavaMain;/ { m += n; if (stack ~ /HotLoop::(run|step|mix)_\[[ji]\]/) h += n }
	END { print m + 0, h + 0 }' "$out")
fg_log "main thread: $main samples, $inloop in HotLoop::run/step/mix"
# A shared 2-core machine can give the JVM a fraction of a core: ask for a sane minimum.
((main >= 100)) || fg_fail "only $main main-thread samples in 5 s at 99 Hz (expected up to ~500)"
((inloop * 100 >= main * 90)) ||
	{ sort -t' ' -k2 -nr "$out" | head -n 10 >&2; fg_fail "only $inloop of $main samples in the loop (< 90%)"; }

# `top` with a pipe: one snapshot per interval, the loop's methods at the top.
"$FGCOLLECT" top --pid "$FG_HOSTPID" --interval 1 --count 3 --socket "$FG_SOCK_DIR/fgcollect.sock" \
	>"$FG_TMP/top.out" 2>"$FG_TMP/top.err" || { cat "$FG_TMP/top.err" >&2; fg_fail "top failed"; }
cat "$FG_TMP/top.out" >&2
snaps=$(grep -c '^fgcollect top - PID' "$FG_TMP/top.out" || true)
((snaps == 3)) || fg_fail "top printed $snaps snapshots for --count 3 on a pipe"
! grep -q $'\033' "$FG_TMP/top.out" || fg_fail "top wrote terminal escapes to a pipe"
# Each snapshot holds an interval of samples, the first too (its samples are final 1.3 s after
# they were taken, and it waits for them): at least half of what each later one holds.
read -r s1 s2 s3 <<<"$(sed -n 's/.* interval [0-9]*: \([0-9]*\) samples.*/\1/p' "$FG_TMP/top.out" | tr '\n' ' ')"
fg_log "top's snapshots: $s1, $s2, $s3 samples"
((s1 * 2 >= s2 && s1 * 2 >= s3 && s2 > 0)) || fg_fail "top's first snapshot holds $s1 samples, the next ones $s2 and $s3"
# The hottest symbol of the last snapshot is one of the loop's methods.
awk '/^fgcollect top/ { getline; getline; last = $0 } END { print last }' "$FG_TMP/top.out" |
	grep -qE 'HotLoop::(run|step|mix)_\[[ji]\]' || fg_fail "the hottest symbol in top is not the loop"
# `top` on a terminal (a pty from script(1)): the screen is cleared and redrawn per interval.
script -qfec "$FGCOLLECT top --pid $FG_HOSTPID --count 2 --socket $FG_SOCK_DIR/fgcollect.sock" \
	/dev/null >"$FG_TMP/top.tty" 2>&1 </dev/null || fg_fail "top on a pty failed: $(tail -n 3 "$FG_TMP/top.tty")"
redraws=$(grep -o $'\033\[H\033\[2J' "$FG_TMP/top.tty" | wc -l)
((redraws == 2)) || fg_fail "top on a terminal redrew $redraws times for --count 2"
grep -qE 'HotLoop::(run|step|mix)_\[[ji]\]' "$FG_TMP/top.tty" || fg_fail "top on a terminal shows no HotLoop method"
fg_pass "$inloop/$main main-thread samples ($((inloop * 100 / main))%) in the loop's methods"
