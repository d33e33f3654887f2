# Switch-heavy target of bench/record/offcpu.sh (off-CPU recording cost).
add_executable(bench_pingpong ${CMAKE_CURRENT_LIST_DIR}/pingpong.c)
target_link_libraries(bench_pingpong PRIVATE Threads::Threads)
