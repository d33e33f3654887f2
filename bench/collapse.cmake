# collapse benchmark: generator of Java-like `perf script` text for bench/collapse.sh.
add_executable(collapse-gen ${CMAKE_CURRENT_SOURCE_DIR}/collapse-gen.c)
