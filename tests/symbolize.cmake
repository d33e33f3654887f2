# symbolize: owned by the symbolize stage.
#
# ELF fixtures: tiny sources built here, one edge case each. They are data, not project code:
# built without the project's sanitizer/warning flags (a static executable cannot take ASan)
# and with default symbol visibility.
set(FX_SRC ${PROJECT_SOURCE_DIR}/tests/fixtures/elf)
set(FX_DIR ${CMAKE_CURRENT_BINARY_DIR}/fixtures/elf)

# Functions in source order (fx_lib.c's last function must stay last): gcc needs
# -fno-toplevel-reorder for that; clang emits them in source order already and has no such flag
# (the `make fuzz` build compiles these fixtures with clang).
set(FX_KEEP_ORDER "$<$<OR:$<COMPILE_LANG_AND_ID:C,GNU>,$<COMPILE_LANG_AND_ID:CXX,GNU>>:-fno-toplevel-reorder>")

function(fx_fixture target)
	set_target_properties(${target} PROPERTIES
		LIBRARY_OUTPUT_DIRECTORY ${FX_DIR}
		RUNTIME_OUTPUT_DIRECTORY ${FX_DIR}
		C_VISIBILITY_PRESET default
		CXX_VISIBILITY_PRESET default
		COMPILE_OPTIONS "-O1;-g;-fno-omit-frame-pointer;-fno-inline;${FX_KEEP_ORDER}"
		LINK_OPTIONS "")
endfunction()

# Shared library with .symtab.
add_library(fx_full SHARED ${FX_SRC}/fx_lib.c)
fx_fixture(fx_full)
# The same, stripped: only .dynsym (exported functions) is left.
add_custom_command(OUTPUT ${FX_DIR}/libfx_stripped.so
	COMMAND ${CMAKE_STRIP} --strip-all -o ${FX_DIR}/libfx_stripped.so $<TARGET_FILE:fx_full>
	DEPENDS fx_full VERBATIM)
# Its separate debug file (what libc6-dbg ships under /usr/lib/debug/.build-id/).
add_custom_command(OUTPUT ${FX_DIR}/libfx_full.debug
	COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:fx_full> ${FX_DIR}/libfx_full.debug
	DEPENDS fx_full VERBATIM)
add_custom_target(fx_stripped DEPENDS ${FX_DIR}/libfx_stripped.so ${FX_DIR}/libfx_full.debug)
# .text in its own PT_LOAD at vaddr 0x200000 while its file offset is a few pages:
# p_vaddr != p_offset and differs from the first segment's (0 = 0), so no single "load bias"
# taken from the first segment is right for it.
add_library(fx_vaddr SHARED ${FX_SRC}/fx_lib.c)
fx_fixture(fx_vaddr)
set_property(TARGET fx_vaddr PROPERTY LINK_OPTIONS "-Wl,--section-start=.text=0x200000")
# C++ names to demangle.
add_library(fx_cxx SHARED ${FX_SRC}/fx_cxx.cpp)
fx_fixture(fx_cxx)
# Executables: PIE, non-PIE (ET_EXEC, absolute addresses), static (runs in an empty chroot).
add_executable(fx_pie ${FX_SRC}/fx_exe.c)
fx_fixture(fx_pie)
set_property(TARGET fx_pie PROPERTY POSITION_INDEPENDENT_CODE ON)
set_property(TARGET fx_pie PROPERTY COMPILE_OPTIONS "-O1;-g;-fno-inline;-fPIE")
set_property(TARGET fx_pie PROPERTY LINK_OPTIONS "-pie")
add_executable(fx_nopie ${FX_SRC}/fx_exe.c)
fx_fixture(fx_nopie)
set_property(TARGET fx_nopie PROPERTY POSITION_INDEPENDENT_CODE OFF)
set_property(TARGET fx_nopie PROPERTY COMPILE_OPTIONS "-O1;-g;-fno-inline;-fno-pie")
set_property(TARGET fx_nopie PROPERTY LINK_OPTIONS "-no-pie")
add_executable(fx_static ${FX_SRC}/fx_exe.c)
fx_fixture(fx_static)
set_property(TARGET fx_static PROPERTY POSITION_INDEPENDENT_CODE OFF)
set_property(TARGET fx_static PROPERTY COMPILE_OPTIONS "-O1;-g;-fno-inline;-fno-pie")
set_property(TARGET fx_static PROPERTY LINK_OPTIONS "-static")
# Without frame pointers: only its .eh_frame unwinds it.
add_library(fx_cfi SHARED ${FX_SRC}/fx_cfi.c)
fx_fixture(fx_cfi)
set_property(TARGET fx_cfi PROPERTY COMPILE_OPTIONS
	"-O2;-fomit-frame-pointer;-fasynchronous-unwind-tables;-fno-inline")
add_custom_target(fx_elf_fixtures DEPENDS fx_full fx_stripped fx_vaddr fx_cxx fx_pie fx_nopie
	fx_static fx_cfi)

set(FX_DEFS
	FX_FULL="$<TARGET_FILE:fx_full>"
	FX_STRIPPED="${FX_DIR}/libfx_stripped.so"
	FX_DEBUG="${FX_DIR}/libfx_full.debug"
	FX_VADDR="$<TARGET_FILE:fx_vaddr>"
	FX_CXX="$<TARGET_FILE:fx_cxx>"
	FX_PIE="$<TARGET_FILE:fx_pie>"
	FX_NOPIE="$<TARGET_FILE:fx_nopie>"
	FX_STATIC="$<TARGET_FILE:fx_static>"
	FX_CFI="$<TARGET_FILE:fx_cfi>")

foreach(t procmaps rootfs elfsym demangle kallsyms symcache dbgfetch symbolizer)
	fg_unit_test(test_${t} SOURCES unit/symbolize/test_${t}.c
		LIBS fg_symbolize ${CMAKE_DL_LIBS} PRIVATE collector/symbolize)
	target_compile_definitions(test_${t} PRIVATE ${FX_DEFS})
	add_dependencies(test_${t} fx_elf_fixtures)
endforeach()
# The interpreter namer (symbolize/interp): over a fake JVM's memory (fakevm.h).
foreach(t interp interp_layout interp_lines)
	fg_unit_test(test_${t} SOURCES unit/symbolize/interp/test_${t}.c LIBS fg_interp
		PRIVATE collector/symbolize/interp)
endforeach()
# unwind's test_elfcfi (tests/unwind.cmake) steps through fx_cfi.
target_compile_definitions(test_elfcfi PRIVATE ${FX_DEFS})
add_dependencies(test_elfcfi fx_elf_fixtures)

# What only root or an unrestricted kernel can test runs as its own ctest entry, so that a run
# without them is reported as skipped (exit 77), not as passed.
add_test(NAME test_symbolizer_root COMMAND test_symbolizer --root)
add_test(NAME test_kallsyms_real COMMAND test_kallsyms --real)
set_tests_properties(test_symbolizer_root test_kallsyms_real PROPERTIES LABELS unit TIMEOUT 120
	SKIP_RETURN_CODE 77)
