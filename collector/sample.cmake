# sample stage: perf_event_open sampling (sampler.c), ring-buffer records (perfring.c) and the
# pprof writer (pprof.c).
add_library(fg_sample STATIC sampler.c perfring.c pprof.c)
target_link_libraries(fg_sample PUBLIC fgcore fgproto ZLIB::ZLIB)
