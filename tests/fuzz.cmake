# fuzz: the libFuzzer targets (fuzz/, ASan+UBSan) built with clang into <build>/fuzz-clang
# (fuzz_build, scripts/fuzz.sh --build), then each run for 2 s from its corpus in fuzz/corpus
# with a fixed seed: a target that stops building, or crashes, leaks or trips a sanitizer on
# its corpus or the seed's first mutations, fails here, and the same run fails the same way on
# any machine. Only in the plain build (the sanitizer builds would run the same again).
# `make fuzz` explores: new seeds each run, FUZZ_SECONDS per target.
if(NOT FG_SANITIZE AND NOT FG_FUZZ)
	set(FG_FUZZ_DIR ${PROJECT_BINARY_DIR}/fuzz-clang)
	add_test(NAME fuzz_build COMMAND ${PROJECT_SOURCE_DIR}/scripts/fuzz.sh --build --no-run
		--dir ${FG_FUZZ_DIR})
	set_tests_properties(fuzz_build PROPERTIES LABELS fuzz FIXTURES_SETUP fuzz_targets
		TIMEOUT 900)
	foreach(t fgproto fgevents ingest ctl_frame rxchan wantfile procmaps elfsym elfcfi perfring collapse
			folded interp vmstack)
		add_test(NAME fuzz_${t} COMMAND ${PROJECT_SOURCE_DIR}/scripts/fuzz.sh
			--dir ${FG_FUZZ_DIR} --seconds 2 --seed 1 ${t})
		set_tests_properties(fuzz_${t} PROPERTIES LABELS fuzz FIXTURES_REQUIRED fuzz_targets
			TIMEOUT 120)
	endforeach()
endif()
