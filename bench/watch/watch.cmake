# watch benchmarks: map latency, replay ingest, lookup throughput, table memory.
# The map latency goes through the agent's own queue, sender and nng link.
add_executable(bench_watch ${CMAKE_CURRENT_LIST_DIR}/watch.c
	${PROJECT_SOURCE_DIR}/jvmti-agent/stream/link.c)
target_include_directories(bench_watch SYSTEM PRIVATE ${NNG_INCLUDE})
target_link_libraries(bench_watch PRIVATE fg_ingest fgagent_core ${NNG_SHARED} Threads::Threads)
