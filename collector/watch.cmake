# watch stage: sources of fg_watch.
add_library(fg_watch STATIC cmd_watch.c)
target_link_libraries(fg_watch PUBLIC fgcore fgproto)
