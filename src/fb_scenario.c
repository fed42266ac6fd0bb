/* src/fb_scenario.c — scenario lookup and parameter parsing.  Contract in fb_scenario.h.
 * (The run context, fb_run_*, is the harness's: src/fb_run.c.) */
#include "src/fb_scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lockfree/die.h"
#include "src/fb_util.h"

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		lf_die("out of memory");
	return p;
}

const char *fb_path_name(enum fb_path p)
{
	switch (p) {
	case FB_PATH_NATIVE: return "native";
	case FB_PATH_LEGACY: return "legacy";
	default:             return "none";
	}
}

const char *fb_path_field(enum fb_path p)
{
	return p == FB_PATH_NONE ? "" : fb_path_name(p);
}

const struct fb_scenario *fb_scenario_find(const struct fb_scenario *const *table, const char *name)
{
	for (size_t i = 0; table[i]; i++)
		if (!strcmp(table[i]->name, name))
			return table[i];
	return NULL;
}

/* fb_program_params / fb_program_commands: set once by main() before fb_main */
static const struct fb_param *fb_common;
static const struct fb_command *fb_commands;

void fb_program_params(const struct fb_param *common) { fb_common = common; }
void fb_program_commands(const struct fb_command *cmds) { fb_commands = cmds; }
const struct fb_command *fb_program_command_list(void) { return fb_commands; }

const struct fb_command *fb_program_command(const char *name)
{
	for (size_t i = 0; fb_commands && fb_commands[i].name; i++)
		if (!strcmp(fb_commands[i].name, name))
			return &fb_commands[i];
	return NULL;
}

static size_t fb_own_nparams(const struct fb_scenario *s)
{
	size_t n = 0;
	while (s->params && s->params[n].key)
		n++;
	return n;
}

size_t fb_scenario_nparams(const struct fb_scenario *s)
{
	size_t n = fb_own_nparams(s);
	for (size_t i = 0; fb_common && !s->no_program_params && fb_common[i].key; i++)
		n++;
	return n;
}

const struct fb_param *fb_scenario_param(const struct fb_scenario *s, size_t i)
{
	size_t own = fb_own_nparams(s);
	return i < own ? &s->params[i] : &fb_common[i - own];
}

int fb_scenario_param_index(const struct fb_scenario *s, const char *key)
{
	size_t n = fb_scenario_nparams(s);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(fb_scenario_param(s, i)->key, key))
			return (int)i;
	return -1;
}

const char *fb_param_type_name(enum fb_param_type t)
{
	switch (t) {
	case FB_PARAM_INT:    return "int";
	case FB_PARAM_DOUBLE: return "double";
	case FB_PARAM_BOOL:   return "bool";
	case FB_PARAM_STRING: return "string";
	default:              return "enum";
	}
}

static void choices_text(const char *const *c, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; c[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "", c[i]);
}

void fb_param_range(const struct fb_param *p, char *buf, size_t len)
{
	switch (p->type) {
	case FB_PARAM_INT:
		snprintf(buf, len, "[%lld, %lld]", (long long)p->imin, (long long)p->imax);
		break;
	case FB_PARAM_DOUBLE:
		snprintf(buf, len, "[%g, %g]", p->dmin, p->dmax);
		break;
	case FB_PARAM_BOOL:
		snprintf(buf, len, "true|false");
		break;
	case FB_PARAM_ENUM:
		choices_text(p->choices, buf, len);
		break;
	case FB_PARAM_STRING:
		snprintf(buf, len, "text");
		break;
	}
}

static int bad(const struct fb_param *p, const char *text, char *err, size_t errlen, const char *why)
{
	char b[FB_SHOWN_MAX], range[256];
	fb_param_range(p, range, sizeof(range));
	snprintf(err, errlen, "%s=%s: %s %s", p->key, fb_shown(text, b, sizeof(b)), why, range);
	return -EINVAL;
}

static int parse_int(const struct fb_param *p, const char *text, union fb_value *out, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (!*text || isspace((unsigned char)*text) || *end)
		return bad(p, text, err, errlen, "not an integer: expected one in");
	if (errno == ERANGE || v < p->imin || v > p->imax)
		return bad(p, text, err, errlen, "out of range");
	out->i = v;
	return 0;
}

static int parse_double(const struct fb_param *p, const char *text, union fb_value *out, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (!*text || isspace((unsigned char)*text) || *end || isnan(v))
		return bad(p, text, err, errlen, "not a number: expected one in");
	if (errno == ERANGE || !isfinite(v) || v < p->dmin || v > p->dmax)
		return bad(p, text, err, errlen, "out of range");
	out->d = v;
	return 0;
}

static int parse_bool(const struct fb_param *p, const char *text, union fb_value *out, char *err, size_t errlen)
{
	static const char *const yes[] = { "true", "1", "yes", "on", NULL };
	static const char *const no[] = { "false", "0", "no", "off", NULL };
	for (size_t i = 0; yes[i]; i++) {
		if (!strcasecmp(text, yes[i])) {
			out->b = true;
			return 0;
		}
		if (!strcasecmp(text, no[i])) {
			out->b = false;
			return 0;
		}
	}
	return bad(p, text, err, errlen, "not a boolean: expected");
}

