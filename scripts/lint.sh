#!/bin/sh
# Static analysis: cppcheck and clang-tidy over the project's C sources, using the compile
# database of BUILD_DIR. Prints findings; exits non-zero if either tool reports an error.
set -u
build=${1:-build}
cd "$(dirname "$0")/.."
srcs=$(git ls-files '*.c' | grep -v '^fuzz/')
status=0
cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
	--std=c11 --inline-suppr --suppress=missingIncludeSystem \
	-I shared -I jvmti-agent $(for d in collector/*/; do printf -- '-I %s -I %sinclude ' $d $d; done) $srcs || status=1
# Off on purpose:
#  bugprone-sizeof-expression: clang-tidy 14 flags every `n * sizeof(*p)` where p is an array of
#    pointers to structs ("sizeof(A*)"), the project's allocation idiom; its
#    WarnOnSizeOfPointerToAggregate switch only exists from clang-tidy 15.
#  bugprone-suspicious-string-compare stays on, but without WarnOnImplicitComparison: the code
#    uses `!memcmp(...)` / `memcmp(...) ||` as equality tests throughout.
clang-tidy -p "$build" --quiet \
	--config='{CheckOptions: [{key: bugprone-suspicious-string-compare.WarnOnImplicitComparison, value: false}]}' \
	--checks='-*,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,-bugprone-narrowing-conversions,-bugprone-assignment-in-if-condition,-bugprone-sizeof-expression,clang-analyzer-*,-clang-analyzer-security.insecureAPI.*,-clang-analyzer-valist.Uninitialized' \
	$(git ls-files 'shared/*.c' 'collector/*.c' 'jvmti-agent/*.c') 2>/dev/null || status=1
exit $status
