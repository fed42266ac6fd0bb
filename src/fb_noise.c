/* src/fb_noise.c — was the machine quiet?  Contract in fb_noise.h. */
#include "src/fb_noise.h"

#include <ctype.h>
#include <stdarg.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/fb_util.h"

/* ---- small readers ---- */

/* The first line of root/path without its newline; "" when unreadable. */
static void read_text(const char *root, const char *path, char *buf, size_t len)
{
	char full[512];
	snprintf(full, sizeof(full), "%s/%s", root, path);
	buf[0] = '\0';
	FILE *f = fopen(full, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* cpu is in a kernel CPU list ("0-3,8,10-11"). */
static bool list_has(const char *list, int cpu)
{
	const char *p = list;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return false;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (cpu >= a && cpu <= b)
			return true;
		p = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return false;
}

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;
	va_start(ap, fmt);
	if (used < len)
		vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the machine ---- */

static void governors(const char *root, const int *cpus, size_t n, struct fb_noise_machine *m)
{
	size_t have = 0, perf = 0;
	m->governor[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char path[128], gov[64];
		snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpus[i]);
		read_text(root, path, gov, sizeof(gov));
		if (!gov[0])
			continue;
		have++;
		if (!strcmp(gov, "performance"))
			perf++;
		else
			append(m->governor, sizeof(m->governor), "%s%s on CPU %d", m->governor[0] ? ", " : "", gov, cpus[i]);
	}
	m->governor_ok = !have ? -1 : perf == have;
	if (have && perf == have)
		snprintf(m->governor, sizeof(m->governor), "performance");
}

static int turbo(const char *root)
{
	char v[16];
	read_text(root, "sys/devices/system/cpu/intel_pstate/no_turbo", v, sizeof(v));
	if (v[0])
		return v[0] == '0';
	read_text(root, "sys/devices/system/cpu/cpufreq/boost", v, sizeof(v));
	return v[0] ? v[0] == '1' : -1;
}

static void siblings(const char *root, const int *cpus, size_t n, struct fb_noise_machine *m)
{
	m->smt[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char path[128], list[128];
		snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpus[i]);
		read_text(root, path, list, sizeof(list));
		for (size_t j = i + 1; j < n && list[0]; j++)
			if (list_has(list, cpus[j]))
				append(m->smt, sizeof(m->smt), "%s%d and %d", m->smt[0] ? ", " : "", cpus[i], cpus[j]);
	}
}

void fb_noise_machine(const char *root, const int *cpus, size_t n, struct fb_noise_machine *m)
{
	char v[64];
	memset(m, 0, sizeof(*m));
	governors(root, cpus, n, m);
	m->turbo = turbo(root);
	siblings(root, cpus, n, m);
	read_text(root, "sys/devices/system/cpu/isolated", m->isolated, sizeof(m->isolated));
	read_text(root, "sys/devices/system/cpu/nohz_full", m->nohz_full, sizeof(m->nohz_full));
	if (!strcmp(m->nohz_full, "(null)"))
		m->nohz_full[0] = '\0';
	read_text(root, "proc/loadavg", v, sizeof(v));
	if (sscanf(v, "%lf %lf %lf", &m->load[0], &m->load[1], &m->load[2]) != 3)
		m->load[0] = m->load[1] = m->load[2] = NAN;
	read_text(root, "sys/devices/system/cpu/online", v, sizeof(v));
	m->online = 0;
	for (int c = 0; c < 4096 && v[0]; c++)
		m->online += list_has(v, c);
	read_text(root, "proc/sys/kernel/perf_event_paranoid", v, sizeof(v));
	m->perf_paranoid = v[0] ? atoi(v) : -99;
}

void fb_noise_check_machine(const struct fb_noise_machine *m, fb_noise_warn_fn warn, void *arg)
{
	char w[512];
	if (m->governor_ok == 0) {
		snprintf(w, sizeof(w), "CPU frequency scaling governor %s (not 'performance'): the clock may change "
			 "during the run (fencebench doctor says what to change)", m->governor);
		warn(arg, w);
	}
	if (m->turbo == 1)
		warn(arg, "turbo boost is on: the clock follows load and temperature (fencebench doctor says how "
			  "to turn it off)");
	if (m->smt[0]) {
		snprintf(w, sizeof(w), "CPUs %s of the run are SMT siblings of one core: each slows the other "
			 "(give --cpus of different cores)", m->smt);
		warn(arg, w);
	}
	if (m->online > 0 && m->load[0] > (double)m->online) {
		snprintf(w, sizeof(w), "load average %.2f over the last minute on %ld CPUs: the machine was busy "
			 "before the run", m->load[0], m->online);
		warn(arg, w);
	}
}

