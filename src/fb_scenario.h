/* src/fb_scenario.h — scenarios, their parameters, and the run context they report through.
 *
 * A scenario is a workload the harness runs: `fencebench run NAME`.  It is a
 * constant struct fb_scenario listed in benchmarks/scenarios/table.c.  The
 * harness parses and range-checks every parameter, measures the machine's
 * limits, starts perf counters, runs the scenario once per fence path
 * (native, legacy) and repetition, derives statistics, and writes console,
 * JSON (Google Benchmark's schema) or CSV.  A scenario only does its work and
 * reports numbers.
 *
 * ---- Writing a scenario (benchmarks/scenarios/<name>.c) ----
 *
 *     static const struct fb_param wait_params[] = {
 *         FB_PARAM_INT("fences", "fences", 4, 1, 4096, "fences with CPU waiters"),
 *         FB_PARAM_DOUBLE("work_us", "us", 5.0, 0.0, 1e6, "GPU work per command buffer"),
 *         FB_PARAM_BOOL("log_buffer", false, "use the interrupt log buffer fast path"),
 *         FB_PARAM_ENUM("payload", "array", "interrupt payload variant", "array", "null", "legacy"),
 *         FB_PARAM_END
 *     };
 *
 *     static int wait_run(struct fb_run *run)
 *     {
 *         int64_t fences = fb_run_int(run, "fences");
 *         struct my_rig *rig = rig_start(fb_run_path(run) == FB_PATH_NATIVE, fb_run_seed(run));
 *         fb_run_thread(run, "os-irq", rig->irq_tid);       // perf groups open on it
 *         fb_run_thread(run, "engine0", rig->engine_tid);   // pinned by the rig with fb_run_cpu(run, 1)
 *         warm_up(rig, fb_run_warmup_ns(run));
 *         fb_run_measure_begin(run);
 *         uint64_t n = 0;
 *         while (fb_run_continue(run, n))
 *             one_signal_and_wait(rig, per_thread_hist), n++;
 *         fb_run_measure_end(run, n);
 *         fb_run_hist(run, "wait", merged_hist, FB_LIMIT_FUTEX_WAKE);  // p50..max, each vs. the limit
 *         fb_run_metric(run, "interrupts", rig->interrupts, "irq");
 *         fb_run_section(run, "power");                              // a second sub-result
 *         fb_run_metric(run, "irq_idle", rig->idle_fraction, "ratio");
 *         rig_stop(rig);
 *         return 0;   // or: return fb_run_error(run, -EIO, "engine %d hung", id);
 *     }
 *
 *     const struct fb_scenario bm_scenario_wait = {
 *         .name = "wait", .summary = "signal -> CPU waiter running, native vs legacy",
 *         .params = wait_params, .compares_paths = true, .polling_threads = 1,
 *         .default_duration_s = 1.0, .takes_duration = true, .default_warmup_s = 0.1, .run = wait_run,
 *     };
 *
 * and one line in benchmarks/scenarios/table.c.  Names: [a-z0-9_-], short.
 * A complete, runnable example is the "selftest" scenario
 * (benchmarks/scenarios/selftest.c); tests/test_cli.c checks every registered scenario's
 * declarations (unique names, one-line summary, defaults within range).
 *
 * ---- What the harness does around run() ----
 *
 * For every parameter point (one for `run`, the grid for `sweep`), for every
 * path (native and legacy when compares_paths and --path both; FB_PATH_NONE
 * when !compares_paths), for every repetition: a fresh struct fb_run, the
 * calling thread registered as role "app", run(run) called on that thread,
 * then perf groups read and closed.  Paths alternate within each repetition
 * (native, legacy, native, ...) so slow drift affects both alike.  The measured region is what lies between
 * fb_run_measure_begin and fb_run_measure_end (several pairs add up); a
 * scenario that calls neither is measured as a whole (but `perf stat
 * --control`, driven through --perf-ctl-fd, only ever sees marked regions).
 * Real and CPU time (of the whole process) of the region divided by the
 * iterations reported become real_time/cpu_time; perf groups on the role
 * threads count only inside the region.
 *
 * ---- Results ----
 *
 * Metrics go to the current section ("" until fb_run_section is called).
 * Each section becomes one result per path: "scenario[/section]/path:native[/key:value...]"
 * (key:value for parameters set on the command line or by the sweep grid).
 * The console shows each section as a table: one row per metric, native and
 * legacy side by side, each latency with its ratio to its machine limit.
 * In JSON every metric is a flat counter key of the result; a latency M with
 * a limit also gets "M_limit" (the limit, ns) and "M_vs_limit" (M / limit).
 * fb_run_hist(name) reports name_p50, _p90, _p99, _p999, _max, _mean (ns) and
 * name_count.  A metric with a 95 % interval (a percentile within a run; every
 * metric across repetitions) gets "M_ci_lo" and "M_ci_hi", and on the native
 * entry "M_vs_legacy" (native / legacy) with its own _ci_lo/_ci_hi
 * (src/fb_boot.h says how they are computed).  Two metrics declared as
 * estimates of one quantity (fb_run_agreement) get "name_agree" on the mean
 * aggregate: whether their intervals overlap.
 *
 * ---- Threads ----
 *
 *   function                          | who may call it
 *   ----------------------------------+--------------------------------------------
 *   fb_run_int/double/bool/enum, path,| any thread, any time during run() (read-only)
 *   seed, cpus, iterations, limits,   |
 *   fb_run_continue, fb_run_pin_self  |
 *   fb_run_thread, fb_run_thread_self | any thread (serialized inside; not hot path)
 *   measure_begin/end, section,       | the thread that run() was called on, only
 *   metric, latency, hist, agreement, |
 *   note, error                       |
 *
 * None of these block except fb_run_measure_begin/end, which may wait (bounded)
 * for perf stat's ack on --perf-ctl-fd.  None is meant for a hot loop except
 * fb_run_continue (one clock read when duration-based).
 */
