# lib: the shared basics.
foreach(t util array)
	fg_unit_test(test_${t} SOURCES unit/lib/test_${t}.c LIBS fg_lib)
endforeach()
