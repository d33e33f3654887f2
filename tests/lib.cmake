# lib: the shared basics.
fg_unit_test(test_util SOURCES unit/lib/test_util.c LIBS fg_lib)
