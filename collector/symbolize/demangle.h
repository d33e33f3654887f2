/* SPDX-License-Identifier: MIT */
/*
 * demangle.h - readable names for mangled C++ (Itanium ABI) and legacy Rust symbols.
 *
 * Invariant: a name that is not mangled, or that fails to demangle, is reported as such
 * (NULL), never as a guess; callers then show the raw symbol.
 */
#ifndef FG_DEMANGLE_H
#define FG_DEMANGLE_H

/* Longest mangled name we hand to the demangler (its recursion grows with the input). */
#define DEMANGLE_MAX_INPUT 4096

/*
 * The demangled form of sym ("_ZN10JavaThread3runEv" -> "JavaThread::run()"; legacy Rust
 * "_ZN3foo3bar17h0123456789abcdefE" -> "foo::bar", hash dropped), malloc'd and owned by the
 * caller; NULL if sym is not mangled, is longer than DEMANGLE_MAX_INPUT, or cannot be
 * demangled (or without memory).
 */
char *demangle_symbol(const char *sym);

#endif
