/* src/fb_noise.h — was the machine quiet?  Checks around a run, and what `fencebench doctor` reads.
 *
 * A run on a shared machine measures the machine as much as the code.  These
 * checks say when it was not quiet, each as a one-line warning that goes to
 * stderr, into the JSON context ("warnings", with the numbers in "noise") and
 * into the report's header:
 *
 *   machine   before the run: a frequency governor other than "performance"
 *             on a CPU of the run (Google Benchmark's warning), turbo boost on,
 *             two CPUs of the run that are SMT siblings of one core, a 1-minute
 *             load average above the online CPUs
 *   window    from before the limits are measured to after they are measured
 *             again: the CPU time other processes (and the kernel) took on the
 *             run's CPUs (their busy time in /proc/stat less this process's CPU
 *             time), above FB_NOISE_OTHERS_CPU of one CPU, naming the busiest
 *             processes; time stolen by a hypervisor above FB_NOISE_STEAL
 *   limits    the cache-line round trip or the futex wake-to-run measured after
 *             the scenario differs from before by more than FB_NOISE_DRIFT
 *             (either way: the larger over the smaller): the vCPUs moved, or
 *             something else ran
 *   spread    a coefficient of variation across repetitions above FB_NOISE_CV
 *             even at its 95 % lower bound (a CV of 3 values is uncertain by a
 *             factor of 2: 10 % needs 19 % measured at 3, 16 % at 6), in the
 *             time per iteration (real and CPU), a p50 or a plain metric
 *             (tails, maxima and perf counters vary by nature and are left out)
 *
 * /proc/stat counts in clock ticks (10 ms): a window shorter than
 * FB_NOISE_MIN_WINDOW_S is not judged (the noise object says so).  Reads only
 * /proc and /sys; never changes a setting.  Single thread; fb_noise_snapshot
 * allocates (abort on out-of-memory), nothing blocks.
 */
#ifndef FB_NOISE_H
#define FB_NOISE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "src/fb_limits.h"

#define FB_NOISE_DRIFT        0.5    /* a limit moved: one reading more than 1.5x the other */
#define FB_NOISE_OTHERS_CPU   0.2    /* others took more than 20 % of one CPU */
#define FB_NOISE_STEAL        0.05   /* the hypervisor took more than 5 % */
#define FB_NOISE_CV           0.10   /* repetitions spread more than 10 % */
#define FB_NOISE_MIN_WINDOW_S 0.1
#define FB_NOISE_LISTED_CPU   0.05   /* a process shown by name: 5 % of one CPU or more */
#define FB_NOISE_TOP          5

/* Warnings go through this (fb_session_warn, or doctor's printer). */
typedef void (*fb_noise_warn_fn)(void *arg, const char *warning);

/* ---- the machine, before the run ---- */

struct fb_noise_machine {
	char governor[160];    /* "performance" | "powersave on CPU 0, ..." | "" (no cpufreq) */
	int governor_ok;       /* 1: every CPU of the run at "performance"; 0: not; -1: no cpufreq */
	int turbo;             /* 1 on, 0 off, -1 not exposed */
	char smt[160];         /* "0 and 1, ..." siblings among the run's CPUs; "" none */
	char isolated[160];    /* /sys/devices/system/cpu/isolated ("" none) */
	char nohz_full[160];   /* /sys/devices/system/cpu/nohz_full ("" none, "(null)" read as none) */
	double load[3];
	long online;           /* CPUs online */
	int perf_paranoid;     /* kernel.perf_event_paranoid; -99 unreadable */
};

/* Read the machine's state for the CPUs cpus[0..n-1] under root ("" for /;
 * tests give a fake tree of sys/devices/system/cpu/... and proc/sys/...). */
void fb_noise_machine(const char *root, const int *cpus, size_t n, struct fb_noise_machine *m);
/* Its warnings (governor, turbo, SMT, load). */
void fb_noise_check_machine(const struct fb_noise_machine *m, fb_noise_warn_fn warn, void *arg);
json_t *fb_noise_machine_json(const struct fb_noise_machine *m);

/* ---- the window: CPU time around the run ---- */

struct fb_noise_proc {
	int pid;
	char comm[32];
	uint64_t ticks;        /* utime + stime */
};

struct fb_noise_snap {
	uint64_t t_ns;         /* CLOCK_MONOTONIC */
	uint64_t self_cpu_ns;  /* this process's CPU time, every thread, dead ones too */
	uint64_t busy, steal, total;   /* ticks of the run's CPUs (/proc/stat) */
	struct fb_noise_proc *procs;   /* every other process */
	size_t nprocs;
};

struct fb_noise_window {
	double seconds;
	double others_cpu;     /* CPUs' worth of time others took on the run's CPUs; NAN: window too short */
	double steal;          /* fraction of the run's CPUs' time stolen; NAN likewise */
	struct fb_noise_proc top[FB_NOISE_TOP];   /* the busiest others, ticks over the window */
	double top_cpu[FB_NOISE_TOP];              /* each one's CPUs' worth */
	size_t ntop;
};

/* The counters now, for the run's CPUs.  0, or -errno (/proc unreadable). */
int fb_noise_snapshot(const int *cpus, size_t n, struct fb_noise_snap *s);
void fb_noise_snap_free(struct fb_noise_snap *s);
/* What happened between two snapshots. */
void fb_noise_between(const struct fb_noise_snap *a, const struct fb_noise_snap *b, struct fb_noise_window *w);
/* Its warnings; cpus_text names the run's CPUs ("0-1"). */
void fb_noise_check_window(const struct fb_noise_window *w, const char *cpus_text, fb_noise_warn_fn warn, void *arg);
json_t *fb_noise_window_json(const struct fb_noise_window *w);

/* ---- the limits, before and after ---- */

/* A warning for each of the cache-line round trip and the futex wake-to-run
 * that moved by more than FB_NOISE_DRIFT (either way).  Unmeasured: none. */
void fb_noise_check_limits(const struct fb_limits *before, const struct fb_limits *after, fb_noise_warn_fn warn,
			   void *arg);

/* ---- the spread of repetitions ---- */

/* One warning when a "cv" aggregate of the point's entries exceeds FB_NOISE_CV
 * at its 95 % lower bound, in real_time or cpu_time (of the main section), a
 * p50 or a plain metric (not perf.*, tails, maxima, means of samples, counts,
 * limits, intervals); point_key names the point ("" for a run). */
void fb_noise_check_cv(json_t *entries, const char *point_key, fb_noise_warn_fn warn, void *arg);

#endif
