# Thin wrapper: `make` (= `make build`) needs only the build's dependencies: it checks them and
# names what is missing with the apt-get line to run (as root it installs them, and says so).
# `make demo` and `make test` install everything they need (as root, via apt-get), configure
# with CMake and run. Everything real lives in CMakeLists.txt and scripts/.
JOBS    ?= 2
BUILD   ?= build
ASAN    ?= build-asan
TSAN    ?= build-tsan
PREFIX  ?= /opt/fgcollect
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1

# Every configure (the builds below, and the ones the tests run: the packager's build, the fuzz
# targets) compiles through scripts/cc-launcher.sh, which uses ccache when it is installed.
export CMAKE_C_COMPILER_LAUNCHER := $(CURDIR)/scripts/cc-launcher.sh
export CMAKE_CXX_COMPILER_LAUNCHER := $(CURDIR)/scripts/cc-launcher.sh

.PHONY: all deps build-deps prefetch build build-asan build-tsan soak test test-unit test-e2e demo bench install fuzz clean lint

all: build

# What the goals asked for need installed (scripts/install-deps.sh): the build's dependencies
# for `make`, `build`, `install` and the sanitizer builds; everything for a goal that runs
# tests, the demo, the benchmarks, the fuzzer or the linters, before the build (CMake looks for
# some of it when it configures: the Jetty and JDBC jars of the real-application service).
RUN_GOALS := test test-unit test-e2e demo soak bench fuzz lint
build-deps:
	@scripts/install-deps.sh $(if $(filter $(RUN_GOALS),$(MAKECMDGOALS)),all,build)

# Everything the build, the tests and the demo need.
deps:
	@scripts/install-deps.sh all

# Developer builds: warnings are errors here (FG_WERROR), not in a plain `cmake` build.
build: build-deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFG_WERROR=ON >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

# The ASan build's e2e-asan tests use the plain build's agent and Java workloads.
build-asan: build-deps
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DFG_SANITIZE=ON -DFG_E2E=OFF \
		-DFG_WERROR=ON -DFG_PLAIN_BUILD_DIR=$(abspath $(BUILD)) >/dev/null
	cmake --build $(ASAN) -j$(JOBS)

# The TSan build: only what its tsan and e2e-tsan labels run (tests/tsan.cmake); the e2e-tsan
# tests too use the plain build's agent and Java workloads.
build-tsan: build-deps
	cmake -S . -B $(TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFG_TSAN=ON -DFG_E2E=OFF \
		-DFG_WERROR=ON -DFG_PLAIN_BUILD_DIR=$(abspath $(BUILD)) >/dev/null
	cmake --build $(TSAN) -j$(JOBS) --target fg_tsan_targets

# The image roots of the end-to-end tests (tests/images/prefetch.sh) and the container tests'
# images (tests/containers/images.sh, at low priority): made in the background from the start
# of `make test` (once the dependencies, mmdebstrap and podman among them, are installed), so
# that their minutes of mmdebstrap, apt and compiling overlap the builds and the unit tests;
# the tests that need a root wait for it, and ctest's containers_images waits for the images
# (and builds them if this could not) before any end-to-end test runs. Their logs:
# $(BUILD)/prefetch-roots.log, $(BUILD)/prefetch-images.log.
prefetch: build-deps
	@mkdir -p $(BUILD)
	@echo "image roots and container images: made in the background (logs: $(BUILD)/prefetch-*.log)"
	@tests/images/prefetch.sh >$(BUILD)/prefetch-roots.log 2>&1 &
	@nice -n 10 tests/containers/images.sh >$(BUILD)/prefetch-images.log 2>&1 &

# Unit tests twice (plain and ASan+UBSan), the end-to-end tests, then the collector-stressing
# end-to-end tests again with the ASan+UBSan fgcollect (label e2e-asan, tests/e2e_asan.cmake),
# then the threaded parts under ThreadSanitizer: their unit tests (label tsan) and the watch
# daemon's end-to-end tests with the TSan fgcollect (label e2e-tsan, tests/tsan.cmake).
# Every pass runs JOBS tests at a time, except the end-to-end ones (RUN_SERIAL: one at a
# time, alone). The plain build's unit label includes the lint (scripts/lint.sh) and the Release /
# BUILD_TESTING=OFF build check; its fuzz label builds the libFuzzer targets with clang and runs
# each for 2 s (tests/fuzz.cmake).
test: prefetch build build-asan build-tsan
	ctest --test-dir $(ASAN) --output-on-failure -j$(JOBS) -L unit
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)
	ctest --test-dir $(ASAN) --output-on-failure -j$(JOBS) -L e2e-asan
	ctest --test-dir $(TSAN) --output-on-failure -j$(JOBS) -L '^(tsan|e2e-tsan)$$'

# The soak (tests/e2e/soak.sh) for SOAK_MINUTES (a 90-second version runs in `make test`).
SOAK_MINUTES ?= 30
soak: build
	SOAK_MINUTES=$(SOAK_MINUTES) FG_SOURCE_DIR=$(CURDIR) FG_BUILD_DIR=$(abspath $(BUILD)) \
		FGCOLLECT=$(abspath $(BUILD))/collector/fgcollect \
		FGAGENT=$(abspath $(BUILD))/jvmti-agent/libfgagent.so tests/e2e/soak.sh

test-unit: build
	ctest --test-dir $(BUILD) --output-on-failure -L unit

test-e2e: build
	ctest --test-dir $(BUILD) --output-on-failure -L e2e

demo: build
	scripts/demo.sh $(BUILD)

bench: build
	bench/run-all.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The libFuzzer targets (build-fuzz/fuzz/fuzz_*), each run FUZZ_SECONDS (FUZZ_JOBS at once);
# prints executions and coverage per target and fails on any finding (scripts/fuzz.sh).
fuzz: build-deps
	JOBS=$(JOBS) scripts/fuzz.sh --build --dir build-fuzz --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS)

lint: build
	scripts/lint.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN) $(TSAN) build-fuzz
