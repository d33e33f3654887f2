# symbol stage: /proc/<pid>/maps, safe opening under /proc/<pid>/root, ELF .symtab/.dynsym,
# kallsyms, C++/Rust demangling, a symbol-table cache, and the per-frame symbolizer API.
add_library(fg_symbol STATIC
	procmaps.c
	rootfs.c
	elfsym.c
	demangle.c
	symcache.c
	kallsyms.c
	symbolizer.c)
target_include_directories(fg_symbol PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
# demangle.c calls __cxa_demangle from libstdc++.
target_link_libraries(fg_symbol PUBLIC fgcore fgproto PkgConfig::LIBELF stdc++)
