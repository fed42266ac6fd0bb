/* benchmarks/profile.h — timing profiles on the benchmark side: the
 * `profile` parameter every scenario has, its JSON files, and what
 * scenarios, `analogs` and `calibrate` read of one.
 *
 * A profile (gpu-model/runtime/stack.h, struct rt_profile) is the GPU
 * side's and the kernel-mode submission path's latencies of one real
 * machine.  `--set profile=NAME` picks benchmarks/profiles/NAME.json (found
 * beside the executable's ../benchmarks/profiles, else under the working
 * directory, else the copy built into the binary: benchmarks/embedded.h);
 * `--set profile=PATH` (a '/' or ".json" in it) a file, or the built-in
 * copy of that shipped path when there is no such file; the
 * default "ideal" is built in (every latency 0: the model's own speed).  A
 * file that does not parse is refused at the command line, in one line,
 * before anything runs.
 *
 * The file (strict: an unknown key is an error):
 *   { "name": "h200-pcie5",                       [a-z0-9_.-], at most 63
 *     "origin": { "machine": "...", ... },       strings: where the numbers come from
 *     "adapter": { "cmd_ns": 600, ... },          struct hw_timing's fields, integer ns
 *     "kernel": { "km_call_ns": 1500, ... },      struct os_timing's fields, integer ns
 *     "measured": { "write_seen_ns": 3905, ... }, what the real machine took (BM_OP_*), ns;
 *                                                 an op without an analog on the probe's API is absent
 *     "gpu_side": { "write_seen_ns": 850, ... },  optional: the GPU-side part of an op, by GPU timestamps
 *     "derivation": { "cmd_ns": "...", ... } }    optional: how each value was chosen
 *
 * Threads: bm_profile_of and the parameter's check may run on any thread;
 * loaded profiles are cached for the process (a mutex around the cache).
 */
#ifndef BM_PROFILE_H
#define BM_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu-model/runtime/stack.h"
#include "src/fb_scenario.h"

/* The operations a profile's "measured" names: calibrate's probes on a real
 * GPU, and analogs' runs of the same in the model. */
enum bm_op {
	BM_OP_ENQUEUE,        /* user-mode enqueue of one command (the API call) */
	BM_OP_WRITE_SEEN,     /* GPU write -> the CPU sees it by polling host memory (enqueue included) */
	BM_OP_EVENT_SPIN,     /* a signal -> a CPU wait that spins sees it (enqueue included) */
	BM_OP_EVENT_BLOCK,    /* a signal -> a CPU wait that blocks, woken through the interrupt */
	BM_OP_CPU_GPU_CPU,    /* CPU write -> GPU wait released -> GPU write -> the CPU sees it */
	BM_OP_GPU_WAIT_SYS,   /* A signals, B waits on the GPU, fence in system memory -> the CPU sees B's write */
	BM_OP_GPU_WAIT_LOCAL, /* the same, fence in local memory (VRAM) */
	BM_OP_CPU_HELD,       /* A signals, the CPU holds B until an interrupt-woken wait -> the CPU sees B's write */
	BM_OP_KM_SUBMIT,      /* a kernel-mode submission's cost */
	BM_OPS
};
/* "write_seen_ns" ...: the key in "measured". */
const char *bm_op_key(enum bm_op op);

#define BM_PROFILE_ORIGIN_MAX 2048
struct bm_profile {
	struct rt_profile rt;
	char file[4096];                        /* "" for the built-in ideal; "PATH (built in)" for a built-in copy */
	char origin[BM_PROFILE_ORIGIN_MAX];     /* "machine: ...; probe: ..." in one line ("" for ideal) */
	bool has[BM_OPS];                       /* "measured" names the op */
	double measured_ns[BM_OPS];
	bool has_gpu[BM_OPS];                   /* "gpu_side" names the op */
	double gpu_ns[BM_OPS];
};

/* The common parameters main() hands to fb_program_params: { profile }. */
extern struct fb_param bm_common_params[];
/* Name the shipped profiles (benchmarks/profiles/NAME.json, beside the
 * executable or under the working directory, and the built-in ones) in the profile parameter's
 * help.  main() calls it once, before fb_main; it blocks on the folder's
 * listing only. */
void bm_profile_describe(void);

/* Load `text` (a name, a path, or "ideal"): 0, or -errno with one line in err. */
int bm_profile_load(const char *text, struct bm_profile *out, char *err, size_t errlen);
/* The run's profile (its `profile` parameter), loaded once per process.
 * Never NULL: the parameter was checked when it was parsed. */
const struct bm_profile *bm_profile_of(const struct fb_run *run);
/* Put the run's profile into cfg (os_config of a stack about to be made). */
void bm_profile_config(const struct fb_run *run, struct os_config *cfg);

#endif
