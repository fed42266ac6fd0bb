/* src/fb_session.c — a session: validate the command line against the registry, libnuma and
 * libpfm4, measure the limits, run parameter points.  Contract in fb_run.h. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lockfree/arch.h"
#include "src/fb_boot.h"
#include "src/fb_context.h"
#include "src/fb_file.h"
#include "src/fb_run.h"
#include "src/fb_trace.h"
#include "src/fb_util.h"
#include "src/perf.h"

/* Notes may come from any thread (fb_run_thread): one lock for all sessions. */
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;

static bool array_has(json_t *a, const char *text)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
		if (!strcmp(json_string_value(v), text))
			return true;
	return false;
}

void fb_session_note(struct fb_session *s, const char *note)
{
	pthread_mutex_lock(&note_lock);
	if (!array_has(s->notes, note)) {
		json_array_append_new(s->notes, json_string(note));
		if (!s->opts->quiet)
			fprintf(stderr, "fencebench: note: %s\n", note);
	}
	if (s->point_notes && !array_has(s->point_notes, note))
		json_array_append_new(s->point_notes, json_string(note));
	pthread_mutex_unlock(&note_lock);
}

static int input_error(char *err, size_t errlen, const char *prefix, const char *msg)
{
	snprintf(err, errlen, "%s%s", prefix, msg);
	return -EINVAL;
}

static int apply_sets(struct fb_session *s, const struct fb_opts *o, char *err, size_t errlen)
{
	char msg[512];
	for (size_t i = 0; i < o->nsets; i++) {
		int rc = fb_params_set(s->base, o->sets[i].key, o->sets[i].value, msg, sizeof(msg));
		if (rc == -ENOENT) {   /* the message names the key only: show what was typed */
			char k[FB_SHOWN_MAX], v[FB_SHOWN_MAX];
			snprintf(err, errlen, "--set %s=%s: %s", fb_shown(o->sets[i].key, k, sizeof(k)),
				 fb_shown(o->sets[i].value, v, sizeof(v)), msg);
			return -EINVAL;
		}
		if (rc)
			return input_error(err, errlen, "--set ", msg);
	}
	return 0;
}

/* Every value of the axis parses, and no two are the same value (0.5 and
 * 0.50 are: compared by their canonical text). */
static int check_axis_values(const struct fb_param *p, const struct fb_grid_axis *ax, char *err, size_t errlen)
{
	char msg[512], **canon = fb_xcalloc(ax->n, sizeof(*canon)), a[FB_SHOWN_MAX], b[FB_SHOWN_MAX];
	int rc = 0;
	for (size_t k = 0; k < ax->n && !rc; k++) {
		union fb_value v;
		if (fb_param_parse(p, ax->values[k], &v, msg, sizeof(msg))) {
			rc = input_error(err, errlen, "--grid ", msg);
			break;
		}
		canon[k] = fb_param_text(p, v);
		for (size_t j = 0; j < k && !rc; j++) {
			if (strcmp(canon[j], canon[k]))
				continue;
			snprintf(err, errlen, "--grid %s: %s is %s again (give each value once)", ax->key,
				 fb_shown(ax->values[k], a, sizeof(a)), fb_shown(ax->values[j], b, sizeof(b)));
			rc = -EINVAL;
		}
	}
	for (size_t k = 0; k < ax->n; k++)
		free(canon[k]);
	free(canon);
	return rc;
}

