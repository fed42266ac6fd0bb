/* benchmarks/calibrate.c — `fencebench calibrate` (calibrate.h): the
 * command, the loop over the operations, the derivation of the adapter's
 * latencies and the profile writer, shared by the probes of each API
 * (calibrate_cuda.c, benchmarks/vulkan/probe.c).
 *
 * Why here: calibrate knows GPU vendors' APIs and writes this project's
 * profile format, so it is benchmark-side code, registered with the
 * harness as a command of the program (fb_program_commands in main.c); the
 * harness (src/) stays generic and the model never sees CUDA or Vulkan.
 *
 * Each op the probe has an analog of: `rounds` rounds after a tenth as many
 * unrecorded, p50 reported (and the p50 of its GPU-timestamped part and of
 * the CPU call inside it, where the probe has them).  The adapter's
 * latencies are then derived by the rules in bm_cal_derive (written into
 * the profile's "derivation"); the kernel-mode costs are not measured by
 * either probe and are written as the shipped estimates, said so in
 * "origin".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "benchmarks/calibrate.h"
#include "src/fb_file.h"
#include "benchmarks/profile.h"

/* ---- the loop ---- */

static int bm_cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* The p50 of the n samples (sorted in place); false when any is BM_CAL_NONE. */
static bool bm_cal_p50(uint64_t *s, uint64_t n, double *p50)
{
	for (uint64_t i = 0; i < n; i++)
		if (s[i] == BM_CAL_NONE)
			return false;
	qsort(s, n, sizeof(*s), bm_cmp_u64);
	*p50 = (double)s[n / 2];
	return true;
}

/* p50s of op over o->rounds rounds into r. */
static int bm_cal_op(const struct bm_probe *p, void *self, enum bm_op op, uint64_t rounds, struct bm_cal_result *r,
		     char *err, size_t errlen)
{
	uint64_t *ns = calloc(3 * rounds, sizeof(*ns)), *gpu = ns + rounds, *call = gpu + rounds;
	if (!ns)
		return -ENOMEM;
	struct bm_cal_sample s;
	int rc = 0;
	for (uint64_t i = 0; !rc && i < rounds / 10; i++)
		rc = p->round(self, op, &s, err, errlen);
	for (uint64_t i = 0; !rc && i < rounds; i++) {
		rc = p->round(self, op, &s, err, errlen);
		ns[i] = s.ns;
		gpu[i] = s.gpu_ns;
		call[i] = s.call_ns;
	}
	if (!rc) {
		r->has[op] = bm_cal_p50(ns, rounds, &r->m[op]);
		r->has_gpu[op] = bm_cal_p50(gpu, rounds, &r->gpu[op]);
		r->has_call[op] = bm_cal_p50(call, rounds, &r->call[op]);
	}
	free(ns);
	return rc;
}

int bm_cal_measure(const struct bm_probe *p, void *self, const struct bm_cal_opts *o, struct bm_cal_result *r,
		   char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->rounds = o->rounds;
	for (int op = 0; op < BM_OPS; op++) {
		if ((r->why_not[op] = p->no_analog(self, op)))
			continue;
		int rc = bm_cal_op(p, self, op, o->rounds, r, err, errlen);
		if (rc)
			return rc;
		if (r->has_gpu[op])
			fprintf(stderr, "calibrate: %-16s p50 %.2f us (GPU timestamps: %.2f us)\n", bm_op_key(op),
				r->m[op] / 1e3, r->gpu[op] / 1e3);
		else
			fprintf(stderr, "calibrate: %-16s p50 %.2f us\n", bm_op_key(op), r->m[op] / 1e3);
	}
	return 0;
}

/* ---- the derivation ---- */

#define BM_CAL_RULE_MAX 8
struct bm_cal_rules {
	char key[BM_CAL_RULE_MAX][64], text[BM_CAL_RULE_MAX][320];
	size_t n;
};

__attribute__((format(printf, 3, 4))) static void bm_cal_rule(struct bm_cal_rules *d, const char *key,
							       const char *fmt, ...)
{
	if (d->n == BM_CAL_RULE_MAX)
		return;
	snprintf(d->key[d->n], sizeof(d->key[0]), "%s", key);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->text[d->n], sizeof(d->text[0]), fmt, ap);
	va_end(ap);
	d->n++;
}

static uint64_t bm_pos(double x)
{
	return x > 0 ? (uint64_t)x : 0;
}

/* doorbell_ns, cmd_ns, visible_sys_ns from write_seen - enqueue; cmd_ns by
 * the GPU's timestamps where the probe has them. */
