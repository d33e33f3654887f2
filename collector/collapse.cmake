# collapse stage: `perf script` text -> folded stacks (collapse.c); `collapse` (cmd_collapse.c).
add_library(fg_collapse STATIC collapse.c cmd_collapse.c)
target_link_libraries(fg_collapse PUBLIC fgcore)