json_t *fb_noise_machine_json(const struct fb_noise_machine *m)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:[f, f, f]}", "governor",
			      m->governor_ok < 0 ? "none (no cpufreq)" : m->governor, "smt_siblings", m->smt,
			      "isolated", m->isolated, "nohz_full", m->nohz_full, "online", (json_int_t)m->online,
			      "load_avg_before", isfinite(m->load[0]) ? m->load[0] : 0.0,
			      isfinite(m->load[1]) ? m->load[1] : 0.0, isfinite(m->load[2]) ? m->load[2] : 0.0);
	json_object_set_new(o, "turbo", m->turbo < 0 ? json_null() : json_boolean(m->turbo));
	return o;
}

/* ---- the window ---- */

/* Ticks of the run's CPUs from /proc/stat: busy (user, nice, system, irq,
 * softirq), steal, and everything. */
static int cpu_ticks(const int *cpus, size_t n, struct fb_noise_snap *s)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int cpu;
		unsigned long long v[8] = { 0 };
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7]) < 8)
			continue;
		bool mine = false;
		for (size_t i = 0; i < n; i++)
			mine = mine || cpus[i] == cpu;
		if (!mine)
			continue;
		s->busy += v[0] + v[1] + v[2] + v[5] + v[6];
		s->steal += v[7];
		s->total += v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	}
	fclose(f);
	return 0;
}

/* pid's comm and utime + stime from /proc/pid/stat; false when it is gone. */
static bool proc_ticks(int pid, struct fb_noise_proc *p)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	if (!open || !close || close < open)
		return false;
	snprintf(p->comm, sizeof(p->comm), "%.*s", (int)(close - open - 1), open + 1);
	/* after ")": state is field 3; utime and stime are fields 14 and 15 */
	char *q = close + 1;
	for (int field = 3; field < 14 && q; field++)
		q = strchr(q + 1, ' ');
	unsigned long long ut, st;
	if (!q || sscanf(q, " %llu %llu", &ut, &st) != 2)
		return false;
	p->pid = pid;
	p->ticks = ut + st;
	return true;
}

static int cmp_pid(const void *a, const void *b)
{
	return ((const struct fb_noise_proc *)a)->pid - ((const struct fb_noise_proc *)b)->pid;
}

static void scan_procs(struct fb_noise_snap *s)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t cap = 0;
	int self = getpid();
	while (d && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == self)
			continue;
		if (s->nprocs == cap) {
			cap = cap ? 2 * cap : 256;
			s->procs = fb_xrealloc(s->procs, cap * sizeof(*s->procs));
		}
		s->nprocs += proc_ticks(atoi(e->d_name), &s->procs[s->nprocs]);
	}
	if (d)
		closedir(d);
	qsort(s->procs, s->nprocs, sizeof(*s->procs), cmp_pid);
}

int fb_noise_snapshot(const int *cpus, size_t n, struct fb_noise_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->t_ns = now_ns(CLOCK_MONOTONIC);
	s->self_cpu_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	int rc = cpu_ticks(cpus, n, s);
	scan_procs(s);
	return rc;
}

void fb_noise_snap_free(struct fb_noise_snap *s)
{
	free(s->procs);
	memset(s, 0, sizeof(*s));
}

static const struct fb_noise_proc *find_proc(const struct fb_noise_snap *s, int pid)
{
	struct fb_noise_proc key = { .pid = pid };
	return bsearch(&key, s->procs, s->nprocs, sizeof(key), cmp_pid);
}

/* Keep the FB_NOISE_TOP busiest, descending. */
static void rank(struct fb_noise_window *w, const struct fb_noise_proc *p, double cpu)
{
	size_t at = w->ntop;
	while (at > 0 && w->top_cpu[at - 1] < cpu)
		at--;
	if (at >= FB_NOISE_TOP)
		return;
	size_t last = w->ntop < FB_NOISE_TOP ? w->ntop : FB_NOISE_TOP - 1;
	memmove(&w->top[at + 1], &w->top[at], (last - at) * sizeof(w->top[0]));
	memmove(&w->top_cpu[at + 1], &w->top_cpu[at], (last - at) * sizeof(w->top_cpu[0]));
	w->top[at] = *p;
	w->top_cpu[at] = cpu;
	if (w->ntop < FB_NOISE_TOP)
		w->ntop++;
}

