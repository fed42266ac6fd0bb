/* src/perf_spec.c — event specs: names parsed, encoded by libpfm4, probed
 * on this machine, with the user-only and software fallbacks.  Contract in
 * src/perf.h ("event specs"). */
#include "src/perf_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lockfree/die.h"
#include "src/fb_util.h"

static const char fb_perf_hw_default[] = "cycles,instructions";
static const char fb_perf_sw_default[] = "task-clock,context-switches,cpu-migrations,page-faults";

/* snprintf into err when the caller gave room for it. */
static void fb_perf_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fb_perf_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- libpfm4: initialized once, called under one lock ------------------------------ */

/* libpfm4 documents no thread safety for its encoders: serialize them.  Specs are
 * built at start-up, never on a hot path, so one process-wide mutex costs nothing. */
static pthread_once_t fb_pfm_once = PTHREAD_ONCE_INIT;
static int fb_pfm_init_ret;
static pthread_mutex_t fb_pfm_lock = PTHREAD_MUTEX_INITIALIZER;

static void fb_pfm_init(void)
{
	fb_pfm_init_ret = pfm_initialize();
}

/* Encode one event name at the default privilege levels user+kernel (no forced
 * exclude_kernel); the user's :u/:k modifiers override them.  PFM_SUCCESS or a PFM_ERR_*. */
static int fb_pfm_encode(const char *name, struct perf_event_attr *attr, char **fstr)
{
	pfm_perf_encode_arg_t arg;
	int ret;

	memset(attr, 0, sizeof(*attr));
	/* the attr's size tells libpfm4 how much of it to fill: left 0 it
	 * copies back only the first version's 64 bytes, and config2 is lost */
	attr->size = sizeof(*attr);
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.fstr = fstr;
	arg.size = sizeof(arg);
	const struct fb_perf_sys *sys = fb_perf_sys();
	pthread_mutex_lock(&fb_pfm_lock);
	ret = sys->pfm_encode ? sys->pfm_encode(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg)
			      : fb_perf_sys_real.pfm_encode(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	pthread_mutex_unlock(&fb_pfm_lock);
	return ret;
}

/* perf's event modifiers (tools/perf parse-events), case-sensitive: those
 * mapped to libpfm4 here, and all of them.  libpfm4 reads its attributes
 * without regard to case, so "cycles:H" (perf: host only) handed to it raw
 * would become ":h" (hypervisor only) and read 0. */
static const char fb_perf_mods_mapped[] = "ukhpGHe";
static const char fb_perf_mods_perf[] = "ukhpGHeIPSDWbR";

/* The trailing ":group" of name when it is made only of perf's modifier
 * letters, or of capitals whose lower case is one ("cycles:U", which libpfm4
 * would read as :u), else NULL (a libpfm4 attribute: "INST_RETIRED:ANY_P"). */
static const char *fb_perf_modifier_group(const char *name)
{
	const char *colon = strrchr(name, ':');
	if (!colon || colon == name || colon[-1] == ':' || !colon[1])
		return NULL;
	for (const char *m = colon + 1; *m; m++)
		if (!strchr(fb_perf_mods_perf, *m) && !(isupper((unsigned char)*m) && strchr(fb_perf_mods_perf, tolower((unsigned char)*m))))
			return NULL;
	return colon + 1;
}

/* perf writes modifiers as one group of letters ("cycles:upp"), libpfm4 as
 * separate attributes ("cycles:u:precise=2").  Rewrite the trailing group into
 * out; false when the name does not end in a perf modifier group. */
static bool fb_perf_modifiers_to_pfm(const char *name, char *out, size_t outlen)
{
	const char *colon = strrchr(name, ':');
	unsigned precise = 0;
	size_t n;

	if (!colon || colon == name || colon[-1] == ':' || !colon[1])
		return false;
	if (strspn(colon + 1, fb_perf_mods_mapped) != strlen(colon + 1))
		return false;
	n = (size_t)(colon - name);
	if (n + 1 > outlen)
		return false;
	memcpy(out, name, n);
	out[n] = '\0';
	for (const char *m = colon + 1; *m; m++) {
		const char *add = *m == 'u' ? ":u" : *m == 'k' ? ":k" : *m == 'h' ? ":h"
				: *m == 'G' || *m == 'H' ? "" /* fb_perf_host_guest */
				: *m == 'e' ? ":excl" : NULL;
		if (!add) {
			precise++;
			continue;
		}
		if (strlen(out) + strlen(add) + 1 > outlen)
			return false;
		strcat(out, add);
	}
	if (precise) {
		size_t len = strlen(out);
		int w = snprintf(out + len, outlen - len, ":precise=%u", precise);
		if (w < 0 || (size_t)w >= outlen - len)
			return false;
	}
	return true;
}

/* perf's G (guest only) and H (host only) of a modifier group, set on attr
 * as perf sets them; libpfm4's mg/mh defaults would count both.  The
 * encoding string says the same (its "mg=1"/"mh=1" turned off). */
static void fb_perf_host_guest(const char *group, struct perf_event_attr *attr, char *fstr)
{
	bool guest = strchr(group, 'G'), host = strchr(group, 'H');
	if (guest == host)
		return;   /* neither, or both: count both, libpfm4's default */
	attr->exclude_guest = !guest;
	attr->exclude_host = !host;
	char *off = fstr ? strstr(fstr, guest ? ":mh=1" : ":mg=1") : NULL;
	if (off)
		off[4] = '0';
}

/* ---- specs -------------------------------------------------------------------------- */

static int fb_perf_paranoid(void)
{
	int level = INT_MIN;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = INT_MIN;
		fclose(f);
	}
	return level;
}

