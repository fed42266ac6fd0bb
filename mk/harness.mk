# mk/harness.mk — tests that run the fencebench binary of their own build tree.
#
# tests/test_cli, test_compare and test_trace exec $(BUILD)/fencebench (found from
# /proc/self/exe: ../fencebench), so `make unit`, `make asan` and `make tsan`
# must build it first.  Order-only: the binary is not linked into the tests.

$(BUILD)/tests/test_cli $(BUILD)/tests/test_compare $(BUILD)/tests/test_trace $(BUILD)/tests/test_sweep_resume: | $(FENCEBENCH)
