#!/bin/bash
# e2e-asan.sh BUILD_DIR ASAN_BUILD_DIR - rerun the end-to-end tests that stress the collector
# (hostile peers, symlink attacks, SIGKILL restarts, code churn, exits mid-recording) with the
# ASan+UBSan build of fgcollect. The agent stays the plain build's: an ASan-instrumented .so
# cannot be loaded into a stock JVM. UBSan stops at the first error (-fno-sanitize-recover);
# LeakSanitizer ignores only what libnng allocates (tests/unit/lsan-nng.supp: nng 1.5.2 reaps
# closed listeners on its own thread and does not drain them at exit).
set -uo pipefail
build=$(cd "${1:?usage: e2e-asan.sh BUILD_DIR ASAN_BUILD_DIR}" && pwd)
asan=$(cd "${2:?usage: e2e-asan.sh BUILD_DIR ASAN_BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
tests="map_hostile_client map_symlink_attack map_collector_restart record_churn record_inline
 record_exit record_sources watch_profiles record_interp_hostile"
export FG_SOURCE_DIR=$src FG_BUILD_DIR=$build
export FGCOLLECT=$asan/collector/fgcollect FGAGENT=$build/jvmti-agent/libfgagent.so
export FG_HOSTILE_PEER=$build/tests/hostile_fp_peer
export LSAN_OPTIONS=suppressions=$src/tests/unit/lsan-nng.supp
export ASAN_OPTIONS=abort_on_error=0:detect_leaks=1
passed=0 failed=0 skipped=0 flaky=0
# run_one TEST LOG: the test's exit status, 1 if a sanitizer report shows up in its output.
run_one() {
	local rc
	"$src/tests/e2e/$1.sh" >"$2" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$2"; then
		rc=1 # a sanitizer report in a daemon's log fails the test even if it exited 0
	fi
	return $rc
}
for t in $tests; do
	log=$(mktemp /tmp/fg-e2e-asan.XXXXXX)
	start=$(date +%s)
	run_one "$t" "$log"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && ! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$log"; then
		# A timing failure (not a sanitizer report): show it in full, then try once more, so a
		# rare flake is visible here without hiding a reproducible failure.
		echo "e2e-asan $t: first attempt FAILED (exit $rc), retrying once; its log:"
		sed 's/^/    /' "$log" | tail -n 60
		run_one "$t" "$log"
		rc=$?
		[ $rc -eq 0 ] && flaky=$((flaky + 1))
	fi
	case $rc in
	0) passed=$((passed + 1)); echo "e2e-asan $t: passed ($(($(date +%s) - start)) s)" ;;
	77) skipped=$((skipped + 1)); echo "e2e-asan $t: skipped ($(tail -n 1 "$log"))" ;;
	*)
		failed=$((failed + 1))
		echo "e2e-asan $t: FAILED (exit $rc); log:"
		sed 's/^/    /' "$log" | tail -n 60
		;;
	esac
	rm -f "$log"
done
[ $flaky -gt 0 ] && echo "e2e-asan: $flaky test(s) passed only on a retry (first failure shown above)"
echo "e2e-asan: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
