# fencebench — plain Makefile.  See CONTRIBUTING.md for the layout.
#
# Sources are discovered, so adding a file needs no edit here.  One archive per layer,
# bottom to top (scripts/check-layers.sh, part of `make test`, keeps includes pointing down):
#   lockfree/*.c                                  -> liblockfree.a
#   gpu-model/*/*.c                               -> libgpumodel.a
#   src/*.c (the harness; names no scenario)      -> libharness.a
#   benchmarks/*.c benchmarks/{scenarios,vulkan}/*.c -> libbenchmarks.a
#   benchmarks/main.c                             -> fencebench (fb_main over bm_scenarios)
#   tests/test_*.c                                -> one cmocka binary each
#   benchmarks/micro/*.c + src/gbench/gbench.cc   -> fb_bench (Google Benchmark)
# Area-specific rules (fuzzing, the spin model, broken variants) live in mk/*.mk.

BUILD     ?= build
CC        ?= cc
CXX       ?= c++
PYTHON    ?= /usr/bin/python3
SANITIZER ?=

STD   = -std=gnu11
WARN  = -Wall -Wextra -Werror -Wno-unused-parameter
OPT   = -O2
DEBUG = -g
CPPFLAGS_FB = -D_GNU_SOURCE -I. -MMD -MP
ifneq ($(SANITIZER),)
SANFLAGS = -fsanitize=$(SANITIZER) -fno-omit-frame-pointer -DFB_SANITIZER=1
ifneq ($(findstring thread,$(SANITIZER)),)
SANFLAGS += -DFB_TSAN=1
endif
endif
# User CFLAGS come last so they can override anything above.
ALL_CFLAGS   = $(STD) $(WARN) $(OPT) $(DEBUG) $(SANFLAGS) $(CPPFLAGS_FB) $(CPPFLAGS) $(CFLAGS)
ALL_CXXFLAGS = -std=gnu++17 $(WARN) $(OPT) $(DEBUG) $(SANFLAGS) $(CPPFLAGS_FB) $(CPPFLAGS) $(CXXFLAGS)
LDLIBS_FB = -lurcu -lurcu-cds -lurcu-common -ljemalloc -lpfm -lnuma -ljansson -lpthread -lm -ldl
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)

GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
# The effective flags are compiled into every binary and recorded in every result file.
BUILD_INFO = -DFB_BUILD_CFLAGS='"$(strip $(ALL_CFLAGS))"' -DFB_GIT_REV='"$(GIT_REV)"' \
             -DFB_BUILD_TYPE='"$(if $(SANITIZER),sanitize-$(SANITIZER),release)"'

# Objects that compile BUILD_INFO in depend on this stamp, whose mtime moves
# only when the revision or the flags change: results never report a stale build.
BUILD_STAMP = $(BUILD)/.build-info
BUILD_INFO_USERS = $(BUILD)/src/fb_app.o $(BUILD)/src/fb_context.o

