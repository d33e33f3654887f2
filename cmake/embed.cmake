# cmake -DIN=file -DOUT=file.c -DNAME=symbol -DHEADER=header.h -P embed.cmake
#
# Embed a text file in a C source as `const char NAME[]` (NUL-terminated) and
# `const size_t NAME_len` (without the NUL). Leading lines that start with // are the file's own
# header comment and are not embedded; every other byte is, unchanged.
foreach(v IN ITEMS IN OUT NAME HEADER)
	if(NOT DEFINED ${v})
		message(FATAL_ERROR "embed.cmake: -D${v}= is required")
	endif()
endforeach()
file(READ "${IN}" text)
string(REGEX REPLACE "^(//[^\n]*\n)+" "" text "${text}")
string(LENGTH "${text}" len)
string(HEX "${text}" hex)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REPEAT "0x..," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n\t" bytes "${bytes}")
get_filename_component(in_name "${IN}" NAME)
file(WRITE "${OUT}.tmp"
	"/* Generated from ${in_name} by cmake/embed.cmake: edit ${in_name}, not this file. */\n"
	"#include \"${HEADER}\"\n\n"
	"const char ${NAME}[] = {\n\t${bytes}0x00\n};\n"
	"const size_t ${NAME}_len = ${len};\n")
# Rewrite only on change, so an unchanged file does not rebuild its dependants.
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
