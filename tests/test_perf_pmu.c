/* tests/test_perf_pmu.c — the perf layer on a PMU played through the seam
 * under its system calls (src/perf_sys.h): what this VM cannot show, as a
 * bare-metal machine's kernel would return it.  Each test is one behaviour
 * `perf stat` has and fencebench must match:
 *   - a multiplexed count is scaled by the times of the region (the deltas
 *     since the reset), not since the group was opened;
 *   - a failure to open counters is one note per kind for a run, naming the
 *     roles, never one per thread;
 *   - `--perf-events none` opens no counter, and under `perf stat --control`
 *     fencebench's own counters are off unless asked for, and it says so;
 *   - perf stat's acks are matched to commands in order (a late ack never
 *     answers the next command), and a write to a FIFO nobody reads is
 *     bounded by the timeout;
 *   - libpfm4's encoder is handed the whole perf_event_attr's size (left 0,
 *     it fills only the first version's 64 bytes: config2 is lost).
 * Runs of the harness (fb_main over a one-scenario table) go in a forked
 * child with the played PMU, bounded in time; its state is in shared memory. */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <perfmon/pfmlib_perf_event.h>

#include "src/fb_scenario.h"
#include "src/perf.h"
#include "src/perf_sys.h"

/* ---- the played PMU ------------------------------------------------------------- */

#define FAKE_FD0 10000   /* counter fds the PMU hands out: FAKE_FD0, FAKE_FD0 + 1, ... */

#define FAKE_FDS 256

struct fake_pmu {
	int open_errno;          /* != 0: opens on a thread (tid > 0) fail so; probes (tid 0) succeed */
	bool user_only;          /* kernel-side counting forbidden (perf_event_paranoid 2): EACCES */
	int read_errno;          /* != 0: reads of a counter fail so */
	unsigned max_group;      /* != 0: a group takes at most this many events (more: EINVAL, as x86) */
	unsigned opens;          /* successful perf_event_open calls */
	unsigned fds;            /* handed out so far */
	uint64_t enabled, running;   /* every group's times */
	uint64_t tick, tick_enabled; /* added at every read: to both times (a PMU that counts all
				      * along), to time_enabled only (one that never schedules the event) */
	uint64_t count[FAKE_FDS];    /* per fd (fd - FAKE_FD0) */
	int leader[FAKE_FDS];        /* per fd: the index of its group's leader */
	unsigned size[FAKE_FDS];     /* per leader: events in its group */
	struct perf_event_attr last; /* the attr of the last open */
};
static struct fake_pmu *pmu;   /* MAP_SHARED: a forked run's opens are seen by the parent */

static int fake_open(struct perf_event_attr *attr, pid_t tid, int cpu, int group_fd, unsigned long flags)
{
	(void)cpu, (void)flags;
	if (tid > 0 && pmu->open_errno) {
		errno = pmu->open_errno;
		return -1;
	}
	if (pmu->user_only && !attr->exclude_kernel) {
		errno = EACCES;
		return -1;
	}
	int lead = group_fd < 0 ? (int)pmu->fds : group_fd - FAKE_FD0;
	if (pmu->fds == FAKE_FDS || lead < 0 || lead >= FAKE_FDS ||
	    (group_fd >= 0 && pmu->max_group && pmu->size[lead] >= pmu->max_group)) {
		errno = EINVAL;
		return -1;
	}
	pmu->opens++;
	pmu->last = *attr;
	pmu->leader[pmu->fds] = lead;
	pmu->size[lead]++;
	return FAKE_FD0 + (int)pmu->fds++;
}

/* A counter fd reads the group as the kernel lays it out; others are real. */
static ssize_t fake_read(int fd, void *buf, size_t len)
{
	if (fd < FAKE_FD0)
		return read(fd, buf, len);
	if (pmu->read_errno) {
		errno = pmu->read_errno;
		return -1;
	}
	uint64_t *w = buf;
	int lead = fd - FAKE_FD0;
	pmu->enabled += pmu->tick + pmu->tick_enabled;
	pmu->running += pmu->tick;
	size_t nr = 0;
	for (unsigned i = 0; i < pmu->fds; i++)   /* the leader, then its members in open order */
		if (pmu->leader[i] == lead && (nr + 4) * sizeof(uint64_t) <= len)
			w[3 + nr++] = pmu->count[i];
	w[0] = nr;
	w[1] = pmu->enabled;
	w[2] = pmu->running;
	return (ssize_t)((3 + nr) * sizeof(uint64_t));
}