#ifndef FB_SCENARIO_H
#define FB_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/fb_limits.h"

struct fb_hist;
struct fb_run;
struct fb_trace;

/* ---- fence paths ---- */

enum fb_path {
	FB_PATH_NONE = 0,     /* the scenario does not compare paths */
	FB_PATH_NATIVE = 1,   /* WDDM 3.2 native GPU fence */
	FB_PATH_LEGACY = 2,   /* WDDM 2.x monitored fence */
};
/* "native", "legacy", or "none". */
const char *fb_path_name(enum fb_path p);
/* The results file's "path" field: "native", "legacy", or "" (no path);
 * whoever writes or looks an entry up by path uses this one. */
const char *fb_path_field(enum fb_path p);

/* ---- parameters ---- */

enum fb_param_type { FB_PARAM_INT, FB_PARAM_DOUBLE, FB_PARAM_BOOL, FB_PARAM_ENUM, FB_PARAM_STRING };

/* One parameter.  Declare with the FB_PARAM_* macros; end the array with FB_PARAM_END. */
struct fb_param {
	const char *key;        /* [a-z0-9_]: what --set key=value and --grid key=... name */
	const char *unit;       /* "ns", "us", "fences", "" ... shown by `fencebench help` */
	const char *help;       /* one line */
	enum fb_param_type type;
	int64_t idef, imin, imax;   /* FB_PARAM_INT: default and inclusive range */
	double ddef, dmin, dmax;    /* FB_PARAM_DOUBLE: default and inclusive range */
	bool bdef;                  /* FB_PARAM_BOOL: default */
	const char *edef;           /* FB_PARAM_ENUM: default, one of choices */
	const char *const *choices; /* FB_PARAM_ENUM: NULL-terminated */
	const char *sdef;           /* FB_PARAM_STRING: default ("" allowed) */
	/* FB_PARAM_STRING, optional: 0, or -EINVAL with a one-line reason in
	 * err (the text names no valid thing): called when the value is parsed,
	 * so a bad value stops the command line before anything runs. */
	int (*check)(const char *text, char *err, size_t errlen);
};

#define FB_PARAM_INT(key_, unit_, def_, min_, max_, help_) \
	{ .key = (key_), .unit = (unit_), .help = (help_), .type = FB_PARAM_INT, \
	  .idef = (def_), .imin = (min_), .imax = (max_) }
#define FB_PARAM_DOUBLE(key_, unit_, def_, min_, max_, help_) \
	{ .key = (key_), .unit = (unit_), .help = (help_), .type = FB_PARAM_DOUBLE, \
	  .ddef = (def_), .dmin = (min_), .dmax = (max_) }
