# mk/spirv.mk — the spin shader of the Vulkan backend (benchmarks/vulkan/vk_graph.h):
# benchmarks/vulkan/spin.comp compiled to SPIR-V as a C array in spin.spv.h,
# which is checked in.  When its source is newer and glslangValidator
# (Debian's glslang-tools) is installed, the header is rebuilt (replaced only
# when its text changes); without the tool the checked-in header is used.

GLSLANG := $(shell command -v glslangValidator 2>/dev/null)

ifneq ($(GLSLANG),)
benchmarks/vulkan/spin.spv.h: benchmarks/vulkan/spin.comp
	$(GLSLANG) -V --target-env vulkan1.2 --vn vkg_spin_spv -o $@.tmp $<
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; touch $@; else mv $@.tmp $@; fi
endif

$(BUILD)/benchmarks/vulkan/vk_spin.o: benchmarks/vulkan/spin.spv.h
