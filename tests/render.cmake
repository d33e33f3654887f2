# render tests: owned by the render stage (flame_* modules, `flamegraph` and `diff`).
fg_unit_test(test_flame_fold SOURCES unit/test_flame_fold.c LIBS fg_render)
fg_unit_test(test_flame_layout SOURCES unit/test_flame_layout.c LIBS fg_render)
fg_unit_test(test_flame_palette SOURCES unit/test_flame_palette.c LIBS fg_render)
fg_unit_test(test_flame_svg SOURCES unit/test_flame_svg.c LIBS fg_render)
fg_unit_test(test_flame_golden SOURCES unit/test_flame_golden.c LIBS fg_render)

# The SVG's script, driven in a real browser (Debian's chromium + chromedriver, WebDriver over
# plain HTTP from Python): zoom by click, search via Ctrl-F and the prompt, URL state restore.
# Exits 77 (skipped) only if chromium or chromedriver is not installed.
add_test(NAME test_flame_browser
	COMMAND python3 ${PROJECT_SOURCE_DIR}/tests/browser/flame_browser.py $<TARGET_FILE:fgcollect>)
set_tests_properties(test_flame_browser PROPERTIES LABELS "unit;browser" TIMEOUT 120
	SKIP_RETURN_CODE 77 ENVIRONMENT "FG_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
