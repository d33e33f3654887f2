# shared: the wire format - round trips, every truncation, random mutations.
fg_unit_test(test_fgproto SOURCES unit/shared/test_fgproto.c LIBS fgproto)
