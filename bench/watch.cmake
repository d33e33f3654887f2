# watch benchmarks: map latency, replay ingest, lookup throughput, table memory.
add_executable(bench_watch ${CMAKE_CURRENT_LIST_DIR}/watch.c)
target_link_libraries(bench_watch PRIVATE fg_ingest)
