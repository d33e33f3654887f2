# sample tests: ring-buffer records (captured bytes), the sampler (real perf_event_open),
# the pprof writer (decoded back, and read by `go tool pprof`).
fg_unit_test(test_sampler SOURCES unit/test_sampler.c LIBS fg_sample Threads::Threads)
set_tests_properties(test_sampler PROPERTIES SKIP_RETURN_CODE 77)
