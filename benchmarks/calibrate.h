/* benchmarks/calibrate.h — `fencebench calibrate`: the operations of a
 * timing profile's "measured" (benchmarks/profile.h) on this machine's GPU,
 * through one of two vendor APIs opened at run time (nothing of either is
 * needed to build or to start the binary), and a profile JSON derived from
 * them with the machine's description.
 *
 *   fencebench calibrate [--api cuda|vulkan] [--allow-cpu] [--device N]
 *                        [--rounds N] [--out FILE] [--name NAME]
 *
 * --api cuda     the CUDA driver API (dlopen("libcuda.so.1"); calibrate_cuda.c)
 * --api vulkan   Vulkan 1.2+ timeline semaphores through the loader
 *                (dlopen("libvulkan.so.1"); benchmarks/vulkan/probe.c)
 * no --api       the first of cuda, vulkan that finds a GPU
 * --allow-cpu    measure a CPU implementation (lavapipe) too; its profile
 *                says "implementation: cpu"
 *
 * Exit status: 0 written; 1 a measurement failed on the GPU (or, with
 * validation on, the Vulkan validation layer reported a message); 2 a bad
 * command line, or no GPU, driver or loader here, or only a CPU
 * implementation without --allow-cpu (one line says which).  Called from
 * main() through fb_program_commands; the main thread only.
 *
 * The probe interface below is what one API's probe gives the command: the
 * command, the loop over the operations, the p50s, the derivation of the
 * adapter's latencies and the profile writer are shared (calibrate.c).
 * A probe's functions are called from the command's thread only, in the
 * order open, (round)*, describe, close.
 */
#ifndef BM_CALIBRATE_H
#define BM_CALIBRATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "benchmarks/profile.h"
#include "src/fb_scenario.h"

struct bm_cal_opts {
	const char *out, *name, *api;   /* api NULL: the first that finds a GPU */
	uint64_t rounds;
	int device;                     /* -1: the first GPU (CUDA: device 0) */
	bool allow_cpu;
	bool validate;                  /* Vulkan: the validation layer (tests; FENCEBENCH_VK_VALIDATE=1) */
};

/* One round's numbers; BM_CAL_NONE where the probe has none. */
#define BM_CAL_NONE UINT64_MAX
struct bm_cal_sample {
	uint64_t ns;       /* the op's latency on the CPU's clock */
	uint64_t gpu_ns;   /* its GPU-side part by the GPU's timestamps */
	uint64_t call_ns;  /* the CPU call inside it (cpu_gpu_cpu: the CPU's signal) */
};

/* The p50s of every op the probe has (has[op]). */
struct bm_cal_result {
	uint64_t rounds;
	bool has[BM_OPS], has_gpu[BM_OPS], has_call[BM_OPS];
	double m[BM_OPS], gpu[BM_OPS], call[BM_OPS];
	const char *why_not[BM_OPS];   /* for an op it has not: why (the probe's words) */
};

struct bm_probe {
	const char *api;     /* --api's word: "cuda", "vulkan" */
	const char *title;   /* "CUDA driver API", "Vulkan" */
	/* The CPU signal whose call time cpu_gpu_cpu's call_ns holds
	 * ("vkSignalSemaphore"), or NULL: a plain store to host memory. */
	const char *cpu_signal;
	/* Written as the measured km_submit though not measured by the probe
	 * (CUDA's, as before: Mesa vkoverhead's 20 us); 0: none written. */
	double km_submit_estimate_ns;
	/* Open the API and device o->device: 0, or -ENOENT (no driver or
	 * loader), -ENODEV (no device), -EPERM (a CPU implementation without
	 * o->allow_cpu), another -errno; one line in err.  *self: its state,
	 * which close frees (also after a failed open). */
	int (*open)(const struct bm_cal_opts *o, void **self, char *err, size_t errlen);
	/* NULL when the API has an analog of op, else why not (a phrase). */
	const char *(*no_analog)(void *self, enum bm_op op);
	/* One round of op.  0, or -errno with one line in err (a round not
	 * done within 2 s is -ETIMEDOUT). */
	int (*round)(void *self, enum bm_op op, struct bm_cal_sample *s, char *err, size_t errlen);
	/* The machine and how it was measured, as strings into origin
	 * ("machine", "driver", "api", ...). */
	void (*describe)(void *self, const struct bm_cal_result *r, json_t *origin);
	/* Release everything (also after a failed open; self may be NULL):
	 * the validation messages the API reported over the probe's whole
	 * life, teardown included (0 without validation), and the first one's
	 * text into first. */
	uint64_t (*close)(void *self, char *first, size_t len);
};
extern const struct bm_probe bm_probe_cuda, bm_probe_vulkan;

/* Measure every op p has an analog of, o->rounds rounds each after a tenth
 * as many unrecorded: 0 or -errno (err).  Blocks for the rounds. */
int bm_cal_measure(const struct bm_probe *p, void *self, const struct bm_cal_opts *o, struct bm_cal_result *r,
		   char *err, size_t errlen);
/* The profile (a new JSON object) of r, named name. */
json_t *bm_cal_profile(const struct bm_probe *p, void *self, const char *name, const struct bm_cal_result *r);

int bm_calibrate_main(int argc, char **argv);
extern const struct fb_command bm_commands[];

#endif
