/* src/perf.c — the Linux perf layer: libpfm4-encoded event groups per thread,
 * the perf stat --control hand-shake, RAPL energy.  Contract in src/perf.h. */
#include "src/perf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h> /* also perf_event_attr and libpfm4's perf_event_open() stub */

#include "lockfree/arch.h"
#include "lockfree/die.h"

#define FB_PERF_READ_FORMAT \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_GROUP)

static const char fb_perf_hw_default[] = "cycles,instructions";
static const char fb_perf_sw_default[] = "task-clock,context-switches,cpu-migrations,page-faults";

static void *fb_perf_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p)
		lf_die("calloc: out of memory");
	return p;
}

static char *fb_perf_strdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		lf_die("strdup: out of memory");
	return p;
}

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
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.fstr = fstr;
	arg.size = sizeof(arg);
	pthread_mutex_lock(&fb_pfm_lock);
	ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	pthread_mutex_unlock(&fb_pfm_lock);
	return ret;
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
	if (strspn(colon + 1, "ukhpGHe") != strlen(colon + 1))
		return false;
	n = (size_t)(colon - name);
	if (n + 1 > outlen)
		return false;
	memcpy(out, name, n);
	out[n] = '\0';
	for (const char *m = colon + 1; *m; m++) {
		const char *add = *m == 'u' ? ":u" : *m == 'k' ? ":k" : *m == 'h' ? ":h"
				: *m == 'G' ? ":mg=1:mh=0" : *m == 'H' ? ":mh=1:mg=0"
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

/* ---- specs -------------------------------------------------------------------------- */

struct fb_perf_event {
	char *name;                   /* as the user wrote it (+ ":u" after the user-only fallback) */
	char *encoding;               /* libpfm4's fully qualified string */
	struct perf_event_attr attr;  /* as encoded; group_open sets disabled/read_format */
};

struct fb_perf_spec {
	size_t n;
	struct fb_perf_event ev[FB_PERF_MAX_EVENTS];
	char note[384];               /* "" = no note */
};

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
	fd = perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
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
	int ret = fb_pfm_encode(name, &ev->attr, &fstr);

	if (ret == PFM_ERR_ATTR && fb_perf_modifiers_to_pfm(name, alt, sizeof(alt))) {
		free(fstr);
		fstr = NULL;
		if (fb_pfm_encode(alt, &ev->attr, &fstr) == PFM_SUCCESS)
			ret = PFM_SUCCESS;
	}
	if (ret != PFM_SUCCESS) {
		free(fstr);
		fb_perf_errf(err, errlen, "%s perf event '%s' (libpfm4: %s); see `perf list`",
			     ret == PFM_ERR_NOTFOUND ? "unknown" : "bad", name, pfm_strerror(ret));
		return -EINVAL;
	}
	ev->attr.size = sizeof(ev->attr);
	ev->name = fb_perf_strdup(name);
	ev->encoding = fb_perf_strdup(fstr ? fstr : name);
	free(fstr);
	return 0;
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
			size_t len = strlen(ev->name) + 3;
			char *name = fb_perf_calloc(1, len);
			snprintf(name, len, "%s:u", ev->name);
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
			     "(kernel.perf_event_paranoid=%d); run as root or lower the sysctl",
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
	s = fb_perf_calloc(1, sizeof(*s));
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
		if (probe && (rc = fb_perf_event_check(&s->ev[s->n - 1], &user_only, err, errlen)))
			goto fail;
	}
	if (user_only)
		fb_perf_spec_add_note(s, "kernel.perf_event_paranoid=%d forbids kernel-side counting: "
				      "counting user space only (:u), so context-switches read 0; "
				      "run as root or set the sysctl to 1", fb_perf_paranoid());
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

/* ---- groups ------------------------------------------------------------------------- */

struct fb_perf_group {
	size_t n;
	int fd[FB_PERF_MAX_EVENTS];   /* fd[0] is the leader */
	char *name[FB_PERF_MAX_EVENTS];
};

