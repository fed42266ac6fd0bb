/* src/fb_doctor.c — `fencebench doctor`: is this machine quiet enough to benchmark on, and what to change.
 *
 * As pyperf's `system show`: one line per check (ok, or "!!" with what to
 * change, or "--" where there is nothing to read), from the same checks a run
 * makes (src/fb_noise.h), over a one-second window: the frequency governor,
 * turbo, SMT siblings among the CPUs a run would use (--cpus), isolated and
 * nohz_full CPUs, the load average, other processes' CPU time and the steal
 * time, the machine limits measured twice a second apart, and perf's access.
 * It only reads /proc and /sys and measures; it changes nothing, and prints
 * the commands that would (for root).  Exit status 0 (2: bad --cpus).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "src/fb_app.h"
#include "src/fb_context.h"
#include "src/fb_cpus.h"
#include "src/fb_noise.h"
#include "src/fb_util.h"

struct doctor {
	const struct fb_cpus *cpus;
	unsigned issues, checks;
};

/* One check: "[ok]", "[!!]" (an issue: then the advice) or "[--]" (nothing to read). */
static void line(struct doctor *d, const char *mark, const char *what, const char *state, const char *advice)
{
	d->checks++;
	d->issues += !strcmp(mark, "!!");
	printf("[%s] %-16s %s\n", mark, what, state);
	if (advice && *advice)
		printf("     %-16s -> %s\n", "", advice);
}

static void governor(struct doctor *d, const struct fb_noise_machine *m)
{
	char state[256], advice[256];
	if (m->governor_ok < 0) {
		snprintf(state, sizeof(state), "no cpufreq on CPUs %s (a VM: the host sets the clock)", d->cpus->text);
		line(d, "--", "governor", state, NULL);
		return;
	}
	snprintf(state, sizeof(state), "%s", m->governor);
	snprintf(advice, sizeof(advice), "sudo cpupower -c %s frequency-set -g performance", d->cpus->text);
	line(d, m->governor_ok ? "ok" : "!!", "governor", state, m->governor_ok ? NULL : advice);
}

static void turbo(struct doctor *d, const struct fb_noise_machine *m)
{
	if (m->turbo < 0)
		line(d, "--", "turbo", "not exposed (intel_pstate/no_turbo, cpufreq/boost)", NULL);
	else if (m->turbo)
		line(d, "!!", "turbo", "on: the clock follows load and temperature",
		     "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo (or 0 > cpufreq/boost)");
	else
		line(d, "ok", "turbo", "off", NULL);
}

static void topology(struct doctor *d, const struct fb_noise_machine *m)
{
	char state[512];
	if (m->smt[0]) {
		snprintf(state, sizeof(state), "CPUs %s of %s are siblings of one core", m->smt, d->cpus->text);
		line(d, "!!", "SMT", state, "give --cpus one CPU per core (thread_siblings_list in sysfs)");
	} else {
		snprintf(state, sizeof(state), "no two of CPUs %s share a core", d->cpus->text);
		line(d, "ok", "SMT", state, NULL);
	}
	snprintf(state, sizeof(state), "isolated: %s; nohz_full: %s", m->isolated[0] ? m->isolated : "none",
		 m->nohz_full[0] ? m->nohz_full : "none");
	if (m->isolated[0])
		line(d, "ok", "isolation", state, NULL);
	else
		line(d, "--", "isolation", state,
		     m->online > 1 ? "boot with isolcpus=1-N nohz_full=1-N rcu_nocbs=1-N and run with --cpus 1-N "
				     "(keep CPU 0 for the rest)"
				   : "one CPU online: nothing to isolate");
}

static void load(struct doctor *d, const struct fb_noise_machine *m)
{
	char state[128];
	snprintf(state, sizeof(state), "%.2f %.2f %.2f (1, 5, 15 min) on %ld CPUs", m->load[0], m->load[1], m->load[2],
		 m->online);
	bool busy = m->online > 0 && m->load[0] > (double)m->online;
	line(d, busy ? "!!" : "ok", "load average", state,
	     busy ? "wait until it falls below the CPUs, or stop what runs (below)" : NULL);
}

