# record stage: `record` and `top` - sampling + symbolization + output.
#   stackagg   call chains -> symbolized, counted stacks (resolver callbacks, no I/O)
#   topview    self/total per symbol for `top`
#   resolve    stackagg resolvers over the symbolizer and the code tables
#   session    one recording: targets, code tables (ctl client or own agent socket), sampler
add_library(fg_record STATIC stackagg.c resolve.c topview.c session.c session_cli.c cmd_record.c cmd_top.c)
target_link_libraries(fg_record PUBLIC fgcore fgproto fg_watch fg_sample fg_symbol fg_render)