/* Open attr on the calling thread, disabled, and close it again: can this
 * machine count it?  0 or -errno. */
static int fb_perf_probe(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.size = sizeof(a);
	a.disabled = 1;
	a.read_format = FB_PERF_READ_FORMAT;
	fd = fb_perf_sys()->event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	fb_perf_sys()->close(fd);
	return 0;
}

static bool fb_perf_is_hw(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE ||
	       a->type == PERF_TYPE_RAW;
}

/* Encode `name` into ev.  0, or -EINVAL with the message in err. */
static int fb_perf_event_encode(const char *name, struct fb_perf_event *ev, char *err, size_t errlen)
{
	char *fstr = NULL;
	char alt[512];
	const char *group = fb_perf_modifier_group(name);
	size_t bad = group ? strspn(group, fb_perf_mods_mapped) : 0;
	int ret;

	if (group && group[bad]) {
		fb_perf_errf(err, errlen, "perf event '%s': modifier '%c' is not supported (supported: u k h p G H e; "
			     "modifiers are case-sensitive, as in perf)", name, group[bad]);
		return -EINVAL;
	}
	/* perf's letters mean what perf says: spelled out for libpfm4 first */
	if (group && fb_perf_modifiers_to_pfm(name, alt, sizeof(alt)))
		ret = fb_pfm_encode(alt, &ev->attr, &fstr);
	else
		ret = fb_pfm_encode(name, &ev->attr, &fstr);
	if (ret == PFM_SUCCESS && group)
		fb_perf_host_guest(group, &ev->attr, fstr);
	if (ret != PFM_SUCCESS) {
		free(fstr);
		fb_perf_errf(err, errlen, "%s perf event '%s' (libpfm4: %s); see `perf list`",
			     ret == PFM_ERR_NOTFOUND ? "unknown" : "bad", name, pfm_strerror(ret));
		return -EINVAL;
	}
	ev->attr.size = sizeof(ev->attr);
	ev->name = fb_xstrdup(name);
	ev->encoding = fb_xstrdup(fstr ? fstr : name);
	free(fstr);
	return 0;
}

/* name as counted in user space only: a trailing perf modifier group loses
 * its k and gains a u ("cycles:uk" -> "cycles:u", "cycles:pp" ->
 * "cycles:ppu"; perf itself appends a u: "cycles:uku"); any other name
 * gets ":u".  malloc'd. */
