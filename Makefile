# The README's two set-up commands: `make demo` and `make test`. Both install missing
# Debian packages first (scripts/install-deps.sh; the demo only the build's, not the
# tests'), then build in build/: `make test` every target, `make demo` only the ones
# scripts/demo.sh runs (DEMO_TARGETS), so a fresh clone's demo does not wait for the
# tests' build (a later `make test` installs and builds the rest).
BUILD ?= build
JOBS ?= $(shell nproc)
# Ninja (ninja-build): it starts compiling sooner than make and keeps both cores busy
# across folders; its .ninja_log holds each file's compile time (docs/building.md).
GENERATOR ?= -G Ninja
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
# What scripts/demo.sh runs: the imgpipe binary (its train step is libtorch's, built in).
DEMO_TARGETS ?= imgpipe

# ccache (CMakeLists.txt uses it when installed) hits across clones and worktrees: the
# paths below the folder above this one are hashed relative to it, and the build
# folder's own path is not hashed (debug info may then name another clone's build
# folder). So CI's fresh clone reuses what a developer built on the same machine.
export CCACHE_BASEDIR ?= $(abspath $(CURDIR)/..)
export CCACHE_NOHASHDIR ?= true

# Configures $(BUILD) unless it is configured already.
CONFIGURE = [ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD) $(GENERATOR) $(CMAKE_FLAGS)
# $(call reconfigure,DIR,FLAGS): configures DIR with FLAGS (the generator only the first
# time: a folder keeps the one it was made with).
reconfigure = cmake -S . -B $(1) $(if $(wildcard $(1)/CMakeCache.txt),,$(GENERATOR)) $(2)

.PHONY: all deps build test demo bench clean fuzz

all: build

deps:
	bash scripts/install-deps.sh

build: deps
	$(CONFIGURE)
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The demo installs only the build's packages (install-deps.sh --demo), not the tests'.
demo:
	bash scripts/install-deps.sh --demo
	$(CONFIGURE)
	cmake --build $(BUILD) -j $(JOBS) --target $(DEMO_TARGETS)
	bash scripts/demo.sh $(BUILD)

bench: build
	bash scripts/install-deps.sh --bench
	cmake --build $(BUILD) -j $(JOBS) --target benchmarks
	bash bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)

# Sanitizer builds, each in its own folder: every test under AddressSanitizer +
# UndefinedBehaviorSanitizer (build-asan), and the threaded parts (the pipeline and loader
# tests and the thread pool) under ThreadSanitizer (build-tsan). Any report fails the run.
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# What the ASan build holds: every library and test of ours, the libtorch layers
# included (Debian's libtorch is not instrumented, but train/ and extract/ are our code
# around it: batches handed to tensors, checkpoints, .npy rows, worker processes; and
# LeakSanitizer watches the whole process); not the benchmarks (never run there) nor the
# Python module (an instrumented extension does not load into Python). The TSan build
# leaves libtorch out (an uninstrumented library's own threads give false reports): it
# is also the build without libtorch whose imgpipe model_commands_test runs.
SANITIZE_CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
ASAN_CMAKE_FLAGS ?= $(SANITIZE_CMAKE_FLAGS) -DIMGPIPE_TORCH=ON
TSAN_CMAKE_FLAGS ?= $(SANITIZE_CMAKE_FLAGS) -DIMGPIPE_TORCH=OFF
# model_commands_test there is also the test of a build without libtorch: imgpipe's
# commands work and the model commands say how to get them.
TSAN_TESTS ?= pipeline_test loader_test util_test io_http_test imgpipe model_commands_test
TSAN_TEST_REGEX ?= ^(pipeline_test\.|loader_test\.|util_test\.ThreadPool\.|io_http_test\.|model_commands_test\.)

.PHONY: test-sanitize test-asan test-tsan
test-sanitize: test-asan test-tsan

test-asan: deps
	$(call reconfigure,$(ASAN_BUILD),$(ASAN_CMAKE_FLAGS) -DIMGPIPE_SANITIZE=address)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && \
	  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

test-tsan: deps
	$(call reconfigure,$(TSAN_BUILD),$(TSAN_CMAKE_FLAGS) -DIMGPIPE_SANITIZE=thread)
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TESTS)
	cd $(TSAN_BUILD) && \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/scripts/tsan.supp" \
	  ctest --output-on-failure -j $(JOBS) -R '$(TSAN_TEST_REGEX)'

# libFuzzer targets (clang, ASan, UBSan) built in build-fuzz/, each run for FUZZ_SECONDS
# (`make fuzz FUZZ_SECONDS=600`); `make fuzz-corpus` also keeps what the runs found in
# fuzz/corpus/ (commit it), where every later run, CI's included, starts.
FUZZ_SECONDS ?= 60
.PHONY: fuzz-corpus
fuzz: deps
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz-corpus: deps
	bash scripts/fuzz.sh --keep-corpus $(FUZZ_SECONDS)
