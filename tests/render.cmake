# render: the flame_* modules, pprof (decoded back, and read by `go tool pprof`) and the top view
# (collapse, the perf script reader, is input's: tests/input.cmake).
foreach(t flame_fold flame_layout flame_palette flame_svg topview pprof)
	fg_unit_test(test_${t} SOURCES unit/render/test_${t}.c LIBS fg_render PRIVATE collector/render)
endforeach()

# `go tool pprof -top` must read our file and list the Java names. Without go it fails, or
# skips (77) when FG_ALLOW_MISSING_TOOLS=1.
add_test(NAME test_pprof_go COMMAND test_pprof --go)
set_tests_properties(test_pprof_go PROPERTIES LABELS unit TIMEOUT 120 SKIP_RETURN_CODE 77
	ENVIRONMENT "FG_BUILD_DIR=${PROJECT_BINARY_DIR}")

# flamegraph.js (embedded into every SVG) must parse as JavaScript on its own; the browser test
# (test_flame_browser) runs it.
add_test(NAME flamegraph_js_syntax
	COMMAND node --check ${PROJECT_SOURCE_DIR}/collector/render/flamegraph.js)
set_tests_properties(flamegraph_js_syntax PROPERTIES LABELS unit TIMEOUT 60)