/* RESET zeroes the counts, not the times, as the kernel's does. */
static int fake_ioctl(int fd, unsigned long request, unsigned long arg)
{
	(void)arg;
	if (fd < FAKE_FD0) {
		errno = ENOTTY;
		return -1;
	}
	if (request == PERF_EVENT_IOC_RESET)
		for (unsigned i = 0; i < pmu->fds; i++)
			if (pmu->leader[i] == fd - FAKE_FD0)
				pmu->count[i] = 0;
	return 0;
}

static int fake_close(int fd)
{
	return fd < FAKE_FD0 ? close(fd) : 0;
}

static int real_poll(struct pollfd *fds, unsigned long nfds, int timeout_ms)
{
	return poll(fds, (nfds_t)nfds, timeout_ms);
}

static const struct fb_perf_sys fake_sys = {
	.event_open = fake_open, .read = fake_read, .ioctl = fake_ioctl,
	.close = fake_close, .write = write, .poll = real_poll,
};

static int pmu_setup(void **state)
{
	(void)state;
	pmu = mmap(NULL, sizeof(*pmu), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return pmu == MAP_FAILED ? -1 : 0;
}

static int pmu_teardown(void **state)
{
	(void)state;
	munmap(pmu, sizeof(*pmu));
	return 0;
}

/* A fresh PMU under the seam; pmu_stop puts the real calls back. */
static void pmu_start(void)
{
	memset(pmu, 0, sizeof(*pmu));
	fb_perf_sys_set(&fake_sys);
}

static void pmu_stop(void)
{
	fb_perf_sys_set(NULL);
}

/* ---- (1) scaling from the region's deltas ------------------------------------- */

/* Warm-up: 1 ms enabled and running.  Region (after the reset): 2 ms more
 * enabled, 1 ms of them running (multiplexed half the time), 300 counted.
 * perf stat scales the region's deltas: 300 x 2/1 = 600.  Scaled by the
 * times since open it would be 300 x 3/2 = 450. */
static void multiplexed_counts_scale_by_the_region(void **state)
{
	(void)state;
	struct fb_perf_spec *s = NULL;
	struct fb_perf_group *g = NULL;
	struct fb_perf_value v[2];
	char err[256];

	assert_int_equal(fb_perf_spec_parse("task-clock,context-switches", &s, err, sizeof(err)), 0);
	pmu_start();
	assert_int_equal(fb_perf_group_open(s, 0, &g), 0);   /* fds 0 (leader) and 1 */
	pmu->enabled = pmu->running = 1000000;
	pmu->count[0] = 777;
	pmu->count[1] = 5;
	fb_perf_group_reset(g);
	pmu->enabled += 2000000;
	pmu->running += 1000000;
	pmu->count[0] = 300;
	pmu->count[1] = 4;
	assert_int_equal(fb_perf_group_read(g, v, 2), 0);
	printf("[  INFO    ] %s: raw %llu over enabled %llu running %llu -> %.1f\n", v[0].name,
	       (unsigned long long)v[0].raw, (unsigned long long)v[0].time_enabled,
	       (unsigned long long)v[0].time_running, v[0].value);
	assert_int_equal(v[0].raw, 300);
	assert_int_equal(v[0].time_enabled, 2000000);
	assert_int_equal(v[0].time_running, 1000000);
	assert_true(v[0].scaled);
	assert_true(fabs(v[0].value - 600.0) < 1e-9);
	assert_true(fabs(v[1].value - 8.0) < 1e-9);
	fb_perf_group_close(g);
	fb_perf_spec_free(s);
	pmu_stop();
}

/* libpfm4 fills as much of the attr as its size says: a size of 0 reads as
 * the first version's 64 bytes, so an event's config2 (beyond them) would be
 * lost.  The encoder must be handed the whole attr's size. */
static uint32_t encoder_saw_size;
static int encoder_calls;

static int recording_pfm_encode(const char *name, int dfl_plm, int os, void *arg)
{
	pfm_perf_encode_arg_t *a = arg;
	encoder_saw_size = a->attr->size;
	encoder_calls++;
	return fb_perf_sys_real.pfm_encode(name, dfl_plm, os, arg);
}

static const struct fb_perf_sys encoder_sys = {
	.event_open = fake_open, .read = fake_read, .ioctl = fake_ioctl,
	.close = fake_close, .write = write, .poll = real_poll, .pfm_encode = recording_pfm_encode,
};

static void libpfm_is_handed_the_whole_attr(void **state)
{
	(void)state;
	struct fb_perf_spec *s = NULL;
	char err[256];
	encoder_calls = 0;
	const struct fb_perf_sys *old = fb_perf_sys_set(&encoder_sys);
	int rc = fb_perf_spec_parse("task-clock", &s, err, sizeof(err));
	fb_perf_sys_set(old == &fb_perf_sys_real ? NULL : old);
	assert_int_equal(rc, 0);
	assert_true(encoder_calls >= 1);
	assert_int_equal(encoder_saw_size, sizeof(struct perf_event_attr));
	fb_perf_spec_free(s);
}

/* ---- runs of the harness on the played PMU -------------------------------------- */

/* Wait for child pid at most ms: its status; killed and failed, naming what, past that. */
static int t_run(struct fb_run *run)
{
	fb_run_thread(run, "role-a", gettid());
	fb_run_thread(run, "role-b", gettid());
	fb_run_measure_begin(run);
	fb_run_measure_end(run, 1);
	fb_run_metric(run, "done", 1, "runs");
	return 0;
}

static const struct fb_scenario t_scenario = {
	.name = "t", .summary = "one region, three role threads", .default_iterations = 1, .run = t_run,
};
static const struct fb_scenario *const t_table[] = { &t_scenario, NULL };

/* `run t --format FORMAT --out FILE -q ARGS...` through fb_main in a child
 * with the played PMU, bounded to 60 s: the file's text (malloc'd), or NULL
 * when the run failed (after printing its output). */
static char *run_t_as(const char *format, const char *const *args, size_t nargs)
{
	char dir[] = "/tmp/fb_test_perf_pmu.XXXXXX", out[64], log[64];
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/r.out", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	const char *argv[32] = { "fencebench", "run", "t", "--format", format, "--out", out, "-q", "--warmup", "0" };
	size_t argc = 10;
	for (size_t i = 0; i < nargs && argc < 31; i++)
		argv[argc++] = args[i];
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 1);
		dup2(fd, 2);
		fb_perf_sys_set(&fake_sys);
		_exit(fb_main((int)argc, (char **)argv, t_table));
	}
	int status = fb_wait_bounded(pid, 60000, "run t");
	bool ok = WIFEXITED(status) && !WEXITSTATUS(status);
	char *text = ok ? fb_slurp(out) : NULL;
	if (!text) {
		char *l = fb_slurp(log);
		printf("[  LOG     ] run t exited %d:\n%s\n", status, l ? l : "(no log)");
		free(l);
	}
	unlink(out);
	unlink(log);
	rmdir(dir);
	return text;
}

