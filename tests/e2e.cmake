# End-to-end tests (label e2e): real JVMs with the agent in namespace containers
# (tests/harness/fgcontainer), a real `fgcollect watch`, stock perf. Run as root, serially.
# Each script sources tests/harness/lib.sh and exits 0 pass, 1 fail, 77 only when the kernel
# refuses namespaces or perf_event_open.

# The Java workloads (tests/java) as one jar, ${PROJECT_BINARY_DIR}/tests/java/fg-workloads.jar,
# rebuilt by the build when a source changes (CMake's UseJava); lib.sh mounts its directory at
# /app in the containers. Class files target Java 11, so every JDK >= 11 runs them. Every
# tests/java/*.java is a workload (CONFIGURE_DEPENDS: a new file is picked up by the build).
set(JAVA_HOME ${FG_JAVA_HOME})
find_package(Java 11 REQUIRED COMPONENTS Development)
include(UseJava)
set(CMAKE_JAVA_COMPILE_FLAGS -nowarn --release 11)
file(GLOB FG_JAVA_WORKLOADS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/java/*.java)
add_jar(fg_java_workloads
	SOURCES ${FG_JAVA_WORKLOADS}
	OUTPUT_NAME fg-workloads
	OUTPUT_DIR ${PROJECT_BINARY_DIR}/tests/java)

fg_e2e_test(e2e_harness_selftest harness_selftest.sh TIMEOUT 120)
fg_e2e_test(e2e_map_perf_names map_perf_names.sh TIMEOUT 180)
fg_e2e_test(e2e_map_late_collector map_late_collector.sh TIMEOUT 120)
fg_e2e_test(e2e_map_collector_restart map_collector_restart.sh TIMEOUT 120)
fg_e2e_test(e2e_map_two_pid1 map_two_pid1.sh TIMEOUT 120)
fg_e2e_test(e2e_map_hostile_client map_hostile_client.sh TIMEOUT 120)
fg_e2e_test(e2e_map_symlink_attack map_symlink_attack.sh TIMEOUT 120)
fg_e2e_test(e2e_map_keep_exited map_keep_exited.sh TIMEOUT 120)
fg_e2e_test(e2e_map_reuse_perf map_reuse_perf.sh TIMEOUT 120)
fg_e2e_test(e2e_demo_diff demo_diff.sh TIMEOUT 240)
fg_e2e_test(e2e_map_frozen_collector map_frozen_collector.sh TIMEOUT 300)
