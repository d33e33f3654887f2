# record tests: symbolized stack aggregation and the top view (unit), and `fgcollect record` /
# `top` end to end on JVMs in namespace containers (e2e, each well under 60 s).
fg_unit_test(test_stackagg SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/test_stackagg.c LIBS fg_record)
fg_unit_test(test_topview SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/test_topview.c LIBS fg_record)
if(FG_E2E)
	fg_e2e_test(e2e_record_hotloop record_hotloop.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_churn record_churn.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_inline record_inline.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_exit record_exit.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_sources record_sources.sh TIMEOUT 90)
	fg_e2e_test(e2e_record_targets record_targets.sh TIMEOUT 90)
endif()