#define FB_PARAM_BOOL(key_, def_, help_) \
	{ .key = (key_), .unit = "", .help = (help_), .type = FB_PARAM_BOOL, .bdef = (def_) }
/* FB_PARAM_ENUM("mode", "fast", "how to go", "fast", "slow"): the choices last. */
#define FB_PARAM_ENUM(key_, def_, help_, ...) \
	{ .key = (key_), .unit = "", .help = (help_), .type = FB_PARAM_ENUM, \
	  .edef = (def_), .choices = (const char *const[]){ __VA_ARGS__, NULL } }
/* FB_PARAM_STRING("file", "", "a file to read"): any text up to FB_PARAM_STRING_MAX bytes. */
#define FB_PARAM_STRING(key_, def_, help_) \
	{ .key = (key_), .unit = "", .help = (help_), .type = FB_PARAM_STRING, .sdef = (def_) }
#define FB_PARAM_STRING_MAX 4096
#define FB_PARAM_END { .key = NULL }

/* A parameter's value; which member is meaningful follows fb_param.type
 * (e: index into choices). */
union fb_value {
	int64_t i;
	double d;
	bool b;
	unsigned e;
	const char *s;   /* interned: lives as long as the process (values are copied freely) */
};

/* ---- scenarios ---- */

struct fb_scenario {
	const char *name;             /* `fencebench run NAME` */
	const char *summary;          /* one line for `fencebench list` */
	const struct fb_param *params;   /* FB_PARAM_END-terminated; NULL: none */
	bool compares_paths;          /* run once per path (native, legacy) and show them side by side */
	/* Threads that poll (busy-wait) while the scenario runs: the harness warns
	 * when they outnumber the CPUs of the run.  polling_threads_fn, when set,
	 * wins and may read the parameters. */
	unsigned polling_threads;
	unsigned (*polling_threads_fn)(const struct fb_run *run);
	/* Length of the measured region unless --iterations/--duration say
	 * otherwise: iterations when default_iterations != 0, else duration
	 * (1 s when both are 0).  Warm-up: default_warmup_s unless --warmup. */
	uint64_t default_iterations;
	/* The measured loop runs while fb_run_continue() says so, so a duration
	 * (--duration, or default_duration_s) is honoured.  Without it the
	 * harness refuses --duration for the scenario (it counts iterations). */
	bool takes_duration;
	double default_duration_s;
	/* The scenario adds a timeline to fb_run_trace() when it is not NULL
	 * (`run --trace FILE`).  Without it the harness refuses --trace. */
	bool takes_trace;
	/* Nothing the program's common parameters (fb_program_params) set
	 * changes what it measures (the machine's own limits): it does not take
	 * them, so `--set` of one is refused instead of ignored. */
	bool no_program_params;
	double default_warmup_s;
	/* The metrics of the main section (comma-separated names) that matter
	 * most: the JSON context lists them ("headline_metrics") and `fencebench
	 * compare` gates on them alone unless --gate names others.  NULL: none. */
	const char *headline;
	/* Do the work and report.  0, or -errno after fb_run_error (the harness
	 * prints the message, writes no output and exits non-zero). */
	int (*run)(struct fb_run *run);
};

/* ---- the program: main() hands its scenarios to the harness ----
 *
 * fb_main is all of main(): `list`, `help`, `run`, `sweep` and `merge` over
 * the scenarios of table (NULL-terminated, in `list` order).  It parses the
 * command line, prints every user-facing error as one line "fencebench: ..."
 * on stderr and returns the exit status: 0 ok, 1 a run failed (or its output
 * could not be written), 2 bad command line (nothing was run, no output file
 * was written).  Called once, from the main thread. */
int fb_main(int argc, char **argv, const struct fb_scenario *const *table);

/* ---- what a program adds to every scenario, and commands of its own ----
 *
 * A program (main()) may give every scenario the same extra parameters
 * (after each scenario's own: shown by `help`, set with --set, swept with
 * --grid, named in results and in the context like any other) and commands
 * of its own (`fencebench NAME ARGS...`, listed in the usage).  The harness
 * knows nothing of what they mean.  Call both before fb_main, from the main
 * thread; the arrays live as long as the process. */
