#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_interp_hostile.sh - a hostile peer against interpreted-frame naming: a process
# (hostile_fp_peer, whose code keeps a frame-pointer chain) that passes the identity checks (its
# own PID in the HELLO) claims that all of its own code is HotSpot's interpreter and sends
# VM_LAYOUT records with wild offsets and capabilities, ten a second, while `record` samples it
# with stack copies and names its "interpreted" frames by reading its memory as told. The collector must finish on time without
# crashing, read memory only with process_vm_readv of that peer's own PID (strace), at most
# INTERP_MAX_READS (256) reads per sample plus one GC-clock read, and never name a frame from
# such a layout as a Java method it did not validate (every "interpreted" frame is unknown).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_interp_hostile
fg_require_built
command -v strace >/dev/null || fg_fail "strace is needed (scripts/install-deps.sh installs it)"

dir=$FG_TMP/sock
mkdir -p "$dir"
sock=$dir/fgcollect.sock
[[ -x ${FG_HOSTILE_PEER:-} ]] || fg_fail "hostile_fp_peer not built (FG_HOSTILE_PEER='${FG_HOSTILE_PEER:-}')"
python3 "$FG_SOURCE_DIR/tests/e2e/hostile_client.py" "$FG_TMP/msgs" layoutfile 100 7 >/dev/null
"$FG_HOSTILE_PEER" "$sock" "$FG_TMP/msgs" 8 >"$FG_TMP/peer.out" 2>&1 &
peer=$!
trace=$FG_TMP/strace.txt
rc=0
# LeakSanitizer cannot work under ptrace: an ASan build (ctest -L e2e-asan) keeps the rest.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 30 strace -f -qq -e trace=process_vm_readv -o "$trace" \
	"$FGCOLLECT" record --pid "$peer" --socket "$sock" --ctl "$FG_TMP/no-daemon/ctl.sock" \
	--duration 4 --freq 499 --lines -o "$FG_TMP/peer.folded" 2>"$FG_TMP/rec.err" || rc=$?
cat "$FG_TMP/rec.err" >&2
wait "$peer" || fg_fail "the hostile peer failed: $(cat "$FG_TMP/peer.out")"
fg_log "peer: $(cat "$FG_TMP/peer.out")"
((rc == 0)) || fg_fail "record exited with $rc (124: hung)"
grep -q 'agent connected' "$FG_TMP/rec.err" || fg_fail "the peer never connected: the test proves nothing"
samples=$(sed -n 's/.*: \([0-9]*\) samples in .*/\1/p' "$FG_TMP/rec.err")
((samples >= 100)) || fg_fail "only $samples samples of the peer"

reads=$(grep -c 'process_vm_readv(' "$trace" || true)
others=$(grep 'process_vm_readv(' "$trace" | grep -vc "process_vm_readv($peer," || true)
fg_log "$reads process_vm_readv calls for $samples samples, $others of another pid"
((reads > 0)) || fg_fail "no memory was read: the peer's frames were not taken for interpreted ones"
((others == 0)) || { grep 'process_vm_readv(' "$trace" | grep -v "process_vm_readv($peer," | head -n 3 >&2; fg_fail "$others reads of a pid other than the peer's"; }
((reads <= samples * 257)) || fg_fail "$reads reads for $samples samples: more than the per-sample cap"
# Whatever the layout said, nothing it named may pass as a method: only [unknown] (interpreted).
if grep -o '[^;]*_\[0\]' "$FG_TMP/peer.folded" | grep -v '^\[unknown\] (interpreted)_\[0\]$' | grep -q .; then
	grep -o '[^;]*_\[0\]' "$FG_TMP/peer.folded" | sort | uniq -c | sort -nr | head -n 5 >&2
	fg_fail "a frame was named from a wild layout"
fi
grep -q 'interpreted frames: ' "$FG_TMP/rec.err" || fg_fail "the summary does not account for the interpreted frames"
fg_pass "record finished; $reads reads for $samples samples, all of pid $peer; no frame named from wild layouts"