static int parse_enum(const struct fb_param *p, const char *text, union fb_value *out, char *err, size_t errlen)
{
	for (unsigned i = 0; p->choices[i]; i++) {
		if (!strcmp(text, p->choices[i])) {
			out->e = i;
			return 0;
		}
	}
	return bad(p, text, err, errlen, "not one of");
}

/* Strings are interned once and never freed: union fb_value is copied by
 * value through grids and journals, and a run reads at most a few. */
#define FB_INTERN_MAX 256
static const char *fb_interned[FB_INTERN_MAX];
static size_t fb_ninterned;

static const char *intern(const char *text)
{
	for (size_t i = 0; i < fb_ninterned; i++)
		if (!strcmp(fb_interned[i], text))
			return fb_interned[i];
	if (fb_ninterned == FB_INTERN_MAX)
		lf_die("more than %d distinct string parameter values", FB_INTERN_MAX);
	char *s = strdup(text);
	if (!s)
		lf_die("out of memory");
	return fb_interned[fb_ninterned++] = s;
}

static int parse_string(const struct fb_param *p, const char *text, union fb_value *out, char *err, size_t errlen)
{
	if (strlen(text) > FB_PARAM_STRING_MAX)
		return bad(p, text, err, errlen, "too long: at most 4096 bytes of");
	if (p->check && p->check(text, err, errlen))
		return -EINVAL;
	out->s = intern(text);
	return 0;
}

int fb_param_parse(const struct fb_param *p, const char *text, union fb_value *out, char *err, size_t errlen)
{
	switch (p->type) {
	case FB_PARAM_INT:    return parse_int(p, text, out, err, errlen);
	case FB_PARAM_DOUBLE: return parse_double(p, text, out, err, errlen);
	case FB_PARAM_BOOL:   return parse_bool(p, text, out, err, errlen);
	case FB_PARAM_STRING: return parse_string(p, text, out, err, errlen);
	default:              return parse_enum(p, text, out, err, errlen);
	}
}

union fb_value fb_param_default(const struct fb_param *p)
{
	union fb_value v = { 0 };
	switch (p->type) {
	case FB_PARAM_INT:
		v.i = p->idef;
		break;
	case FB_PARAM_DOUBLE:
		v.d = p->ddef;
		break;
	case FB_PARAM_BOOL:
		v.b = p->bdef;
		break;
	case FB_PARAM_ENUM:
		for (unsigned i = 0; p->choices[i]; i++)
			if (!strcmp(p->choices[i], p->edef))
				v.e = i;
		break;
	case FB_PARAM_STRING:
		v.s = intern(p->sdef ? p->sdef : "");
		break;
	}
	return v;
}

void fb_param_format(const struct fb_param *p, union fb_value v, char *buf, size_t len)
{
	switch (p->type) {
	case FB_PARAM_INT:
		snprintf(buf, len, "%lld", (long long)v.i);
		break;
	case FB_PARAM_DOUBLE:
		/* Shortest text that reads back to the same double. */
		snprintf(buf, len, "%.15g", v.d);
		if (strtod(buf, NULL) != v.d)
			snprintf(buf, len, "%.17g", v.d);
		break;
	case FB_PARAM_BOOL:
		snprintf(buf, len, "%s", v.b ? "true" : "false");
		break;
	case FB_PARAM_ENUM:
		snprintf(buf, len, "%s", p->choices[v.e]);
		break;
	case FB_PARAM_STRING:
		snprintf(buf, len, "%s", v.s);
		break;
	}
}

char *fb_param_text(const struct fb_param *p, union fb_value v)
{
	if (p->type == FB_PARAM_STRING)
		return fb_xstrdup(v.s);
	char buf[64];   /* ints, doubles, booleans and choices fit */
	fb_param_format(p, v, buf, sizeof(buf));
	return fb_xstrdup(buf);
}

struct fb_params *fb_params_new(const struct fb_scenario *s)
{
	struct fb_params *ps = xcalloc(1, sizeof(*ps));
	ps->scenario = s;
	ps->n = fb_scenario_nparams(s);
	ps->v = xcalloc(ps->n, sizeof(*ps->v));
	ps->set = xcalloc(ps->n, sizeof(*ps->set));
	for (size_t i = 0; i < ps->n; i++)
		ps->v[i] = fb_param_default(fb_scenario_param(s, i));
	return ps;
}

struct fb_params *fb_params_dup(const struct fb_params *ps)
{
	struct fb_params *d = fb_params_new(ps->scenario);
	memcpy(d->v, ps->v, ps->n * sizeof(*ps->v));
	memcpy(d->set, ps->set, ps->n * sizeof(*ps->set));
	return d;
}

void fb_params_free(struct fb_params *ps)
{
	if (!ps)
		return;
	free(ps->v);
	free(ps->set);
	free(ps);
}

int fb_params_set(struct fb_params *ps, const char *key, const char *text, char *err, size_t errlen)
{
	int i = fb_scenario_param_index(ps->scenario, key);
	if (i < 0) {
		char b[FB_SHOWN_MAX];
		snprintf(err, errlen, "unknown parameter '%s' for scenario '%s' (see: fencebench help %s)",
			 fb_shown(key, b, sizeof(b)), ps->scenario->name, ps->scenario->name);
		return -ENOENT;
	}
	int rc = fb_param_parse(fb_scenario_param(ps->scenario, i), text, &ps->v[i], err, errlen);
	if (!rc)
		ps->set[i] = true;
	return rc;
}