void fb_program_params(const struct fb_param *common);   /* FB_PARAM_END-terminated; NULL: none */
struct fb_command {
	const char *name;           /* `fencebench NAME ...` */
	const char *usage;          /* one line: "NAME [--out FILE]  what it does" */
	int (*main)(int argc, char **argv);   /* argv[0] is NAME; returns the exit status */
};
void fb_program_commands(const struct fb_command *cmds);   /* { NULL }-terminated; NULL: none */
/* The program's command named name, or NULL. */
const struct fb_command *fb_program_command(const char *name);
const struct fb_command *fb_program_command_list(void);

/* The scenario of table (NULL-terminated) named name, or NULL. */
const struct fb_scenario *fb_scenario_find(const struct fb_scenario *const *table, const char *name);
/* Number of parameters (the scenario's own, then the program's common
 * ones), parameter i of them, and the index of key (-1 when it has none such). */
size_t fb_scenario_nparams(const struct fb_scenario *s);
const struct fb_param *fb_scenario_param(const struct fb_scenario *s, size_t i);
int fb_scenario_param_index(const struct fb_scenario *s, const char *key);

/* ---- parameter values (harness side; any thread, no blocking) ---- */

/* Parse text as a value of p: 0, or -EINVAL with a one-line message naming
 * key and value in err ("rounds=0: out of range [100, 10000000]"). */
int fb_param_parse(const struct fb_param *p, const char *text, union fb_value *out, char *err, size_t errlen);
/* p's default value. */
union fb_value fb_param_default(const struct fb_param *p);
/* The canonical text of v (what fb_param_parse reads back to the same value). */
void fb_param_format(const struct fb_param *p, union fb_value v, char *buf, size_t len);
/* The same text, whole (a string parameter of any length).  New string. */
char *fb_param_text(const struct fb_param *p, union fb_value v);
/* "int", "double", "bool", "enum". */
const char *fb_param_type_name(enum fb_param_type t);
/* The range as text: "[1, 4096]", "true|false", "a|b|c". */
void fb_param_range(const struct fb_param *p, char *buf, size_t len);

/* The values of all of a scenario's parameters (defaults until set). */
struct fb_params {
	const struct fb_scenario *scenario;
	size_t n;
	union fb_value *v;   /* n values, in declaration order */
	bool *set;           /* set explicitly (--set or grid): named in result names */
};

/* Defaults for every parameter of s.  Never NULL (aborts on out-of-memory). */
struct fb_params *fb_params_new(const struct fb_scenario *s);
struct fb_params *fb_params_dup(const struct fb_params *ps);
void fb_params_free(struct fb_params *ps);
/* Set key from text: 0; -ENOENT "unknown parameter 'k' for scenario 's'";
 * -EINVAL as fb_param_parse.  Marks the parameter as set. */
int fb_params_set(struct fb_params *ps, const char *key, const char *text, char *err, size_t errlen);

/* ---- the run context: parameters and the point being run ---- */

/* The value of parameter key (misuse — no such key or wrong type — aborts with file:line). */
int64_t fb_run_int(const struct fb_run *run, const char *key);
double fb_run_double(const struct fb_run *run, const char *key);
bool fb_run_bool(const struct fb_run *run, const char *key);
const char *fb_run_enum(const struct fb_run *run, const char *key);   /* the choice's text */
const char *fb_run_string(const struct fb_run *run, const char *key);
const struct fb_params *fb_run_params(const struct fb_run *run);

enum fb_path fb_run_path(const struct fb_run *run);
uint64_t fb_run_seed(const struct fb_run *run);          /* --seed (default 1): seed every RNG from it */
unsigned fb_run_repetition(const struct fb_run *run);     /* 0-based repetition index */
/* The timeline of `run --trace FILE` (src/fb_trace.h), NULL without one.
 * Every path and repetition of the run adds to the same trace: name track
 * groups after them (fb_path_name, fb_run_repetition).  The run's thread. */
struct fb_trace *fb_run_trace(const struct fb_run *run);

/* The CPUs of the run (--cpus, default: every CPU this process may use), in
 * ascending order; pin role threads from it.  fb_run_cpu wraps: slot % n. */
size_t fb_run_ncpus(const struct fb_run *run);
const int *fb_run_cpus(const struct fb_run *run);
int fb_run_cpu(const struct fb_run *run, size_t slot);
/* Pin the calling thread to fb_run_cpu(run, slot).  0 or -errno. */
int fb_run_pin_self(const struct fb_run *run, size_t slot);