static void bm_cal_derive_write(const struct bm_cal_result *r, struct hw_timing *t, struct bm_cal_rules *d)
{
	const char *key = "doorbell_ns, cmd_ns, visible_sys_ns";
	if (!r->has[BM_OP_WRITE_SEEN] || !r->has[BM_OP_ENQUEUE]) {
		bm_cal_rule(d, key, "not derived: write_seen or enqueue not measured (0: the model's own speed)");
		return;
	}
	double gpu = r->m[BM_OP_WRITE_SEEN] - r->m[BM_OP_ENQUEUE];
	if (gpu < 0)
		gpu = 0;
	if (r->has_gpu[BM_OP_WRITE_SEEN]) {
		double cmd = r->gpu[BM_OP_WRITE_SEEN] < gpu ? r->gpu[BM_OP_WRITE_SEEN] : gpu;
		t->cmd_ns = bm_pos(cmd);
		t->doorbell_ns = bm_pos((gpu - cmd) * 5.0 / 8.0);
		t->visible_sys_ns = bm_pos(gpu - cmd - (double)t->doorbell_ns);
		bm_cal_rule(d, key, "write_seen - enqueue; cmd_ns = the write's GPU timestamps (p50), the rest split "
			    "5/8 doorbell, 3/8 visibility (the probe sees only the sum)");
		return;
	}
	t->doorbell_ns = (uint64_t)(gpu * 0.5);
	t->cmd_ns = (uint64_t)(gpu * 0.2);
	t->visible_sys_ns = (uint64_t)gpu - t->doorbell_ns - t->cmd_ns;
	bm_cal_rule(d, key, "write_seen - enqueue, split 0.5 / 0.2 / 0.3 (the probe sees only the sum)");
}

/* wait_poll_sys_ns from cpu_gpu_cpu less the CPU signal's way. */
static void bm_cal_derive_poll(const struct bm_probe *p, const struct bm_cal_result *r, struct hw_timing *t,
			       struct bm_cal_rules *d)
{
	if (!r->has[BM_OP_CPU_GPU_CPU]) {
		bm_cal_rule(d, "wait_poll_sys_ns", "not derived: cpu_gpu_cpu not measured");
		return;
	}
	bool call = p->cpu_signal && r->has_call[BM_OP_CPU_GPU_CPU];
	double way = call ? r->call[BM_OP_CPU_GPU_CPU] : 300.0;
	double half = r->m[BM_OP_CPU_GPU_CPU] - (double)t->cmd_ns - (double)t->visible_sys_ns - way;
	t->wait_poll_sys_ns = bm_pos(2.0 * half);
	if (call)
		bm_cal_rule(d, "wait_poll_sys_ns", "2 x (cpu_gpu_cpu - cmd_ns - visible_sys_ns - the %s call's p50, "
			    "%.2f us)", p->cpu_signal, way / 1e3);
	else
		bm_cal_rule(d, "wait_poll_sys_ns", "2 x (cpu_gpu_cpu - cmd_ns - visible_sys_ns - 0.3 us for the CPU "
			    "write's way)");
}

/* visible_local_ns, wait_poll_local_ns from gpu_wait_sys - gpu_wait_local,
 * or the system-memory values where the API does not place the fence. */
static void bm_cal_derive_local(const struct bm_probe *p, const struct bm_cal_result *r, struct hw_timing *t,
				struct bm_cal_rules *d)
{
	const char *key = "visible_local_ns, wait_poll_local_ns";
	if (!r->has[BM_OP_GPU_WAIT_SYS] || !r->has[BM_OP_GPU_WAIT_LOCAL]) {
		t->visible_local_ns = t->visible_sys_ns;
		t->wait_poll_local_ns = t->wait_poll_sys_ns;
		bm_cal_rule(d, key, "not derived: gpu_wait_local not measured (%s); set to the system-memory values, an "
			    "assumption (no difference), not a measurement", r->why_not[BM_OP_GPU_WAIT_LOCAL]
			    ? r->why_not[BM_OP_GPU_WAIT_LOCAL] : "no analog");
		return;
	}
	double delta = r->m[BM_OP_GPU_WAIT_SYS] - r->m[BM_OP_GPU_WAIT_LOCAL];
	if (delta < 0)
		delta = 0;
	t->visible_local_ns = bm_pos((double)t->visible_sys_ns - delta / 2.0);
	t->wait_poll_local_ns = bm_pos((double)t->wait_poll_sys_ns - delta);
	bm_cal_rule(d, key, "gpu_wait_sys - gpu_wait_local = d: visible_sys_ns - d/2, wait_poll_sys_ns - d");
}

