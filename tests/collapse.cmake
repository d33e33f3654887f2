# collapse tests: the module against stackcollapse-perf.pl goldens (tests/golden/collapse), and
# the command line (stdin and files, exit codes).
fg_unit_test(test_collapse SOURCES unit/test_collapse.c LIBS fg_collapse ZLIB::ZLIB)
add_test(NAME collapse_cli COMMAND sh ${PROJECT_SOURCE_DIR}/tests/golden/collapse/cli-test.sh
	$<TARGET_FILE:fgcollect> ${PROJECT_SOURCE_DIR}/tests/golden/collapse)
set_tests_properties(collapse_cli PROPERTIES LABELS unit TIMEOUT 60)
