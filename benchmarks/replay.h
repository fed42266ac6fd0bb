/* benchmarks/replay.h — a title's frame graph from a JSON file, run on the
 * D3D12 runtime or on a Vulkan device (the workload's backend,
 * benchmarks/backend.h): "what would the native fence buy my frame graph",
 * without writing C.  The scenario is `replay` (benchmarks/scenarios/workloads.c);
 * the seed's workloads ship as files in benchmarks/workloads/.
 *
 * The file (every key checked; unknown keys are refused):
 *
 *   { "name": "frame", "comment": "...",
 *     "queues": [ { "name": "copy0", "type": "copy" }, ... ],      direct | compute | copy
 *     "fences": [ "copyFence", ... ],                               each starts at 0
 *     "resources": [ { "name": "rt1", "state": "RENDER_TARGET", "copies": 2 }, ... ],   optional
 *     "lists":  [ { "name": "geometry", "type": "copy",
 *                   "commands": [ { "op": "copy", "us": 100, "units": 1 } ],
 *                   "access": [ { "resource": "geometry", "state": "COMMON", "write": true },
 *                               { "resource": "rt1", "state": "RENDER_TARGET",
 *                                 "after": "SHADER_RESOURCE" } ] }, ... ],     access optional
 *     "frame":  [ { "cpu_wait": "frameFence", "value": -1, "step": 1, "after_frame": 2 },
 *                 { "queue": "copy0", "execute": [ "geometry" ] },
 *                 { "queue": "copy0", "signal": "copyFence", "value": 101, "step": 100 },
 *                 { "queue": "direct0", "wait": "copyFence", "value": 101, "step": 100 }, ... ] }
 *
 * "frame" is one frame's submission order, run for frames n = 1, 2, ...: a
 * step runs when n > after_frame (default 0) with the value value + step *
 * (n - 1) (step default 0), which must never be negative.  A list's
 * commands must be ones its type can hold, an executed list's type must be
 * its queue's.
 *
 * Resources are for the model's validation layer (gpu-model/runtime/d3d_debug.h,
 * the scenario's validate; a Vulkan device ignores them): states are D3D12's names (rt_state_name), a
 * list's "access" declares what its work reads or writes (write default
 * false) and its barriers ("after": the state it moves the resource to).
 * A resource with "copies" k > 1 is k resources, "rt1[0]".."rt1[k-1]", and
 * frame n's lists use copy (n - 1) % k (every resource with copies > 1 has
 * the same k): the renamed versions of a title that keeps k frames in
 * flight.  Without validation they change nothing.  Errors are one line: "FILE: frame[3]: queue 'copy1' is not
 * declared"; a JSON syntax error names line and column.
 *
 * A graph that can never complete is refused at load, before anything runs:
 * the first frames are played on paper (queues run their signals and waits
 * in order, cpu_waits hold the CPU) and a cycle of waits, a wait for a value
 * no step signals, or a CPU wait nothing satisfies is named in one line:
 * "FILE: never completes: frame 1: frame[0] queue 'c' waits for 'g' >= 1
 * (now 0), which queue 'd' signals only after it waits for 'f' >= 1 (now 0),
 * which queue 'c' signals: a cycle of waits".  At run time the workload's
 * no-progress watchdog (workload.h, bm_wl_stall) names what each stuck queue
 * waits for, by the file's queue and fence names.
 *
 *   call                                   who
 *   bm_replay_load / _parse / _free        any thread
 *   bm_replay_start / _frame / _drain /    the workload's thread (bm_wl)
 *     _stop, _queue, _fence
 */
#ifndef BM_REPLAY_H
#define BM_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "benchmarks/workload.h"

#define BM_REPLAY_QUEUES 16
#define BM_REPLAY_FENCES 32
#define BM_REPLAY_LISTS 64
#define BM_REPLAY_STEPS 256
#define BM_REPLAY_CMDS 64               /* commands per list */
#define BM_REPLAY_EXEC 16               /* lists per execute */
#define BM_REPLAY_NAME 32
#define BM_REPLAY_RESOURCES 64
#define BM_REPLAY_COPIES 16
#define BM_REPLAY_ACCESS 32             /* resource uses per list (<= RT_LIST_MAX_USES) */

struct bm_replay;

/* Read and check a file / a text (`origin` names it in messages).  0;
 * -ENOENT (no file), -EINVAL (bad JSON or content): a one-line message in err.
 * A shipped workload's path (benchmarks/workloads/NAME.json, relative to the
 * working directory) whose file is not there reads the copy built into the
 * binary (benchmarks/embedded.h): a binary copied alone still runs them. */
int bm_replay_load(const char *path, struct bm_replay **out, char *err, size_t errlen);
int bm_replay_parse(const char *text, const char *origin, struct bm_replay **out, char *err, size_t errlen);
void bm_replay_free(struct bm_replay *r);
const char *bm_replay_name(const struct bm_replay *r);
/* The graph came from the binary's built-in copy of a shipped file (the
 * path named no file here), not from the path itself. */
bool bm_replay_built_in(const struct bm_replay *r);

struct bm_replay_run {
	const struct bm_replay *spec;
	struct bm_wl *w;
	struct bm_queue *q[BM_REPLAY_QUEUES];
	struct bm_fence *f[BM_REPLAY_FENCES];
	uint64_t last[BM_REPLAY_FENCES];    /* highest value signaled so far */
	struct bm_list *l[BM_REPLAY_LISTS][BM_REPLAY_COPIES];   /* [list][version]; one version unless validating */
	struct rt_resource *res[BM_REPLAY_RESOURCES][BM_REPLAY_COPIES];   /* the validation layer's */
	unsigned versions;                  /* frame n executes version (n - 1) % versions */
	uint64_t n;                         /* frames submitted */
};

/* Create the file's queues, fences and lists on w's device.  0 / -errno
 * with a message in err.  bm_replay_stop frees what it created. */
int bm_replay_start(struct bm_replay_run *rr, const struct bm_replay *spec, struct bm_wl *w, char *err,
		    size_t errlen);
int bm_replay_frame(struct bm_replay_run *rr);       /* one frame: 0 / -errno */
int bm_replay_drain(struct bm_replay_run *rr);       /* every fence at its last value signaled */
void bm_replay_stop(struct bm_replay_run *rr);       /* after bm_wl_down: the queue wrappers */
struct bm_queue *bm_replay_queue(struct bm_replay_run *rr, const char *name);   /* NULL: none */
struct bm_fence *bm_replay_fence(struct bm_replay_run *rr, const char *name);
/* Queue Waits of frame n (1-based) as the file says: what a legacy host
 * holds on the CPU per frame (held_waits_per_frame). */
uint64_t bm_replay_waits(const struct bm_replay *r, uint64_t n);

#endif