/* The adapter's latencies from the probe's p50s (ns), and the rules
 * written into "derivation".  The probe sees sums; how a sum splits
 * between its parts is not observable here, so the splits are fixed
 * fractions, or the GPU's timestamps where the probe has them. */
static void bm_cal_derive(const struct bm_probe *p, const struct bm_cal_result *r, struct hw_timing *t,
			  struct bm_cal_rules *d)
{
	memset(t, 0, sizeof(*t));
	bm_cal_derive_write(r, t, d);
	if (r->has[BM_OP_EVENT_SPIN] && r->has[BM_OP_WRITE_SEEN]) {
		double flush = r->m[BM_OP_EVENT_SPIN] - r->m[BM_OP_WRITE_SEEN];
		t->signal_ns = flush > 0 ? (uint64_t)(flush * 2.0 / 3.0) : 0;
		bm_cal_rule(d, "signal_ns", "2/3 of event_spin - write_seen (a signal's flush beyond a plain write)");
	} else {
		bm_cal_rule(d, "signal_ns", "not derived: event_spin or write_seen not measured");
	}
	bm_cal_derive_poll(p, r, t, d);
	bm_cal_derive_local(p, r, t, d);
	t->irq_ns = 1000;
	bm_cal_rule(d, "irq_ns", "1 us, an estimate: event_block - event_spin holds the host's interrupt handling "
		    "and wake-up too");
	bm_cal_rule(d, "kernel", "not measured (the probe cannot part a submit's kernel crossing from the driver's "
		    "user-mode work): Mesa vkoverhead's ~20 us, split 1.5 / 12.5 / 6 us");
}

/* ---- the profile ---- */