static void window(struct doctor *d, const struct fb_noise_window *w)
{
	char state[768];
	snprintf(state, sizeof(state), "%.0f %% of a CPU on CPUs %s over %.1f s", 100.0 * w->others_cpu, d->cpus->text,
		 w->seconds);
	for (size_t i = 0; i < w->ntop; i++) {
		size_t used = strlen(state);
		snprintf(state + used, sizeof(state) - used, "%s%s (pid %d) %.0f %%", i ? ", " : ": ", w->top[i].comm,
			 w->top[i].pid, 100.0 * w->top_cpu[i]);
	}
	bool busy = w->others_cpu > FB_NOISE_OTHERS_CPU;
	line(d, busy ? "!!" : "ok", "other processes", state,
	     busy ? "stop them, or give the run CPUs they do not use (--cpus; taskset them elsewhere)" : NULL);
	snprintf(state, sizeof(state), "%.1f %% of CPUs %s taken by the hypervisor", 100.0 * w->steal, d->cpus->text);
	bool stolen = w->steal > FB_NOISE_STEAL;
	line(d, stolen ? "!!" : "ok", "steal", state,
	     stolen ? "the host is oversubscribed: ask for dedicated vCPUs, or run when it is quieter" : NULL);
}

static void limits(struct doctor *d, const struct fb_limits *a, const struct fb_limits *b)
{
	char state[256];
	double r1 = b->cacheline_rtt_ns / a->cacheline_rtt_ns, r2 = b->futex_wake_ns / a->futex_wake_ns;
	snprintf(state, sizeof(state), "cache-line round trip %.0f -> %.0f ns, futex wake-to-run %.1f -> %.1f us, "
		 "1 s apart", a->cacheline_rtt_ns, b->cacheline_rtt_ns, a->futex_wake_ns / 1e3, b->futex_wake_ns / 1e3);
	if (!isfinite(r1) && !isfinite(r2)) {
		line(d, "--", "limits", a->note[0] ? a->note : "not measurable", NULL);
		return;
	}
	bool moved = (isfinite(r1) && fmax(r1, 1 / r1) > 1 + FB_NOISE_DRIFT) ||
		     (isfinite(r2) && fmax(r2, 1 / r2) > 1 + FB_NOISE_DRIFT);
	line(d, moved ? "!!" : "ok", "limits", state,
	     moved ? "they moved by more than 50 %: the vCPUs migrate or share a core; pin the VM's vCPUs" : NULL);
}

static void perf(struct doctor *d, const struct fb_noise_machine *m)
{
	char state[160];
	if (m->perf_paranoid == -99) {
		line(d, "--", "perf", "kernel.perf_event_paranoid unreadable", NULL);
		return;
	}
	snprintf(state, sizeof(state), "kernel.perf_event_paranoid = %d%s", m->perf_paranoid,
		 m->perf_paranoid > 1 ? ": user-space counts only (context switches read 0)" : "");
	line(d, m->perf_paranoid > 1 ? "--" : "ok", "perf", state,
	     m->perf_paranoid > 1 ? "sudo sysctl kernel.perf_event_paranoid=1 (kernel-side events too)" : NULL);
}

static void header(const struct fb_cpus *cpus)
{
	json_t *c = fb_context_machine();
	printf("fencebench doctor: is this machine quiet enough to benchmark on? (reads only; changes nothing)\n");
	printf("machine: %s, %lld x %s, %s\n", json_string_value(json_object_get(c, "host_name")),
	       json_integer_value(json_object_get(c, "num_cpus")), json_string_value(json_object_get(c, "cpu_model")),
	       json_string_value(json_object_get(c, "kernel")));
	printf("a run would use CPUs %s (--cpus)\n\n", cpus->text);
	json_decref(c);
}

int fb_doctor_main(const struct fb_opts *o)
{
	struct fb_cpus cpus;
	char err[512];
	if (fb_cpus_parse(o->cpus, &cpus, err, sizeof(err))) {
		fprintf(stderr, "fencebench: %s\n", err);
		return FB_EXIT_USAGE;
	}
	struct doctor d = { .cpus = &cpus };
	struct fb_noise_machine m;
	struct fb_noise_snap a, b;
	struct fb_noise_window w;
	struct fb_limits la, lb;
	header(&cpus);
	fb_noise_machine("", cpus.ids, cpus.n, &m);
	fb_noise_snapshot(cpus.ids, cpus.n, &a);
	fb_limits_measure(cpus.ids, cpus.n, &la);
	nanosleep(&(struct timespec){ 1, 0 }, NULL);
	fb_limits_measure(cpus.ids, cpus.n, &lb);
	fb_noise_snapshot(cpus.ids, cpus.n, &b);
	fb_noise_between(&a, &b, &w);
	governor(&d, &m);
	turbo(&d, &m);
	topology(&d, &m);
	load(&d, &m);
	window(&d, &w);
	limits(&d, &la, &lb);
	perf(&d, &m);
	printf("\n%u of %u checks say the machine is not quiet%s\n", d.issues, d.checks,
	       d.issues ? ": runs now would warn about them too (***WARNING***)" : "");
	fb_noise_snap_free(&a);
	fb_noise_snap_free(&b);
	fb_cpus_free(&cpus);
	return FB_EXIT_OK;
}