int fb_perf_group_open(const struct fb_perf_spec *s, pid_t tid, struct fb_perf_group **out)
{
	struct fb_perf_group *g;
	int rc;

	*out = NULL;
	if (!s->n)
		return -EINVAL;
	g = fb_perf_calloc(1, sizeof(*g));
	for (size_t i = 0; i < s->n; i++) {
		struct perf_event_attr a = s->ev[i].attr;
		a.size = sizeof(a);
		a.disabled = i == 0;          /* the leader gates the whole group */
		a.inherit = 0;
		a.read_format = FB_PERF_READ_FORMAT;
		int fd = perf_event_open(&a, tid, -1, i ? g->fd[0] : -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			fb_perf_group_close(g);
			return rc;
		}
		g->fd[i] = fd;
		g->name[i] = fb_perf_strdup(s->ev[i].name);
		g->n = i + 1;
	}
	*out = g;
	return 0;
}

void fb_perf_group_enable(struct fb_perf_group *g)
{
	ioctl(g->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

void fb_perf_group_disable(struct fb_perf_group *g)
{
	ioctl(g->fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

void fb_perf_group_reset(struct fb_perf_group *g)
{
	ioctl(g->fd[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
}

size_t fb_perf_group_count(const struct fb_perf_group *g)
{
	return g->n;
}

double fb_perf_scale(uint64_t raw, uint64_t time_enabled, uint64_t time_running, bool *scaled)
{
	bool sc = false;
	double v;

	if (time_running == 0) {
		sc = time_enabled != 0;       /* enabled but never scheduled: not counted */
		v = sc ? 0.0 : (double)raw;
	} else if (time_running >= time_enabled) {
		v = (double)raw;
	} else {
		sc = true;
		v = (double)raw * ((double)time_enabled / (double)time_running);
	}
	if (scaled)
		*scaled = sc;
	return v;
}

int fb_perf_group_read(struct fb_perf_group *g, struct fb_perf_value *out, size_t n)
{
	/* PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING layout:
	 * nr, time_enabled, time_running, value[nr] */
	uint64_t buf[3 + FB_PERF_MAX_EVENTS];
	size_t want = (3 + g->n) * sizeof(uint64_t);
	ssize_t got;

	do
		got = read(g->fd[0], buf, want);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	if ((size_t)got != want || buf[0] != g->n)
		return -EIO;
	for (size_t i = 0; i < n && i < g->n; i++) {
		out[i].name = g->name[i];
		out[i].raw = buf[3 + i];
		out[i].time_enabled = buf[1];
		out[i].time_running = buf[2];
		out[i].value = fb_perf_scale(buf[3 + i], buf[1], buf[2], &out[i].scaled);
	}
	return 0;
}

void fb_perf_group_close(struct fb_perf_group *g)
{
	if (!g)
		return;
	/* members first, the leader last */
	for (size_t i = g->n; i-- > 0;) {
		close(g->fd[i]);
		free(g->name[i]);
	}
	free(g);
}

/* ---- perf stat --control fd:CTL,ACK ------------------------------------------------ */

struct fb_perf_ctl {
	int ctl_fd, ack_fd;           /* the caller's; ack_fd -1: no acks */
	int timeout_ms;
};

/* O_RDONLY / O_WRONLY / O_RDWR of fd, or -errno. */
static int fb_perf_fd_mode(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -errno : (fl & O_ACCMODE);
}

int fb_perf_ctl_open(int ctl_fd, int ack_fd, struct fb_perf_ctl **out)
{
	struct fb_perf_ctl *c;
	int m;

	*out = NULL;
	if (ctl_fd < 0 || ack_fd < -1 || ctl_fd == ack_fd)
		return -EINVAL;
	m = fb_perf_fd_mode(ctl_fd);
	if (m < 0)
		return m;
	if (m == O_RDONLY)
		return -EBADF;
	if (ack_fd >= 0) {
		m = fb_perf_fd_mode(ack_fd);
		if (m < 0)
			return m;
		if (m == O_WRONLY)
			return -EBADF;
	}
	c = fb_perf_calloc(1, sizeof(*c));
	c->ctl_fd = ctl_fd;
	c->ack_fd = ack_fd;
	c->timeout_ms = 2000;
	*out = c;
	return 0;
}

void fb_perf_ctl_set_timeout_ms(struct fb_perf_ctl *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms < 0 ? 0 : timeout_ms;
}

/* Write all of buf without dying of SIGPIPE if perf has gone: block SIGPIPE in this
 * thread, and swallow the one our write raised (not one that was already pending). */
static int fb_perf_write_all(int fd, const char *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	int rc = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	bool was_pending = sigismember(&pending, SIGPIPE);
	while (len) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -errno;
			break;
		}
		buf += w;
		len -= (size_t)w;
	}
	if (rc == -EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Wait for one "ack\n" line on the ack fd.  perf writes "ack\n" and its C string
 * terminator; NULs are skipped.  One byte per read, so nothing past the line is
 * consumed. */
static int fb_perf_ctl_wait_ack(struct fb_perf_ctl *c)
{
	uint64_t deadline = lf_now_ns() + (uint64_t)c->timeout_ms * 1000000u;
	char line[16];
	size_t len = 0;
	bool overflow = false;

	for (;;) {
		uint64_t now = lf_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = c->ack_fd, .events = POLLIN };
		int r = poll(&p, 1, (int)((deadline - now + 999999u) / 1000000u));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		if (!(p.revents & POLLIN))
			return p.revents & POLLNVAL ? -EBADF : p.revents & POLLHUP ? -EPIPE : -EIO;
		char ch;
		ssize_t got = read(c->ack_fd, &ch, 1);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -EPIPE;
		if (ch == '\0')
			continue;
		if (ch == '\n') {
			line[len] = '\0';
			return !overflow && strcmp(line, "ack") == 0 ? 0 : -EPROTO;
		}
		if (len + 1 < sizeof(line))
			line[len++] = ch;
		else
			overflow = true;
	}
}

static int fb_perf_ctl_send(struct fb_perf_ctl *c, const char *cmd)
{
	int rc = fb_perf_write_all(c->ctl_fd, cmd, strlen(cmd));

	if (rc || c->ack_fd < 0)
		return rc;
	return fb_perf_ctl_wait_ack(c);
}

int fb_perf_ctl_enable(struct fb_perf_ctl *c)
{
	return fb_perf_ctl_send(c, "enable\n");
}

int fb_perf_ctl_disable(struct fb_perf_ctl *c)
{
	return fb_perf_ctl_send(c, "disable\n");
}

void fb_perf_ctl_close(struct fb_perf_ctl *c)
{
	free(c);
}

/* ---- RAPL through the power PMU ---------------------------------------------------- */

#define FB_RAPL_MAX_PKGS 64

struct fb_rapl {
	size_t n;
	int fd[FB_RAPL_MAX_PKGS];     /* one per package, counting system-wide on its CPU */
	double scale;                 /* joules per count (energy-pkg.scale) */
};

/* First line of dir/file, trailing blanks trimmed.  0 or -errno. */
static int fb_sysfs_read(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	size_t n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/* Place value into attr as the PMU's format file says ("config:0-7",
 * "config1:0-3,8-11", "config:5"): low bits of value fill the ranges in order. */
static int fb_pmu_apply_format(struct perf_event_attr *a, const char *fmt, uint64_t value)
{
	uint64_t *word;
	const char *p;

	if (!strncmp(fmt, "config:", 7))
		word = &a->config, p = fmt + 7;
	else if (!strncmp(fmt, "config1:", 8))
		word = &a->config1, p = fmt + 8;
	else if (!strncmp(fmt, "config2:", 8))
		word = &a->config2, p = fmt + 8;
	else
		return -EINVAL;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p)
			return -EINVAL;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (hi < lo || hi > 63)
			return -EINVAL;
		unsigned width = (unsigned)(hi - lo + 1);
		uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
		*word |= (value & mask) << lo;
		value = width == 64 ? 0 : value >> width;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -EINVAL;
	}
	return 0;
}

/* Turn an events/ file ("event=0x02" or "event=0x1,umask=0x2") into attr. */
static int fb_pmu_parse_event(const char *pmu_dir, const char *terms, struct perf_event_attr *a)
{
	char copy[256], fmt[128], file[160];
	char *save = NULL;

	snprintf(copy, sizeof(copy), "%s", terms);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		uint64_t v = 1;
		if (eq) {
			*eq = '\0';
			v = strtoull(eq + 1, NULL, 0);
		}
		snprintf(file, sizeof(file), "format/%s", t);
		if (fb_sysfs_read(pmu_dir, file, fmt, sizeof(fmt)) || fb_pmu_apply_format(a, fmt, v))
			return -ENODEV;
	}
	return 0;
}

/* CPUs of a cpumask file ("0", "0,18", "0-1") into cpus.  Count, or -ENODEV. */
static int fb_pmu_cpus(const char *pmu_dir, int *cpus, int max)
{
	char buf[256];
	const char *p = buf;
	int n = 0;

	if (fb_sysfs_read(pmu_dir, "cpumask", buf, sizeof(buf)) || !buf[0])
		return -ENODEV;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p)
			return -ENODEV;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; c <= hi && n < max; c++)
			cpus[n++] = (int)c;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -ENODEV;
	}
	return n ? n : -ENODEV;
}

