/* src/fb_run.c — the run context scenarios report through (src/fb_scenario.h),
 * and one run of a scenario: role threads, perf groups, the measured region. */
#include "src/fb_run.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/fb_boot.h"
#include "src/fb_hist.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"
#include "src/fb_util.h"
#include "src/perf.h"

/* Misuse by a scenario: print file:line and abort, as CONTRIBUTING.md, "Conventions" asks. */
#define RUN_MISUSE(fmt, ...) lf_die("scenario misuse: " fmt, ##__VA_ARGS__)

static uint64_t cpu_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- parameters and the point ---- */

static const union fb_value *param(const struct fb_run *run, const char *key, enum fb_param_type t)
{
	const struct fb_params *ps = run->params;
	int i = fb_scenario_param_index(ps->scenario, key);
	if (i < 0)
		RUN_MISUSE("scenario '%s' has no parameter '%s'", ps->scenario->name, key);
	if (fb_scenario_param(ps->scenario, i)->type != t)
		RUN_MISUSE("parameter '%s' of '%s' is a %s, read as a %s", key, ps->scenario->name,
			   fb_param_type_name(fb_scenario_param(ps->scenario, i)->type), fb_param_type_name(t));
	return &ps->v[i];
}

int64_t fb_run_int(const struct fb_run *run, const char *key) { return param(run, key, FB_PARAM_INT)->i; }
double fb_run_double(const struct fb_run *run, const char *key) { return param(run, key, FB_PARAM_DOUBLE)->d; }
bool fb_run_bool(const struct fb_run *run, const char *key) { return param(run, key, FB_PARAM_BOOL)->b; }

const char *fb_run_enum(const struct fb_run *run, const char *key)
{
	const union fb_value *v = param(run, key, FB_PARAM_ENUM);
	int i = fb_scenario_param_index(run->params->scenario, key);
	return fb_scenario_param(run->params->scenario, i)->choices[v->e];
}

const char *fb_run_string(const struct fb_run *run, const char *key) { return param(run, key, FB_PARAM_STRING)->s; }

const struct fb_params *fb_run_params(const struct fb_run *run) { return run->params; }
enum fb_path fb_run_path(const struct fb_run *run) { return run->path; }
uint64_t fb_run_seed(const struct fb_run *run) { return run->session->opts->seed; }
unsigned fb_run_repetition(const struct fb_run *run) { return run->rep; }
struct fb_trace *fb_run_trace(const struct fb_run *run) { return run->session->trace; }
size_t fb_run_ncpus(const struct fb_run *run) { return run->session->cpus.n; }
const int *fb_run_cpus(const struct fb_run *run) { return run->session->cpus.ids; }
int fb_run_cpu(const struct fb_run *run, size_t slot) { return run->session->cpus.ids[slot % run->session->cpus.n]; }
uint64_t fb_run_iterations(const struct fb_run *run) { return run->session->iterations; }
uint64_t fb_run_duration_ns(const struct fb_run *run) { return run->session->duration_ns; }
uint64_t fb_run_warmup_ns(const struct fb_run *run) { return run->session->warmup_ns; }
const struct fb_limits *fb_run_limits(const struct fb_run *run) { return &run->session->limits; }

int fb_run_pin_self(const struct fb_run *run, size_t slot)
{
	return lf_thread_pin_self(fb_run_cpu(run, slot));
}

bool fb_run_continue(const struct fb_run *run, uint64_t done)
{
	if (run->session->iterations)
		return done < run->session->iterations;
	return !done || lf_now_ns() < atomic_load_explicit(&((struct fb_run *)run)->deadline_ns, memory_order_relaxed);
}

/* ---- role threads ---- */

static void note(struct fb_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct fb_run *run, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fb_session_note(run->session, buf);
}

void fb_run_thread(struct fb_run *run, const char *role, pid_t tid)
{
	struct fb_perf_group *g = NULL;
	int rc = 0;
	pthread_mutex_lock(&run->lock);
	if (run->session->spec) {
		rc = fb_perf_group_open(run->session->spec, tid, &g);
		if (rc)
			g = NULL;   /* said once per run, for every role it hit: note_perf_failures */
		else if (run->counting)
			fb_perf_group_enable(g);
	}
	run->roles = fb_xrealloc(run->roles, (run->nroles + 1) * sizeof(*run->roles));
	run->roles[run->nroles++] = (struct fb_role){ fb_xstrdup(role), tid, g, rc };
	pthread_mutex_unlock(&run->lock);
}

