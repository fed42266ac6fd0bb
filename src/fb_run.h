/* src/fb_run.h — the harness's side of the run context (struct fb_run) and of a session.
 *
 * src/fb_scenario.h is the scenario's view of struct fb_run; this header
 * is the runner's: what one run (one path × one repetition) collected, and
 * the session that owns what runs share (scenario, parameters, CPUs, limits,
 * perf spec, perf ctl, RAPL).
 *
 * Threads: a session and its runs are driven by one thread (the CLI).  Inside
 * a run, fb_run_thread may be called from any thread (run->lock); the rest of
 * the reporting API from the thread run() was called on (see fb_scenario.h).
 */
#ifndef FB_RUN_H
#define FB_RUN_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "src/fb_limits.h"
#include "src/fb_noise.h"
#include "src/fb_scenario.h"
#include "src/fb_cli.h"
#include "src/fb_cpus.h"
#include "src/fb_file.h"
#include "src/fb_trace.h"

struct fb_perf_spec;
struct fb_perf_group;
struct fb_perf_ctl;
struct fb_rapl;

/* One reported number. */
struct fb_metric {
	char *section;
	char *name;
	char *unit;
	double value;
	enum fb_limit limit;
	float *draws;                   /* FB_BOOT_RESAMPLES bootstrap replicates (src/fb_boot.h), or NULL */
	const char *absent;             /* NULL, or why there is no value (static: "not counted",
					 * "not supported"): value NAN, JSON null, "<not counted>" */
};

/* Two metrics of a section declared estimates of one quantity (fb_run_agreement). */
struct fb_agreement {
	char *section, *name, *a, *b;
};

/* A role thread and its perf group (NULL when perf could not open one). */
struct fb_role {
	char *role;
	pid_t tid;
	struct fb_perf_group *group;
	int open_rc;                    /* -errno of the group's open when it failed (group NULL), else 0 */
};

/* What every run of a session shares. */
struct fb_session {
	const struct fb_opts *opts;
	const struct fb_scenario *scenario;
	struct fb_params *base;         /* defaults + --set */
	struct fb_cpus cpus;
	struct fb_out out;              /* --out, checked (has_out); per shard when sharded */
	bool has_out;
	struct fb_out trace_out;        /* --trace, checked; trace != NULL when given */
	struct fb_trace *trace;         /* the run's timeline (src/fb_trace.h) */
	struct fb_limits limits;
	struct fb_limits limits_after;  /* measured again by fb_session_finish */
	struct fb_noise_snap noise0;    /* the counters before the limits (src/fb_noise.h) */
	json_t *noise;                  /* context "noise": the machine, then the window and limits after */
	struct fb_perf_spec *spec;      /* NULL: no perf counters */
	struct fb_perf_ctl *ctl;        /* NULL: no --perf-ctl-fd */
	struct fb_rapl *rapl;           /* NULL: no package energy */
	unsigned paths;                 /* FB_PATHS_* bits; 0: the scenario compares none */
	uint64_t iterations;            /* exactly one of iterations and duration_ns != 0 */
	uint64_t duration_ns;
	uint64_t warmup_ns;
	unsigned polling_threads;       /* most any point declared */
	unsigned repetitions_run;       /* the most repetitions a point ran (--target-ci: more than asked) */
	json_t *notes;                  /* array of unique one-line notes, in order */
	json_t *warnings;               /* array: oversubscription and the like */
	/* What the point under way said and ran (fb_session_point_begin/_end):
	 * its record in a sweep's journal, so that --resume rebuilds the same
	 * context.  NULL arrays: no point under way. */
	json_t *point_notes, *point_warnings;
	unsigned point_polling, point_reps;
};

struct fb_run {
	struct fb_session *session;
	const struct fb_params *params;
	enum fb_path path;
	unsigned rep;

	pthread_mutex_t lock;           /* roles, counting: fb_run_thread may come from any thread */
	struct fb_role *roles;
	size_t nroles;
	bool counting;                  /* groups are enabled: a group opened now is enabled too */

	bool in_region, implicit;       /* run()'s thread only: region open; opened by the runner, not the scenario */
	uint64_t t0_ns, t0_cpu_ns;      /* clocks at the region's start */
	double j0;                      /* RAPL joules at the region's start */
	_Atomic uint64_t deadline_ns;   /* duration-based end of the region; relaxed: a hint for fb_run_continue */
	uint64_t real_ns, cpu_ns, iterations;
	double joules;
	bool have_joules;

	char *section;
	struct fb_metric *metrics;
	size_t nmetrics;
	struct fb_agreement *agreements;
	size_t nagreements;
	char *error;
};

/* Validate everything the command line names (scenario, looked up in table;
 * --set, --grid keys and values, CPUs, perf events, perf fds, --out:
 * fb_file.h); prints nothing.  0, or -EINVAL with the one-line message (bad
 * input: exit 2). */
