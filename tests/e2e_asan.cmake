# e2e-asan: the end-to-end tests that stress the collector (hostile peers, symlink attacks, faults
# of what record reads, SIGKILL restarts, code churn, exits mid-recording, rolling profiles) run again from the
# ASan+UBSan build with its fgcollect (label e2e-asan; `make test` runs them). Everything else
# comes from the plain build named by FG_PLAIN_BUILD_DIR (the Makefile sets it): the agent (an
# ASan-instrumented libfgagent.so cannot load into a stock JVM), the Java workloads and the
# hostile peer. A sanitizer report anywhere in a test's output fails it (lib.sh prints the
# reports it finds in the daemons' logs); UBSan stops at the first error
# (-fno-sanitize-recover); LeakSanitizer ignores only what libnng allocates
# (unit/lsan-nng.supp: nng 1.5.2 reaps closed listeners on its own thread and does not drain
# them at exit). A failure is a failure: nothing is retried.
set(FG_PLAIN_BUILD_DIR "" CACHE PATH
	"Plain (non-sanitizer) build whose agent and Java workloads the e2e-asan tests use")
# fg_plain_e2e(PREFIX LABEL FAIL_REGEX EXTRA_ENV TEST...): tests/e2e/TEST.sh as PREFIX_TEST with
# this build's fgcollect and everything else from FG_PLAIN_BUILD_DIR (also used by tsan.cmake).
function(fg_plain_e2e prefix label fail_regex extra_env)
	foreach(t ${ARGN})
		add_test(NAME ${prefix}_${t} COMMAND ${PROJECT_SOURCE_DIR}/tests/e2e/${t}.sh)
		set_tests_properties(${prefix}_${t} PROPERTIES LABELS ${label} RUN_SERIAL ON
			TIMEOUT 300 SKIP_RETURN_CODE 77
			FAIL_REGULAR_EXPRESSION "${fail_regex}"
			ENVIRONMENT "FG_SOURCE_DIR=${PROJECT_SOURCE_DIR};FG_BUILD_DIR=${FG_PLAIN_BUILD_DIR};FGCOLLECT=$<TARGET_FILE:fgcollect>;FGAGENT=${FG_PLAIN_BUILD_DIR}/jvmti-agent/libfgagent.so;FG_HOSTILE_PEER=${FG_PLAIN_BUILD_DIR}/tests/hostile_fp_peer;${extra_env}")
	endforeach()
endfunction()

if(FG_SANITIZE AND FG_PLAIN_BUILD_DIR)
	fg_plain_e2e(e2e_asan e2e-asan
		"ERROR: AddressSanitizer;ERROR: LeakSanitizer;runtime error:"
		"LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/unit/lsan-nng.supp;ASAN_OPTIONS=abort_on_error=0:detect_leaks=1"
		map_hostile_client map_symlink_attack map_collector_restart record_churn
		record_inline record_exit record_sources watch_profiles record_interp_hostile
		faults_record)
endif()