/* Length of the measured region: exactly one of iterations and duration is
 * non-zero.  Warm-up (ns) comes before fb_run_measure_begin. */
uint64_t fb_run_iterations(const struct fb_run *run);
uint64_t fb_run_duration_ns(const struct fb_run *run);
uint64_t fb_run_warmup_ns(const struct fb_run *run);
/* True while the measured loop should go on after `done` iterations: done <
 * iterations, or (duration-based) no iteration yet or less than the duration
 * has passed since fb_run_measure_begin.  A scenario whose loop runs on it
 * declares takes_duration.  Any thread; one clock read at most. */
bool fb_run_continue(const struct fb_run *run, uint64_t done);

/* The machine's limits, measured by the harness before the scenario. */
const struct fb_limits *fb_run_limits(const struct fb_run *run);

/* ---- threads: tell the harness the role threads you started ---- */

/* Register thread tid under role ("os-irq", "engine0", ...): the harness opens
 * a perf counter group on it (counting only inside the measured region) and
 * reports its counters as "perf.<role>.<event>".  Register before
 * fb_run_measure_begin; the thread must live until it (its counts survive its
 * exit).  The calling thread of run() is already "app".  Any thread. */
void fb_run_thread(struct fb_run *run, const char *role, pid_t tid);
/* Register the calling thread (gettid()). */
void fb_run_thread_self(struct fb_run *run, const char *role);

/* ---- the measured region (run()'s thread) ---- */

/* Start: perf groups enabled, perf stat told "enable" on --perf-ctl-fd, clocks read. */
void fb_run_measure_begin(struct fb_run *run);
/* Stop, crediting `iterations` operations to the region (real_time and
 * cpu_time are per iteration; 0 counts as 1). */
void fb_run_measure_end(struct fb_run *run, uint64_t iterations);

/* ---- reporting (run()'s thread) ---- */

/* Metrics that follow go to sub-result `name` ("" is the main one). */
void fb_run_section(struct fb_run *run, const char *name);
/* A plain metric: name ([a-z0-9_.-]), value, unit ("irq", "ratio", "J", ...). */
void fb_run_metric(struct fb_run *run, const char *name, double value, const char *unit);
/* A latency in ns, shown beside the machine limit `limit` (FB_LIMIT_NONE: none). */
void fb_run_latency(struct fb_run *run, const char *name, double ns, enum fb_limit limit);
/* A latency histogram (ns; merged by the caller): name_p50, _p90, _p99, _p999,
 * _max, _mean, each beside `limit`, and name_count.  The four percentiles get
 * 95 % intervals (bootstrap over the histogram's samples, src/fb_boot.h). */
void fb_run_hist(struct fb_run *run, const char *name, const struct fb_hist *h, enum fb_limit limit);
/* One latency: percentile p (0..100) of h, beside `limit`, with its 95 %
 * interval.  Prefer it to fb_run_latency(name, fb_hist_percentile(h, p)),
 * which has none (unless the same name and value come from fb_run_hist in
 * another section of the run: then it shares that interval).  Nothing for an
 * empty h. */
void fb_run_hist_percentile(struct fb_run *run, const char *name, const struct fb_hist *h, double p,
			    enum fb_limit limit);
/* Two estimates of one quantity: metrics a and b of the current section (a
 * device's measurement and a model's prediction of it, say), each reported
 * in every repetition of this path.  After the point's last repetition the
 * harness puts each one's 95 % interval across the repetitions (the mean's,
 * Student's t, as on the mean aggregate: src/fb_boot.h) side by side, writes
 * "name_agree" on this path's mean aggregate (1: the intervals overlap; 0:
 * they are further apart than the intervals; fb_ci_agree) and a note with
 * both intervals and the verdict.  One repetition has no interval: no key,
 * and the note says so.  A name declared again in the same section is
 * ignored.  name, a, b as fb_run_metric's names. */
void fb_run_agreement(struct fb_run *run, const char *name, const char *a, const char *b);
/* A one-line remark printed with the results (and kept in JSON "notes"). */
void fb_run_note(struct fb_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record why the run failed; returns err (a -errno) for `return fb_run_error(...)`. */
int fb_run_error(struct fb_run *run, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
