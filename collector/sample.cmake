# sample stage: sources of fg_sample (placeholder until the stage lands).
add_library(fg_sample INTERFACE)
target_link_libraries(fg_sample INTERFACE fgcore fgproto)
