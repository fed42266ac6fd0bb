// benchmarks/vulkan/spin.comp — GPU work of a given length for the Vulkan
// backend of the workloads (vk_graph.h): one invocation runs a dependent
// chain of `loops` integer steps, then stores the result into its
// queue's slot of the output buffer, so that no compiler drops the loop.
// A dispatch runs at most VKG_DISPATCH_LOOPS turns (vk_spin.c: some
// implementations stop a loop early; llvmpipe at 65535): longer work is
// several dispatches.  The step is a xorshift (no closed form a compiler could put in its
// place, as it may for a linear recurrence).
// The loop count per microsecond is calibrated at bring-up from GPU
// timestamps (vk_spin.c).  Compiled to SPIR-V by glslangValidator into
// spin.spv.h (the Makefile rebuilds it when this file changes and the tool
// is present; the checked-in header is used otherwise).
#version 450
layout(local_size_x = 1) in;
layout(push_constant) uniform Spin {
	uint loops;
	uint seed;
} pc;
layout(std430, set = 0, binding = 0) buffer Out {
	uint value;
} outp;

void main()
{
	uint x = pc.seed | 1u;
	for (uint i = 0u; i < pc.loops; i++) {
		x ^= x << 13u;
		x ^= x >> 17u;
		x ^= x << 5u;
	}
	outp.value = x;
}
