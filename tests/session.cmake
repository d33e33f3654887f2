# session: a recording's parts (unit), and `fgcollect record` / `top` end to end on JVMs in
# namespace containers (e2e, each well under 60 s).
foreach(t threadnames targets codelog session offcpu threadtime)
	fg_unit_test(test_${t} SOURCES unit/session/test_${t}.c LIBS fg_session
		PRIVATE collector/session)
endforeach()
if(FG_E2E)
	fg_e2e_test(e2e_record_hotloop record_hotloop.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_churn record_churn.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_inline record_inline.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_exit record_exit.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_sources record_sources.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_targets record_targets.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_pid_socket record_pid_socket.sh TIMEOUT 300)
	fg_e2e_test(e2e_record_interp record_interp.sh TIMEOUT 300)
	fg_e2e_test(e2e_record_offcpu record_offcpu.sh TIMEOUT 420)
	# A hostile peer with a frame-pointer chain of its own, built like our code (-fno-omit-
	# frame-pointer) but never installed.
	add_executable(hostile_fp_peer e2e/hostile_fp_peer.c)
	target_link_libraries(hostile_fp_peer PRIVATE Threads::Threads)
	fg_e2e_test(e2e_record_interp_hostile record_interp_hostile.sh TIMEOUT 120)
	set_property(TEST e2e_record_interp_hostile APPEND PROPERTY
		ENVIRONMENT "FG_HOSTILE_PEER=$<TARGET_FILE:hostile_fp_peer>")
endif()
