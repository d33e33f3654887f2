# sample: ring-buffer records (captured bytes), the perf sysctls and the capabilities (plain
# files) and the sampler (real perf_event_open).
fg_unit_test(test_perfring SOURCES unit/sample/test_perfring.c LIBS fg_sample)
fg_unit_test(test_perfsysctl SOURCES unit/sample/test_perfsysctl.c LIBS fg_sample)
fg_unit_test(test_privs SOURCES unit/sample/test_privs.c LIBS fg_sample)
fg_unit_test(test_tracefs SOURCES unit/sample/test_tracefs.c LIBS fg_sample)
fg_unit_test(test_switchbpf SOURCES unit/sample/test_switchbpf.c LIBS fg_sample)
fg_unit_test(test_switch_sampler SOURCES unit/sample/test_switch_sampler.c LIBS fg_sample Threads::Threads m)
set_tests_properties(test_switch_sampler PROPERTIES SKIP_RETURN_CODE 77)
fg_unit_test(test_sampler SOURCES unit/sample/test_sampler.c LIBS fg_sample Threads::Threads)
set_tests_properties(test_sampler PROPERTIES SKIP_RETURN_CODE 77)

# Not a test: re-captures tests/fixtures/ring/*.ring from a real run (see capture.c).
add_executable(fg_ring_capture fixtures/ring/capture.c)
target_link_libraries(fg_ring_capture PRIVATE fg_sample Threads::Threads)
