# render stage: sources of fg_render.
add_library(fg_render STATIC cmd_flamegraph.c cmd_diff.c)
target_link_libraries(fg_render PUBLIC fgcore fgproto)