/* The date (UTC), first in the origin after the API. */
static void bm_cal_date(json_t *o)
{
	char buf[32];
	time_t now = time(NULL);
	struct tm tm;
	if (gmtime_r(&now, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d", &tm))
		json_object_set_new(o, "date", json_string(buf));
}

/* The host: CPU, kernel. */
static void bm_cal_host(json_t *o)
{
	char buf[512], cpu[256] = "unknown", line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(cpu, sizeof(cpu), "%s", strchr(line, ':') + 2);
			cpu[strcspn(cpu, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	snprintf(buf, sizeof(buf), "%s, %ld CPUs", cpu, sysconf(_SC_NPROCESSORS_ONLN));
	json_object_set_new(o, "host", json_string(buf));
	struct utsname u;
	if (!uname(&u)) {
		snprintf(buf, sizeof(buf), "%s %s (%s)", u.sysname, u.release, u.nodename);
		json_object_set_new(o, "kernel_os", json_string(buf));
	}
}

/* "not_measured": each op without an analog, and why. */
static void bm_cal_not_measured(const struct bm_probe *p, const struct bm_cal_result *r, json_t *o)
{
	char buf[1024];
	size_t used = 0;
	for (int op = 0; op < BM_OPS; op++)
		if (r->why_not[op] && !(op == BM_OP_KM_SUBMIT && p->km_submit_estimate_ns > 0) && used < sizeof(buf))
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%.*s (%s)", used ? "; " : "",
						 (int)strlen(bm_op_key(op)) - 3, bm_op_key(op), r->why_not[op]);
	if (used)
		json_object_set_new(o, "not_measured", json_string(buf));
}

static json_t *bm_cal_origin(const struct bm_probe *p, void *self, const struct bm_cal_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "api", json_string(p->title));
	bm_cal_date(o);
	p->describe(self, r, o);
	bm_cal_host(o);
	json_object_set_new(o, "kernel", json_string("kernel-mode submission not measured (the probe cannot part "
						     "it from the driver's user-mode work): Mesa vkoverhead's ~20 us "
						     "(radv 19.5 us, Intel DG2 28 us)"));
	bm_cal_not_measured(p, r, o);
	return o;
}

/* "measured" and, where the probe has GPU timestamps, "gpu_side". */
static void bm_cal_measured(const struct bm_probe *p, const struct bm_cal_result *r, json_t *root)
{
	json_t *me = json_object(), *g = json_object();
	for (int op = 0; op < BM_OPS; op++) {
		if (r->has[op])
			json_object_set_new(me, bm_op_key(op), json_real(r->m[op]));
		if (r->has[op] && r->has_gpu[op] && r->gpu[op] > 0)
			json_object_set_new(g, bm_op_key(op), json_real(r->gpu[op]));
	}
	if (!r->has[BM_OP_KM_SUBMIT] && p->km_submit_estimate_ns > 0)
		json_object_set_new(me, bm_op_key(BM_OP_KM_SUBMIT), json_real(p->km_submit_estimate_ns));
	json_object_set_new(root, "measured", me);
	if (json_object_size(g))
		json_object_set_new(root, "gpu_side", g);
	else
		json_decref(g);
}

json_t *bm_cal_profile(const struct bm_probe *p, void *self, const char *name, const struct bm_cal_result *r)
{
	struct hw_timing t;
	struct bm_cal_rules rules = { .n = 0 };
	bm_cal_derive(p, r, &t, &rules);
	json_t *root = json_object(), *ad = json_object(), *k = json_object(), *d = json_object();
	json_object_set_new(root, "name", json_string(name));
	json_object_set_new(root, "origin", bm_cal_origin(p, self, r));
	const struct { const char *key; uint64_t v; } f[] = {
		{ "cmd_ns", t.cmd_ns }, { "signal_ns", t.signal_ns }, { "visible_sys_ns", t.visible_sys_ns },
		{ "visible_local_ns", t.visible_local_ns }, { "wait_poll_sys_ns", t.wait_poll_sys_ns },
		{ "wait_poll_local_ns", t.wait_poll_local_ns }, { "doorbell_ns", t.doorbell_ns }, { "irq_ns", t.irq_ns },
	};
	bool clamped = false;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		clamped |= f[i].v > HW_TIMING_MAX_NS;   /* the loader's range: a loaded CPU can derive more */
		json_object_set_new(ad, f[i].key, json_integer((json_int_t)(f[i].v > HW_TIMING_MAX_NS ? HW_TIMING_MAX_NS
													: f[i].v)));
	}
	if (clamped)
		bm_cal_rule(&rules, "limit", "a derived latency above the model's 10 ms for one latency was set to 10 ms");
	json_object_set_new(root, "adapter", ad);
	json_object_set_new(k, "km_call_ns", json_integer(1500));
	json_object_set_new(k, "km_validate_ns", json_integer(12500));
	json_object_set_new(k, "km_sched_ns", json_integer(6000));
	json_object_set_new(root, "kernel", k);
	bm_cal_measured(p, r, root);
	for (size_t i = 0; i < rules.n; i++)
		json_object_set_new(d, rules.key[i], json_string(rules.text[i]));
	json_object_set_new(root, "derivation", d);
	return root;
}

/* ---- the command ---- */

#define BM_CAL_USAGE "fencebench calibrate [--api cuda|vulkan] [--allow-cpu] [--device N] [--rounds N] " \
	"[--out FILE] [--name NAME]"

static int bm_cal_usage(const char *msg)
{
	fprintf(stderr, "fencebench: calibrate: %s (usage: " BM_CAL_USAGE ")\n", msg);
	return 2;
}

static int bm_cal_args(int argc, char **argv, struct bm_cal_opts *o)
{
	*o = (struct bm_cal_opts){ .name = "calibrated", .rounds = 2000, .device = -1 };
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		if (!strcmp(argv[i], "--allow-cpu")) {
			o->allow_cpu = true;
			continue;
		}
		if (!strcmp(argv[i], "--out") && v)
			o->out = v;
		else if (!strcmp(argv[i], "--name") && v)
			o->name = v;
		else if (!strcmp(argv[i], "--api") && v) {
			if (strcmp(v, "cuda") && strcmp(v, "vulkan"))
				return bm_cal_usage("--api takes cuda or vulkan");
			o->api = v;
		} else if (!strcmp(argv[i], "--rounds") && v) {
			o->rounds = strtoull(v, &end, 10);
			if (*end || o->rounds < 10 || o->rounds > 10000000)
				return bm_cal_usage("--rounds takes a whole number from 10 to 10000000");
		} else if (!strcmp(argv[i], "--device") && v) {
			o->device = (int)strtol(v, &end, 10);
			if (*end || !*v || o->device < 0)
				return bm_cal_usage("--device takes a device number");
		} else
			return bm_cal_usage("unknown or incomplete option");
		i++;
	}
	size_t n = strlen(o->name);
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_.-", o->name[i]))
			n = 0;
	if (!n || n >= RT_PROFILE_NAME_MAX || !strcmp(o->name, "ideal"))
		return bm_cal_usage("--name must be [a-z0-9_.-], 1..63 characters, not ideal");
	return 0;
}

