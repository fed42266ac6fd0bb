/* benchmarks/profile.c — timing profile files (jansson) and the `profile`
 * parameter.  Contract and the file's format in profile.h. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#include <jansson.h>

#include "benchmarks/embedded.h"
#include "benchmarks/profile.h"
#include "lockfree/die.h"

static const char *const bm_op_keys[BM_OPS] = {
	[BM_OP_ENQUEUE] = "enqueue_ns",
	[BM_OP_WRITE_SEEN] = "write_seen_ns",
	[BM_OP_EVENT_SPIN] = "event_spin_ns",
	[BM_OP_EVENT_BLOCK] = "event_block_ns",
	[BM_OP_CPU_GPU_CPU] = "cpu_gpu_cpu_ns",
	[BM_OP_GPU_WAIT_SYS] = "gpu_wait_sys_ns",
	[BM_OP_GPU_WAIT_LOCAL] = "gpu_wait_local_ns",
	[BM_OP_CPU_HELD] = "cpu_held_ns",
	[BM_OP_KM_SUBMIT] = "km_submit_ns",
};

const char *bm_op_key(enum bm_op op)
{
	return bm_op_keys[op];
}

static int bm_profile_check(const char *text, char *err, size_t errlen);

/* Its help is written by bm_profile_describe, which names the shipped
 * profiles (the files main() finds), before fb_main reads it. */
struct fb_param bm_common_params[] = {
	{ .key = "profile", .unit = "", .type = FB_PARAM_STRING, .sdef = "ideal", .check = bm_profile_check,
	  .help = "timing profile: ideal (the model's own speed), a name in benchmarks/profiles/, or a .json file" },
	FB_PARAM_END
};

/* ---- messages ---- */

__attribute__((format(printf, 4, 5))) static int bm_pbad(const char *text, char *err, size_t errlen, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "profile=%.200s: %s", text, msg);
	return -EINVAL;
}

/* ---- the file ---- */

static bool bm_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n >= RT_PROFILE_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
			return false;
	return true;
}

/* The shipped profiles' folder: benchmarks/profiles beside the executable
 * (its ../benchmarks/profiles) when it is there, else under the working
 * directory. */
static void bm_profile_dir(char *dir, size_t len)
{
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k > 0) {
		exe[k] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			int w = snprintf(dir, len, "%.3000s/../benchmarks/profiles", exe);
			if (w > 0 && (size_t)w < len && !access(dir, R_OK))
				return;
		}
	}
	snprintf(dir, len, "benchmarks/profiles");
}

/* Where `text` names a file: itself (a path), or NAME.json in the profiles
 * folder (bm_profile_dir). */
static void bm_profile_path(const char *text, char *path, size_t len)
{
	size_t n = strlen(text);
	if (strchr(text, '/') || (n > 5 && !strcmp(text + n - 5, ".json"))) {
		snprintf(path, len, "%s", text);
		return;
	}
	char dir[PATH_MAX];
	bm_profile_dir(dir, sizeof(dir));
	snprintf(path, len, "%.3000s/%.200s.json", dir, text);
}

static int bm_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add NAME (of NAME.json) to names[0..*n) unless it is there: false when full. */
static bool bm_name_add(char **names, size_t *n, size_t max, const char *file)
{
	size_t len = strlen(file);
	if (len <= 5 || strcmp(file + len - 5, ".json"))
		return true;
	for (size_t i = 0; i < *n; i++)
		if (strlen(names[i]) == len - 5 && !strncmp(names[i], file, len - 5))
			return true;
	if (*n == max)
		return false;
	names[(*n)++] = strndup(file, len - 5);
	return true;
}

void bm_profile_describe(void)
{
	static char help[1024];
	char dir[PATH_MAX], *names[32];
	size_t n = 0, max = sizeof(names) / sizeof(names[0]);
	bm_profile_dir(dir, sizeof(dir));
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d)) && bm_name_add(names, &n, max, e->d_name);)
		;
	if (d)
		closedir(d);
	const struct bm_embedded *b;   /* the built-in copies: a binary copied alone has them */
	for (size_t i = 0; (b = bm_embedded_in("benchmarks/profiles", ".json", i)) &&
			   bm_name_add(names, &n, max, strrchr(b->path, '/') + 1); i++)
		;
	if (!n)
		return;   /* none found: the help keeps naming the folder */
	qsort(names, n, sizeof(names[0]), bm_name_cmp);
	int w = snprintf(help, sizeof(help), "timing profile: ideal (the model's own speed), a shipped one (");
	for (size_t i = 0; i < n; i++) {
		if (w > 0 && (size_t)w < sizeof(help))
			w += snprintf(help + w, sizeof(help) - (size_t)w, "%s%s", i ? ", " : "", names[i]);
		free(names[i]);
	}
	if (w > 0 && (size_t)w < sizeof(help))
		snprintf(help + w, sizeof(help) - (size_t)w, "), or a .json file");
	bm_common_params[0].help = help;
}

struct bm_field {
	const char *key;
	uint64_t *v;
};

