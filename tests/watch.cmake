# watch tests: code table, perf map writer, /proc parsers, receive (real nng), control channel.
fg_unit_test(test_codetab SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_codetab.c LIBS fg_watch)
foreach(t perfmap peer receive ctl)
	if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/unit/test_${t}.c)
		fg_unit_test(test_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_${t}.c LIBS fg_watch)
	endif()
endforeach()
foreach(t test_receive test_ctl)
	if(TEST ${t})
		set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT
			"LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/unit/lsan-nng.supp")
	endif()
endforeach()
