# codetab: the code history and the perf map writer.
fg_unit_test(test_codetab SOURCES unit/codetab/test_codetab.c LIBS fg_codetab)
fg_unit_test(test_perfmap SOURCES unit/codetab/test_perfmap.c LIBS fg_codetab)