void fb_run_thread_self(struct fb_run *run, const char *role)
{
	fb_run_thread(run, role, gettid());
}

/* Enable or disable every group, and say so to threads registering meanwhile:
 * both under run->lock, so no group is opened in between and missed. */
static void groups_count(struct fb_run *run, bool on)
{
	pthread_mutex_lock(&run->lock);
	run->counting = on;
	for (size_t i = 0; i < run->nroles; i++) {
		if (!run->roles[i].group)
			continue;
		if (on)
			fb_perf_group_enable(run->roles[i].group);
		else
			fb_perf_group_disable(run->roles[i].group);
	}
	pthread_mutex_unlock(&run->lock);
}

/* Zero every group's counts (they keep counting if enabled). */
static void groups_reset(struct fb_run *run)
{
	pthread_mutex_lock(&run->lock);
	for (size_t i = 0; i < run->nroles; i++)
		if (run->roles[i].group)
			fb_perf_group_reset(run->roles[i].group);
	pthread_mutex_unlock(&run->lock);
}

/* ---- the measured region ---- */

static void ctl_send(struct fb_run *run, bool enable)
{
	struct fb_perf_ctl *c = run->session->ctl;
	if (!c)
		return;
	int rc = enable ? fb_perf_ctl_enable(c) : fb_perf_ctl_disable(c);
	if (rc)
		note(run, "perf ctl: '%s' not acknowledged: %s", enable ? "enable" : "disable", strerror(-rc));
}

static void region_open(struct fb_run *run)
{
	double j = 0;
	run->have_joules = run->session->rapl && !fb_rapl_read_joules(run->session->rapl, &j);
	run->j0 = j;
	run->in_region = true;
	run->t0_cpu_ns = cpu_now_ns();
	run->t0_ns = lf_now_ns();
	/* From the region's own start: a duration-based region lasts at least the duration. */
	atomic_store_explicit(&run->deadline_ns, run->t0_ns + run->session->duration_ns, memory_order_relaxed);
}

static void region_close(struct fb_run *run, uint64_t iterations)
{
	uint64_t t1 = lf_now_ns(), c1 = cpu_now_ns();
	run->real_ns += t1 - run->t0_ns;
	run->cpu_ns += c1 - run->t0_cpu_ns;
	run->iterations += iterations;
	double j;
	if (run->have_joules && !fb_rapl_read_joules(run->session->rapl, &j))
		run->joules += j - run->j0;
	run->in_region = false;
}

void fb_run_measure_begin(struct fb_run *run)
{
	if (run->in_region && !run->implicit)
		RUN_MISUSE("fb_run_measure_begin twice without fb_run_measure_end");
	if (run->implicit) {
		/* The scenario marks its own region: forget the runner's. */
		run->implicit = false;
		run->in_region = false;
		groups_count(run, false);
		groups_reset(run);
	}
	ctl_send(run, true);
	groups_count(run, true);
	region_open(run);
}

void fb_run_measure_end(struct fb_run *run, uint64_t iterations)
{
	if (!run->in_region || run->implicit)
		RUN_MISUSE("fb_run_measure_end without fb_run_measure_begin");
	region_close(run, iterations);
	groups_count(run, false);
	ctl_send(run, false);
}

/* ---- reporting ---- */

void fb_run_section(struct fb_run *run, const char *name)
{
	free(run->section);
	run->section = fb_xstrdup(name ? name : "");
}

/* Add a metric; draws (FB_BOOT_RESAMPLES replicates, or NULL) is taken over. */
static void add_metric_draws(struct fb_run *run, const char *name, double value, const char *unit,
			     enum fb_limit limit, float *draws)
{
	run->metrics = fb_xrealloc(run->metrics, (run->nmetrics + 1) * sizeof(*run->metrics));
	run->metrics[run->nmetrics++] = (struct fb_metric){
		fb_xstrdup(run->section), fb_xstrdup(name), fb_xstrdup(unit ? unit : ""), value, limit, draws, NULL,
	};
}

