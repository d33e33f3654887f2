# symbol benchmark: native + kernel symbolization throughput (bench/symbolize/symbol.sh).
add_executable(bench_symbol ${CMAKE_CURRENT_LIST_DIR}/symbol.c)
target_link_libraries(bench_symbol PRIVATE fg_symbolize ${CMAKE_DL_LIBS})
