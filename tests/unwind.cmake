# unwind: the no-frame-pointer unwinder on synthetic stacks, the frame-pointer walk in a stack
# copy, and .eh_frame steps on a real stack (unit; test_elfcfi's ELF fixture is built in
# symbolize.cmake with the other fixtures, which gives it its FX_* paths).
fg_unit_test(test_vmunwind SOURCES unit/unwind/test_vmunwind.c LIBS fg_unwind)
fg_unit_test(test_framewalk SOURCES unit/unwind/test_framewalk.c LIBS fg_unwind)
fg_unit_test(test_vmstack SOURCES unit/unwind/test_vmstack.c LIBS fg_unwind)
fg_unit_test(test_elfcfi SOURCES unit/unwind/test_elfcfi.c LIBS fg_symbolize ${CMAKE_DL_LIBS})

if(FG_E2E)
	# The JNI half of UnwindMix's jni mode, built without frame pointers (data, not project
	# code: no sanitizers, default visibility).
	add_library(unwindjni SHARED fixtures/jni/unwindjni.c)
	target_include_directories(unwindjni SYSTEM PRIVATE ${FG_JNI_INCLUDE})
	set_target_properties(unwindjni PROPERTIES
		LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fixtures/jni
		C_VISIBILITY_PRESET default
		COMPILE_OPTIONS "-O2;-fomit-frame-pointer;-fasynchronous-unwind-tables"
		LINK_OPTIONS "")
	fg_e2e_test(e2e_record_unwind record_unwind.sh TIMEOUT 600)
	add_dependencies(unwindjni fg_java_workloads)
	set_property(TEST e2e_record_unwind APPEND PROPERTY ENVIRONMENT
		"FG_UNWINDJNI=$<TARGET_FILE:unwindjni>")
endif()