static void add_metric(struct fb_run *run, const char *name, double value, const char *unit, enum fb_limit limit)
{
	add_metric_draws(run, name, value, unit, limit, NULL);
}

/* A metric with no value, and why (a static string: "not counted", "not supported"). */
static void add_absent(struct fb_run *run, const char *name, const char *unit, const char *why)
{
	add_metric(run, name, NAN, unit, FB_LIMIT_NONE);
	run->metrics[run->nmetrics - 1].absent = why;
}

/* Bootstrap replicates of percentiles pct[0..n-1] of h (fb_boot.h), one
 * block of FB_BOOT_RESAMPLES each, seeded by the run's seed and the metric's
 * identity (section, name, path, repetition); NULL when h is empty. */
static float *replicates(const struct fb_run *run, const char *name, const struct fb_hist *h, const double *pct,
			 size_t n)
{
	struct fb_rng rng = { fb_boot_seed(run->session->opts->seed, run->section, name, fb_path_name(run->path),
					   run->rep) };
	float *d = fb_xcalloc(n * FB_BOOT_RESAMPLES, sizeof(*d));
	if (fb_boot_percentiles(h, pct, n, &rng, d, FB_BOOT_RESAMPLES)) {
		free(d);
		return NULL;
	}
	return d;
}

/* One replicate block of `all` (n blocks), copied: each metric owns its own. */
static float *block(const float *all, size_t k)
{
	if (!all)
		return NULL;
	float *d = fb_xcalloc(FB_BOOT_RESAMPLES, sizeof(*d));
	memcpy(d, all + k * FB_BOOT_RESAMPLES, FB_BOOT_RESAMPLES * sizeof(*d));
	return d;
}

void fb_run_metric(struct fb_run *run, const char *name, double value, const char *unit)
{
	add_metric(run, name, value, unit, FB_LIMIT_NONE);
}

void fb_run_latency(struct fb_run *run, const char *name, double ns, enum fb_limit limit)
{
	add_metric(run, name, ns, "ns", limit);
}

void fb_run_hist(struct fb_run *run, const char *name, const struct fb_hist *h, enum fb_limit limit)
{
	static const double pct[] = { 50.0, 90.0, 99.0, 99.9 };
	struct fb_hist_summary s;
	char key[256];
	fb_hist_summarize(h, &s);
	snprintf(key, sizeof(key), "%s_count", name);
	add_metric(run, key, (double)s.count, "samples", FB_LIMIT_NONE);
	if (!s.count)
		return;
	float *all = replicates(run, name, h, pct, 4);
	const struct { const char *suffix; double v; int draws; } stat[] = {
		{ "p50", (double)s.p50, 0 }, { "p90", (double)s.p90, 1 }, { "p99", (double)s.p99, 2 },
		{ "p999", (double)s.p999, 3 }, { "max", (double)s.max, -1 }, { "mean", s.mean, -1 },
	};
	for (size_t i = 0; i < sizeof(stat) / sizeof(stat[0]); i++) {
		snprintf(key, sizeof(key), "%s_%s", name, stat[i].suffix);
		add_metric_draws(run, key, stat[i].v, "ns", limit, stat[i].draws < 0 ? NULL : block(all, (size_t)stat[i].draws));
	}
	free(all);
}

void fb_run_hist_percentile(struct fb_run *run, const char *name, const struct fb_hist *h, double p,
			    enum fb_limit limit)
{
	if (!fb_hist_count(h))
		return;
	add_metric_draws(run, name, (double)fb_hist_percentile(h, p), "ns", limit, replicates(run, name, h, &p, 1));
}

void fb_run_agreement(struct fb_run *run, const char *name, const char *a, const char *b)
{
	for (size_t i = 0; i < run->nagreements; i++)
		if (!strcmp(run->agreements[i].section, run->section) && !strcmp(run->agreements[i].name, name))
			return;
	run->agreements = fb_xrealloc(run->agreements, (run->nagreements + 1) * sizeof(*run->agreements));
	run->agreements[run->nagreements++] = (struct fb_agreement){
		fb_xstrdup(run->section), fb_xstrdup(name), fb_xstrdup(a), fb_xstrdup(b),
	};
}

