# unwind: the no-frame-pointer unwinder on synthetic stacks (unit).
fg_unit_test(test_vmunwind SOURCES unit/unwind/test_vmunwind.c LIBS fg_unwind)