/* The probe of o->api, opened; or, without --api, the first that opens.
 * 0, or -errno with one line in err naming each API's failure. */
static int bm_cal_open(const struct bm_cal_opts *o, const struct bm_probe **pp, void **self, char *err, size_t errlen)
{
	static const struct bm_probe *const all[] = { &bm_probe_cuda, &bm_probe_vulkan };
	char one[512];
	size_t used = 0;
	int rc = -ENODEV;
	err[0] = '\0';
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (o->api && strcmp(o->api, all[i]->api))
			continue;
		*pp = all[i];
		*self = NULL;
		rc = all[i]->open(o, self, one, sizeof(one));
		if (!rc)
			return 0;
		char none[1];
		all[i]->close(*self, none, sizeof(none));
		*self = NULL;
		if (used < errlen)
			used += (size_t)snprintf(err + used, errlen - used, "%s%s%s%s%s", used ? "; " : "",
						 o->api ? "" : all[i]->title, o->api ? "" : ": ", one,
						 rc == -EPERM ? " (--allow-cpu measures it anyway)" : "");
	}
	return rc;
}

/* Close the probe: validation messages make the measurement a failure (exit 1). */
static int bm_cal_close(const struct bm_probe *p, void *self)
{
	char first[512] = "";
	uint64_t n = p->close(self, first, sizeof(first));
	if (!n)
		return 0;
	fprintf(stderr, "fencebench: calibrate: %s reported %llu validation message%s, the first: %s\n", p->title,
		(unsigned long long)n, n == 1 ? "" : "s", first);
	return 1;
}

/* The profile to --out (written aside and renamed over the file there, so a
 * failed write leaves that file as it was: src/fb_file.h) or to stdout (a
 * full disk or a closed pipe is an error).  0, or 1 with one line. */
static int bm_cal_write(const struct fb_out *out, json_t *root)
{
	char err[512] = "";
	char *text = json_dumps(root, JSON_INDENT(2));
	size_t n = text ? strlen(text) : 0;
	char *line = text ? realloc(text, n + 2) : NULL;
	int rc = -ENOMEM;
	if (line) {
		line[n] = '\n';
		line[n + 1] = '\0';
		rc = out ? fb_out_write(out, line, n + 1, err, sizeof(err)) : fb_file_write_stdout(line, err, sizeof(err));
	} else {
		free(text);
		snprintf(err, sizeof(err), "the profile: %s", strerror(ENOMEM));
	}
	free(line);
	if (rc) {
		fprintf(stderr, "fencebench: calibrate: %s\n", err);
		return 1;
	}
	return 0;
}

int bm_calibrate_main(int argc, char **argv)
{
	struct bm_cal_opts o;
	int rc = bm_cal_args(argc, argv, &o);
	if (rc)
		return rc;
	const struct bm_probe *p = NULL;
	void *self = NULL;
	char err[1536];
	struct fb_out out;
	if (o.out && fb_out_open(&out, o.out, err, sizeof(err))) {   /* before any measurement */
		fprintf(stderr, "fencebench: calibrate: %s\n", err);
		return 2;
	}
	rc = bm_cal_open(&o, &p, &self, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "fencebench: calibrate: %s%s\n", o.api ? "" : "no GPU here: ", err);
		if (o.out)
			fb_out_free(&out);
		return rc == -ENOENT || rc == -ENODEV || rc == -EPERM ? 2 : 1;
	}
	static struct bm_cal_result r;
	rc = bm_cal_measure(p, self, &o, &r, err, sizeof(err));
	if (rc)
		fprintf(stderr, "fencebench: calibrate: %s\n", err);
	json_t *root = rc ? NULL : bm_cal_profile(p, self, o.name, &r);
	int status = bm_cal_close(p, self) || rc ? 1 : bm_cal_write(o.out ? &out : NULL, root);
	json_decref(root);
	if (o.out)
		fb_out_free(&out);
	return status;
}

const struct fb_command bm_commands[] = {
	{ .name = "calibrate", .main = bm_calibrate_main,
	  .usage = "calibrate [--api cuda|vulkan]     measure this machine's GPU (the CUDA driver or the Vulkan\n"
		   "                                    loader, opened at run time) and write a timing profile:\n"
		   "                                    --out FILE --name NAME --rounds N --device N, --allow-cpu\n"
		   "                                    (lavapipe, a CPU Vulkan); see: --set profile=FILE" },
	{ .name = NULL },
};
