# mk/layers.mk — includes only point down the layers (CONTRIBUTING.md "Layers").
#
#   make check-layers    scripts/check-layers.sh on this tree (part of `make test`)
#
# tests/test_layers runs the script of this tree on the tree and on fake trees
# with a planted upward include: the Makefile's compile rule, plus the two paths.

.PHONY: check-layers
TEST_DEPS += check-layers

check-layers:
	@scripts/check-layers.sh

$(BUILD)/tests/test_layers.o: tests/test_layers.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DFB_LAYERS_SCRIPT='"$(CURDIR)/scripts/check-layers.sh"' -DFB_SOURCE_ROOT='"$(CURDIR)"' -c $< -o $@