/* Every grid key names a parameter not also --set, and every value parses once. */
static int check_grid(struct fb_session *s, const struct fb_opts *o, char *err, size_t errlen)
{
	char msg[512], b[FB_SHOWN_MAX];
	for (size_t a = 0; a < o->grid.n; a++) {
		const struct fb_grid_axis *ax = &o->grid.axes[a];
		int i = fb_scenario_param_index(s->scenario, ax->key);
		if (i < 0) {
			snprintf(msg, sizeof(msg), "%s: unknown parameter for scenario '%s' (see: fencebench help %s)",
				 fb_shown(ax->key, b, sizeof(b)), s->scenario->name, s->scenario->name);
			return input_error(err, errlen, "--grid ", msg);
		}
		if (s->base->set[i]) {
			snprintf(msg, sizeof(msg), "%s: also given with --set; give it once", ax->key);
			return input_error(err, errlen, "--grid ", msg);
		}
		int rc = check_axis_values(fb_scenario_param(s->scenario, i), ax, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* A --perf-ctl-fd/--perf-ack-fd names a FIFO of perf's, not stdin, stdout or stderr. */
static int check_perf_fd(const char *opt, int fd, char *err, size_t errlen)
{
	static const char *const std[] = { "stdin", "stdout", "stderr" };
	struct stat st;
	if (fd < 0)
		return 0;
	if (fd <= 2)
		snprintf(err, errlen, "%s %d: that is %s; give the FIFO perf stat --control fd:CTL,ACK passes "
			 "(see CONTRIBUTING.md)", opt, fd, std[fd]);
	else if (fstat(fd, &st))
		snprintf(err, errlen, "%s %d: not an open file descriptor", opt, fd);
	else if (!S_ISFIFO(st.st_mode))
		snprintf(err, errlen, "%s %d: not a FIFO; give the FIFO perf stat --control fd:CTL,ACK passes "
			 "(see CONTRIBUTING.md)", opt, fd);
	else
		return 0;
	return -EINVAL;
}

static int open_perf(struct fb_session *s, const struct fb_opts *o, char *err, size_t errlen)
{
	char msg[512];
	int rc = check_perf_fd("--perf-ctl-fd", o->perf_ctl_fd, err, errlen);
	if (!rc)
		rc = check_perf_fd("--perf-ack-fd", o->perf_ack_fd, err, errlen);
	if (rc)
		return rc;
	/* fencebench's own counters: the list asked for; none for "none"; none
	 * by default under perf stat --control (perf counts the region, and two
	 * sets of counters would compete for the same PMU); else the default. */
	if (o->perf_events && strcmp(o->perf_events, "none")) {
		if (fb_perf_spec_parse(o->perf_events, &s->spec, msg, sizeof(msg)))
			return input_error(err, errlen, "--perf-events: ", msg);
	} else if (!o->perf_events && o->perf_ctl_fd < 0) {
		s->spec = fb_perf_spec_default();
	}
	if (o->perf_ctl_fd >= 0) {
		rc = fb_perf_ctl_open(o->perf_ctl_fd, o->perf_ack_fd, &s->ctl);
		if (rc) {
			char ack[32] = "";
			if (o->perf_ack_fd >= 0)
				snprintf(ack, sizeof(ack), " --perf-ack-fd %d", o->perf_ack_fd);
			snprintf(err, errlen, "--perf-ctl-fd %d%s: %s", o->perf_ctl_fd, ack,
				 rc == -EBADF ? "not open, or open in the wrong direction (ctl: write, ack: read)"
					      : strerror(-rc));
			return -EINVAL;
		}
	}
	return 0;
}

/* Length of the measured region and of the warm-up, from options or the scenario's defaults. */
static void resolve_lengths(struct fb_session *s, const struct fb_opts *o)
{
	const struct fb_scenario *sc = s->scenario;
	if (o->iterations)
		s->iterations = o->iterations;
	else if (o->duration_s > 0)
		s->duration_ns = (uint64_t)(o->duration_s * 1e9);
	else if (sc->default_iterations)
		s->iterations = sc->default_iterations;
	else
		s->duration_ns = (uint64_t)((sc->default_duration_s > 0 ? sc->default_duration_s : 1.0) * 1e9);
	if (!s->iterations && !s->duration_ns)
		s->duration_ns = 1;
	double w = o->warmup_s >= 0 ? o->warmup_s : sc->default_warmup_s;
	s->warmup_ns = (uint64_t)(w * 1e9);
}

static int validate(struct fb_session *s, const struct fb_scenario *const *table, const struct fb_opts *o,
		    char *err, size_t errlen)
{
	char b[FB_SHOWN_MAX];
	s->scenario = fb_scenario_find(table, o->scenario);
	if (!s->scenario) {
		snprintf(err, errlen, "unknown scenario '%s' (see: fencebench list)", fb_shown(o->scenario, b, sizeof(b)));
		return -EINVAL;
	}
	if (o->duration_s > 0 && !s->scenario->takes_duration) {
		snprintf(err, errlen, "--duration: scenario '%s' runs a count of iterations, not a time: give "
			 "--iterations N (default %llu)", s->scenario->name,
			 (unsigned long long)s->scenario->default_iterations);
		return -EINVAL;
	}
	s->base = fb_params_new(s->scenario);
	int rc = apply_sets(s, o, err, errlen);
	if (!rc)
		rc = check_grid(s, o, err, errlen);
	if (!rc)
		rc = fb_cpus_parse(o->cpus, &s->cpus, err, errlen);
	if (!rc)
		rc = open_perf(s, o, err, errlen);
	return rc;
}

static void open_rapl(struct fb_session *s)
{
	int rc = fb_rapl_open(&s->rapl);
	if (rc && rc != -ENODEV) {
		char msg[256];
		snprintf(msg, sizeof(msg), "RAPL package energy not readable: %s%s", strerror(-rc),
			 rc == -EACCES || rc == -EPERM ? " (system-wide counting needs kernel.perf_event_paranoid <= 0 "
							 "or CAP_PERFMON)" : "");
		fb_session_note(s, msg);
	}
	if (rc)
		s->rapl = NULL;
}

/* --out names a place the results can go (checked before any work).  A
 * shard of several writes its own file: F.shardI-of-N.EXT beside F, so that
 * shards sharing one --out never overwrite each other (`fencebench merge`
 * joins them); a FIFO or device is written as given. */
static int open_out(struct fb_session *s, const struct fb_opts *o, char *err, size_t errlen)
{
	if (!o->out)
		return 0;
	int rc = fb_out_open(&s->out, o->out, err, errlen);
	if (!rc && o->shard_count > 1 && !s->out.in_place) {
		char *path = fb_file_shard_name(o->out, o->shard_index, o->shard_count);
		fb_out_free(&s->out);
		rc = fb_out_open(&s->out, path, err, errlen);
		free(path);
	}
	s->has_out = !rc;
	return rc;
}

/* An --out message ("--out PATH: why") said of --trace. */
static void as_trace_error(char *err, size_t errlen)
{
	if (!strncmp(err, "--out ", 6)) {
		char *rest = fb_xstrdup(err + 6);
		snprintf(err, errlen, "--trace %s", rest);
		free(rest);
	}
}

/* --trace FILE: a scenario with a timeline, a place the file can go
 * (checked like --out, before any work). */
static int open_trace(struct fb_session *s, const struct fb_opts *o, char *err, size_t errlen)
{
	if (!o->trace)
		return 0;
	if (!s->scenario->takes_trace) {
		snprintf(err, errlen, "--trace: scenario '%s' has no timeline to write (fencebench help SCENARIO "
			 "says which do)", s->scenario->name);
		return -EINVAL;
	}
	int rc = fb_out_open(&s->trace_out, o->trace, err, errlen);
	if (rc) {
		as_trace_error(err, errlen);
		return rc;
	}
	struct stat st;
	bool device = !stat(o->trace, &st) && S_ISCHR(st.st_mode);   /* /dev/null twice is fine */
	if (s->has_out && fb_out_same(&s->out, &s->trace_out) && !device) {
		snprintf(err, errlen, "--trace and --out name the same file: give two");
		return -EINVAL;
	}
	s->trace = fb_trace_new();
	return 0;
}

int fb_session_write_trace(struct fb_session *s, char *err, size_t errlen)
{
	if (!s->trace)
		return 0;
	char *text = fb_trace_render(s->trace);
	int rc = fb_out_write(&s->trace_out, text, strlen(text), err, errlen);
	free(text);
	if (rc) {
		as_trace_error(err, errlen);
		return rc;
	}
	char *note = fb_xasprintf("timeline: %zu events, %zu flows in %s (open it in ui.perfetto.dev or "
				  "chrome://tracing)", fb_trace_events(s->trace), fb_trace_flows(s->trace),
				  s->trace_out.path);
	fb_session_note(s, note);
	free(note);
	return 0;
}

int fb_session_open(struct fb_session *s, const struct fb_scenario *const *table, const struct fb_opts *o,
		    char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->opts = o;
	s->notes = json_array();
	s->warnings = json_array();
	int rc = validate(s, table, o, err, errlen);
	if (!rc)
		rc = open_out(s, o, err, errlen);
	if (!rc)
		rc = open_trace(s, o, err, errlen);
	if (rc)
		return rc;
	s->paths = s->scenario->compares_paths ? o->paths : 0;
	resolve_lengths(s, o);
	return 0;
}

static json_t *limits_object(const struct fb_limits *l);

static void warn_cb(void *arg, const char *warning)
{
	fb_session_warn(arg, warning);
}

int fb_session_start(struct fb_session *s, char *err, size_t errlen)
{
	int rc;
	struct fb_noise_machine m;
	if (s->spec && fb_perf_spec_note(s->spec))
		fb_session_note(s, fb_perf_spec_note(s->spec));
	if (s->ctl && !s->spec)
		fb_session_note(s, "perf: perf stat counts the region (--perf-ctl-fd); fencebench's own counters "
			       "are off (--perf-events LIST counts per role thread as well)");
	open_rapl(s);
	fb_noise_machine("", s->cpus.ids, s->cpus.n, &m);
	fb_noise_check_machine(&m, warn_cb, s);
	s->noise = fb_noise_machine_json(&m);
	fb_noise_snapshot(s->cpus.ids, s->cpus.n, &s->noise0);
	rc = fb_limits_measure(s->cpus.ids, s->cpus.n, &s->limits);
	if (rc) {
		snprintf(err, errlen, "measuring the machine limits on CPUs %s failed: %s", s->cpus.text, strerror(-rc));
		return rc == -EINVAL ? -EIO : rc;
	}
	if (s->limits.note[0])
		fb_session_note(s, s->limits.note);
	return 0;
}

void fb_session_finish(struct fb_session *s)
{
	struct fb_noise_snap after;
	struct fb_noise_window w;
	if (!s->noise || json_object_get(s->noise, "window"))
		return;   /* not started, or finished already */
	if (fb_limits_measure(s->cpus.ids, s->cpus.n, &s->limits_after) == 0) {
		fb_noise_check_limits(&s->limits, &s->limits_after, warn_cb, s);
		json_object_set_new(s->noise, "limits_after", limits_object(&s->limits_after));
	}
	fb_noise_snapshot(s->cpus.ids, s->cpus.n, &after);
	fb_noise_between(&s->noise0, &after, &w);
	fb_noise_check_window(&w, s->cpus.text, warn_cb, s);
	json_object_set_new(s->noise, "window", fb_noise_window_json(&w));
	fb_noise_snap_free(&after);
}

void fb_session_close(struct fb_session *s)
{
	fb_noise_snap_free(&s->noise0);
	json_decref(s->noise);
	fb_out_free(&s->out);
	fb_out_free(&s->trace_out);
	fb_trace_free(s->trace);
	fb_params_free(s->base);
	fb_cpus_free(&s->cpus);
	fb_perf_spec_free(s->spec);
	fb_perf_ctl_close(s->ctl);
	fb_rapl_close(s->rapl);
	json_decref(s->notes);
	json_decref(s->warnings);
	json_decref(s->point_notes);
	json_decref(s->point_warnings);
	memset(s, 0, sizeof(*s));
}

/* Warn (once per count) when the point's polling threads outnumber the CPUs. */
static void check_polling(struct fb_session *s, const struct fb_params *point)
{
	struct fb_run probe = { .session = s, .params = point };
	unsigned n = s->scenario->polling_threads_fn ? s->scenario->polling_threads_fn(&probe)
						     : s->scenario->polling_threads;
	if (n > s->polling_threads)
		s->polling_threads = n;
	s->point_polling = n;
	if (n <= s->cpus.n)
		return;
	char *w = fb_xasprintf("%u polling threads on %zu CPU%s (%s): threads are oversubscribed; idle GPU "
			       "engines poll at nice 10 and yield to the threads measured, but busy "
			       "engines and other processes preempt them, so latencies include preemption: run on a "
			       "quiet machine, with more CPUs (--cpus)", n, s->cpus.n, s->cpus.n == 1 ? "" : "s",
			       s->cpus.text);
	fb_session_warn(s, w);
	free(w);
}

void fb_session_warn(struct fb_session *s, const char *warning)
{
	if (!array_has(s->warnings, warning)) {
		json_array_append_new(s->warnings, json_string(warning));
		if (!s->opts->quiet)
			fprintf(stderr, "***WARNING*** %s\n", warning);
	}
	if (s->point_warnings && !array_has(s->point_warnings, warning))
		json_array_append_new(s->point_warnings, json_string(warning));
}

void fb_session_point_begin(struct fb_session *s)
{
	pthread_mutex_lock(&note_lock);
	json_decref(s->point_notes);
	s->point_notes = json_array();
	pthread_mutex_unlock(&note_lock);
	json_decref(s->point_warnings);
	s->point_warnings = json_array();
	s->point_polling = s->point_reps = 0;
}

json_t *fb_session_point_end(struct fb_session *s)
{
	pthread_mutex_lock(&note_lock);
	json_t *notes = s->point_notes;
	s->point_notes = NULL;
	pthread_mutex_unlock(&note_lock);
	json_t *r = json_pack("{s:i, s:i, s:o, s:o}", "polling_threads", (int)s->point_polling,
			      "repetitions", (int)s->point_reps, "notes", notes ? notes : json_array(),
			      "warnings", s->point_warnings ? s->point_warnings : json_array());
	s->point_warnings = NULL;
	return r;
}

void fb_session_point_replay(struct fb_session *s, json_t *record)
{
	unsigned polling = (unsigned)json_integer_value(json_object_get(record, "polling_threads"));
	unsigned reps = (unsigned)json_integer_value(json_object_get(record, "repetitions"));
	size_t i;
	json_t *v;
	if (polling > s->polling_threads)
		s->polling_threads = polling;
	if (reps > s->repetitions_run)
		s->repetitions_run = reps;
	json_array_foreach(json_object_get(record, "notes"), i, v)
		fb_session_note(s, json_string_value(v));
	json_array_foreach(json_object_get(record, "warnings"), i, v)
		fb_session_warn(s, json_string_value(v));
}

/* One repetition of every path: runs[p * stride + r].  0, or -errno with err. */
static int run_repetition(struct fb_session *s, const struct fb_params *point, const enum fb_path *paths,
			  size_t npaths, unsigned r, struct fb_run **runs, size_t stride, char *err, size_t errlen)
{
	/* Paths interleaved per repetition, so slow drift hits both alike. */
	for (size_t p = 0; p < npaths; p++) {
		struct fb_run *run = fb_xcalloc(1, sizeof(*run));
		run->session = s;
		run->params = point;
		run->path = paths[p];
		run->rep = r;
		runs[p * stride + r] = run;
		int rc = fb_run_execute(run);
		if (rc) {
			snprintf(err, errlen, "%s (path %s, repetition %u): %s", s->scenario->name, fb_path_name(paths[p]),
				 r, run->error);
			return rc;
		}
	}
	return 0;
}

/* The runs of the first reps repetitions, packed as fb_results_entries takes them. */
static struct fb_run **packed(struct fb_run **runs, size_t stride, size_t npaths, unsigned reps)
{
	struct fb_run **out = fb_xcalloc(npaths * reps, sizeof(*out));
	for (size_t p = 0; p < npaths; p++)
		memcpy(out + p * reps, runs + p * stride, reps * sizeof(*out));
	return out;
}

/* The widest relative half-width of a p50's interval on the mean and median
 * aggregates (what --target-ci aims at), and whose ("section metric path"). */
static double widest_p50(json_t *entries, char *which, size_t len)
{
	double widest = NAN;
	size_t i;
	json_t *e;
	json_array_foreach(entries, i, e) {
		const char *agg = json_string_value(json_object_get(e, "aggregate_name"));
		if (!agg || (strcmp(agg, "mean") && strcmp(agg, "median")))
			continue;
		json_t *m = json_object_get(e, "fencebench"), *u;
		const char *k;
		json_object_foreach(json_object_get(m, "units"), k, u) {
			size_t n = strlen(k);
			if (n < 4 || strcmp(k + n - 4, "_p50"))
				continue;
			char lo[300], hi[300];
			snprintf(lo, sizeof(lo), "%s_ci_lo", k);
			snprintf(hi, sizeof(hi), "%s_ci_hi", k);
			double w = fb_boot_rel_halfwidth(json_number_value(json_object_get(e, k)),
							 json_number_value(json_object_get(e, lo)),
							 json_number_value(json_object_get(e, hi)));
			if (isfinite(w) && !(w <= widest)) {
				widest = w;
				const char *sec = json_string_value(json_object_get(m, "section"));
				snprintf(which, len, "%s%s%s %s", sec && *sec ? sec : "", sec && *sec ? " " : "", k,
					 json_string_value(json_object_get(m, "path")));
			}
		}
	}
	return widest;
}

/* --target-ci: after repetition `done`, is the target met, or a cap hit?
 * true to stop, with the note saying which. */
static bool target_done(struct fb_session *s, const struct fb_params *point, struct fb_run **runs, size_t stride,
			size_t npaths, unsigned done, uint64_t t0)
{
	const struct fb_opts *o = s->opts;
	_Static_assert(FB_TARGET_MIN_REPS >= FB_CI_MIN_REPS, "a target needs a 95 % interval");
	unsigned min = o->repetitions > FB_TARGET_MIN_REPS ? o->repetitions : FB_TARGET_MIN_REPS;
	if (done < min)
		return false;
	struct fb_run **flat = packed(runs, stride, npaths, done);
	json_t *entries = fb_results_entries(s, point, flat, npaths, done);
	char which[320] = "", *key = fb_results_point_key(point), *note = NULL;
	double w = widest_p50(entries, which, sizeof(which));
	double elapsed = (double)(lf_now_ns() - t0) / 1e9, cap = o->max_time_s > 0 ? o->max_time_s : FB_TARGET_MAX_TIME_S;
	const char *at = *key ? " at " : "";
	if (!isfinite(w))
		note = fb_xasprintf("--target-ci%s%s: no p50 with an interval to aim at; stopped after %u repetitions", at,
				    key, done);
	else if (w <= o->target_ci)
		note = fb_xasprintf("--target-ci %.3g%%%s%s: met after %u repetitions (widest p50 interval ±%.2g%%: %s)",
				    100 * o->target_ci, at, key, done, 100 * w, which);
	else if (elapsed >= cap)
		note = fb_xasprintf("--target-ci %.3g%%%s%s: not met, time cap %.3g s hit after %u repetitions (widest "
				    "p50 interval ±%.2g%%: %s)", 100 * o->target_ci, at, key, cap, done, 100 * w, which);
	else if (done >= FB_TARGET_MAX_REPS)
		note = fb_xasprintf("--target-ci %.3g%%%s%s: not met after %u repetitions, the most it runs (widest p50 "
				    "interval ±%.2g%%: %s)", 100 * o->target_ci, at, key, done, 100 * w, which);
	if (note)
		fb_session_note(s, note);
	free(note);
	free(key);
	free(flat);
	json_decref(entries);
	return note != NULL;
}

int fb_session_run_point(struct fb_session *s, const struct fb_params *point, json_t **entries,
			 char *err, size_t errlen)
{
	enum fb_path paths[2];
	size_t npaths = 0;
	if (s->paths & FB_PATHS_NATIVE)
		paths[npaths++] = FB_PATH_NATIVE;
	if (s->paths & FB_PATHS_LEGACY)
		paths[npaths++] = FB_PATH_LEGACY;
	if (!npaths)
		paths[npaths++] = FB_PATH_NONE;
	bool adaptive = s->opts->target_ci > 0;
	unsigned reps = s->opts->repetitions ? s->opts->repetitions : 1, done = 0;
	size_t stride = adaptive ? FB_TARGET_MAX_REPS : reps;
	struct fb_run **runs = fb_xcalloc(npaths * stride, sizeof(*runs));
	uint64_t t0 = lf_now_ns();
	int rc = 0;
	check_polling(s, point);
	while (!rc && done < stride) {
		rc = run_repetition(s, point, paths, npaths, done, runs, stride, err, errlen);
		done += !rc;
		if (!rc && (adaptive ? target_done(s, point, runs, stride, npaths, done, t0) : done == reps))
			break;
	}
	if (done > s->repetitions_run)
		s->repetitions_run = done;
	s->point_reps = done;
	struct fb_run **flat = packed(runs, stride, npaths, done);
	*entries = rc ? NULL : fb_results_entries(s, point, flat, npaths, done);
	if (*entries)
		fb_agree_point(s, point, flat, npaths, done, *entries);
	free(flat);
	if (*entries) {
		char *key = fb_results_point_key(point);
		fb_noise_check_cv(*entries, key, warn_cb, s);
		free(key);
	}
	for (size_t i = 0; i < npaths * stride; i++) {
		if (runs[i]) {
			fb_run_release(runs[i]);
			free(runs[i]);
		}
	}
	free(runs);
	return rc;
}

static json_t *limits_object(const struct fb_limits *l)
{
	json_t *o = json_object();
	if (isfinite(l->cacheline_rtt_ns))
		json_object_set_new(o, "cacheline_rtt_ns", json_real(l->cacheline_rtt_ns));
	if (isfinite(l->cacheline_msg_ns))
		json_object_set_new(o, "cacheline_msg_ns", json_real(l->cacheline_msg_ns));
	if (isfinite(l->syscall_ns))
		json_object_set_new(o, "syscall_ns", json_real(l->syscall_ns));
	if (isfinite(l->futex_wake_ns))
		json_object_set_new(o, "futex_wake_ns", json_real(l->futex_wake_ns));
	json_object_set_new(o, "cpu_a", json_integer(l->cpu_a));
	json_object_set_new(o, "cpu_b", json_integer(l->cpu_b));
	if (l->note[0])
		json_object_set_new(o, "note", json_string(l->note));
	return o;
}

static json_t *perf_object(struct fb_session *s)
{
	json_t *events = json_array();
	for (size_t i = 0; s->spec && i < fb_perf_spec_count(s->spec); i++)
		json_array_append_new(events, json_string(fb_perf_spec_name(s->spec, i)));
	const char *note = s->spec ? fb_perf_spec_note(s->spec)
			 : s->opts->perf_events ? "fencebench's own counters off (--perf-events none)"
			 : "fencebench's own counters off: perf stat counts the region (--perf-ctl-fd)";
	return json_pack("{s:o, s:s?, s:b, s:b}", "events", events, "note", note,
			 "ctl_fd", s->ctl != NULL, "rapl", s->rapl != NULL);
}

static json_t *run_object(struct fb_session *s)
{
	const struct fb_opts *o = s->opts;
	json_t *params = json_object(), *grid = json_object();
	for (size_t i = 0; i < s->base->n; i++) {
		char *v = fb_param_text(fb_scenario_param(s->scenario, i), s->base->v[i]);
		json_object_set_new(params, fb_scenario_param(s->scenario, i)->key, json_string(v));
		free(v);
	}
	for (size_t a = 0; a < o->grid.n; a++) {
		json_t *vals = json_array();
		for (size_t k = 0; k < o->grid.axes[a].n; k++)
			json_array_append_new(vals, json_string(o->grid.axes[a].values[k]));
		json_object_set_new(grid, o->grid.axes[a].key, vals);
		json_object_del(params, o->grid.axes[a].key);
	}
	const char *paths = s->paths == FB_PATHS_BOTH ? "native,legacy" : s->paths == FB_PATHS_NATIVE ? "native"
						: s->paths == FB_PATHS_LEGACY ? "legacy" : "none";
	/* A seed past JSON's safe integers is written as text, exactly. */
	char seed[32];
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)o->seed);
	json_t *seedv = o->seed <= INT64_MAX ? json_integer((json_int_t)o->seed) : json_string(seed);
	return json_pack("{s:s, s:s, s:I, s:s, s:i, s:I, s:f, s:f, s:o, s:o, s:o, s:i, s:b}",
			 "scenario", s->scenario->name, "cpus", s->cpus.text, "cpus_used", (json_int_t)s->cpus.n,
			 "paths", paths, "repetitions", (int)(s->repetitions_run ? s->repetitions_run : o->repetitions), "iterations", (json_int_t)s->iterations,
			 "duration_s", (double)s->duration_ns / 1e9, "warmup_s", (double)s->warmup_ns / 1e9,
			 "seed", seedv, "parameters", params, "grid", grid,
			 "polling_threads", (int)s->polling_threads, "oversubscribed", s->polling_threads > s->cpus.n);
}

json_t *fb_session_context(struct fb_session *s)
{
	json_t *c = fb_context_machine();
	json_t *r = run_object(s);
	json_object_update(c, r);
	json_decref(r);
	json_object_set_new(c, "perf", perf_object(s));
	if (s->scenario->headline)
		json_object_set_new(c, "headline_metrics", json_string(s->scenario->headline));
	if (s->opts->target_ci > 0)
		json_object_set_new(c, "target_ci", json_pack("{s:f, s:f, s:i, s:i}", "target", s->opts->target_ci,
			"max_time_s", s->opts->max_time_s > 0 ? s->opts->max_time_s : FB_TARGET_MAX_TIME_S,
			"min_repetitions", (int)(s->opts->repetitions > FB_TARGET_MIN_REPS ? s->opts->repetitions
											  : FB_TARGET_MIN_REPS),
			"max_repetitions", FB_TARGET_MAX_REPS));
	json_object_set_new(c, "limits", limits_object(&s->limits));
	json_object_set(c, "warnings", s->warnings);
	if (s->noise)
		json_object_set_new(c, "noise", json_deep_copy(s->noise));
	json_object_set(c, "notes", s->notes);
	return c;
}