/* run_t_as "json", parsed (NULL: the run failed). */
static json_t *run_t(const char *const *args, size_t nargs)
{
	char *text = run_t_as("json", args, nargs);
	json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	return doc;
}

/* The notes of a result document that contain `what`. */
static size_t notes_with(json_t *doc, const char *what)
{
	json_t *notes = json_object_get(json_object_get(doc, "context"), "notes"), *n;
	size_t i, hits = 0;
	json_array_foreach(notes, i, n)
		if (strstr(json_string_value(n), what)) {
			printf("[  NOTE    ] %s\n", json_string_value(n));
			hits++;
		}
	return hits;
}

/* perf.* metrics with a value in the document's iteration entries (not the aggregates). */
static size_t perf_metrics(json_t *doc)
{
	json_t *entries = json_object_get(doc, "benchmarks"), *e;
	size_t i, n = 0;
	json_array_foreach(entries, i, e) {
		const char *k;
		json_t *v;
		if (strcmp(json_string_value(json_object_get(e, "run_type")), "iteration"))
			continue;
		json_object_foreach(e, k, v)
			n += !strncmp(k, "perf.", 5) && json_is_number(v);
	}
	return n;
}

/* ---- (3) not counted is never a 0 ------------------------------------------------ */

/* An event enabled but never on the PMU in the region (time_running 0: e.g.
 * the NMI watchdog holds the counter) is perf stat's <not counted> in every
 * format: JSON null with the reason in fencebench.absent, "<not counted>" on
 * the console and in CSV, and one note for the run. */