/* A scenario's message, cut to its first line. */
static void one_line(char *buf, size_t len, const char *fmt, va_list ap)
{
	vsnprintf(buf, len, fmt, ap);
	buf[strcspn(buf, "\n")] = '\0';
}

void fb_run_note(struct fb_run *run, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	one_line(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fb_session_note(run->session, buf);
}

int fb_run_error(struct fb_run *run, int err, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	one_line(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(run->error);
	run->error = fb_xstrdup(buf);
	return err;
}

/* ---- one run ---- */

static const char *event_unit(const char *event)
{
	return strstr(event, "clock") ? "ns" : "events";
}

/* Append "SEP WHAT" to a note being built in buf (cut at its size). */
static void note_add(char *buf, size_t len, const char *sep, const char *what)
{
	size_t used = strlen(buf);
	if (used < len)
		snprintf(buf + used, len - used, "%s%s", used ? sep : "", what);
}

/* The events a split moved out of the first group (the same on every thread:
 * one spec, one PMU), said once for the run.  Caller holds run->lock. */
static void note_perf_split(struct fb_run *run)
{
	for (size_t i = 0; i < run->nroles; i++) {
		const struct fb_perf_group *g = run->roles[i].group;
		if (!g || fb_perf_group_kernel_groups(g) < 2)
			continue;
		char moved[256] = "";
		for (size_t k = 0; fb_perf_group_moved(g, k); k++)
			note_add(moved, sizeof(moved), ", ", fb_perf_group_moved(g, k));
		note(run, "perf: the PMU takes no group of all %zu events: %s moved to %zu further group(s), "
		     "each multiplexed on its own (scaled where it ran part of the time)", fb_perf_group_count(g),
		     moved, fb_perf_group_kernel_groups(g) - 1);
		return;
	}
}

/* One note per failure kind (errno) for the run, naming the roles it hit:
 * never one per thread (a thread id would defeat the session's de-duplication
 * and flood stderr where perf_event_paranoid forbids counting). */
static void note_perf_failures(struct fb_run *run)
{
	pthread_mutex_lock(&run->lock);
	for (size_t i = 0; i < run->nroles; i++) {
		int rc = run->roles[i].open_rc;
		bool first = true;
		for (size_t k = 0; k < i && first; k++)
			first = run->roles[k].open_rc != rc;
		if (!rc || !first)
			continue;
		char roles[256] = "";
		size_t hit = 0;
		for (size_t k = i; k < run->nroles; k++)
			if (run->roles[k].open_rc == rc) {
				note_add(roles, sizeof(roles), ", ", run->roles[k].role);
				hit++;
			}
		note(run, "perf: no counters on %zu of %zu role threads (%s): %s", hit, run->nroles, roles,
		     strerror(-rc));
	}
	note_perf_split(run);
	pthread_mutex_unlock(&run->lock);
}

/* Why a role whose group did not open has no counts: perf stat's words. */
static const char *open_failure_word(int rc)
{
	return rc == -ENOENT || rc == -EOPNOTSUPP || rc == -ENODEV || rc == -EINVAL ? "not supported"
										     : "not counted";
}

/* kernel.nmi_watchdog is on: it holds a hardware counter on every CPU. */
static bool nmi_watchdog_on(void)
{
	int on = 0;
	FILE *f = fopen("/proc/sys/kernel/nmi_watchdog", "r");
	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 0;
		fclose(f);
	}
	return on > 0;
}

/* What report_perf says once for the run: each a list of "EVENT on ROLE" or roles. */
struct perf_notes {
	char scaled[384], not_counted[384], unread[256];
	int read_rc;
};

/* Role r's events as metrics "perf.<role>.<event>": a value, or none and why. */
static void report_role(struct fb_run *run, struct fb_role *r, struct perf_notes *pn)
{
	const struct fb_perf_spec *spec = run->session->spec;
	struct fb_perf_value v[FB_PERF_MAX_EVENTS];
	char key[256];
	int rc = r->group ? fb_perf_group_read(r->group, v, FB_PERF_MAX_EVENTS) : 0;
	if (rc) {
		note_add(pn->unread, sizeof(pn->unread), ", ", r->role);
		pn->read_rc = rc;
	}
	for (size_t k = 0; k < fb_perf_spec_count(spec) && k < FB_PERF_MAX_EVENTS; k++) {
		const char *event = fb_perf_spec_name(spec, k);
		snprintf(key, sizeof(key), "perf.%s.%s", r->role, event);
		if (!r->group || rc) {
			add_absent(run, key, event_unit(event), r->group ? "not counted" : open_failure_word(r->open_rc));
			continue;
		}
		if (!v[k].counted) {
			add_absent(run, key, event_unit(event), "not counted");
			/* enabled but never on the PMU: worth a note (a thread that never
			 * ran in the region, time_enabled 0 too, is only idle) */
			snprintf(key, sizeof(key), "%s on %s", event, r->role);
			if (v[k].time_enabled)
				note_add(pn->not_counted, sizeof(pn->not_counted), ", ", key);
			continue;
		}
		add_metric(run, key, v[k].value, event_unit(event), FB_LIMIT_NONE);
		if (v[k].scaled) {
			snprintf(key, sizeof(key), "%s on %s", event, r->role);
			note_add(pn->scaled, sizeof(pn->scaled), ", ", key);
		}
	}
}

/* Counters of every role as metrics "perf.<role>.<event>" of the main section;
 * one note per kind for the run (never one per event and thread). */
static void report_perf(struct fb_run *run)
{
	struct perf_notes pn = { .read_rc = 0 };
	char *saved = run->section;
	run->section = fb_xstrdup("");
	for (size_t i = 0; run->session->spec && i < run->nroles; i++)
		report_role(run, &run->roles[i], &pn);
	if (pn.scaled[0])
		note(run, "perf: multiplexed, so scaled (estimates): %s", pn.scaled);
	if (pn.not_counted[0])
		note(run, "perf: <not counted> (enabled, never on the PMU in the region): %s%s", pn.not_counted,
		     nmi_watchdog_on() ? "; the NMI watchdog holds a counter (kernel.nmi_watchdog=0 frees it)" : "");
	if (pn.unread[0])
		note(run, "perf: counters not read on %s: %s", pn.unread, strerror(-pn.read_rc));
	if (run->have_joules)
		add_metric(run, "energy_pkg", run->joules, "J", FB_LIMIT_NONE);
	free(run->section);
	run->section = saved;
}

int fb_run_execute(struct fb_run *run)
{
	const struct fb_scenario *s = run->session->scenario;
	pthread_mutex_init(&run->lock, NULL);
	run->section = fb_xstrdup("");
	fb_run_thread_self(run, "app");
	/* Until the scenario marks its region, the whole of run() is measured. */
	run->implicit = true;
	groups_count(run, true);
	region_open(run);
	int rc = s->run(run);
	note_perf_failures(run);
	if (run->in_region) {
		if (!run->implicit)
			note(run, "%s: the measured region was left open; closed at the end of the run", s->name);
		region_close(run, run->implicit ? (run->session->iterations ? run->session->iterations : 1) : 0);
		groups_count(run, false);
		if (!run->implicit)
			ctl_send(run, false);
	}
	if (!run->iterations)
		run->iterations = 1;
	if (rc && !run->error)
		fb_run_error(run, rc, "%s", strerror(rc < 0 ? -rc : rc));
	if (!rc)
		report_perf(run);
	return rc;
}

void fb_run_release(struct fb_run *run)
{
	for (size_t i = 0; i < run->nroles; i++) {
		fb_perf_group_close(run->roles[i].group);
		free(run->roles[i].role);
	}
	free(run->roles);
	for (size_t i = 0; i < run->nmetrics; i++) {
		free(run->metrics[i].section);
		free(run->metrics[i].name);
		free(run->metrics[i].unit);
		free(run->metrics[i].draws);
	}
	free(run->metrics);
	for (size_t i = 0; i < run->nagreements; i++) {
		struct fb_agreement *g = &run->agreements[i];
		free(g->section);
		free(g->name);
		free(g->a);
		free(g->b);
	}
	free(run->agreements);
	free(run->section);
	free(run->error);
	pthread_mutex_destroy(&run->lock);
}
