# agent tests: cmocka unit tests of the agent's modules, the fgrecv test receiver, the symbol
# export check, and JVM smoke tests for every JDK under /usr/lib/jvm.
fg_unit_test(test_agent_options SOURCES unit/agent/test_agent_options.c LIBS fgagent_core)
fg_unit_test(test_agent_names SOURCES unit/agent/names/test_agent_names.c LIBS fgagent_core)
fg_unit_test(test_agent_queue SOURCES unit/agent/stream/test_agent_queue.c LIBS fgagent_core)
# Counts the queue's allocations: malloc, calloc and free are wrapped in this binary.
target_link_options(test_agent_queue PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=free)
fg_unit_test(test_agent_livecode SOURCES unit/agent/stream/test_agent_livecode.c LIBS fgagent_core
	PRIVATE jvmti-agent/stream)
fg_unit_test(test_agent_intern SOURCES unit/agent/names/test_agent_intern.c LIBS fgagent_core)
fg_unit_test(test_agent_sender SOURCES unit/agent/stream/test_agent_sender.c LIBS fgagent_core
	PRIVATE jvmti-agent/stream)
fg_unit_test(test_agent_tables SOURCES unit/agent/tables/test_agent_tables.c LIBS fgagent_core)
fg_unit_test(test_agent_wantfile SOURCES unit/agent/tables/test_agent_wantfile.c LIBS fgagent_core)
# The nng link (stream/link.c, otherwise only in libfgagent.so) against real ipc sockets.
fg_unit_test(test_agent_link SOURCES unit/agent/stream/test_agent_link.c
	${PROJECT_SOURCE_DIR}/jvmti-agent/stream/link.c LIBS fgagent_core ${NNG_SHARED} Threads::Threads)
target_include_directories(test_agent_link SYSTEM PRIVATE ${NNG_INCLUDE})
set_property(TEST test_agent_link APPEND PROPERTY ENVIRONMENT
	"LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/unit/lsan-nng.supp")
fg_unit_test(test_agent_events SOURCES unit/agent/records/test_agent_events.c LIBS fgagent_core)
fg_unit_test(test_agent_vmlayout SOURCES unit/agent/vm/test_agent_vmlayout.c LIBS fgagent_core)
fg_unit_test(test_agent_unloadcount SOURCES unit/agent/vm/test_agent_unloadcount.c LIBS fgagent_core)
fg_unit_test(test_agent_codeheap SOURCES unit/agent/vm/test_agent_codeheap.c LIBS fgagent_core
	PRIVATE jvmti-agent/vm)
fg_unit_test(test_agent_methodset SOURCES unit/agent/records/test_agent_methodset.c LIBS fgagent_core)
fg_unit_test(test_agent_codelines SOURCES unit/agent/records/test_agent_codelines.c LIBS fgagent_core)
fg_unit_test(test_agent_vmflags SOURCES unit/agent/vm/test_agent_vmflags.c LIBS fgagent_core)
fg_unit_test(test_agent_selfmem SOURCES unit/agent/vm/test_agent_selfmem.c LIBS fgagent_core Threads::Threads
	PRIVATE jvmti-agent/vm)

# A minimal receiver printing decoded records, for the JVM tests.
add_executable(fgrecv unit/agent/fgrecv.c)
target_link_libraries(fgrecv PRIVATE fg_ingest fgproto Threads::Threads)

# Only Agent_* may leave libfgagent.so (static nng/mbedtls stay hidden), and it needs only libc.
add_test(NAME agent_exports_only_agent_symbols
	COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/agent_exports.sh $<TARGET_FILE:fgagent>
		$<OR:$<BOOL:${FG_SANITIZE}>,$<BOOL:${FG_TSAN}>>)
set_tests_properties(agent_exports_only_agent_symbols PROPERTIES LABELS unit)

if(FG_E2E AND NOT FG_SANITIZE)
	fg_e2e_test(agent_jvm agent_jvm.sh TIMEOUT 240)
	set_property(TEST agent_jvm APPEND PROPERTY ENVIRONMENT "FGRECV=$<TARGET_FILE:fgrecv>")
endif()
# Callbacks on several threads against the real sender thread and tables worker (a fake link):
# also part of the tsan label (tests/tsan.cmake).
fg_unit_test(test_agent_stress SOURCES unit/agent/stream/test_agent_stress.c LIBS fgagent_core
	Threads::Threads)
