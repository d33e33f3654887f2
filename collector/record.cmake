# record stage: sources of fg_record.
add_library(fg_record STATIC cmd_record.c cmd_top.c)
target_link_libraries(fg_record PUBLIC fgcore fgproto)
