#!/bin/sh
# args-test.sh FGCOLLECT - `record`, `top` and `watch` option parsing as users meet it: every bad option,
# value or argument is exit status 64 with a message naming it; --help is 0 on stdout; a good
# command line gets past parsing (here to a PID that does not exist, which is not status 64).
set -u
fg=$1
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect STATUS PATTERN ARGS...: the status, and PATTERN in stderr (or in stdout for status 0).
expect() {
	want=$1 pat=$2
	shift 2
	"$fg" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$want" = 0 ]; then f=$tmp/out; else f=$tmp/err; fi
	if [ "$got" != "$want" ] || ! grep -q -- "$pat" "$f"; then
		echo "FAIL: fgcollect $* -> status $got (want $want), $(head -c 200 "$f")"
		fails=$((fails + 1))
	fi
}

# parses PATTERN ARGS...: parsing accepted the line (status is not 64), PATTERN in stderr.
parses() {
	pat=$1
	shift
	"$fg" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" = 64 ] || ! grep -q -- "$pat" "$tmp/err"; then
		echo "FAIL: fgcollect $* -> status $got, $(head -c 200 "$tmp/err")"
		fails=$((fails + 1))
	fi
}

nopid=2147483646
expect 64 'exactly one of' record --pid 1 --pid 2
expect 64 'exactly one of' record --pid 1 --all
expect 64 'exactly one of' record -d 1
expect 64 "'abc' is not a process id" record --pid abc
expect 64 "unknown option '--bogus'" record --bogus
expect 64 "option '-p' needs a value" record -p
expect 64 "unexpected argument 'extra'" record --pid 1 extra
expect 64 'not a container id' record --container xyz
expect 64 "--duration '0' must be 1..604800 whole seconds" record --pid 1 --duration 0
expect 64 'unknown extension' record --pid 1 -o out.txt
expect 64 "--freq '0' must be 1..10000 Hz" record --pid 1 -F 0
expect 0 'Usage: fgcollect record' record --help
parses "$nopid" record --pid "$nopid" -d 1 -o "$tmp/x.folded"
expect 64 'exactly one of' top
expect 64 'exactly one of' top --pid 1 --container 3f2a
expect 64 'not a container id' top --container 3F2A-
expect 64 "--rows '0' must be 1..10000" top --pid 1 --rows 0
expect 64 "--count '-3' must be 1..4294967295" top --pid 1 --count -3
expect 64 "--interval '3601' must be 1..3600 seconds" top --pid 1 --interval 3601
expect 64 "unknown option '--duration'" top --all --duration 1
expect 64 "unexpected argument 'x'" top --pid 1 x
expect 0 'Usage: fgcollect top' top --help
parses "$nopid" top --pid "$nopid" -n 1
parses "no process in a container whose id starts with 'ffffffffffff'" top --container ffffffffffff -n 1
expect 64 "--max-jvms '0' must be 1..65536" watch --max-jvms 0
expect 64 "--watchdog-ms '1e3' must be 0..3600000 ms" watch --watchdog-ms 1e3
expect 64 "--keep-profiles '0' must be 1..1000000" watch --keep-profiles 0
expect 64 "--push-queue 'x' must be 1..100000 profiles" watch --push-queue x
expect 64 "--freq '10001' must be 1..10000 Hz" watch --freq 10001
expect 64 "--event 'gpu': use cpu, offcpu, wall, alloc, live or lock" record --pid 1 --event gpu
expect 64 "--event 'cpu,offcpu': use cpu, offcpu, wall, alloc, live or lock" top --pid 1 --event cpu,offcpu
expect 64 "--switch-period '0' must be 1..1000000" top --pid 1 --event offcpu --switch-period 0
expect 64 "--switch-rate '100001' must be 0..100000 stacks a second" record --pid 1 --event offcpu --switch-rate 100001
expect 64 "give --switch-rate or --switch-period, not both" record --pid 1 --switch-rate 5 --switch-period 2
expect 64 "give --switch-rate or --switch-period, not both" watch --switch-period 2 --switch-rate 5
expect 0 '--switch-rate' watch --help
expect 64 "--min-block 'x' must be 0..3600000000 microseconds" top --pid 1 --min-block x
expect 64 "unknown option '--per-thread=no'" top --pid 1 --per-thread=no
expect 64 "--event 'cpu,cpu': cpu given twice" watch --event cpu,cpu
expect 64 "--event 'cpu,': a comma-separated list of cpu, offcpu, wall, alloc, live or lock" watch --event cpu,
expect 64 "--event 'cpu,bogus': 'bogus' is not cpu, offcpu, wall, alloc, live or lock" watch --event cpu,bogus
expect 64 "--alloc-interval" record --pid 1 --event alloc --alloc-interval 0
expect 64 "--alloc-interval" record --pid 1 --event alloc --alloc-interval 2147483648
expect 64 "--alloc-depth" record --pid 1 --event alloc --alloc-depth 4096
expect 64 "--lock-threshold" top --pid 1 --event lock --lock-threshold x
expect 64 "--alloc-depth" watch --alloc-depth 0
expect 0 '--no-per-thread' top --help
expect 0 '--event LIST' watch --help
parses "$nopid" top --pid "$nopid" -n 1 --event wall --no-per-thread --threads 'x.*'
[ "$fails" = 0 ] && echo "record/top/watch arguments: all cases pass"
exit $((fails != 0))
