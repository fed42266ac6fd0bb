/* tests/test_perf.c — the perf layer (src/perf.h): libpfm4 event specs, groups on
 * this and another thread, the software fallback, perf stat's control hand-shake
 * (with pipes, and with the real `perf stat` when it is installed), RAPL. */
#include "tests/fb_test.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/perf.h"

extern char **environ;

static pid_t test_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int paranoid_level(void)
{
	int level = -99;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = -99;
		fclose(f);
	}
	return level;
}

/* Sleep-and-yield work that makes the kernel switch this thread out. */
static void switchy_work(void)
{
	for (int i = 0; i < 5; i++) {
		usleep(1000);
		sched_yield();
	}
}

/* Burn `ms` of this thread's CPU time (self-calibrating under sanitizers). */
static void burn_cpu_ms(long ms)
{
	struct timespec t0, t;
	volatile unsigned sink = 0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* Parse list, or skip when this user may not count kernel-side (the note says so). */
static struct fb_perf_spec *parse_or_fail(const char *list)
{
	struct fb_perf_spec *s = NULL;
	char err[256];
	int rc = fb_perf_spec_parse(list, &s, err, sizeof(err));
	if (rc)
		fail_msg("fb_perf_spec_parse(%s) = %d: %s", list, rc, err);
	return s;
}

static bool kernel_side_forbidden(const struct fb_perf_spec *s)
{
	const char *note = fb_perf_spec_note(s);
	return note && strstr(note, "perf_event_paranoid");
}

/* ---- specs ---------------------------------------------------------------------- */

static void spec_parses_software_names(void **state)
{
	struct fb_perf_spec *s = parse_or_fail(" task-clock, context-switches ,cpu-migrations,page-faults,cs");

	assert_int_equal(fb_perf_spec_count(s), 5);
	assert_string_equal(fb_perf_spec_name(s, 0), "task-clock");
	assert_string_equal(fb_perf_spec_name(s, 1), "context-switches");
	assert_string_equal(fb_perf_spec_name(s, 4), "cs");
	assert_non_null(strstr(fb_perf_spec_encoding(s, 0), "PERF_COUNT_SW_TASK_CLOCK"));
	assert_non_null(strstr(fb_perf_spec_encoding(s, 4), "PERF_COUNT_SW_CONTEXT_SWITCHES"));
	assert_null(fb_perf_spec_name(s, 5));
	if (!kernel_side_forbidden(s)) {
		assert_null(fb_perf_spec_note(s));
		/* default privilege levels: user and kernel, nothing forced */
		assert_non_null(strstr(fb_perf_spec_encoding(s, 1), ":u=1:k=1"));
	}
	fb_perf_spec_free(s);
}

static void spec_keeps_modifiers(void **state)
{
	/* libpfm4 style (:u, :u:k) and perf's letter groups (:uk) */
	struct fb_perf_spec *s = parse_or_fail("task-clock:u,cpu-clock:uk,page-faults:u:k");

	if (kernel_side_forbidden(s))
		fb_skip("kernel.perf_event_paranoid forbids kernel-side counting for this user");
	assert_int_equal(fb_perf_spec_count(s), 3);
	assert_string_equal(fb_perf_spec_name(s, 0), "task-clock:u");
	assert_string_equal(fb_perf_spec_name(s, 1), "cpu-clock:uk");
	assert_non_null(strstr(fb_perf_spec_encoding(s, 0), ":u=1:k=0"));
	assert_non_null(strstr(fb_perf_spec_encoding(s, 1), "PERF_COUNT_SW_CPU_CLOCK:u=1:k=1"));
	assert_non_null(strstr(fb_perf_spec_encoding(s, 2), ":u=1:k=1"));
	fb_perf_spec_free(s);
}

static void spec_rejects_bad_names(void **state)
{
	static const struct {
		const char *list, *named;
	} bad[] = {
		{ "task-clock,bogus-event", "bogus-event" },
		{ "cycles:zz", "cycles:zz" },
		{ "task-clock,,cs", "empty" },
		{ "", "empty" },
		{ "cpu/event=0x3c,umask=0x0/", "cpu/event=0x3c,umask=0x0/" },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fb_perf_spec *s = (void *)1;
		assert_int_equal(fb_perf_spec_parse(bad[i].list, &s, err, sizeof(err)), -EINVAL);
		assert_null(s);
		if (!strstr(err, bad[i].named))
			fail_msg("error for '%s' does not name '%s': %s", bad[i].list, bad[i].named, err);
		assert_null(strchr(err, '\n'));
	}

	char many[512] = "";
	for (int i = 0; i <= FB_PERF_MAX_EVENTS; i++)
		strcat(many, i ? ",cs" : "cs");
	struct fb_perf_spec *s = NULL;
	assert_int_equal(fb_perf_spec_parse(many, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too many"));
}

static void spec_default_falls_back_to_software(void **state)
{
	struct fb_perf_spec *hw = NULL, *s = fb_perf_spec_default();
	char err[256];
	bool have_hw = fb_perf_spec_parse("cycles,instructions", &hw, err, sizeof(err)) == 0;

	assert_non_null(s);
	if (have_hw) {
		assert_int_equal(fb_perf_spec_count(s), 2);
		assert_string_equal(fb_perf_spec_name(s, 0), "cycles");
		assert_string_equal(fb_perf_spec_name(s, 1), "instructions");
	} else {
		const char *note = fb_perf_spec_note(s);
		printf("[  NOTE    ] %s\n", note ? note : "(none)");
		assert_int_equal(fb_perf_spec_count(s), 4);
		assert_string_equal(fb_perf_spec_name(s, 0), "task-clock");
		assert_string_equal(fb_perf_spec_name(s, 1), "context-switches");
		assert_string_equal(fb_perf_spec_name(s, 2), "cpu-migrations");
		assert_string_equal(fb_perf_spec_name(s, 3), "page-faults");
		assert_non_null(note);
		assert_non_null(strstr(note, "hardware counters"));
		assert_non_null(strstr(note, "using software events"));
		assert_null(strchr(note, '\n'));
	}
	fb_perf_spec_free(hw);
	fb_perf_spec_free(s);
}

/* ---- groups ----------------------------------------------------------------------- */

static void scale_rule(void **state)
{
	bool sc;

	assert_true(fb_perf_scale(100, 100, 100, &sc) == 100.0 && !sc);
	assert_true(fb_perf_scale(100, 400, 100, &sc) == 400.0 && sc);  /* ran a quarter of the time */
	assert_true(isnan(fb_perf_scale(0, 50, 0, &sc)) && !sc);        /* enabled, never scheduled: not counted */
	assert_true(isnan(fb_perf_scale(0, 0, 0, &sc)) && !sc);         /* never enabled: not counted */
	assert_true(fb_perf_scale(7, 7, 9, NULL) == 7.0);
}

/* Assert the task-clock/context-switches pair of a switchy run. */
static void check_switchy_values(const struct fb_perf_value *v)
{
	printf("[  INFO    ] %s=%.0f %s=%.0f enabled=%llu running=%llu\n", v[0].name, v[0].value,
	       v[1].name, v[1].value, (unsigned long long)v[0].time_enabled,
	       (unsigned long long)v[0].time_running);
	assert_string_equal(v[0].name, "task-clock");
	assert_string_equal(v[1].name, "context-switches");
	assert_true(v[0].value > 0);
	assert_true(v[1].raw > 0);     /* kernel-side count: exclude_kernel was not forced */
	assert_true(v[0].time_enabled > 0);
	assert_false(v[0].scaled);     /* software events never multiplex */
	assert_false(v[1].scaled);
}

static void group_counts_this_thread(void **state)
{
	struct fb_perf_spec *s = parse_or_fail("task-clock,context-switches");
	struct fb_perf_group *g;
	struct fb_perf_value v[2], again[2];

	if (kernel_side_forbidden(s))
		fb_skip("kernel.perf_event_paranoid forbids kernel-side counting for this user");
	assert_int_equal(fb_perf_group_open(s, 0, &g), 0);
	fb_perf_spec_free(s);                       /* the group keeps its own names */
	assert_int_equal(fb_perf_group_count(g), 2);

	assert_int_equal(fb_perf_group_read(g, v, 2), 0);   /* opened disabled: nothing yet */
	assert_int_equal(v[0].raw, 0);
	assert_int_equal(v[0].time_enabled, 0);

	fb_perf_group_enable(g);
	switchy_work();
	fb_perf_group_disable(g);
	assert_int_equal(fb_perf_group_read(g, v, 2), 0);
	check_switchy_values(v);

	switchy_work();                             /* disabled: must not count */
	assert_int_equal(fb_perf_group_read(g, again, 2), 0);
	assert_int_equal(again[1].raw, v[1].raw);
	assert_int_equal(again[0].raw, v[0].raw);

	fb_perf_group_reset(g);
	assert_int_equal(fb_perf_group_read(g, again, 1), 0);
	assert_int_equal(again[0].raw, 0);
	fb_perf_group_close(g);
}

struct worker {
	pthread_mutex_t m;
	pthread_cond_t cv;
	pid_t tid;
	int phase;             /* 1 tid known, 2 go, 3 done, 4 may exit */
};

static void worker_set(struct worker *w, int phase)
{
	pthread_mutex_lock(&w->m);
	w->phase = phase;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->m);
}

static void worker_wait(struct worker *w, int phase)
{
	pthread_mutex_lock(&w->m);
	while (w->phase < phase)
		pthread_cond_wait(&w->cv, &w->m);
	pthread_mutex_unlock(&w->m);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->m);
	w->tid = test_gettid();
	pthread_mutex_unlock(&w->m);
	worker_set(w, 1);
	worker_wait(w, 2);
	switchy_work();
	worker_set(w, 3);
	worker_wait(w, 4);
	return NULL;
}

static void group_counts_another_thread(void **state)
{
	struct fb_perf_spec *s = parse_or_fail("task-clock,context-switches");
	struct worker w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	struct fb_perf_group *g;
	struct fb_perf_value v[2], after[2];
	pthread_t t;

	if (kernel_side_forbidden(s))
		fb_skip("kernel.perf_event_paranoid forbids kernel-side counting for this user");
	assert_int_equal(pthread_create(&t, NULL, worker_main, &w), 0);
	worker_wait(&w, 1);
	pthread_mutex_lock(&w.m);
	pid_t tid = w.tid;
	pthread_mutex_unlock(&w.m);
	assert_int_not_equal(tid, test_gettid());

	int rc = fb_perf_group_open(s, tid, &g);
	if (rc) {
		worker_set(&w, 4);
		pthread_join(t, NULL);
		fail_msg("fb_perf_group_open(tid %d) = %d", (int)tid, rc);
	}
	fb_perf_group_enable(g);
	worker_set(&w, 2);
	worker_wait(&w, 3);
	fb_perf_group_disable(g);
	assert_int_equal(fb_perf_group_read(g, v, 2), 0);
	worker_set(&w, 4);
	pthread_join(t, NULL);
	check_switchy_values(v);

	assert_int_equal(fb_perf_group_read(g, after, 2), 0);   /* counts outlive the thread */
	assert_int_equal(after[1].raw, v[1].raw);
	fb_perf_group_close(g);
	fb_perf_spec_free(s);

	assert_int_equal(fb_perf_group_open(s = parse_or_fail("cs"), 0x7ffffff0, &g), -ESRCH);
	fb_perf_spec_free(s);
}

static void group_counts_hardware(void **state)
{
	struct fb_perf_spec *s = NULL;
	struct fb_perf_group *g;
	struct fb_perf_value v[2];
	char err[256], why[320];

	int rc = fb_perf_spec_parse("cycles,instructions", &s, err, sizeof(err));
	if (rc) {
		snprintf(why, sizeof(why), "cycles cannot be opened here: %s", err);
		fb_skip(why);
	}
	assert_int_equal(fb_perf_group_open(s, 0, &g), 0);
	fb_perf_group_enable(g);
	burn_cpu_ms(5);
	fb_perf_group_disable(g);
	assert_int_equal(fb_perf_group_read(g, v, 2), 0);
	printf("[  INFO    ] cycles=%.0f instructions=%.0f%s\n", v[0].value, v[1].value,
	       v[0].scaled ? " (scaled: multiplexed)" : "");
	assert_true(v[0].value > 0);
	assert_true(v[1].value > 0);
	fb_perf_group_close(g);
	fb_perf_spec_free(s);
}

/* In a forked child dropped to nobody: with perf_event_paranoid=2 the spec must
 * fall back to user-only counting and say so.  Exit code = what went wrong. */
static int user_only_child(void)
{
	struct fb_perf_spec *s = NULL;
	struct fb_perf_group *g;
	struct fb_perf_value v[2];
	char err[256];

	if (fb_perf_spec_parse("task-clock,context-switches", &s, err, sizeof(err))) {
		fprintf(stderr, "child: parse: %s\n", err);
		return 2;
	}
	const char *note = fb_perf_spec_note(s);
	if (!note || !strstr(note, "perf_event_paranoid=2") ||
	    strcmp(fb_perf_spec_name(s, 0), "task-clock:u") != 0) {
		fprintf(stderr, "child: note '%s', name '%s'\n", note ? note : "(null)",
			fb_perf_spec_name(s, 0));
		return 3;
	}
	if (fb_perf_group_open(s, 0, &g))
		return 4;
	fb_perf_group_enable(g);
	burn_cpu_ms(2);
	switchy_work();
	fb_perf_group_disable(g);
	if (fb_perf_group_read(g, v, 2) || !(v[0].value > 0) || v[1].raw != 0) {
		fprintf(stderr, "child: task-clock %.0f context-switches %llu\n", v[0].value,
			(unsigned long long)v[1].raw);
		return 5;       /* user-only task-clock counts; context switches read 0, as the note says */
	}
	fb_perf_group_close(g);
	fb_perf_spec_free(s);
	return 0;
}

static void spec_falls_back_to_user_only(void **state)
{
	int status;

	if (paranoid_level() != 2)
		fb_skip("kernel.perf_event_paranoid is not 2: no user-only fallback to provoke");
	if (geteuid() != 0)
		fb_skip("needs root to drop to an unprivileged user");
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(1);
		_exit(user_only_child());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- perf stat --control, with pipes playing perf's side ---------------------------- */

struct fake_perf {
	int ctl_rd, ack_wr;
	const char *reply;     /* what to answer each command with */
	int commands;          /* how many to answer */
	char seen[4][16];
	int nseen;
};

/* Read one command line from CTL, as perf does (byte by byte up to '\n'). */
static bool fake_perf_read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;
	char c;
	while (read(fd, &c, 1) == 1) {
		if (c == '\n' || c == '\0') {
			buf[n] = '\0';
			return true;
		}
		if (n + 1 < len)
			buf[n++] = c;
	}
	return false;
}

static void *fake_perf_main(void *arg)
{
	struct fake_perf *p = arg;

	for (int i = 0; i < p->commands && i < 4; i++) {
		if (!fake_perf_read_line(p->ctl_rd, p->seen[i], sizeof(p->seen[i])))
			break;
		p->nseen = i + 1;
		/* perf writes sizeof("ack\n"): the terminator too */
		if (write(p->ack_wr, p->reply, strlen(p->reply) + 1) < 0)
			break;
	}
	return NULL;
}

static void ctl_handshake_with_pipes(void **state)
{
	int ctl[2], ack[2];
	struct fake_perf p = { .reply = "ack\n", .commands = 3 };
	struct fb_perf_ctl *c;
	pthread_t t;

	assert_int_equal(pipe(ctl), 0);
	assert_int_equal(pipe(ack), 0);
	p.ctl_rd = ctl[0];
	p.ack_wr = ack[1];
	assert_int_equal(fb_perf_ctl_open(ctl[1], ack[0], &c), 0);
	assert_int_equal(pthread_create(&t, NULL, fake_perf_main, &p), 0);
	assert_int_equal(fb_perf_ctl_enable(c), 0);
	assert_int_equal(fb_perf_ctl_disable(c), 0);
	assert_int_equal(fb_perf_ctl_enable(c), 0);   /* the NUL after each ack is skipped */
	pthread_join(t, NULL);
	assert_int_equal(p.nseen, 3);
	assert_string_equal(p.seen[0], "enable");
	assert_string_equal(p.seen[1], "disable");
	assert_string_equal(p.seen[2], "enable");
	fb_perf_ctl_close(c);
	for (int i = 0; i < 2; i++) {
		close(ctl[i]);
		close(ack[i]);
	}
}

static void ctl_reports_timeout_protocol_and_gone(void **state)
{
	int ctl[2], ack[2];
	struct fake_perf p = { .reply = "nak\n", .commands = 1 };
	struct fb_perf_ctl *c;
	pthread_t t;

	assert_int_equal(pipe(ctl), 0);
	assert_int_equal(pipe(ack), 0);
	assert_int_equal(fb_perf_ctl_open(ctl[1], ack[0], &c), 0);
	fb_perf_ctl_set_timeout_ms(c, 50);
	assert_int_equal(fb_perf_ctl_enable(c), -ETIMEDOUT);      /* nobody answers */

	char drain[64];
	assert_true(read(ctl[0], drain, sizeof(drain)) > 0);
	p.ctl_rd = ctl[0];
	p.ack_wr = ack[1];
	assert_int_equal(pthread_create(&t, NULL, fake_perf_main, &p), 0);
	fb_perf_ctl_set_timeout_ms(c, 2000);
	assert_int_equal(fb_perf_ctl_disable(c), -EPROTO);        /* a wrong answer */
	pthread_join(t, NULL);

	close(ctl[0]);                                            /* perf went away */
	assert_int_equal(fb_perf_ctl_enable(c), -EPIPE);          /* and no SIGPIPE killed us */
	sigset_t pending;
	sigpending(&pending);
	assert_false(sigismember(&pending, SIGPIPE));
	fb_perf_ctl_close(c);
	close(ctl[1]);
	close(ack[0]);
	close(ack[1]);
}

static void ctl_validates_fds(void **state)
{
	int ctl[2], ack[2];
	struct fb_perf_ctl *c = (void *)1;

	assert_int_equal(pipe(ctl), 0);
	assert_int_equal(pipe(ack), 0);
	assert_int_equal(fb_perf_ctl_open(ctl[0], ack[0], &c), -EBADF);   /* ctl read-only */
	assert_null(c);
	assert_int_equal(fb_perf_ctl_open(ctl[1], ack[1], &c), -EBADF);   /* ack write-only */
	assert_int_equal(fb_perf_ctl_open(ctl[1], ctl[1], &c), -EINVAL);
	assert_int_equal(fb_perf_ctl_open(-1, ack[0], &c), -EINVAL);
	int closed = dup(ctl[1]);
	close(closed);
	assert_int_equal(fb_perf_ctl_open(closed, ack[0], &c), -EBADF);

	/* no ack fd: commands are written, nothing is awaited */
	assert_int_equal(fb_perf_ctl_open(ctl[1], -1, &c), 0);
	assert_int_equal(fb_perf_ctl_enable(c), 0);
	char buf[16] = "";
	assert_int_equal(read(ctl[0], buf, sizeof(buf) - 1), 7);
	assert_string_equal(buf, "enable\n");
	fb_perf_ctl_close(c);
	for (int i = 0; i < 2; i++) {
		close(ctl[i]);
		close(ack[i]);
	}
}

/* ---- perf stat --control, for real ------------------------------------------------- */

/* Under `perf stat --delay=-1 --control fd:CTL,ACK` this binary re-runs itself
 * with FB_TEST_PERF_CTL="CTL,ACK": burn CPU outside and inside an enabled window
 * and exit before cmocka starts. */
__attribute__((constructor)) static void perf_stat_child(void)
{
	const char *env = getenv("FB_TEST_PERF_CTL");
	struct fb_perf_ctl *c;
	int ctl, ack;

	if (!env || sscanf(env, "%d,%d", &ctl, &ack) != 2)
		return;
	if (fb_perf_ctl_open(ctl, ack, &c))
		_exit(20);
	burn_cpu_ms(100);
	if (fb_perf_ctl_enable(c))
		_exit(21);
	burn_cpu_ms(20);
	if (fb_perf_ctl_disable(c))
		_exit(22);
	burn_cpu_ms(100);
	fb_perf_ctl_close(c);
	_exit(0);
}

static bool find_perf(char *path, size_t len)
{
	const char *cands[] = { "/usr/bin/perf", "/usr/local/bin/perf", "/usr/sbin/perf" };
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (access(cands[i], X_OK) == 0) {
			snprintf(path, len, "%s", cands[i]);
			return true;
		}
	return false;
}

/* task-clock msec from perf stat -x, output, or -1. */
static double perf_csv_task_clock(const char *file)
{
	char line[512];
	double v = -1;
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, ",task-clock,") && sscanf(line, "%lf", &v) != 1)
			v = -1;
	fclose(f);
	return v;
}