/* Every key of o is one of fields (integers 0..max ns). */
static int bm_read_fields(const char *text, json_t *o, const char *what, struct bm_field *fields, size_t n,
			  uint64_t max, char *err, size_t errlen)
{
	if (!json_is_object(o))
		return bm_pbad(text, err, errlen, "\"%s\" must be an object of integer ns", what);
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		size_t i;
		for (i = 0; i < n && strcmp(fields[i].key, k); i++)
			;
		if (i == n)
			return bm_pbad(text, err, errlen, "\"%s\" has no field \"%.64s\"", what, k);
		if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
			return bm_pbad(text, err, errlen, "%s.%s must be an integer of ns in [0, %llu]", what, k,
				       (unsigned long long)max);
		*fields[i].v = (uint64_t)json_integer_value(v);
	}
	return 0;
}

static int bm_read_origin(const char *text, json_t *o, struct bm_profile *p, char *err, size_t errlen)
{
	if (!json_is_object(o) || !json_object_size(o))
		return bm_pbad(text, err, errlen, "\"origin\" must be an object of strings saying where the numbers come from");
	const char *k;
	json_t *v;
	size_t used = 0;
	json_object_foreach(o, k, v) {
		if (!json_is_string(v))
			return bm_pbad(text, err, errlen, "origin.%.64s must be a string", k);
		if (used < sizeof(p->origin))
			used += (size_t)snprintf(p->origin + used, sizeof(p->origin) - used, "%s%s: %s",
						 used ? "; " : "", k, json_string_value(v));
	}
	return 0;
}

/* An object of ops (bm_op_keys) to ns, into has[] and ns[]: "measured",
 * "gpu_side". */
static int bm_read_ops(const char *text, json_t *o, const char *what, bool *has, double *ns, char *err,
		       size_t errlen)
{
	if (!json_is_object(o))
		return bm_pbad(text, err, errlen, "\"%s\" must be an object of ns", what);
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		int op;
		for (op = 0; op < BM_OPS && strcmp(bm_op_keys[op], k); op++)
			;
		if (op == BM_OPS)
			return bm_pbad(text, err, errlen, "\"%s\" has no operation \"%.64s\"", what, k);
		if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1e9)
			return bm_pbad(text, err, errlen, "%s.%s must be a number of ns in (0, 1e9]", what, k);
		has[op] = true;
		ns[op] = json_number_value(v);
	}
	return 0;
}

static int bm_read_top(const char *text, json_t *root, struct bm_profile *p, char *err, size_t errlen)
{
	struct hw_timing *h = &p->rt.hw;
	struct os_timing *k = &p->rt.os;
	struct bm_field hw[] = {
		{ "cmd_ns", &h->cmd_ns }, { "signal_ns", &h->signal_ns }, { "visible_sys_ns", &h->visible_sys_ns },
		{ "visible_local_ns", &h->visible_local_ns }, { "wait_poll_sys_ns", &h->wait_poll_sys_ns },
		{ "wait_poll_local_ns", &h->wait_poll_local_ns }, { "doorbell_ns", &h->doorbell_ns },
		{ "irq_ns", &h->irq_ns },
	};
	struct bm_field os[] = {
		{ "km_call_ns", &k->km_call_ns }, { "km_validate_ns", &k->km_validate_ns }, { "km_sched_ns", &k->km_sched_ns },
	};
	if (!json_is_object(root))
		return bm_pbad(text, err, errlen, "the file must hold one JSON object");
	json_t *name = json_object_get(root, "name");
	if (!json_is_string(name) || !bm_name_ok(json_string_value(name)) || !strcmp(json_string_value(name), "ideal"))
		return bm_pbad(text, err, errlen, "\"name\" must be [a-z0-9_.-], 1..63 characters, not \"ideal\"");
	snprintf(p->rt.name, sizeof(p->rt.name), "%s", json_string_value(name));
	static const char *const known[] = { "name", "origin", "adapter", "kernel", "measured", "gpu_side", "derivation" };
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v) {
		size_t i;
		for (i = 0; i < sizeof(known) / sizeof(known[0]) && strcmp(known[i], key); i++)
			;
		if (i == sizeof(known) / sizeof(known[0]))
			return bm_pbad(text, err, errlen, "unknown key \"%.64s\" (name, origin, adapter, kernel, measured, "
				       "gpu_side, derivation)", key);
	}
	int rc = bm_read_origin(text, json_object_get(root, "origin"), p, err, errlen);
	if (!rc && !json_object_get(root, "adapter"))
		rc = bm_pbad(text, err, errlen, "no \"adapter\" latencies");
	if (!rc)
		rc = bm_read_fields(text, json_object_get(root, "adapter"), "adapter", hw, sizeof(hw) / sizeof(hw[0]),
				    HW_TIMING_MAX_NS, err, errlen);
	if (!rc && json_object_get(root, "kernel"))
		rc = bm_read_fields(text, json_object_get(root, "kernel"), "kernel", os, sizeof(os) / sizeof(os[0]),
				    OS_TIMING_MAX_NS, err, errlen);
	if (!rc && json_object_get(root, "measured"))
		rc = bm_read_ops(text, json_object_get(root, "measured"), "measured", p->has, p->measured_ns, err, errlen);
	if (!rc && json_object_get(root, "gpu_side"))
		rc = bm_read_ops(text, json_object_get(root, "gpu_side"), "gpu_side", p->has_gpu, p->gpu_ns, err, errlen);
	for (int op = 0; !rc && op < BM_OPS; op++)
		if (p->has_gpu[op] && !p->has[op])
			rc = bm_pbad(text, err, errlen, "gpu_side.%s is the GPU-side part of an op \"measured\" lacks",
				     bm_op_keys[op]);
	json_t *d = json_object_get(root, "derivation");
	if (!rc && d && !json_is_object(d))
		rc = bm_pbad(text, err, errlen, "\"derivation\" must be an object of strings");
	return rc;
}

