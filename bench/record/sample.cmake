# Sampling overhead benchmark (bench/record/sample.sh).
add_executable(fg_bench_sample ${CMAKE_CURRENT_LIST_DIR}/sample.c)
target_link_libraries(fg_bench_sample PRIVATE fg_sample Threads::Threads)
