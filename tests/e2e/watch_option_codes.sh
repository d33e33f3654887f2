#!/bin/bash
# SPDX-License-Identifier: MIT
#
# watch_option_codes - an option of `watch` does what its name says and nothing else, on the
# options that touch the agent socket's confinement: with --no-per-thread (or --per-thread) the
# socket is still served by the confined child (fg-sandbox, uid 65534); only --no-sandbox serves
# it in the daemon itself, and the daemon then says so in its log.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init watch_option_codes
fg_require_built

# The running fg-sandbox child of watch, if any.
sandbox_child() {
	local p
	for p in $(pgrep -P "$FG_WATCH_PID" 2>/dev/null); do
		[[ $(cat "/proc/$p/comm" 2>/dev/null) == fg-sandbox ]] || continue
		[[ $(fg_proc_state "$p") != [ZX] ]] || continue
		echo "$p"
		return 0
	done
	return 1
}
uid_of() { awk '$1 == "Uid:" {print $2}' "/proc/$1/status"; }

for opt in --no-per-thread --per-thread ""; do
	fg_watch_start $opt
	fg_wait 3 sandbox_child >/dev/null ||
		fg_fail "watch ${opt:-(no option)}: no confined fg-sandbox child: the socket is served by root"
	c=$(sandbox_child)
	[[ $(uid_of "$c") == 65534 ]] || fg_fail "watch ${opt:-(no option)}: fg-sandbox $c runs as uid $(uid_of "$c"), not 65534"
	! grep -q -- '--no-sandbox' "$FG_WATCH_LOG" ||
		fg_fail "watch ${opt:-(no option)} says it runs without its sandbox: $(cat "$FG_WATCH_LOG")"
	fg_log "watch ${opt:-(no option)}: socket served by fg-sandbox $c, uid 65534"
	fg_watch_stop
done

fg_watch_start --no-sandbox
sleep 1
! sandbox_child >/dev/null || fg_fail "watch --no-sandbox still started a confined child"
grep -q 'warning: --no-sandbox: the agent socket is served by this process' "$FG_WATCH_LOG" ||
	fg_fail "watch --no-sandbox did not say the socket is served unconfined: $(cat "$FG_WATCH_LOG")"
fg_log "watch --no-sandbox: no confined child, and the log says so"
fg_watch_stop
fg_pass "each of --no-per-thread, --per-thread and --no-sandbox does only its own job"
