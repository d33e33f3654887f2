# sample tests: ring-buffer records (captured bytes), the sampler (real perf_event_open),
# the pprof writer (decoded back, and read by `go tool pprof`).
fg_unit_test(test_perfring SOURCES unit/test_perfring.c LIBS fg_sample)
fg_unit_test(test_sampler SOURCES unit/test_sampler.c LIBS fg_sample Threads::Threads)
set_tests_properties(test_sampler PROPERTIES SKIP_RETURN_CODE 77)
fg_unit_test(test_pprof SOURCES unit/test_pprof.c LIBS fg_sample)

# `go tool pprof -top` must read our file and list the Java names; 77 (skip) without go.
add_test(NAME test_pprof_go COMMAND test_pprof --go)
set_tests_properties(test_pprof_go PROPERTIES LABELS unit TIMEOUT 120 SKIP_RETURN_CODE 77
	ENVIRONMENT "FG_BUILD_DIR=${PROJECT_BINARY_DIR}")

# Not a test: re-captures tests/fixtures/ring/*.ring from a real run (see capture.c).
add_executable(fg_ring_capture fixtures/ring/capture.c)
target_link_libraries(fg_ring_capture PRIVATE fg_sample Threads::Threads)
