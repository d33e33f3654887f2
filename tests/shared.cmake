# shared: the wire format - round trips, every truncation, random mutations.
fg_unit_test(test_fgproto SOURCES unit/shared/test_fgproto.c LIBS fgproto)
# shared: the hash table both binaries may use - map and multimap, growth, removal.
fg_unit_test(test_htab SOURCES unit/shared/test_htab.c LIBS fghtab)