static char *fb_perf_user_only_name(const char *name)
{
	const char *group = fb_perf_modifier_group(name);
	size_t len = strlen(name) + 3;
	char *out = fb_xcalloc(1, len);
	if (!group) {
		snprintf(out, len, "%s:u", name);
		return out;
	}
	size_t n = (size_t)(group - name);
	memcpy(out, name, n);
	for (const char *m = group; *m; m++)
		if (*m != 'k' && *m != 'u')
			out[n++] = *m;
	out[n++] = 'u';
	out[n] = '\0';
	return out;
}

/* Check this machine can count ev; fall back to user-only counting when the kernel
 * forbids kernel-side counting (perf_event_paranoid), as perf stat does.
 * 0 (*user_only set when the fallback applied), or -errno with the message in err. */
static int fb_perf_event_check(struct fb_perf_event *ev, bool *user_only, char *err, size_t errlen)
{
	int rc = fb_perf_probe(&ev->attr);

	if ((rc == -EACCES || rc == -EPERM) && !ev->attr.exclude_kernel && !ev->attr.exclude_user) {
		struct perf_event_attr u = ev->attr;
		u.exclude_kernel = 1;
		u.exclude_hv = 1;
		if (fb_perf_probe(&u) == 0) {
			char *name = fb_perf_user_only_name(ev->name);
			free(ev->name);
			ev->name = name;
			ev->attr = u;
			*user_only = true;
			return 0;
		}
	}
	if (rc == 0)
		return 0;
	if (rc == -ENOENT || rc == -EOPNOTSUPP || rc == -ENODEV) {
		fb_perf_errf(err, errlen, "perf event '%s' cannot be counted on this machine%s (%s)",
			     ev->name, fb_perf_is_hw(&ev->attr) ?
			     ": hardware counters not supported (VM?)" : "", strerror(-rc));
		return -EOPNOTSUPP;
	}
	if (rc == -EACCES || rc == -EPERM) {
		fb_perf_errf(err, errlen, "perf event '%s': permission denied "
			     "(kernel.perf_event_paranoid=%d); needs CAP_PERFMON (root has it) or the sysctl at 2 or lower",
			     ev->name, fb_perf_paranoid());
		return -EACCES;
	}
	fb_perf_errf(err, errlen, "perf event '%s': perf_event_open: %s", ev->name, strerror(-rc));
	return rc;
}

/* Next event name of list into buf (commas inside a perf "pmu/a=1,b=2/" term do
 * not split).  Returns the rest of the list, NULL at the end. */
static const char *fb_perf_next_name(const char *list, char *buf, size_t buflen, bool *too_long)
{
	bool in_term = false;
	size_t n = 0;
	const char *p = list;

	*too_long = false;
	for (; *p && (in_term || *p != ','); p++) {
		if (*p == '/')
			in_term = !in_term;
		if (n + 1 < buflen)
			buf[n++] = *p;
		else
			*too_long = true;
	}
	buf[n] = '\0';
	/* trim blanks around the name */
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	size_t lead = strspn(buf, " \t\n");
	memmove(buf, buf + lead, n - lead + 1);
	return *p ? p + 1 : NULL;
}

