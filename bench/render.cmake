# render benchmark: input generator for bench/render.sh (Java-like folded stacks).
add_executable(gen_folded ${CMAKE_CURRENT_SOURCE_DIR}/gen_folded.c)