/* The built-in copy of what `text` names when its file is not there: a
 * shipped name (benchmarks/profiles/NAME.json) or that path itself. */
static const struct bm_embedded *bm_profile_builtin(const char *text)
{
	char path[PATH_MAX];
	size_t n = strlen(text);
	if (strchr(text, '/') || (n > 5 && !strcmp(text + n - 5, ".json")))
		return bm_embedded_find(text);
	snprintf(path, sizeof(path), "benchmarks/profiles/%.200s.json", text);
	return bm_embedded_find(path);
}

/* The profile's JSON: its file, else (no such file) the built-in copy;
 * out->file says which.  NULL with one line in err. */
static json_t *bm_profile_json(const char *text, struct bm_profile *out, char *err, size_t errlen)
{
	json_error_t je;
	bm_profile_path(text, out->file, sizeof(out->file));
	json_t *root = json_load_file(out->file, JSON_REJECT_DUPLICATES, &je);
	if (root)
		return root;
	if (!access(out->file, R_OK)) {
		bm_pbad(text, err, errlen, "%s:%d: %s", out->file, je.line, je.text);
		return NULL;
	}
	int e = errno;
	const struct bm_embedded *b = e == ENOENT ? bm_profile_builtin(text) : NULL;
	if (!b) {
		bm_pbad(text, err, errlen, "no such profile (%s: %s)", out->file, strerror(e));
		return NULL;
	}
	snprintf(out->file, sizeof(out->file), "%s (built in)", b->path);
	root = json_loadb((const char *)b->text, b->len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		bm_pbad(text, err, errlen, "%s:%d: %s", out->file, je.line, je.text);
	return root;
}

int bm_profile_load(const char *text, struct bm_profile *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	rt_profile_ideal(&out->rt);
	if (!strcmp(text, "ideal"))
		return 0;
	if (!*text)
		return bm_pbad(text, err, errlen, "empty: give ideal, a profile name or a .json file");
	json_t *root = bm_profile_json(text, out, err, errlen);
	if (!root)
		return -EINVAL;
	int rc = bm_read_top(text, root, out, err, errlen);
	json_decref(root);
	return rc;
}

/* ---- the parameter: checked at parse, loaded once ---- */

#define BM_PROFILE_CACHE 16
static pthread_mutex_t bm_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *text;
	struct bm_profile *p;
} bm_cache[BM_PROFILE_CACHE];

/* The cached profile of text, loading it on first use: NULL with err on a bad one. */
static const struct bm_profile *bm_profile_cached(const char *text, char *err, size_t errlen)
{
	const struct bm_profile *r = NULL;
	pthread_mutex_lock(&bm_cache_lock);
	size_t i;
	for (i = 0; i < BM_PROFILE_CACHE && bm_cache[i].text; i++)
		if (!strcmp(bm_cache[i].text, text)) {
			r = bm_cache[i].p;
			goto out;
		}
	struct bm_profile *p = malloc(sizeof(*p));
	if (!p)
		lf_die("out of memory");
	if (bm_profile_load(text, p, err, errlen)) {
		free(p);
		goto out;
	}
	r = p;
	if (i < BM_PROFILE_CACHE) {
		bm_cache[i].text = strdup(text);
		bm_cache[i].p = p;
	}   /* else: a one-off, never freed (as many as --grid values: a handful) */
out:
	pthread_mutex_unlock(&bm_cache_lock);
	return r;
}

static int bm_profile_check(const char *text, char *err, size_t errlen)
{
	return bm_profile_cached(text, err, errlen) ? 0 : -EINVAL;
}

const struct bm_profile *bm_profile_of(const struct fb_run *run)
{
	char err[512];
	const char *text = fb_run_string(run, "profile");
	const struct bm_profile *p = bm_profile_cached(text, err, sizeof(err));
	if (!p)
		lf_die("%s (the parameter was checked: was the file changed meanwhile?)", err);
	return p;
}

void bm_profile_config(const struct fb_run *run, struct os_config *cfg)
{
	rt_profile_apply(&bm_profile_of(run)->rt, cfg);
}
