# collapse stage: `perf script` text -> folded stacks.
add_library(fg_collapse STATIC cmd_collapse.c)
target_link_libraries(fg_collapse PUBLIC fgcore)