static void not_counted_is_never_a_zero(void **state)
{
	(void)state;
	static const char *const args[] = { "--perf-events", "task-clock,context-switches" };
	pmu_start();
	pmu->tick_enabled = 1000;   /* enabled all along, never running */
	json_t *doc = run_t(args, 2);
	char *console = run_t_as("console", args, 2), *csv = run_t_as("csv", args, 2);
	pmu_stop();
	assert_non_null(doc);
	assert_non_null(console);
	assert_non_null(csv);
	json_t *e = json_array_get(json_object_get(doc, "benchmarks"), 0);
	json_t *v = json_object_get(e, "perf.app.task-clock");
	assert_non_null(v);
	assert_true(json_is_null(v));
	json_t *why = json_object_get(json_object_get(json_object_get(e, "fencebench"), "absent"), "perf.app.task-clock");
	assert_non_null(why);
	assert_string_equal(json_string_value(why), "not counted");
	assert_int_equal(perf_metrics(doc), 0);
	assert_int_equal(notes_with(doc, "<not counted>"), 1);
	assert_non_null(strstr(console, "<not counted>"));
	assert_non_null(strstr(csv, "<not counted>"));
	assert_null(strstr(csv, ",0,"));
	json_decref(doc);
	free(console);
	free(csv);
}

/* A role whose counters did not open shows each event as not counted (the
 * kernel refused: permission) or not supported, never as missing or 0. */
static void refused_counters_are_null_not_missing(void **state)
{
	(void)state;
	static const char *const args[] = { "--perf-events", "task-clock" };
	pmu_start();
	pmu->open_errno = EOPNOTSUPP;
	json_t *doc = run_t(args, 2);
	pmu_stop();
	assert_non_null(doc);
	json_t *e = json_array_get(json_object_get(doc, "benchmarks"), 0);
	assert_true(json_is_null(json_object_get(e, "perf.role-a.task-clock")));
	json_t *why = json_object_get(json_object_get(json_object_get(e, "fencebench"), "absent"), "perf.role-a.task-clock");
	assert_string_equal(json_string_value(why), "not supported");
	json_decref(doc);
}

/* ---- (8) a failed read is reported --------------------------------------------- */

/* A read of the counters that fails is said once for the run, naming the
 * roles, and their counts are <not counted>: never dropped in silence. */
static void a_failed_read_is_reported(void **state)
{
	(void)state;
	static const char *const args[] = { "--perf-events", "task-clock" };
	pmu_start();
	pmu->read_errno = EIO;
	json_t *doc = run_t(args, 2);
	pmu_stop();
	assert_non_null(doc);
	assert_int_equal(notes_with(doc, "counters not read on app, role-a, role-b"), 1);
	json_t *e = json_array_get(json_object_get(doc, "benchmarks"), 0);
	assert_true(json_is_null(json_object_get(e, "perf.app.task-clock")));
	json_decref(doc);
}

/* ---- (6) one note per kind per run ---------------------------------------------- */

/* perf_event_paranoid 3 or 4 without CAP_PERFMON: every role thread's open
 * is refused.  One note says so for the run, naming the three roles; no
 * thread id in it (it would defeat the de-duplication). */
static void refused_counters_are_one_note_per_run(void **state)
{
	(void)state;
	pmu_start();
	pmu->open_errno = EACCES;
	static const char *const args[] = { "--perf-events", "task-clock,context-switches", "--repetitions", "2" };
	json_t *doc = run_t(args, 4);
	pmu_stop();
	assert_non_null(doc);
	assert_int_equal(notes_with(doc, "no counters"), 1);
	assert_int_equal(notes_with(doc, "3 of 3 role threads (app, role-a, role-b)"), 1);
	assert_int_equal(notes_with(doc, "tid"), 0);
	assert_int_equal(notes_with(doc, strerror(EACCES)), 1);
	assert_int_equal(perf_metrics(doc), 0);
	json_decref(doc);
}

