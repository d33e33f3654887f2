# symbol stage: sources of fg_symbol (placeholder until the stage lands).
add_library(fg_symbol INTERFACE)
target_link_libraries(fg_symbol INTERFACE fgcore fgproto)
