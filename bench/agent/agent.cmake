# Agent benchmarks (bench/agent/agent.sh): fg_bench_agent measures the callback path, the table and
# the replay without a JVM; libfgagent_bench.so (jvmti-agent/) times real JVMTI callbacks.
add_executable(fg_bench_agent ${CMAKE_CURRENT_LIST_DIR}/agent.c
	${PROJECT_SOURCE_DIR}/jvmti-agent/stream/link.c)
# tests/unit/agent: the fake JVMTI; jvmti-agent/stream: the live code table, private to stream/.
target_include_directories(fg_bench_agent PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit/agent
	${PROJECT_SOURCE_DIR}/jvmti-agent/stream)
target_include_directories(fg_bench_agent SYSTEM PRIVATE ${NNG_INCLUDE})
# fg_lib: the collector's htab, measured against the agent's interning.
target_link_libraries(fg_bench_agent PRIVATE fgagent_core fg_lib ${NNG_SHARED} Threads::Threads)
# The perf map watcher for the map's latency in bench/agent/jdks.sh.
add_executable(fg_bench_mapwatch ${CMAKE_CURRENT_LIST_DIR}/mapwatch.c)
target_include_directories(fg_bench_mapwatch PRIVATE ${PROJECT_SOURCE_DIR}/shared)
