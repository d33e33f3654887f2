# time view benchmark: a synthetic recording written as the time view page or speedscope's file
# (bench/render/timeview.sh; also the input of the page's browser test).
add_executable(timeview-gen ${CMAKE_CURRENT_LIST_DIR}/timeview-gen.c)
target_link_libraries(timeview-gen PRIVATE fg_render)
