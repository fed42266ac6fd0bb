# mk/gbench.mk — tests/test_gbench links the Google Benchmark C shim itself.
#
# test_gbench registers its own deliberately misused benchmarks and runs
# gb_main in forked children (to check the shim's error messages), so it links
# src/gbench/gbench.o and -lbenchmark with the C++ driver.  It also runs the
# built fb_bench on the selftest benchmarks, hence the order-only prerequisite:
# `make unit`, `make asan`, `make tsan` build fb_bench of the same tree first.

$(BUILD)/tests/test_gbench: $(BUILD)/tests/test_gbench.o $(BUILD)/src/gbench/gbench.o $(LIB) | $(FB_BENCH)
	$(CXX) $(ALL_LDFLAGS) $^ -lcmocka -lbenchmark $(LDLIBS_FB) -o $@

# bench_main.c compiles the build info into fb_bench's report context (and
# test_gbench.c compares it): recompile both when it changes (Makefile: BUILD_STAMP).
$(BUILD)/benchmarks/micro/bench_main.o $(BUILD)/tests/test_gbench.o: $(BUILD_STAMP)

# tests/test_bench_all runs the built fb_bench over every micro-benchmark
# (order-only, as above: the binary is exec'd, not linked).
$(BUILD)/tests/test_bench_all: | $(FB_BENCH)