void fb_noise_between(const struct fb_noise_snap *a, const struct fb_noise_snap *b, struct fb_noise_window *w)
{
	double tck = (double)sysconf(_SC_CLK_TCK);
	memset(w, 0, sizeof(*w));
	w->seconds = (double)(b->t_ns - a->t_ns) / 1e9;
	w->others_cpu = w->steal = NAN;
	if (w->seconds < FB_NOISE_MIN_WINDOW_S)
		return;
	double busy = (double)(b->busy - a->busy) / tck, self = (double)(b->self_cpu_ns - a->self_cpu_ns) / 1e9;
	w->others_cpu = busy > self ? (busy - self) / w->seconds : 0.0;
	uint64_t total = b->total - a->total;
	w->steal = total ? (double)(b->steal - a->steal) / (double)total : 0.0;
	for (size_t i = 0; i < b->nprocs; i++) {
		const struct fb_noise_proc *before = find_proc(a, b->procs[i].pid);
		struct fb_noise_proc p = b->procs[i];
		p.ticks -= before && before->ticks <= p.ticks ? before->ticks : 0;
		double cpu = (double)p.ticks / tck / w->seconds;
		if (cpu >= FB_NOISE_LISTED_CPU)
			rank(w, &p, cpu);
	}
}

void fb_noise_check_window(const struct fb_noise_window *w, const char *cpus_text, fb_noise_warn_fn warn, void *arg)
{
	char msg[768];
	if (isfinite(w->others_cpu) && w->others_cpu > FB_NOISE_OTHERS_CPU) {
		snprintf(msg, sizeof(msg), "other processes took %.0f %% of a CPU on CPUs %s during the run (%.1f s)",
			 100.0 * w->others_cpu, cpus_text, w->seconds);
		for (size_t i = 0; i < w->ntop; i++)
			append(msg, sizeof(msg), "%s%s (pid %d) %.0f %%", i ? ", " : ": ", w->top[i].comm, w->top[i].pid,
			       100.0 * w->top_cpu[i]);
		append(msg, sizeof(msg), "; latencies include their preemption");
		warn(arg, msg);
	}
	if (isfinite(w->steal) && w->steal > FB_NOISE_STEAL) {
		snprintf(msg, sizeof(msg), "the hypervisor took %.1f %% of CPUs %s during the run (steal time)",
			 100.0 * w->steal, cpus_text);
		warn(arg, msg);
	}
}

json_t *fb_noise_window_json(const struct fb_noise_window *w)
{
	json_t *top = json_array();
	for (size_t i = 0; i < w->ntop; i++)
		json_array_append_new(top, json_pack("{s:i, s:s, s:f}", "pid", w->top[i].pid, "comm", w->top[i].comm,
						     "cpu", w->top_cpu[i]));
	json_t *o = json_pack("{s:f, s:o}", "window_s", w->seconds, "busy_processes", top);
	json_object_set_new(o, "others_cpu", isfinite(w->others_cpu) ? json_real(w->others_cpu) : json_null());
	json_object_set_new(o, "steal", isfinite(w->steal) ? json_real(w->steal) : json_null());
	if (!isfinite(w->others_cpu))
		json_object_set_new(o, "window_note", json_string("shorter than 0.1 s: not judged (/proc/stat counts 10 ms ticks)"));
	return o;
}

/* ---- limits ---- */

static void fmt_ns(double ns, char *buf, size_t len)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else
		snprintf(buf, len, "%.2f ms", ns / 1e6);
}

static void drift(const char *what, double a, double b, fb_noise_warn_fn warn, void *arg)
{
	if (!isfinite(a) || !isfinite(b) || a <= 0 || b <= 0)
		return;
	double ratio = a > b ? a / b : b / a;
	if (ratio <= 1.0 + FB_NOISE_DRIFT)
		return;
	char x[32], y[32], w[256];
	fmt_ns(a, x, sizeof(x));
	fmt_ns(b, y, sizeof(y));
	/* said as it is judged: the larger over the smaller, either way */
	snprintf(w, sizeof(w), "the %s moved from %s before the run to %s after (%s by %.2fx, more than %.2fx "
		 "either way): the vCPUs moved or something else ran; ratios to it are suspect", what, x, y,
		 b > a ? "up" : "down", ratio, 1.0 + FB_NOISE_DRIFT);
	warn(arg, w);
}