/* ---- (7) --perf-events none, and perf stat --control ---------------------------- */

/* `--perf-events none` opens no counter at all and reports none. */
static void perf_events_none_counts_nothing(void **state)
{
	(void)state;
	pmu_start();
	static const char *const args[] = { "--perf-events", "none" };
	json_t *doc = run_t(args, 2);
	unsigned opens = pmu->opens;
	pmu_stop();
	assert_non_null(doc);
	assert_int_equal(opens, 0);
	assert_int_equal(perf_metrics(doc), 0);
	json_decref(doc);
}

/* Under perf stat --control (--perf-ctl-fd) fencebench's own counters are
 * off unless --perf-events asks for them, and a note says so; asked for,
 * they count, and the note is not there. */
static void under_perf_control_own_counters_are_off_unless_asked(void **state)
{
	(void)state;
	int ctl[2];
	char fd[16];
	assert_int_equal(pipe(ctl), 0);
	snprintf(fd, sizeof(fd), "%d", ctl[1]);
	pmu_start();
	const char *const off[] = { "--perf-ctl-fd", fd };
	json_t *doc = run_t(off, 2);
	unsigned opens_off = pmu->opens;
	pmu_start();
	pmu->tick = 1000;
	const char *const on[] = { "--perf-ctl-fd", fd, "--perf-events", "task-clock" };
	json_t *asked = run_t(on, 4);
	unsigned opens_on = pmu->opens;
	pmu_stop();
	close(ctl[0]);
	close(ctl[1]);
	assert_non_null(doc);
	assert_non_null(asked);
	assert_int_equal(opens_off, 0);
	assert_int_equal(perf_metrics(doc), 0);
	assert_int_equal(notes_with(doc, "own counters are off"), 1);
	assert_true(opens_on >= 3);          /* the probe and a group per role */
	assert_true(perf_metrics(asked) > 0);
	assert_int_equal(notes_with(asked, "own counters are off"), 0);
	json_decref(doc);
	json_decref(asked);
}

/* ---- (2) a group too big for the PMU ------------------------------------------ */

/* A PMU with two counters refuses a third member with EINVAL.  The group is
 * split, as perf stat's weak groups fall back: the third event counts in a
 * group of its own; a run says so once, naming the moved event. */
static void a_group_too_big_is_split_and_said_once(void **state)
{
	(void)state;
	struct fb_perf_spec *s = NULL;
	struct fb_perf_group *g = NULL;
	struct fb_perf_value v[3];
	char err[256];
	assert_int_equal(fb_perf_spec_parse("task-clock,context-switches,page-faults", &s, err, sizeof(err)), 0);
	pmu_start();
	pmu->max_group = 2;
	int rc = fb_perf_group_open(s, 0, &g);
	if (!rc) {
		pmu->enabled = pmu->running = 1000;
		pmu->count[0] = 10;    /* task-clock, leading the first group */
		pmu->count[1] = 11;    /* context-switches, its member */
		pmu->count[2] = 42;    /* page-faults, leading the second */
		rc = fb_perf_group_read(g, v, 3);
	}
	pmu_stop();
	assert_int_equal(rc, 0);
	assert_string_equal(v[2].name, "page-faults");   /* valid until close */
	fb_perf_group_close(g);
	fb_perf_spec_free(s);
	assert_true(v[0].value == 10.0 && v[1].value == 11.0 && v[2].value == 42.0);

	pmu_start();
	pmu->max_group = 2;
	pmu->tick = 1000;
	static const char *const args[] = { "--perf-events", "task-clock,context-switches,page-faults",
					    "--repetitions", "2" };
	json_t *doc = run_t(args, 4);
	pmu_stop();
	assert_non_null(doc);
	assert_int_equal(notes_with(doc, "no group of all 3 events: page-faults moved"), 1);
	assert_int_equal(notes_with(doc, "no counters"), 0);
	assert_int_equal(perf_metrics(doc), 2 * 3 * 3);   /* 2 repetitions x 3 roles x 3 events */
	json_decref(doc);
}

/* ---- (5) perf stat's acks in order; bounded writes -------------------------------- */

static void put_ack(int fd)
{
	assert_int_equal(write(fd, "ack\n", 5), 5);   /* perf writes the terminator too */
}

