# The JVMTI floor agent for bench/agent/jvm_overhead.sh (never installed).
add_library(fg_null_agent SHARED ${CMAKE_CURRENT_LIST_DIR}/null_agent.c)
target_include_directories(fg_null_agent SYSTEM PRIVATE ${FG_JNI_INCLUDE})
set_target_properties(fg_null_agent PROPERTIES C_VISIBILITY_PRESET default)
# The JVMTI allocation-sampling floor for bench/agent/alloc.sh (never installed).
add_library(fg_alloc_floor SHARED ${CMAKE_CURRENT_LIST_DIR}/alloc_floor.c)
target_include_directories(fg_alloc_floor SYSTEM PRIVATE ${FG_JNI_INCLUDE})
set_target_properties(fg_alloc_floor PROPERTIES C_VISIBILITY_PRESET default)
# The virtual-thread events' floor for bench/agent/vthread.sh (never installed).
add_library(fg_vthread_floor SHARED ${CMAKE_CURRENT_LIST_DIR}/vthread_floor.c)
target_include_directories(fg_vthread_floor SYSTEM PRIVATE ${FG_JNI_INCLUDE})
set_target_properties(fg_vthread_floor PROPERTIES C_VISIBILITY_PRESET default)
