# collapse benchmark: generator of Java-like `perf script` text for bench/render/collapse.sh.
add_executable(collapse-gen ${CMAKE_CURRENT_LIST_DIR}/collapse-gen.c)
