# record benchmark: end-to-end symbolization throughput (bench/record/record.sh).
add_executable(bench_record ${CMAKE_CURRENT_LIST_DIR}/record.c)
target_link_libraries(bench_record PRIVATE fg_aggregate ${CMAKE_DL_LIBS})
