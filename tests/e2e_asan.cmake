# e2e-asan: the end-to-end tests that stress the collector (hostile peers, symlink attacks, faults
# of what record reads, SIGKILL restarts, code churn, exits mid-recording, rolling profiles, the
# sandboxed child killed and restarted) run again from the ASan+UBSan build with its fgcollect
# (label e2e-asan; `make test` runs them). Everything else
# comes from the plain build named by FG_PLAIN_BUILD_DIR (the Makefile sets it): the agent (an
# ASan-instrumented libfgagent.so cannot load into a stock JVM), the Java workloads and the
# hostile peer. A sanitizer report anywhere in a test's output fails it (lib.sh prints the
# reports it finds in the daemons' logs); UBSan stops at the first error
# (-fno-sanitize-recover); LeakSanitizer ignores only what libnng allocates
# (unit/lsan-nng.supp: nng 1.5.2 reaps closed listeners on its own thread and does not drain
# them at exit). A failure is a failure: nothing is retried.
# FG_PLAIN_BUILD_DIR and fg_plain_e2e: cmake/fgtargets.cmake.

# The ones that run two at a time in the plain build (BESIDE) do so here too.
if(FG_SANITIZE AND FG_PLAIN_BUILD_DIR)
	set(FG_PLAIN_E2E_BESIDE map_hostile_client map_symlink_attack record_churn record_inline
		record_exit record_sources record_interp_hostile)
	fg_plain_e2e(e2e_asan e2e-asan
		"ERROR: AddressSanitizer;ERROR: LeakSanitizer;runtime error:"
		"LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/unit/lsan-nng.supp;ASAN_OPTIONS=abort_on_error=0:detect_leaks=1"
		map_hostile_client map_symlink_attack map_collector_restart record_churn
		record_inline record_exit record_sources watch_profiles record_interp_hostile
		faults_record watch_sandbox)
endif()
