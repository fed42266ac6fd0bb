# mk/vulkan.mk — the Vulkan probe's deliberately broken variant, linked into
# the test that must catch it (CONTRIBUTING.md "Conventions": tests that can
# fail), and the order-only need of the binary that tests/test_vulkan and
# tests/test_vk_graph run.
#
#   benchmarks/vulkan/probe.c compiled again with -DBM_VK_PROBE_BROKEN (its
#   fill's destination lacks VK_BUFFER_USAGE_TRANSFER_DST_BIT: the validation
#   layer must report it) and its one external name renamed, bm_probe_vulkan ->
#   bm_probe_vulkan_broken, into $(BUILD)/vulkan-broken/probe.o, linked
#   beside the library into tests/test_vulkan.  Never in an archive.

VK_BROKEN_OBJ = $(BUILD)/vulkan-broken/probe.o

$(VK_BROKEN_OBJ): benchmarks/vulkan/probe.c mk/vulkan.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DBM_VK_PROBE_BROKEN -Dbm_probe_vulkan=bm_probe_vulkan_broken -c $< -o $@

# tests/test_vulkan also runs $(BUILD)/fencebench (order-only: not linked in).
$(BUILD)/tests/test_vulkan: $(BUILD)/tests/test_vulkan.o $(VK_BROKEN_OBJ) $(LIB) | $(FENCEBENCH)
	$(CC) $(ALL_LDFLAGS) $^ -lcmocka $(LDLIBS_FB) -o $@

# tests/test_vk_graph runs $(BUILD)/fencebench too (compare_model).
$(BUILD)/tests/test_vk_graph: | $(FENCEBENCH)