void fb_noise_check_limits(const struct fb_limits *before, const struct fb_limits *after, fb_noise_warn_fn warn,
			   void *arg)
{
	drift("cache-line round trip", before->cacheline_rtt_ns, after->cacheline_rtt_ns, warn, arg);
	drift("futex wake-to-run", before->futex_wake_ns, after->futex_wake_ns, warn, arg);
}

/* ---- the spread of repetitions ---- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* A p50 or a plain metric: what a spread across repetitions should not touch. */
static bool steady_metric(const char *k, const char *unit)
{
	static const char *const skip[] = { "_p90", "_p99", "_p999", "_max", "_mean", "_count", NULL };
	if (!strncmp(k, "perf.", 5) || strstr(k, "_ci_") || strstr(k, "_vs_"))
		return false;
	for (size_t i = 0; skip[i]; i++)
		if (ends_with(k, skip[i]) && !strcmp(unit, !strcmp(skip[i], "_count") ? "samples" : "ns"))
			return false;
	return true;
}

/* The chi-square quantile at 0.975 for df degrees of freedom (Wilson-Hilferty: within 1 %). */
static double chi2_975(double df)
{
	double a = 2.0 / (9.0 * df), c = 1.0 - a + 1.959964 * sqrt(a);
	return df * c * c * c;
}

/* A CV of reps values at its 95 % lower bound: sd * sqrt((n-1) / chi2(0.975, n-1)).
 * A CV from 3 values is itself uncertain by a factor of 2: only what remains
 * above the threshold after that is the machine's. */
static double cv_lower(double cv, long long reps)
{
	if (reps < 2)
		return NAN;
	return cv * sqrt((double)(reps - 1) / chi2_975((double)(reps - 1)));
}

struct spread {
	size_t over;
	double worst, worst_lower;
	char which[256];
};

static void spread_check(struct spread *sp, const char *k, double cv, long long reps, const char *sec, json_t *m)
{
	double lower = cv_lower(cv, reps);
	if (!(lower > FB_NOISE_CV))
		return;
	sp->over++;
	if (cv > sp->worst) {
		sp->worst = cv;
		sp->worst_lower = lower;
		snprintf(sp->which, sizeof(sp->which), "%s%s%s %s", sec && *sec ? sec : "", sec && *sec ? " " : "", k,
			 json_string_value(json_object_get(m, "path")));
	}
}

void fb_noise_check_cv(json_t *entries, const char *point_key, fb_noise_warn_fn warn, void *arg)
{
	size_t i;
	json_t *e;
	struct spread sp = { 0, 0, 0, "" };
	long long reps = 0;
	json_array_foreach(entries, i, e) {
		const char *agg = json_string_value(json_object_get(e, "aggregate_name"));
		if (!agg || strcmp(agg, "cv"))
			continue;
		json_t *m = json_object_get(e, "fencebench"), *u;
		const char *k, *sec = json_string_value(json_object_get(m, "section"));
		reps = json_integer_value(json_object_get(e, "repetitions"));
		if (!sec || !*sec)   /* the time per iteration: the main section's (the others repeat it) */
			for (size_t t = 0; t < 2; t++) {
				const char *key = t ? "cpu_time" : "real_time";
				json_t *v = json_object_get(e, key);
				if (json_is_number(v))
					spread_check(&sp, key, json_number_value(v), reps, sec, m);
			}
		json_object_foreach(json_object_get(m, "units"), k, u) {
			if (steady_metric(k, json_string_value(u) ? json_string_value(u) : "") &&
			    json_is_number(json_object_get(e, k)))
				spread_check(&sp, k, json_number_value(json_object_get(e, k)), reps, sec, m);
		}
	}
	if (!sp.over)
		return;
	char w[640];
	snprintf(w, sizeof(w), "%s%s%scoefficient of variation above %.0f %% across %lld repetitions in %zu metric%s "
		 "(worst: %s, %.0f %%; above %.0f %% even at its 95 %% lower bound, %.0f %%): the runs disagree more "
		 "than their intervals within a run say",
		 *point_key ? "at " : "", point_key, *point_key ? ": " : "", 100.0 * FB_NOISE_CV, reps, sp.over,
		 sp.over == 1 ? "" : "s", sp.which, 100.0 * sp.worst, 100.0 * FB_NOISE_CV, 100.0 * sp.worst_lower);
	warn(arg, w);
}
