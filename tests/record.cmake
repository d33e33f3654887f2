# record tests: symbolized stack aggregation, top view.
fg_unit_test(test_stackagg SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/test_stackagg.c LIBS fg_record)
fg_unit_test(test_topview SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/test_topview.c LIBS fg_record)
