# input: collapse against stackcollapse-perf.pl goldens (tests/golden/collapse, some gzipped);
# `fgcollect collapse` as users run it is cli's (collapse_cli).
fg_unit_test(test_collapse SOURCES unit/input/test_collapse.c LIBS fg_input ZLIB::ZLIB)
