# tsan / e2e-tsan: the threaded parts under ThreadSanitizer (FG_TSAN=ON; `make build-tsan`,
# build dir build-tsan; `make test` runs both labels).
#
# tsan: the unit tests that run the agent's threads (JVMTI callbacks on many threads against the
# queue, the interned names, the live code table, the real sender thread and the tables worker;
# the nng link) and the collector's (the push queue and its sender thread against a local HTTP
# server, the rolling-profile thread, the receiver's watchdog and nng callbacks).
# e2e-tsan: `fgcollect watch` with its profiling thread, its push queue against a local ingest
# server, its receiver under hostile peers and its control channel, with the TSan fgcollect; the
# agent, the Java workloads and the hostile peer come from the plain build named by
# FG_PLAIN_BUILD_DIR (a TSan libfgagent.so cannot load into a stock JVM).
#
# Any report fails a test: the unit tests stop at the first (halt_on_error), the e2e tests'
# daemons report every race and lib.sh fails the test on a report in any log. The only
# suppressions (unit/tsan.supp) are for libraries we do not build, each with its reason.
if(NOT FG_TSAN)
	return()
endif()

set(FG_TSAN_SUPP ${CMAKE_CURRENT_LIST_DIR}/unit/tsan.supp)
# The unit tests are those registered with TSAN (fg_unit_test gives them the label, the
# options and the failure pattern).
get_property(FG_TSAN_UNIT GLOBAL PROPERTY FG_TSAN_UNIT)
# `make build-tsan` builds only what the two labels run.
add_custom_target(fg_tsan_targets)
add_dependencies(fg_tsan_targets fgcollect ${FG_TSAN_UNIT})

# FG_PLAIN_BUILD_DIR and fg_plain_e2e: cmake/fgtargets.cmake.
if(FG_PLAIN_BUILD_DIR)
	# watch_threads: every thread of the daemon busy at once, with no step that depends on
	# speed (the other watch tests measure intervals a TSan build, several times slower,
	# cannot keep).
	fg_plain_e2e(e2e_tsan e2e-tsan "WARNING: ThreadSanitizer"
		"FG_WATCH_START_S=30;TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1:suppressions=${FG_TSAN_SUPP}"
		watch_threads)
endif()