MAIN_SRC  = benchmarks/main.c
LOCKFREE_SRCS   = $(wildcard lockfree/*.c)
GPUMODEL_SRCS   = $(wildcard gpu-model/*/*.c)
HARNESS_SRCS    = $(wildcard src/*.c)
BENCHMARKS_SRCS = $(filter-out $(MAIN_SRC),$(wildcard benchmarks/*.c benchmarks/scenarios/*.c benchmarks/vulkan/*.c))
LIB_LOCKFREE   = $(BUILD)/liblockfree.a
LIB_GPUMODEL   = $(BUILD)/libgpumodel.a
LIB_HARNESS    = $(BUILD)/libharness.a
LIB_BENCHMARKS = $(BUILD)/libbenchmarks.a
# Link order, top layer first: an archive resolves only from the ones after it.
LIB       = $(LIB_BENCHMARKS) $(LIB_HARNESS) $(LIB_GPUMODEL) $(LIB_LOCKFREE)
TEST_SRCS = $(wildcard tests/test_*.c)
TEST_BINS = $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
BENCH_SRCS = $(wildcard benchmarks/micro/*.c)
BENCH_OBJS = $(BENCH_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/src/gbench/gbench.o
FENCEBENCH = $(BUILD)/fencebench
FB_BENCH   = $(BUILD)/fb_bench
DEPS_STAMP = $(BUILD)/.deps-ok

# Area fragments add rules and TEST_DEPS; included before the rules that use them.
TEST_DEPS =
-include mk/*.mk

.PHONY: all test test-under-load unit run bench report asan tsan check-model deps clean
.DEFAULT_GOAL := all
.SECONDARY:

all: $(LIB) $(if $(wildcard $(MAIN_SRC)),$(FENCEBENCH)) $(TEST_BINS) $(if $(BENCH_SRCS),$(FB_BENCH))

# ---- dependencies: installed on first use (root) or named exactly (non-root) ----
deps:
	@scripts/install-deps.sh
$(DEPS_STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@mkdir -p $(@D) && touch $@

$(BUILD_STAMP): build-info-check
	@mkdir -p $(@D)
	@info='$(GIT_REV) $(strip $(ALL_CFLAGS))'; \
	 [ "$$(cat $@ 2>/dev/null)" = "$$info" ] || printf '%s\n' "$$info" > $@
.PHONY: build-info-check
$(BUILD_INFO_USERS): $(BUILD_STAMP)

# ---- compile ----
$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(BUILD_INFO) -c $< -o $@
$(BUILD)/%.o: %.cc | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CXX) $(ALL_CXXFLAGS) -c $< -o $@

$(LIB_LOCKFREE): $(LOCKFREE_SRCS:%.c=$(BUILD)/%.o)
$(LIB_GPUMODEL): $(GPUMODEL_SRCS:%.c=$(BUILD)/%.o)
$(LIB_HARNESS): $(HARNESS_SRCS:%.c=$(BUILD)/%.o)
$(LIB_BENCHMARKS): $(BENCHMARKS_SRCS:%.c=$(BUILD)/%.o)
$(LIB):
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(FENCEBENCH): $(BUILD)/benchmarks/main.o $(LIB)
	$(CC) $(ALL_LDFLAGS) $^ $(LDLIBS_FB) -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB)
	$(CC) $(ALL_LDFLAGS) $^ -lcmocka $(LDLIBS_FB) -o $@

# The only C++ link: Google Benchmark behind the C shim.
$(FB_BENCH): $(BENCH_OBJS) $(LIB)
	$(CXX) $(ALL_LDFLAGS) $^ -lbenchmark $(LDLIBS_FB) -o $@

# ---- run ----
unit: $(TEST_BINS)
	@tests/run.sh $(BUILD)

# `make test` = unit + integration tests, plus every mk/*.mk addition to TEST_DEPS
# (the spin model, the short fuzz run).  The last line is the total.
test: all $(TEST_DEPS)
	@tests/run.sh $(BUILD)

# The suite with LOAD busy loops on the CPUs (default 3): what CI must pass
# without a flake.  `make test-under-load LOAD=5`, or TARGET=tsan for that suite.
LOAD ?= 3
TARGET ?= test
test-under-load: all
	@tests/under-load.sh $(LOAD) $(MAKE) --no-print-directory $(TARGET)

bench: $(FB_BENCH)
	@mkdir -p results
	$(FB_BENCH) --benchmark_out=results/bench.json --benchmark_out_format=json $(BENCH_ARGS)

# The headline: the console table on stdout, the JSON (Google Benchmark schema) in RUN_OUT.
RUN_OUT ?= $(BUILD)/headline.json
run: $(FENCEBENCH)
	$(FENCEBENCH) run headline --format json --out $(RUN_OUT) $(RUN_ARGS)
	@echo "fencebench: JSON written to $(RUN_OUT)"

# Sanitizer suites: separate build trees, same tests.
# The Vulkan validation layer's own leaks: tests/lsan.supp says what and why.
asan:
	@LSAN_OPTIONS="suppressions=$(CURDIR)/tests/lsan.supp print_suppressions=0 $(LSAN_OPTIONS)" \
	  $(MAKE) --no-print-directory BUILD=build-asan SANITIZER=address,undefined OPT=-O1 unit
# liburcu is not instrumented: tests/tsan.supp says what is suppressed and why.
tsan:
	@TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp $(TSAN_OPTIONS)" \
	  $(MAKE) --no-print-directory BUILD=build-tsan SANITIZER=thread OPT=-O1 unit

clean:
	rm -rf build build-asan build-tsan

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