/* enable times out; its ack comes late.  disable must not take that ack for
 * its own: perf has not answered the disable yet, so disable times out too.
 * Then both owed acks and the next command's come: the next enable is answered. */
static void a_late_ack_never_answers_the_next_command(void **state)
{
	(void)state;
	int ctl[2], ack[2];
	struct fb_perf_ctl *c;
	assert_int_equal(pipe(ctl), 0);
	assert_int_equal(pipe(ack), 0);
	assert_int_equal(fb_perf_ctl_open(ctl[1], ack[0], &c), 0);
	fb_perf_ctl_set_timeout_ms(c, 50);
	assert_int_equal(fb_perf_ctl_enable(c), -ETIMEDOUT);
	put_ack(ack[1]);                                   /* enable's, late */
	assert_int_equal(fb_perf_ctl_disable(c), -ETIMEDOUT);
	put_ack(ack[1]);                                   /* disable's, late */
	put_ack(ack[1]);                                   /* the next enable's */
	assert_int_equal(fb_perf_ctl_enable(c), 0);
	assert_int_equal(fb_perf_ctl_disable(c), -ETIMEDOUT);   /* nothing left over */
	char buf[64] = "";
	assert_true(read(ctl[0], buf, sizeof(buf) - 1) > 0);
	assert_string_equal(buf, "enable\ndisable\nenable\ndisable\n");
	fb_perf_ctl_close(c);
	for (int i = 0; i < 2; i++) {
		close(ctl[i]);
		close(ack[i]);
	}
}

/* An ack left in the FIFO by an earlier process (it timed out and exited;
 * perf acked after it) answers none of this handle's commands: the first
 * enable still waits for its own. */
static void an_ack_left_from_an_earlier_process_answers_nothing(void **state)
{
	(void)state;
	int ctl[2], ack[2];
	struct fb_perf_ctl *c;
	assert_int_equal(pipe(ctl), 0);
	assert_int_equal(pipe(ack), 0);
	put_ack(ack[1]);                                   /* the earlier process's, late */
	assert_int_equal(fb_perf_ctl_open(ctl[1], ack[0], &c), 0);
	fb_perf_ctl_set_timeout_ms(c, 50);
	assert_int_equal(fb_perf_ctl_enable(c), -ETIMEDOUT);
	put_ack(ack[1]);                                   /* enable's, late */
	put_ack(ack[1]);                                   /* disable's */
	assert_int_equal(fb_perf_ctl_disable(c), 0);
	fb_perf_ctl_close(c);
	for (int i = 0; i < 2; i++) {
		close(ctl[i]);
		close(ack[i]);
	}
}

/* A control FIFO nobody reads, full: the write gives up at the timeout
 * instead of blocking for ever.  In a child, killed after 10 s. */
static void a_full_control_fifo_costs_the_timeout_not_a_hang(void **state)
{
	(void)state;
	int ctl[2];
	assert_int_equal(pipe(ctl), 0);
	int fl = fcntl(ctl[1], F_GETFL);
	assert_int_equal(fcntl(ctl[1], F_SETFL, fl | O_NONBLOCK), 0);
	while (write(ctl[1], "xxxxxxxxxxxxxxxx", 16) > 0)
		;
	assert_int_equal(fcntl(ctl[1], F_SETFL, fl), 0);   /* blocking again, as perf's FIFO is */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct fb_perf_ctl *c;
		if (fb_perf_ctl_open(ctl[1], -1, &c))
			_exit(3);
		fb_perf_ctl_set_timeout_ms(c, 100);
		_exit(fb_perf_ctl_enable(c) == -ETIMEDOUT ? 0 : 4);
	}
	int status = fb_wait_bounded(pid, 10000, "fb_perf_ctl_enable on a full control FIFO");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(ctl[0]);
	close(ctl[1]);
}

/* ---- (4) modifiers with their case; (8) group-only modifiers ------------------- */

/* perf's modifiers are case-sensitive, libpfm4's attributes are not: cycles:H
 * is perf's "host only" (user and kernel, not guest), never libpfm4's :h
 * (hypervisor only, which reads 0); a letter perf does not map here
 * (cycles:U) is refused, not read as :u. */
