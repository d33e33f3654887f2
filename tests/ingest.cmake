# ingest: /proc parsers, receive (real nng), the control channel and its frame codec (every
# truncation and mutation), the JVM set (through fake /proc trees: its proc_root seam). A
# listed test whose file is missing breaks the build.
foreach(t peer receive ctl ctl_frame jvmset)
	fg_unit_test(test_${t} SOURCES unit/ingest/test_${t}.c LIBS fg_ingest
		PRIVATE collector/ingest)
endforeach()
# receive's close is tested against a close nng never finishes: a seam on nng_close.
target_link_options(test_receive PRIVATE -Wl,--wrap=nng_close)
foreach(t test_receive test_ctl)
	set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT
		"LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/unit/lsan-nng.supp")
endforeach()