static void ctl_under_real_perf_stat(void **state)
{
	char perf[64], dir[] = "/tmp/fb_perf_ctlXXXXXX", ctlp[96], ackp[96], out[96], log[96];
	char ctlarg[64], envv[64], self[4096];
	int status;

	if (!find_perf(perf, sizeof(perf)))
		fb_skip("perf is not installed");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	assert_non_null(mkdtemp(dir));
	snprintf(ctlp, sizeof(ctlp), "%s/ctl.fifo", dir);
	snprintf(ackp, sizeof(ackp), "%s/ack.fifo", dir);
	snprintf(out, sizeof(out), "%s/stat.csv", dir);
	snprintf(log, sizeof(log), "%s/perf.log", dir);
	assert_int_equal(mkfifo(ctlp, 0600), 0);
	assert_int_equal(mkfifo(ackp, 0600), 0);
	/* the documented recipe: both fifos opened read-write, inherited by perf and its child */
	int ctl = open(ctlp, O_RDWR), ack = open(ackp, O_RDWR);
	assert_true(ctl >= 0 && ack >= 0);
	snprintf(ctlarg, sizeof(ctlarg), "fd:%d,%d", ctl, ack);
	snprintf(envv, sizeof(envv), "FB_TEST_PERF_CTL=%d,%d", ctl, ack);

	char *argv[] = { perf, "stat", "--delay=-1", "--control", ctlarg, "-e", "task-clock",
			 "-x", ",", "-o", out, "--", self, NULL };
	size_t ne = 0;
	while (environ[ne])
		ne++;
	char **envp = calloc(ne + 2, sizeof(*envp));
	assert_non_null(envp);
	memcpy(envp, environ, ne * sizeof(*envp));
	envp[ne] = envv;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pid_t pid;
	int rc = posix_spawn(&pid, perf, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	assert_int_equal(rc, 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	double ms = perf_csv_task_clock(out);
	printf("[  INFO    ] perf stat: exit %d, task-clock %.2f ms counted of ~220 ms burnt\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1, ms);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || ms <= 0) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "cat %s %s 1>&2", log, out);
		if (system(cmd) < 0)
			perror("system");
	}
	close(ctl);
	close(ack);
	unlink(ctlp);
	unlink(ackp);
	unlink(out);
	unlink(log);
	rmdir(dir);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* Counted only inside the window: 20 ms burnt there, 200 ms outside. */
	assert_true(ms > 0);
	assert_true(ms < 150);
}

/* ---- RAPL -------------------------------------------------------------------------- */

static void rapl_package_energy(void **state)
{
	struct fb_rapl *r;
	double j0, j1;
	int rc = fb_rapl_open(&r);

	if (rc == -ENODEV)
		fb_skip("no power/energy-pkg event on this machine (no RAPL: VM or non-Intel/AMD)");
	if (rc == -EACCES)
		fb_skip("system-wide counting not allowed for this user (perf_event_paranoid)");
	assert_int_equal(rc, 0);
	assert_int_equal(fb_rapl_read_joules(r, &j0), 0);
	usleep(20000);
	assert_int_equal(fb_rapl_read_joules(r, &j1), 0);
	printf("[  INFO    ] package energy over 20 ms: %.6f J\n", j1 - j0);
	assert_true(j1 >= j0);
	fb_rapl_close(r);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *const fake_pmu_files[] = { "type", "cpumask", "format/event",
	"events/energy-pkg", "events/energy-pkg.scale", "events/energy-pkg.unit" };

static void fake_pmu_remove(const char *dir)
{
	char path[128];
	for (size_t i = 0; i < sizeof(fake_pmu_files) / sizeof(fake_pmu_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, fake_pmu_files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/events", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/format", dir);
	rmdir(path);
	rmdir(dir);
}

/* A fake power PMU in a temp dir whose energy-pkg is really the software cpu-clock
 * (type 1, config 0, counting ns) with scale 1e-9: "joules" = seconds of clock. */
static void rapl_reads_a_pmu_through_its_sysfs_files(void **state)
{
	char dir[] = "/tmp/fb_perf_pmuXXXXXX", sub[64];
	struct fb_rapl *r;
	double j = 0;

	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/events", dir);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/format", dir);
	mkdir(sub, 0700);
	write_file(dir, "type", "1\n");
	write_file(dir, "cpumask", "0\n");
	write_file(dir, "format/event", "config:0-7\n");
	write_file(dir, "events/energy-pkg", "event=0x00\n");
	write_file(dir, "events/energy-pkg.scale", "1e-9\n");
	write_file(dir, "events/energy-pkg.unit", "Watts\n");
	int wrong_unit = fb_rapl_open_at(dir, &r);                /* not an energy unit */
	write_file(dir, "events/energy-pkg.unit", "Joules\n");
	int rc = fb_rapl_open_at(dir, &r);
	if (rc == 0) {
		usleep(20000);
		rc = fb_rapl_read_joules(r, &j);
		fb_rapl_close(r);
	}
	fake_pmu_remove(dir);

	assert_int_equal(wrong_unit, -ENODEV);
	if (rc == -EACCES)
		fb_skip("system-wide counting not allowed for this user (perf_event_paranoid)");
	assert_int_equal(rc, 0);
	printf("[  INFO    ] fake energy-pkg (cpu-clock, scale 1e-9) over 20 ms: %.4f\n", j);
	assert_true(j > 0.001);   /* at least 1 ms of cpu-clock: the scale file was applied */
	assert_true(j < 100.0);   /* and not left at 1 count = 1 J */
	assert_int_equal(fb_rapl_open_at("/nonexistent/power", &r), -ENODEV);
}

FB_TEST_MAIN(cmocka_unit_test(spec_parses_software_names),
	     cmocka_unit_test(spec_keeps_modifiers),
	     cmocka_unit_test(spec_rejects_bad_names),
	     cmocka_unit_test(spec_default_falls_back_to_software),
	     cmocka_unit_test(spec_falls_back_to_user_only),
	     cmocka_unit_test(scale_rule),
	     cmocka_unit_test(group_counts_this_thread),
	     cmocka_unit_test(group_counts_another_thread),
	     cmocka_unit_test(group_counts_hardware),
	     cmocka_unit_test(ctl_handshake_with_pipes),
	     cmocka_unit_test(ctl_reports_timeout_protocol_and_gone),
	     cmocka_unit_test(ctl_validates_fds),
	     cmocka_unit_test(ctl_under_real_perf_stat),
	     cmocka_unit_test(rapl_package_energy),
	     cmocka_unit_test(rapl_reads_a_pmu_through_its_sysfs_files))
