# Wire-format tests: round trips, every truncation, random mutations.
fg_unit_test(test_fgproto SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/test_fgproto.c LIBS fgproto)