static void fb_perf_spec_add_note(struct fb_perf_spec *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fb_perf_spec_add_note(struct fb_perf_spec *s, const char *fmt, ...)
{
	size_t len = strlen(s->note);
	va_list ap;

	if (len && len + 2 < sizeof(s->note)) {
		strcat(s->note, "; ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(s->note + len, sizeof(s->note) - len, fmt, ap);
	va_end(ap);
}

/* Build a spec from list; probe = check each event can be opened here. */
static int fb_perf_spec_build(const char *list, bool probe, struct fb_perf_spec **out,
			      char *err, size_t errlen)
{
	struct fb_perf_spec *s;
	bool user_only = false, too_long;
	char name[256];
	const char *p = list;
	int rc = 0;

	*out = NULL;
	pthread_once(&fb_pfm_once, fb_pfm_init);
	if (fb_pfm_init_ret != PFM_SUCCESS) {
		fb_perf_errf(err, errlen, "libpfm4 cannot initialize: %s", pfm_strerror(fb_pfm_init_ret));
		return -ENODEV;
	}
	s = fb_xcalloc(1, sizeof(*s));
	while (p) {
		p = fb_perf_next_name(p, name, sizeof(name), &too_long);
		if (!name[0] || too_long) {
			fb_perf_errf(err, errlen, "%s perf event name in '%s'",
				     too_long ? "too long a" : "empty", list);
			rc = -EINVAL;
			goto fail;
		}
		if (s->n == FB_PERF_MAX_EVENTS) {
			fb_perf_errf(err, errlen, "too many perf events in '%s' (at most %d)",
				     list, FB_PERF_MAX_EVENTS);
			rc = -EINVAL;
			goto fail;
		}
		rc = fb_perf_event_encode(name, &s->ev[s->n], err, errlen);
		if (rc)
			goto fail;
		s->n++;
		if (s->n > 1 && (s->ev[s->n - 1].attr.pinned || s->ev[s->n - 1].attr.exclusive)) {
			/* the kernel takes these on a group's leader only: say so now, not per thread */
			fb_perf_errf(err, errlen, "perf event '%s': pinned and exclusive (:pinned, :excl, :e) apply "
				     "to a group's leader only: list it first", name);
			rc = -EINVAL;
			goto fail;
		}
		if (probe && (rc = fb_perf_event_check(&s->ev[s->n - 1], &user_only, err, errlen)))
			goto fail;
	}
	if (user_only)
		fb_perf_spec_add_note(s, "kernel.perf_event_paranoid=%d forbids kernel-side counting: "
				      "counting user space only (:u), so context-switches read 0; "
				      "kernel side too with CAP_PERFMON (root has it) or the sysctl at 1 or lower", fb_perf_paranoid());
	*out = s;
	return 0;
fail:
	fb_perf_spec_free(s);
	return rc;
}

int fb_perf_spec_parse(const char *list, struct fb_perf_spec **out, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!list || !out) {
		fb_perf_errf(err, errlen, "no perf event list");
		return -EINVAL;
	}
	return fb_perf_spec_build(list, true, out, err, errlen);
}

struct fb_perf_spec *fb_perf_spec_default(void)
{
	struct fb_perf_spec *s;
	char err[256], why[320];
	int rc = fb_perf_spec_build(fb_perf_hw_default, true, &s, err, sizeof(err));

	if (rc == 0)
		return s;
	if (rc == -EOPNOTSUPP)
		snprintf(why, sizeof(why), "hardware counters not supported on this machine (VM?)");
	else
		snprintf(why, sizeof(why), "hardware counters unavailable (%s)", err);
	rc = fb_perf_spec_build(fb_perf_sw_default, true, &s, err, sizeof(err));
	if (rc) {
		/* Not even software events open here: keep the list so the run says
		 * which events it wanted; its groups will fail to open. */
		snprintf(why, sizeof(why), "%s", err);
		if (fb_perf_spec_build(fb_perf_sw_default, false, &s, err, sizeof(err)))
			lf_die("libpfm4 cannot encode the software events");
	}
	char note[sizeof(s->note)];
	snprintf(note, sizeof(note), "%s", s->note);
	s->note[0] = '\0';
	fb_perf_spec_add_note(s, "%s: using software events %s", why, fb_perf_sw_default);
	if (note[0])
		fb_perf_spec_add_note(s, "%s", note);
	return s;
}

const char *fb_perf_spec_note(const struct fb_perf_spec *s)
{
	return s->note[0] ? s->note : NULL;
}

size_t fb_perf_spec_count(const struct fb_perf_spec *s)
{
	return s->n;
}

const char *fb_perf_spec_name(const struct fb_perf_spec *s, size_t i)
{
	return i < s->n ? s->ev[i].name : NULL;
}

const char *fb_perf_spec_encoding(const struct fb_perf_spec *s, size_t i)
{
	return i < s->n ? s->ev[i].encoding : NULL;
}

void fb_perf_spec_free(struct fb_perf_spec *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < FB_PERF_MAX_EVENTS; i++) {
		free(s->ev[i].name);
		free(s->ev[i].encoding);
	}
	free(s);
}
