# watch stage: receive -> peer check -> code table -> perf map writer; `watch`; control channel.
set(FG_WATCH_DIR ${CMAKE_CURRENT_LIST_DIR})
add_library(fg_watch STATIC
	${FG_WATCH_DIR}/cmd_watch.c ${FG_WATCH_DIR}/receive.c ${FG_WATCH_DIR}/peer.c
	${FG_WATCH_DIR}/codetab.c ${FG_WATCH_DIR}/perfmap.c ${FG_WATCH_DIR}/jvmset.c
	${FG_WATCH_DIR}/ctl.c)
target_include_directories(fg_watch PUBLIC ${FG_WATCH_DIR} ${NNG_INCLUDE})
target_link_libraries(fg_watch PUBLIC fgcore fgproto ${NNG_SHARED} Threads::Threads)
