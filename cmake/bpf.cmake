# BPF programs: each bpf/NAME.bpf.c is compiled by clang for the BPF target with BTF (-g, for
# CO-RE relocations and libbpf's checks), then turned by bpftool into a skeleton header
# NAME.skel.h (the object's bytes plus typed accessors: maps, programs, read-only data) that
# the loader includes and libbpf loads. The instruction set is v3 (Linux 5.1: 32-bit jumps, and
# atomics that return the old value, which switch.bpf.c hands out its slots with).
#
# The target architecture of bpf_tracing.h's register accessors (__TARGET_ARCH_xxx): x86, the
# one processor CMakeLists.txt builds for.
set(FG_BPF_TARGET_ARCH x86)
# The architecture's own headers (asm/types.h) where Debian keeps them.
if(CMAKE_LIBRARY_ARCHITECTURE)
	set(FG_BPF_ARCH_INCLUDE -I/usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
endif()

# fg_bpf_skeleton(NAME [DEPENDS header...])
#   compiles ${CMAKE_CURRENT_SOURCE_DIR}/bpf/NAME.bpf.c (with the stage's include/, and
#   collector/lib/include/ for arch_x86_64.h) into NAME.bpf.o and generates NAME.skel.h (skeleton struct NAME_bpf) in the current binary dir;
#   sets FG_BPF_SKEL_NAME to the header's path for the stage's SOURCES.
function(fg_bpf_skeleton name)
	cmake_parse_arguments(B "" "" "DEPENDS" ${ARGN})
	set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
	set(skel ${CMAKE_CURRENT_BINARY_DIR}/${name}.skel.h)
	add_custom_command(OUTPUT ${obj}
		COMMAND ${FG_BPF_CLANG} -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_${FG_BPF_TARGET_ARCH}
			-Wall -Wextra -Werror ${FG_BPF_ARCH_INCLUDE}
			-I${CMAKE_CURRENT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/collector/lib/include
			-c ${CMAKE_CURRENT_SOURCE_DIR}/bpf/${name}.bpf.c -o ${obj}
		DEPENDS bpf/${name}.bpf.c ${B_DEPENDS}
		COMMENT "BPF object ${name}.bpf.o")
	add_custom_command(OUTPUT ${skel}
		COMMAND ${FG_BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}.tmp
		COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
		DEPENDS ${obj}
		COMMENT "BPF skeleton ${name}.skel.h")
	set(FG_BPF_SKEL_${name} ${skel} PARENT_SCOPE)
endfunction()
