# aggregate: symbolized stack aggregation, resolvers and interpreted Java frames (unit).
fg_unit_test(test_stackagg SOURCES unit/aggregate/test_stackagg.c LIBS fg_aggregate)
fg_unit_test(test_javaframes SOURCES unit/aggregate/test_javaframes.c LIBS fg_aggregate)
fg_unit_test(test_resolve SOURCES unit/aggregate/test_resolve.c LIBS fg_aggregate)
fg_unit_test(test_framelabel SOURCES unit/aggregate/test_framelabel.c LIBS fg_aggregate)