static void modifiers_mean_what_perf_says(void **state)
{
	(void)state;
	struct fb_perf_spec *s = NULL;
	char err[256] = "";
	pmu_start();
	int rc = fb_perf_spec_parse("cycles:H", &s, err, sizeof(err));
	struct perf_event_attr a = pmu->last;
	struct fb_perf_spec *u = NULL;
	char err_u[256] = "";
	int rc_u = fb_perf_spec_parse("cycles:U", &u, err_u, sizeof(err_u));
	pmu_stop();
	if (rc)
		fail_msg("cycles:H: %s", err);
	printf("[  INFO    ] cycles:H -> %s\n", fb_perf_spec_encoding(s, 0));
	assert_int_equal(a.exclude_user, 0);
	assert_int_equal(a.exclude_kernel, 0);
	assert_int_equal(a.exclude_guest, 1);
	assert_int_equal(a.exclude_host, 0);
	assert_int_equal(rc_u, -EINVAL);
	assert_null(u);
	assert_non_null(strstr(err_u, "modifier 'U'"));
	assert_non_null(strstr(err_u, "cycles:U"));
	fb_perf_spec_free(s);
}

/* With kernel-side counting forbidden, the user-only fallback names the
 * event by what it counts: "task-clock:uk" as "task-clock:u" (the k
 * dropped; perf would write "task-clock:uku"), never "task-clock:uk:u",
 * which is no event name; a bare name gains ":u". */
static void the_user_only_fallback_names_what_is_counted(void **state)
{
	(void)state;
	struct fb_perf_spec *s = NULL;
	char err[256] = "";
	pmu_start();
	pmu->user_only = true;
	int rc = fb_perf_spec_parse("task-clock:uk,context-switches", &s, err, sizeof(err));
	pmu_stop();
	if (rc)
		fail_msg("%s", err);
	assert_string_equal(fb_perf_spec_name(s, 0), "task-clock:u");
	assert_string_equal(fb_perf_spec_name(s, 1), "context-switches:u");
	assert_non_null(fb_perf_spec_note(s));
	assert_non_null(strstr(fb_perf_spec_note(s), "CAP_PERFMON"));
	fb_perf_spec_free(s);
}

/* pinned/exclusive are taken on a group's leader only: a member with one is
 * refused when the list is parsed, not by every thread's group open. */
static void group_only_modifiers_are_refused_on_a_member(void **state)
{
	(void)state;
	struct fb_perf_spec *s = NULL, *lead = NULL;
	char err[256] = "", err_lead[256] = "";
	pmu_start();
	int rc = fb_perf_spec_parse("task-clock,context-switches:e", &s, err, sizeof(err));
	int rc_lead = fb_perf_spec_parse("task-clock:e,context-switches", &lead, err_lead, sizeof(err_lead));
	pmu_stop();
	assert_int_equal(rc, -EINVAL);
	assert_null(s);
	assert_non_null(strstr(err, "context-switches:e"));
	assert_non_null(strstr(err, "leader"));
	if (rc_lead)
		fail_msg("task-clock:e first: %s", err_lead);
	fb_perf_spec_free(lead);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(multiplexed_counts_scale_by_the_region),
		cmocka_unit_test(a_group_too_big_is_split_and_said_once),
		cmocka_unit_test(refused_counters_are_one_note_per_run),
		cmocka_unit_test(not_counted_is_never_a_zero),
		cmocka_unit_test(refused_counters_are_null_not_missing),
		cmocka_unit_test(a_failed_read_is_reported),
		cmocka_unit_test(perf_events_none_counts_nothing),
		cmocka_unit_test(under_perf_control_own_counters_are_off_unless_asked),
		cmocka_unit_test(a_late_ack_never_answers_the_next_command),
		cmocka_unit_test(an_ack_left_from_an_earlier_process_answers_nothing),
		cmocka_unit_test(a_full_control_fifo_costs_the_timeout_not_a_hang),
		cmocka_unit_test(modifiers_mean_what_perf_says),
		cmocka_unit_test(libpfm_is_handed_the_whole_attr),
		cmocka_unit_test(group_only_modifiers_are_refused_on_a_member),
		cmocka_unit_test(the_user_only_fallback_names_what_is_counted),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, pmu_setup, pmu_teardown);
}
