# fgtargets.cmake - how the tree declares its libraries and tests, in one place. Each folder
# registers its own: a collector stage or an agent part in its CMakeLists, a stage's tests in
# tests/unit/<stage>/CMakeLists.txt, end-to-end tests in tests/e2e/CMakeLists.txt.
#
# fg_stage(NAME SOURCES src... [DEPS lib...])
#   a collector stage (collector/<stage>/): builds fg_NAME from SOURCES, with the stage's
#   include/ public and the stage folder itself private.
function(fg_stage name)
	cmake_parse_arguments(S "" "" "SOURCES;DEPS" ${ARGN})
	add_library(fg_${name} STATIC ${S_SOURCES})
	target_include_directories(fg_${name}
		PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
		PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
	target_link_libraries(fg_${name} PUBLIC ${S_DEPS})
endfunction()

# fga_part(NAME SOURCES src... [DEPS lib...])
#   a part of the agent (jvmti-agent/<part>/): builds fgagent_NAME from SOURCES, with the
#   part's include/ public and the part's folder itself private (as fg_stage), over
#   fgagent_base (jvmti-agent/CMakeLists.txt: JNI headers, the wire format, threads).
function(fga_part name)
	cmake_parse_arguments(S "" "" "SOURCES;DEPS" ${ARGN})
	add_library(fgagent_${name} STATIC ${S_SOURCES})
	target_include_directories(fgagent_${name}
		PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
		PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
	target_link_libraries(fgagent_${name} PUBLIC fgagent_base ${S_DEPS})
endfunction()

# fg_unit_test(NAME SOURCES src... [LIBS lib...] [PRIVATE dir...] [TSAN])
#   builds NAME from SOURCES (relative to the calling folder), links cmocka and LIBS, registers
#   it with ctest (label unit). A test may see a stage's private headers: PRIVATE names the
#   stage folders (e.g. collector/symbolize), from the top of the tree; tests/unit is on every
#   test's include path. TSAN: it runs threads of ours, so the ThreadSanitizer build runs it
#   under the label tsan (tests/tsan.cmake).
function(fg_unit_test name)
	cmake_parse_arguments(T "TSAN" "" "SOURCES;LIBS;PRIVATE" ${ARGN})
	add_executable(${name} ${T_SOURCES})
	target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA ${T_LIBS})
	list(TRANSFORM T_PRIVATE PREPEND ${PROJECT_SOURCE_DIR}/)
	target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit ${T_PRIVATE})
	add_test(NAME ${name} COMMAND ${name})
	set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 120
		ENVIRONMENT "FG_SOURCE_DIR=${PROJECT_SOURCE_DIR};FG_BUILD_DIR=${PROJECT_BINARY_DIR}")
	if(T_TSAN)
		set_property(GLOBAL APPEND PROPERTY FG_TSAN_UNIT ${name})
		if(FG_TSAN)
			set_property(TEST ${name} APPEND PROPERTY LABELS tsan)
			set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
				"TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${PROJECT_SOURCE_DIR}/tests/unit/tsan.supp")
			set_property(TEST ${name} APPEND PROPERTY FAIL_REGULAR_EXPRESSION
				"WARNING: ThreadSanitizer")
		endif()
	endif()
endfunction()

# fg_e2e_test(NAME SCRIPT [TIMEOUT s] [BESIDE])
#   registers tests/e2e/SCRIPT (run as root) with the paths it needs in its env. It runs alone
#   (RUN_SERIAL) unless BESIDE: a test that keeps about one CPU busy and whose checks hold
#   with a second test running beside it (names, chains, shares and exact totals, no figure
#   that a neighbour's load moves past its bound), and that touches nothing of the host's but
#   its own (no --all, no default control socket), takes one of ctest's -j slots (PROCESSORS
#   1) and may share the machine with one other such test or the unit tests.
function(fg_e2e_test name script)
	cmake_parse_arguments(T "BESIDE" "TIMEOUT" "" ${ARGN})
	if(NOT T_TIMEOUT)
		set(T_TIMEOUT 300)
	endif()
	add_test(NAME ${name} COMMAND ${PROJECT_SOURCE_DIR}/tests/e2e/${script})
	if(T_BESIDE)
		set(serial OFF)
	else()
		set(serial ON)
	endif()
	set_tests_properties(${name} PROPERTIES LABELS e2e RUN_SERIAL ${serial} PROCESSORS 1
		TIMEOUT ${T_TIMEOUT} SKIP_RETURN_CODE 77
		ENVIRONMENT "FG_SOURCE_DIR=${PROJECT_SOURCE_DIR};FG_BUILD_DIR=${PROJECT_BINARY_DIR};FGCOLLECT=$<TARGET_FILE:fgcollect>;FGAGENT=$<TARGET_FILE:fgagent>")
endfunction()

# fg_plain_e2e(PREFIX LABEL FAIL_REGEX EXTRA_ENV script...)
#   the end-to-end scripts again with this (sanitizer) build's fgcollect, as PREFIX_script
#   under LABEL; the agent, the Java workloads and the hostile peer come from the plain build
#   FG_PLAIN_BUILD_DIR (a sanitizer libfgagent.so cannot load into a stock JVM). A match of
#   FAIL_REGEX in the output fails the test.
set(FG_PLAIN_BUILD_DIR "" CACHE PATH
	"Plain (non-sanitizer) build whose agent and Java workloads the e2e-asan tests use")
#   A script named in the list FG_PLAIN_E2E_BESIDE runs as fg_e2e_test's BESIDE tests do.
function(fg_plain_e2e prefix label fail_regex extra_env)
	foreach(t ${ARGN})
		add_test(NAME ${prefix}_${t} COMMAND ${PROJECT_SOURCE_DIR}/tests/e2e/${t}.sh)
		set(serial ON)
		if(t IN_LIST FG_PLAIN_E2E_BESIDE)
			set(serial OFF)
		endif()
		set_tests_properties(${prefix}_${t} PROPERTIES LABELS ${label} RUN_SERIAL ${serial}
			PROCESSORS 1 TIMEOUT 300 SKIP_RETURN_CODE 77
			FAIL_REGULAR_EXPRESSION "${fail_regex}"
			ENVIRONMENT "FG_SOURCE_DIR=${PROJECT_SOURCE_DIR};FG_BUILD_DIR=${FG_PLAIN_BUILD_DIR};FGCOLLECT=$<TARGET_FILE:fgcollect>;FGAGENT=${FG_PLAIN_BUILD_DIR}/jvmti-agent/libfgagent.so;FG_HOSTILE_PEER=${FG_PLAIN_BUILD_DIR}/tests/hostile_fp_peer;${extra_env}")
	endforeach()
endfunction()