int fb_session_open(struct fb_session *s, const struct fb_scenario *const *table, const struct fb_opts *o,
		    char *err, size_t errlen);
/* After any further validation: print the perf note, open RAPL, check the
 * machine (governor, turbo, SMT, load: warnings), snapshot the CPU counters,
 * measure the machine limits (tens of ms).  0, or -errno with the message
 * (exit 1). */
int fb_session_start(struct fb_session *s, char *err, size_t errlen);
/* After the last point: measure the limits again, read what else ran, and
 * warn when the machine was not quiet (src/fb_noise.h); context "noise".  The
 * CLI thread.  Never fails: what cannot be measured is left out. */
void fb_session_finish(struct fb_session *s);
void fb_session_close(struct fb_session *s);
/* A point's own record: begin before fb_session_run_point, end after it
 * (a new object {"polling_threads", "repetitions", "notes", "warnings"}:
 * what the point declared and ran, and every note and warning it gave, also
 * those an earlier point gave first).  fb_session_point_replay folds such a
 * record back into the session (a point --resume skips).  The CLI thread. */
void fb_session_point_begin(struct fb_session *s);
json_t *fb_session_point_end(struct fb_session *s);
void fb_session_point_replay(struct fb_session *s, json_t *record);
/* Add a note once (deduplicated), and print it on stderr unless --quiet. */
void fb_session_note(struct fb_session *s, const char *note);
/* Add a warning once (context "warnings"), printed "***WARNING*** ..." unless --quiet.
 * The CLI thread, between runs. */
void fb_session_warn(struct fb_session *s, const char *warning);
/* Write the --trace file (nothing without --trace) and note it.  0, or
 * -errno with one line "--trace PATH: why" in err.  The CLI thread, after the run. */
int fb_session_write_trace(struct fb_session *s, char *err, size_t errlen);
/* The context block: machine facts plus this session's. New reference. */
json_t *fb_session_context(struct fb_session *s);

/* --target-ci: at least this many repetitions (more with --repetitions), at
 * most FB_TARGET_MAX_REPS, stopping at --max-time (default below) per point.
 * The least is FB_CI_MIN_REPS (src/fb_boot.h): below it the median has no
 * 95 % interval, only the repetitions' range, so no target can be met. */
#define FB_TARGET_MIN_REPS   6
#define FB_TARGET_MAX_REPS   100
#define FB_TARGET_MAX_TIME_S 120.0

/* Run one parameter point: every path × repetition.  With --target-ci, the
 * repetitions go on until the 95 % interval of every p50 (mean and median
 * aggregates) is narrower than ±target, or a cap (time, repetitions) is hit;
 * a note says which.  0 and a new array of Google Benchmark entries in
 * *entries; or -errno with the scenario's error message in err (nothing to
 * output). */
int fb_session_run_point(struct fb_session *s, const struct fb_params *point, json_t **entries,
			 char *err, size_t errlen);

/* Internal to the runner: one run, and turning runs into entries. */
int fb_run_execute(struct fb_run *run);
void fb_run_release(struct fb_run *run);
json_t *fb_results_entries(struct fb_session *s, const struct fb_params *point,
			   struct fb_run *const *runs, size_t npaths, unsigned reps);
/* The 95 % intervals of one section's entries (src/fb_interval.c): it[p * reps + r]
 * the iteration entries of runs[p * reps + r], agg[p * 2 + a] the mean (a = 0)
 * and median (a = 1) aggregates (agg NULL when reps == 1).  Adds M_ci_lo and
 * M_ci_hi beside every metric M that has an interval, and on the native
 * entries M_vs_legacy (native / legacy) with its own interval. */
void fb_interval_section(struct fb_session *s, const char *section, struct fb_run *const *runs, size_t npaths,
			 unsigned reps, json_t *const *it, json_t *const *agg);
/* The verdicts of the point's declared agreements (fb_run_agreement; src/fb_agree.c):
 * "name_agree" on the mean aggregates of entries (what fb_results_entries
 * made of the same runs), and one note per agreement.  The CLI thread, once
 * per point, after its last repetition. */
void fb_agree_point(struct fb_session *s, const struct fb_params *point, struct fb_run *const *runs, size_t npaths,
		    unsigned reps, json_t *entries);
/* "scenario[/section][/path:P][/key:value...]" for explicitly set parameters. */
char *fb_results_name(const struct fb_params *point, const char *section, enum fb_path path);
/* "k=v,k=v" of the explicitly set parameters (canonical text): a point's key in a sweep. */
char *fb_results_point_key(const struct fb_params *point);
/* {"key": "canonical text"} of every parameter of point. */
json_t *fb_results_params(const struct fb_params *point);

#endif
