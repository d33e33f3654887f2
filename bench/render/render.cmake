# render benchmark: input generator for bench/render/render.sh (Java-like folded stacks).
add_executable(gen_folded ${CMAKE_CURRENT_LIST_DIR}/gen_folded.c)