int fb_rapl_open_at(const char *pmu_dir, struct fb_rapl **out)
{
	struct perf_event_attr a;
	struct fb_rapl *r;
	char buf[256];
	int cpus[FB_RAPL_MAX_PKGS], ncpu, rc;

	*out = NULL;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	if (fb_sysfs_read(pmu_dir, "type", buf, sizeof(buf)) || !buf[0])
		return -ENODEV;
	a.type = (uint32_t)strtoul(buf, NULL, 10);
	if (fb_sysfs_read(pmu_dir, "events/energy-pkg", buf, sizeof(buf)) ||
	    fb_pmu_parse_event(pmu_dir, buf, &a))
		return -ENODEV;
	if (fb_sysfs_read(pmu_dir, "events/energy-pkg.unit", buf, sizeof(buf)) == 0 &&
	    strcmp(buf, "Joules") != 0)
		return -ENODEV;
	ncpu = fb_pmu_cpus(pmu_dir, cpus, FB_RAPL_MAX_PKGS);
	if (ncpu < 0)
		return ncpu;
	r = fb_perf_calloc(1, sizeof(*r));
	r->scale = 1.0;               /* perf's rule when a PMU gives no scale file */
	if (fb_sysfs_read(pmu_dir, "events/energy-pkg.scale", buf, sizeof(buf)) == 0 && buf[0])
		r->scale = strtod(buf, NULL);
	for (int i = 0; i < ncpu; i++) {
		int fd = perf_event_open(&a, -1, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			fb_rapl_close(r);
			return rc;
		}
		r->fd[r->n++] = fd;
	}
	*out = r;
	return 0;
}

int fb_rapl_open(struct fb_rapl **out)
{
	return fb_rapl_open_at("/sys/bus/event_source/devices/power", out);
}

int fb_rapl_read_joules(struct fb_rapl *r, double *joules)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < r->n; i++) {
		uint64_t v;
		ssize_t got;
		do
			got = read(r->fd[i], &v, sizeof(v));
		while (got < 0 && errno == EINTR);
		if (got < 0)
			return -errno;
		if (got != sizeof(v))
			return -EIO;
		sum += v;
	}
	*joules = (double)sum * r->scale;
	return 0;
}

void fb_rapl_close(struct fb_rapl *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		close(r->fd[i]);
	free(r);
}
