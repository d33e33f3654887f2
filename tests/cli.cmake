# cli: the commands as users run them. `flamegraph` and `diff` against flamegraph.pl goldens
# (tests/golden/render), `collapse` on stdin and files with its exit codes, and the SVG's
# script in a real browser.
fg_unit_test(test_flame_golden SOURCES unit/cli/test_flame_golden.c LIBS fg_cli PRIVATE collector/cli)
# --event, --min-block, --switch-rate, --switch-period, --threads, --(no-)per-thread of record/top/watch.
fg_unit_test(test_session_cli SOURCES unit/cli/test_session_cli.c LIBS fg_cli PRIVATE collector/cli)

add_test(NAME collapse_cli COMMAND sh ${PROJECT_SOURCE_DIR}/tests/golden/collapse/cli-test.sh
	$<TARGET_FILE:fgcollect> ${PROJECT_SOURCE_DIR}/tests/golden/collapse)
set_tests_properties(collapse_cli PROPERTIES LABELS unit TIMEOUT 60)

# The SVG's script, driven in a real browser (Debian's chromium + chromedriver, WebDriver over
# plain HTTP from Python): zoom by click, search via Ctrl-F and the prompt, URL state restore.
# Without chromium or chromedriver it fails, or skips (77) when FG_ALLOW_MISSING_TOOLS=1.
add_test(NAME test_flame_browser
	COMMAND python3 ${PROJECT_SOURCE_DIR}/tests/browser/flame_browser.py $<TARGET_FILE:fgcollect>
		--index $<TARGET_FILE:profdir_fixture>)
set_tests_properties(test_flame_browser PROPERTIES LABELS "unit;browser" TIMEOUT 120
	SKIP_RETURN_CODE 77 ENVIRONMENT "FG_SOURCE_DIR=${PROJECT_SOURCE_DIR}")

# `record` and `top` option parsing: statuses and messages for every bad option, value and
# argument (no root, no JVM).
add_test(NAME cli_args COMMAND sh ${PROJECT_SOURCE_DIR}/tests/cli/args-test.sh
	$<TARGET_FILE:fgcollect>)
set_tests_properties(cli_args PROPERTIES LABELS unit TIMEOUT 60)
