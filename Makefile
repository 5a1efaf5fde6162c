# prereg: the two commands a user needs are `make demo` and `make test`.
# Both do all set-up on a fresh Debian machine (packages, configure,
# build). BUILD and ASAN_BUILD are the out-of-source build folders.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= 2
BUILD_TYPE ?= RelWithDebInfo
# make install: $(DESTDIR)$(PREFIX)/bin/prereg, the README and the
# interface in $(PREFIX)/share/doc/prereg, and the bash and zsh
# completions in share/bash-completion and share/zsh. DESTDIR stages a
# package.
PREFIX     ?= /usr/local

.PHONY: all deps build test test-asan demo clean format format-check install

all: build

# Configure (quietly) and build BUILD.
CMAKE_BUILD = cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  >/dev/null && cmake --build $(BUILD) -j $(JOBS)

deps:
	@sh scripts/deps.sh build

build: deps
	$(CMAKE_BUILD)

install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# The daemon tests (label daemon) start a Docker engine and a Slurm
# cluster of their own; their packages are installed here, never a system
# daemon started.
test: build
	sh scripts/deps.sh demo test docker containerd slurm k8s
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@grep -h "fault scenarios ran" $(BUILD)/Testing/Temporary/LastTest.log | \
	  awk '{ n += $$2 } END { print "faults: " n " fault scenarios ran in all" }'

# The suite under AddressSanitizer and UndefinedBehaviorSanitizer, but
# for the tests that start daemons (label daemon: a Docker engine, a
# Slurm cluster), whose timing the sanitizers change and which exercise
# the daemons' processes more than prereg's code.
test-asan: deps
	sh scripts/deps.sh demo test k8s
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Asan >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest -LE daemon --output-on-failure -j $(JOBS)

# The demo shows a line per step; the build says only what goes wrong.
demo: deps
	@echo "make demo: building $(BUILD)/prereg"
	@$(CMAKE_BUILD) >/dev/null
	@sh scripts/deps.sh demo
	@sh scripts/demo.sh $(BUILD)/prereg

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

# Formatting: every tracked C file through .clang-format. format rewrites
# them; format-check (run by .ci/run) fails on any file it would change.
CLANG_FORMAT ?= clang-format
format:
	git ls-files '*.c' '*.h' | xargs $(CLANG_FORMAT) -i

format-check:
	git ls-files '*.c' '*.h' | xargs $(CLANG_FORMAT) --dry-run -Werror

# Reliability: fuzzing and valgrind.
# make fuzz: the libFuzzer targets (clang) for FUZZ_SECONDS each;
# make valgrind: a representative session under valgrind (plain build).
FUZZ_SECONDS ?= 12
.PHONY: fuzz valgrind
fuzz: deps
	sh scripts/deps.sh test
	sh scripts/fuzz.sh $(FUZZ_SECONDS)

valgrind: build
	sh scripts/deps.sh demo test
	sh scripts/valgrind.sh $(BUILD)/prereg
