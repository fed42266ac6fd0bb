/* tests/test_cli.c — the fencebench program, end to end, through its binary.
 *
 * Runs $(BUILD)/fencebench (../fencebench beside this test's directory) with
 * posix_spawn and checks: every bad input exits non-zero with one line naming
 * the bad part and leaves no output file; --out is atomic; console, JSON and
 * CSV hold what they should; sweeps journal and --resume skips finished
 * points; --shard partitions the grid exactly.  Plus the option and grid
 * parsers and the scenario registry directly.  Uses the "selftest" scenario,
 * whose numbers are deterministic (benchmarks/scenarios/selftest.c).
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "benchmarks/calibrate.h"
#include "benchmarks/scenarios/table.h"
#include "src/fb_scenario.h"
#include "src/fb_cli.h"
#include "src/fb_grid.h"

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_cli.XXXXXX";

/* Run fencebench with the NULL-terminated args; stdout and stderr captured apart. */
static struct fb_exec_result run_args(const char *const *args)
{
	return fb_exec_args(tmpdir, fencebench, args);
}
#define RUN(...) run_args((const char *const[]){ __VA_ARGS__, NULL })

static size_t count_substr(const char *s, const char *sub)
{
	size_t n = 0;
	for (const char *p = s; p && (p = strstr(p, sub)); p += strlen(sub))
		n++;
	return n;
}

/* Files in tmpdir (the test's own dot files excluded). */
static size_t files_in_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	size_t n = 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void clean_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char p[PATH_MAX];
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", tmpdir, e->d_name);
		unlink(p);
	}
	closedir(d);
}

static const char *tmp_path(const char *name)
{
	return fb_tmp_path(tmpdir, name);
}

FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

static void need_binary(void)
{
	fb_need_binary(fencebench);
}

/* ---- bad input: exit != 0, one line naming the bad part, no output file ---- */

struct bad_case {
	const char *args[12];
	const char *names;     /* what the error line must contain */
	int status;
};

static const struct bad_case bad_cases[] = {
	{ { "run", "nosuchscenario" }, "'nosuchscenario'", 2 },
	{ { "run", "selftest", "--set", "nokey=1" }, "nokey", 2 },
	{ { "run", "selftest", "--set", "wait_ns=0" }, "wait_ns=0: out of range [1, 1000000000]", 2 },
	{ { "run", "selftest", "--set", "wait_ns=12abc" }, "wait_ns=12abc: not an integer", 2 },
	{ { "run", "selftest", "--set", "wait_ns=99999999999999999999" }, "wait_ns=99999999999999999999: out of range", 2 },
	{ { "run", "selftest", "--set", "scale=fast" }, "scale=fast: not a number", 2 },
	{ { "run", "selftest", "--set", "scale=-1" }, "scale=-1: out of range", 2 },
	{ { "run", "selftest", "--set", "fail=maybe" }, "fail=maybe: not a boolean", 2 },
	{ { "run", "selftest", "--set", "shape=round" }, "shape=round: not one of flat|ramp", 2 },
	{ { "run", "selftest", "--set", "noequals" }, "--set noequals", 2 },
	{ { "run", "selftest", "--set", "wait_ns=3", "--set", "wait_ns=5" }, "--set wait_ns=5: wait_ns is already set (--set wait_ns=3)", 2 },
	{ { "--version", "foo" }, "--version takes no argument ('foo')", 2 },
	{ { "--help", "selftest" }, "see: fencebench help SCENARIO", 2 },
	{ { "run", "selftest", "--cpus", "0-x" }, "--cpus 0-x: cannot parse", 2 },
	{ { "run", "selftest", "--cpus", "4000" }, "--cpus 4000: no such CPU", 2 },
	{ { "run", "selftest", "--cpus", "0-9999" }, "--cpus 0-9999", 2 },
	{ { "run", "selftest", "--cpus", "1-0" }, "--cpus 1-0: the range 1-0 runs backwards (write 0-1)", 2 },
	{ { "run", "selftest", "--perf-ctl-fd", "1" }, "--perf-ctl-fd 1: that is stdout", 2 },
	{ { "run", "selftest", "--perf-ctl-fd", "2" }, "--perf-ctl-fd 2: that is stderr", 2 },
	{ { "run", "selftest", "--perf-ctl-fd", "0" }, "--perf-ctl-fd 0: that is stdin", 2 },
	{ { "run", "irq-suppression", "--duration", "10ms" }, "--duration: scenario 'irq-suppression' runs a count of iterations", 2 },
	{ { "run", "selftest", "--perf-events", "task-clock,no_such_event_xyz" }, "no_such_event_xyz", 2 },
	{ { "run", "selftest", "--format", "yaml" }, "--format yaml", 2 },
	{ { "run", "selftest", "--path", "neither" }, "--path neither", 2 },
	{ { "run", "selftest", "--repetitions", "0" }, "--repetitions 0", 2 },
	{ { "run", "selftest", "--iterations", "-3" }, "--iterations -3", 2 },
	{ { "run", "selftest", "--duration", "soon" }, "--duration soon", 2 },
	{ { "run", "selftest", "--duration", "1s", "--iterations", "5" }, "--duration and --iterations", 2 },
	{ { "run", "selftest", "--frobnicate" }, "'--frobnicate'", 2 },
	{ { "run", "selftest", "--grid", "wait_ns=1" }, "--grid is not for 'run'", 2 },
	{ { "run", "selftest", "--perf-ctl-fd", "999" }, "--perf-ctl-fd 999", 2 },
	{ { "run", "selftest", "extra" }, "'extra'", 2 },
	{ { "sweep", "selftest", "--grid", "wait_ns=1,0" }, "--grid wait_ns=0: out of range", 2 },
	{ { "sweep", "selftest", "--grid", "nokey=1,2" }, "--grid nokey", 2 },
	{ { "sweep", "selftest", "--grid", "wait_ns=1,,2" }, "--grid wait_ns=1,,2: empty value", 2 },
	{ { "sweep", "selftest", "--grid", "wait_ns=1", "--grid", "wait_ns=2" }, "key given twice", 2 },
	{ { "sweep", "selftest", "--grid", "scale=0.5,0.50" }, "--grid scale: 0.50 is 0.5 again", 2 },
	{ { "sweep", "selftest", "--grid", "wait_ns=7,3,7" }, "--grid wait_ns: 7 is 7 again", 2 },
	{ { "sweep", "selftest", "--grid", "wait_ns=1", "--shard", "2/2" }, "--shard 2/2", 2 },
	{ { "sweep", "selftest", "--grid", "wait_ns=1", "--shard", "x" }, "--shard x", 2 },
	{ { "sweep", "selftest" }, "--grid", 2 },
	{ { "frobnicate" }, "unknown command 'frobnicate'", 2 },
	{ { "help", "nosuchscenario" }, "'nosuchscenario'", 2 },
	{ { "compare", "a.json" }, "compare: give two result files, BASE.json NEW.json (got 1)", 2 },
	{ { "compare", "a.json", "b.json", "--format", "csv" }, "--format csv: compare writes console, markdown or json", 2 },
	{ { "compare", "a.json", "b.json", "--threshold", "lots" }, "--threshold lots: expected a percentage", 2 },
	{ { "compare", "a.json", "b.json", "--iterations", "5" }, "option --iterations is not for 'compare'", 2 },
	{ { "run", "selftest", "--format", "markdown" }, "--format markdown is for compare only", 2 },
	{ { "run", "selftest", "--target-ci", "0" }, "--target-ci 0: expected a percentage above 0", 2 },
	{ { "run", "selftest", "--target-ci", "5%%" }, "--target-ci 5%%", 2 },
	{ { "run", "selftest", "--max-time", "10s" }, "--max-time caps --target-ci", 2 },
	{ { "doctor", "now" }, "doctor: unexpected argument 'now'", 2 },
	{ { "doctor", "--threshold", "5" }, "option --threshold is not for 'doctor'", 2 },
	{ { "doctor", "--cpus", "4000" }, "--cpus 4000: no such CPU", 2 },
	/* a run that fails (not bad input): exit 1, its one line, no output (-q: no notes) */
	{ { "run", "selftest", "--set", "fail=true", "-q" }, "failed on purpose", 1 },
};

static void bad_input_fails_cleanly(void **state)
{
	need_binary();
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		const char *args[20];
		size_t n = 0;
		for (; c->args[n]; n++)
			args[n] = c->args[n];
		args[n++] = "--out";
		args[n++] = tmp_path("out.json");
		args[n] = NULL;
		/* help, doctor and unknown commands take no --out: drop it there */
		if (!strcmp(args[0], "help") || !strcmp(args[0], "frobnicate") || !strcmp(args[0], "doctor"))
			args[n - 2] = NULL;
		struct fb_exec_result r = run_args(args);
		if (r.status != c->status || fb_count_lines(r.err) != 1 || !strstr(r.err, c->names) ||
		    strncmp(r.err, "fencebench: ", 12))
			fail_msg("case %zu (%s %s ...): exit %d (want %d), stderr:\n%s", i, c->args[0],
				 c->args[1] ? c->args[1] : "", r.status, c->status, r.err);
		if (files_in_tmpdir())
			fail_msg("case %zu (%s ...) left a file in %s", i, c->args[1] ? c->args[1] : c->args[0], tmpdir);
		fb_exec_free(&r);
	}
}

static void out_dir_missing_is_bad_input(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "5", "--out", tmp_path("no/such/dir/out.json"));
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "no/such/dir"));
	fb_exec_free(&r);
}

/* ---- --out is atomic ---- */

static void out_is_atomic(void **state)
{
	need_binary();
	const char *out = tmp_path("atomic.json");
	FILE *f = fopen(out, "w");
	fputs("previous content\n", f);
	fclose(f);
	/* A failing run leaves the previous file untouched and no temporary behind. */
	struct fb_exec_result r = RUN("run", "selftest", "--set", "fail=true", "--out", out, "-q");
	assert_int_equal(r.status, 1);
	char *s = fb_slurp(out);
	assert_string_equal(s, "previous content\n");
	free(s);
	assert_int_equal(files_in_tmpdir(), 1);
	fb_exec_free(&r);
	/* A good run replaces it whole. */
	r = RUN("run", "selftest", "--iterations", "20", "--format", "json", "--out", out, "-q");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");   /* -q with --out: nothing on stdout */
	json_error_t je;
	json_t *doc = json_load_file(out, 0, &je);
	assert_non_null(doc);
	assert_true(json_array_size(json_object_get(doc, "benchmarks")) > 0);
	json_decref(doc);
	assert_int_equal(files_in_tmpdir(), 1);
	fb_exec_free(&r);
	clean_tmpdir();
}

/* ---- --out: special files, links, modes, checked before any work ---- */

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Files in tmpdir whose name holds ".tmp." (temporaries of --out). */
static size_t temporaries_in_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	size_t n = 0;
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".tmp.") != NULL;
	closedir(d);
	return n;
}

/* A FIFO and a character device are written in place, not replaced. */
static void out_writes_fifos_and_devices_in_place(void **state)
{
	need_binary();
	const char *fifo = tmp_path("out.fifo"), *devlink = tmp_path("null.csv");
	struct stat st;
	assert_int_equal(mkfifo(fifo, 0600), 0);
	int rfd = open(fifo, O_RDONLY | O_NONBLOCK);   /* a reader, so the writer's open does not wait */
	assert_true(rfd >= 0);
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "5", "--format", "csv", "--out", fifo, "-q");
	assert_int_equal(r.status, 0);
	char buf[8192];
	ssize_t n = read(rfd, buf, sizeof(buf) - 1);
	close(rfd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_int_equal(strncmp(buf, "name,scenario,", 14), 0);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	fb_exec_free(&r);
	/* A link to /dev/null: written through, the link and the device stay. */
	assert_int_equal(symlink("/dev/null", devlink), 0);
	r = RUN("run", "selftest", "--iterations", "5", "--format", "csv", "--out", devlink, "-q");
	assert_int_equal(r.status, 0);
	assert_int_equal(lstat(devlink, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(temporaries_in_tmpdir(), 0);
	fb_exec_free(&r);
	clean_tmpdir();
}

/* A symbolic link is followed to the file it names (also when that does not
 * exist yet); an existing file keeps its permission bits. */
static void out_follows_links_and_keeps_the_mode(void **state)
{
	need_binary();
	const char *real = tmp_path("real.csv"), *link = tmp_path("link.csv"), *dangling = tmp_path("dangling.csv");
	const char *fresh = tmp_path("fresh.csv"), *private = tmp_path("private.csv");
	struct stat st;
	write_text(real, "old\n");
	assert_int_equal(chmod(real, 0640), 0);
	assert_int_equal(symlink("real.csv", link), 0);   /* relative to the link's folder */
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "5", "--format", "csv", "--out", link, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	char *s = fb_slurp(real);
	assert_int_equal(strncmp(s, "name,scenario,", 14), 0);
	free(s);
	assert_int_equal(stat(real, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	/* A dangling link: the file it names is created, the link stays. */
	assert_int_equal(symlink("fresh.csv", dangling), 0);
	r = RUN("run", "selftest", "--iterations", "5", "--format", "csv", "--out", dangling, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	assert_int_equal(lstat(dangling, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(fresh, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* A private file stays private. */
	write_text(private, "old\n");
	assert_int_equal(chmod(private, 0600), 0);
	r = RUN("run", "selftest", "--iterations", "5", "--format", "csv", "--out", private, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	assert_int_equal(stat(private, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(temporaries_in_tmpdir(), 0);
	clean_tmpdir();
}

/* Exit 2 with one line holding want, in well under the run's own length. */
static void assert_refused(struct fb_exec_result *r, const char *want)
{
	if (r->status != 2 || fb_count_lines(r->err) != 1 || !strstr(r->err, want))
		fail_msg("want exit 2 and one line with '%s'; exit %d, stderr:\n%s", want, r->status, r->err);
	fb_exec_free(r);
}

/* Every output path is checked before the first point runs: a run that
 * would take seconds is refused at once (exit 2: nothing ran). */
static void bad_out_is_refused_before_any_work(void **state)
{
	need_binary();
	char stray[PATH_MAX + 16];
	snprintf(stray, sizeof(stray), "%s.journal", tmpdir);
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "2000000", "--out", tmpdir, "-q");
	assert_refused(&r, "is a folder");
	r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "2000000", "--out", tmpdir, "-q");
	unlink(stray);   /* where an unchecked journal would go */
	assert_refused(&r, "is a folder");
	r = RUN("run", "selftest", "--iterations", "2000000", "--out", "/proc/fencebench-test.json", "-q");
	assert_refused(&r, "cannot create a file in /proc");
	r = RUN("run", "selftest", "--iterations", "2000000", "--out", tmp_path("none/out.json"), "-q");
	assert_refused(&r, "none does not exist");
	assert_int_equal(mkdir(tmp_path("dir.json.journal"), 0700), 0);
	r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "2000000", "--out", tmp_path("dir.json"), "-q");
	assert_refused(&r, "journal");
	assert_int_equal(rmdir(tmp_path("dir.json.journal")), 0);
	/* A long path is shortened in the middle: the reason stays on the line. */
	char path[3200];
	int n = snprintf(path, sizeof(path), "%s/", tmpdir);
	while (n < 3000)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "a-rather-long-folder-name/");
	snprintf(path + n, sizeof(path) - (size_t)n, "out.json");
	r = RUN("run", "selftest", "--iterations", "2000000", "--out", path, "-q");
	assert_true(strlen(r.err) < 400);
	assert_refused(&r, "does not exist");
	assert_int_equal(files_in_tmpdir(), 0);
}

/* The sweep journal is never reached through a link, nor is anything but a
 * plain file of one link truncated as a journal. */
static void journal_is_a_plain_file_only(void **state)
{
	need_binary();
	const char *out = tmp_path("j.json"), *journal = tmp_path("j.json.journal"), *victim = tmp_path("victim.txt");
	write_text(victim, "precious\n");
	assert_int_equal(symlink(victim, journal), 0);
	struct fb_exec_result r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "5", "--out", out, "-q");
	assert_refused(&r, "symbolic link");
	r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "5", "--out", out, "--resume", "-q");
	assert_refused(&r, "symbolic link");
	assert_int_equal(unlink(journal), 0);
	assert_int_equal(link(victim, journal), 0);
	r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "5", "--out", out, "-q");
	assert_refused(&r, "hard links");
	assert_int_equal(unlink(journal), 0);
	assert_int_equal(mkfifo(journal, 0600), 0);   /* refused, and the open does not wait for a writer */
	r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "5", "--out", out, "-q");
	assert_refused(&r, "not a regular file");
	char *s = fb_slurp(victim);
	assert_string_equal(s, "precious\n");
	free(s);
	assert_int_equal(access(out, F_OK), -1);
	clean_tmpdir();
}

/* A journal another sweep holds (flock) is not shared: the second sweep is refused. */
static void journal_in_use_is_refused(void **state)
{
	need_binary();
	const char *out = tmp_path("busy.json");
	int fd = open(tmp_path("busy.json.journal"), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	struct fb_exec_result r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "5", "--out", out, "-q");
	assert_refused(&r, "another fencebench sweep");
	close(fd);
	clean_tmpdir();
}

/* Temporaries named after --out that no writer holds are removed; a live
 * one (locked by its writer) and those of other files stay. */
static void leftover_temporaries_are_removed(void **state)
{
	need_binary();
	char live[64];
	snprintf(live, sizeof(live), "left.json.tmp.%ld.abcdef", (long)getpid());
	write_text(tmp_path("left.json.tmp.4194305.abcdef"), "{");   /* no writer holds it */
	write_text(tmp_path(live), "{");
	write_text(tmp_path("other.json.tmp.4194305.abcdef"), "{");
	int fd = open(tmp_path(live), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);   /* as a writer holds its temporary */
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "5", "--out", tmp_path("left.json"), "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	close(fd);
	assert_int_equal(access(tmp_path("left.json.tmp.4194305.abcdef"), F_OK), -1);
	assert_int_equal(access(tmp_path(live), F_OK), 0);
	assert_int_equal(access(tmp_path("other.json.tmp.4194305.abcdef"), F_OK), 0);
	clean_tmpdir();
}

/* ---- what each format holds ---- */

static void console_shows_paths_side_by_side(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "30", "--set", "pollers=3", "--cpus", "0-1");
	assert_int_equal(r.status, 0);
	const char *want[] = {
		"fencebench " FB_VERSION, "scenario selftest", "kernel: ", "build: ", "perf events:",
		"limits: cache-line round trip", "syscall", "futex wake-to-run", "running on CPUs 0-1",
		"seed 1", "30 iterations", "parameters: wait_ns=1000 scale=1 fail=false shape=flat pollers=3",
		"***WARNING*** 3 polling threads on 2 CPUs", "== selftest ==", "== selftest/power ==",
		"native", "legacy", "native/legacy", "wait_p99", "(x", "futex-wake)", "cacheline-oneway)",
		"30 irq", "perf.app.", "perf.engine0.", "idle_fraction",
	};
	/* Two CPUs busy with other work (a loaded machine, a sanitizer build) may
	 * leave no moment for the cache-line ping-pong: then the limit is "-" and
	 * the run says why instead of printing a ratio. */
	bool rtt_busy = strstr(r.out, "cache-line round trip timed out: CPUs busy") != NULL;
	bool futex_busy = strstr(r.out, "futex wake-to-run timed out: CPUs busy") != NULL;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(r.out, want[i]) && !(rtt_busy && !strcmp(want[i], "cacheline-oneway)")) &&
		    !(futex_busy && !strcmp(want[i], "futex-wake)")))
			fail_msg("console output lacks '%s':\n%s", want[i], r.out);
	fb_exec_free(&r);
}

static void one_cpu_says_round_trip_unmeasurable(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("run", "limits", "--iterations", "5", "--cpus", "0");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "cache-line round trip cannot be measured"));
	assert_non_null(strstr(r.out, "cache-line round trip cannot be measured"));
	assert_non_null(strstr(r.out, "futex_wake_p50"));
	assert_null(strstr(r.out, "cacheline_rtt_p50"));
	assert_null(strstr(r.err, "polling threads"));   /* no ping-pong threads on one CPU: nothing polls */
	fb_exec_free(&r);
	/* It counts samples: a duration is refused, not ignored. */
	r = RUN("run", "limits", "--duration", "10ms", "--format", "json", "-q");
	assert_refused(&r, "--duration: scenario 'limits' runs a count of iterations");
}

static json_t *json_of(const char *text)
{
	json_error_t je;
	json_t *doc = json_loads(text, 0, &je);
	if (!doc)
		fail_msg("not JSON (%s at line %d):\n%.2000s", je.text, je.line, text);
	return doc;
}

/* Every latency the headline reports is a plausible duration: positive and
 * under the 10 s no wait here can reach.  Latencies mix clocks (an engine's
 * timestamp counter against the CPU's): one converted wrong wraps to
 * ~1.8e19 ns, which only a range check sees. */
static void headline_latencies_are_durations(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("run", "headline", "--iterations", "2000", "--set", "rate_signals=100", "--format",
				      "json", "-q");
	if (r.status != 0)
		fail_msg("headline exited %d: %s", r.status, r.err ? r.err : "(no stderr)");
	json_t *doc = json_of(r.out), *b;
	size_t i, checked = 0;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b) {
		const char *key;
		json_t *v;
		json_object_foreach(b, key, v) {
			char limit[128];
			snprintf(limit, sizeof(limit), "%s_limit", key);
			if (!json_object_get(b, limit))
				continue;      /* a latency is reported beside its limit */
			double ns = json_number_value(v);
			if (!(ns > 0 && ns < 1e10))
				fail_msg("%s = %g ns", key, ns);
			checked++;
		}
	}
	assert_true(checked >= 8);
	json_decref(doc);
	fb_exec_free(&r);
}

static void json_is_google_benchmark_schema(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "40", "--repetitions", "3", "--format", "json",
			      "--set", "wait_ns=500", "--seed", "77", "-q");
	assert_int_equal(r.status, 0);
	json_t *doc = json_of(r.out), *ctx = json_object_get(doc, "context");
	const char *ctx_keys[] = { "date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "caches",
				   "load_avg", "library_build_type", "cpu_model", "kernel", "cpus", "build_type",
				   "build_flags", "git_rev", "perf", "limits", "parameters", "seed", "warnings" };
	for (size_t i = 0; i < sizeof(ctx_keys) / sizeof(ctx_keys[0]); i++)
		if (!json_object_get(ctx, ctx_keys[i]))
			fail_msg("context lacks %s", ctx_keys[i]);
	assert_int_equal(json_integer_value(json_object_get(ctx, "seed")), 77);
	json_t *lim = json_object_get(ctx, "limits");   /* measured in the same process, before the run */
	assert_true(json_number_value(json_object_get(lim, "syscall_ns")) > 0);
	assert_true(json_number_value(json_object_get(lim, "futex_wake_ns")) > 0 ||
		    strstr(json_string_value(json_object_get(lim, "note")) ?: "", "futex wake-to-run timed out"));
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		assert_true(json_number_value(json_object_get(lim, "cacheline_rtt_ns")) > 0 ||
			    strstr(json_string_value(json_object_get(lim, "note")) ?: "", "timed out: CPUs busy"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(ctx, "parameters"), "wait_ns")), "500");
	/* 2 sections x 2 paths x (3 iterations + 4 aggregates) */
	assert_int_equal(json_array_size(json_object_get(doc, "benchmarks")), 2 * 2 * 7);
	json_t *b = fb_bench_named(doc, "selftest/path:legacy/wait_ns:500");
	assert_string_equal(json_string_value(json_object_get(b, "run_type")), "iteration");
	assert_string_equal(json_string_value(json_object_get(b, "time_unit")), "ns");
	assert_int_equal(json_integer_value(json_object_get(b, "iterations")), 40);
	assert_int_equal(json_integer_value(json_object_get(b, "repetitions")), 3);
	assert_true(json_is_number(json_object_get(b, "real_time")));
	assert_true(json_is_number(json_object_get(b, "cpu_time")));
	assert_int_equal((int)json_number_value(json_object_get(b, "interrupts")), 40);
	/* 2 x 500 on legacy, within the histogram's 1/256 */
	assert_true(fabs(json_number_value(json_object_get(b, "wait_p50")) - 1000.0) <= 1000.0 / 256);
	if (json_number_value(json_object_get(lim, "futex_wake_ns")) > 0) {   /* not timed out on busy CPUs */
		assert_true(json_number_value(json_object_get(b, "wait_p50_limit")) > 0);
		assert_true(json_number_value(json_object_get(b, "wait_p50_vs_limit")) > 0);
	}
	b = fb_bench_named(doc, "selftest/path:native/wait_ns:500");
	assert_int_equal((int)json_number_value(json_object_get(b, "interrupts")), 0);
	b = fb_bench_named(doc, "selftest/power/path:native/wait_ns:500_cv");
	assert_string_equal(json_string_value(json_object_get(b, "run_type")), "aggregate");
	assert_string_equal(json_string_value(json_object_get(b, "aggregate_name")), "cv");
	b = fb_bench_named(doc, "selftest/power/path:native/wait_ns:500_mean");
	assert_string_equal(json_string_value(json_object_get(b, "run_name")), "selftest/power/path:native/wait_ns:500");
	assert_true(json_number_value(json_object_get(b, "idle_fraction")) == 0.75);
	assert_int_equal(json_integer_value(json_object_get(b, "iterations")), 3);
	json_decref(doc);
	fb_exec_free(&r);
}

/* suppression = 1 - interrupts(native)/interrupts(legacy), same point: on the
 * native entry only, computed from the two entries of the same run. */
static void suppression_is_one_minus_the_interrupt_ratio(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("run", "irq-suppression", "--iterations", "400", "--set", "waited=0.25",
			      "--warmup", "50ms", "--format", "json", "-q");
	assert_int_equal(r.status, 0);
	json_t *doc = json_of(r.out);
	json_t *n = fb_bench_named(doc, "irq-suppression/path:native/waited:0.25");
	json_t *l = fb_bench_named(doc, "irq-suppression/path:legacy/waited:0.25");
	double ni = json_number_value(json_object_get(n, "interrupts_per_signal"));
	double li = json_number_value(json_object_get(l, "interrupts_per_signal"));
	/* the warm-up's signals are not counted: exactly the measured 400 */
	assert_true(json_number_value(json_object_get(n, "signals")) == 400);
	assert_true(json_number_value(json_object_get(l, "interrupts")) == 400);
	assert_true(li == 1.0);                       /* legacy: every signal */
	assert_true(ni >= 0.25);                      /* native: every waited one, plus spurious */
	assert_true(fabs(json_number_value(json_object_get(n, "suppression")) - (1.0 - ni / li)) < 1e-12);
	assert_null(json_object_get(l, "suppression"));
	assert_true(json_number_value(json_object_get(n, "lost_wakeups")) == 0);
	json_decref(doc);
	fb_exec_free(&r);
}

static void csv_has_one_row_per_section_path_point(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "25", "--repetitions", "2", "--format", "csv", "-q");
	assert_int_equal(r.status, 0);
	assert_int_equal(fb_count_lines(r.out), 1 + 2 * 2);   /* header + sections x paths */
	/* the program's common parameter (the timing profile) follows the scenario's own */
	const char *head = "name,scenario,section,path,wait_ns,scale,fail,shape,pollers,profile,repetitions,"
			   "iterations,real_time,cpu_time,time_unit,interrupts,";
	assert_int_equal(strncmp(r.out, head, strlen(head)), 0);
	assert_non_null(strstr(r.out, "\nselftest/path:legacy,selftest,,legacy,1000,1,false,flat,1,ideal,2,2,"));
	assert_non_null(strstr(r.out, "\nselftest/power/path:native,selftest,power,native,"));
	fb_exec_free(&r);
}

static void path_selects_one_side(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "10", "--path", "legacy", "--format", "csv", "-q");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_substr(r.out, ",legacy,"), 2);
	assert_int_equal(count_substr(r.out, ",native,"), 0);
	fb_exec_free(&r);
}

static void list_help_version_answer(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("list");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "limits "));
	assert_non_null(strstr(r.out, "selftest "));
	fb_exec_free(&r);
	r = RUN("help", "selftest");
	assert_int_equal(r.status, 0);
	const char *want[] = { "wait_ns", "int", "ns", "1000", "[1, 1000000000]", "scale", "double", "fail",
			       "bool", "shape", "enum", "flat|ramp", "native and legacy" };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("help selftest lacks '%s':\n%s", want[i], r.out);
	fb_exec_free(&r);
	r = RUN("help", "irq-suppression");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "it takes no --duration"));
	fb_exec_free(&r);
	r = RUN("--version");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "fencebench " FB_VERSION));
	fb_exec_free(&r);
	r = RUN("--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "--perf-ctl-fd"));
	assert_non_null(strstr(r.out, "--shard I/N"));
	assert_non_null(strstr(r.out, "merge FILE..."));
	fb_exec_free(&r);
	r = RUN("run", "selftest", "--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "wait_ns"));
	fb_exec_free(&r);
}

/* Every help text the binary has: `--help`, `help SCENARIO` for every
 * scenario, `help COMMAND` for every command (the harness's and the
 * program's own).  None prints a printf escape (`%%`); each command's help
 * names it in a usage line; `help compare` explains --threshold; the
 * profile row of a scenario's help names every profile that ships in
 * benchmarks/profiles/; a scenario that no profile changes (limits) refuses
 * --set profile= in one line instead of ignoring it. */
static void assert_clean_help(const char *what, struct fb_exec_result *r)
{
	if (r->status != 0)
		fail_msg("%s exits %d: %s", what, r->status, r->err ? r->err : "");
	if (strstr(r->out, "%%"))
		fail_msg("%s prints a printf escape '%%%%':\n%s", what, r->out);
}

static void every_help_text_is_clean_and_complete(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("--help");
	assert_clean_help("--help", &r);
	fb_exec_free(&r);
	r = RUN("help");
	assert_clean_help("help", &r);
	fb_exec_free(&r);
	for (size_t i = 0; bm_scenarios[i]; i++) {
		r = RUN("help", bm_scenarios[i]->name);
		assert_clean_help(bm_scenarios[i]->name, &r);
		fb_exec_free(&r);
	}
	size_t ncmds = 0;
	for (const char *const *c = fb_cli_commands(); *c; c++, ncmds++) {
		r = RUN("help", *c);
		assert_clean_help(*c, &r);
		char want[64];
		snprintf(want, sizeof(want), "usage: fencebench %s", *c);
		if (!strstr(r.out, want))
			fail_msg("help %s has no '%s':\n%s", *c, want, r.out);
		fb_exec_free(&r);
	}
	assert_true(ncmds >= 7);   /* list help run sweep merge compare doctor */
	for (const struct fb_command *c = bm_commands; c->name; c++) {
		r = RUN("help", c->name);
		assert_clean_help(c->name, &r);
		assert_non_null(strstr(r.out, c->name));
		fb_exec_free(&r);
	}
	r = RUN("help", "compare");
	assert_non_null(strstr(r.out, "--threshold PCT"));
	fb_exec_free(&r);
	r = RUN("help", "no-such-thing");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown scenario or command 'no-such-thing'"));
	fb_exec_free(&r);

	/* the profile row names every shipped profile (the folder, not a list here) */
	r = RUN("help", "headline");
	const char *row = strstr(r.out, "\nprofile ");
	assert_non_null(row);
	char line[1024];
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
	DIR *d = opendir("benchmarks/profiles")   /* tests run in the source root */;
	assert_non_null(d);
	size_t shipped = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n <= 5 || strcmp(e->d_name + n - 5, ".json"))
			continue;
		shipped++;
		char stem[256];
		snprintf(stem, sizeof(stem), "%.*s", (int)(n - 5), e->d_name);
		if (!strstr(line, stem))
			fail_msg("help headline's profile row does not name the shipped profile %s: %s", stem, line);
	}
	closedir(d);
	assert_true(shipped >= 1);
	fb_exec_free(&r);

	/* limits measures the machine, which no profile changes: it takes no profile */
	r = RUN("help", "limits");
	assert_null(strstr(r.out, "\nprofile "));
	fb_exec_free(&r);
	r = RUN("run", "limits", "--set", "profile=h200-pcie5", "--iterations", "10");
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "profile"));
	fb_exec_free(&r);
}

/* ---- sweeps ---- */

static size_t journal_points(const char *out)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s.journal", out);
	char *s = fb_slurp(path);
	size_t n = fb_count_lines(s) - 1;   /* first line: the fingerprint */
	free(s);
	return n;
}

/* Cut the journal's last line in half, as a crash mid-write would. */
static void tear_journal(const char *out)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s.journal", out);
	char *s = fb_slurp(path);
	size_t len = strlen(s);
	assert_true(len > 2 && s[len - 1] == '\n');
	char *last = s + len - 1;
	while (last > s && last[-1] != '\n')
		last--;
	assert_int_equal(truncate(path, (off_t)(last - s) + (off_t)(s + len - last) / 2), 0);
	free(s);
}

/* Every line of the journal is whole JSON. */
static void assert_journal_whole(const char *out)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s.journal", out);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *line = NULL;
	size_t cap = 0;
	for (int n = 0; getline(&line, &cap, f) > 0; n++) {
		json_t *j = json_loads(line, 0, NULL);
		if (!j)
			fail_msg("journal line %d is not JSON: %.200s", n, line);
		json_decref(j);
	}
	free(line);
	fclose(f);
}

static double real_time_of(const char *jsonfile, const char *name)
{
	json_error_t je;
	json_t *doc = json_load_file(jsonfile, 0, &je);
	assert_non_null(doc);
	double v = json_number_value(json_object_get(fb_bench_named(doc, name), "real_time"));
	json_decref(doc);
	return v;
}

static void sweep_resume_skips_finished_points(void **state)
{
	need_binary();
	const char *out = tmp_path("sweep.json");
	/* An interrupted sweep: the third point fails, the first two are kept. */
	struct fb_exec_result r = RUN("sweep", "selftest", "--grid", "fail=false,true", "--grid", "wait_ns=10,20",
			      "--iterations", "10", "--format", "json", "--out", out, "-q");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "failed on purpose"));
	assert_int_equal(journal_points(out), 2);
	double t10 = real_time_of(out, "selftest/path:native/wait_ns:10/fail:false");
	fb_exec_free(&r);
	/* A crash tore the last journal line: resume drops it and runs that point again. */
	tear_journal(out);
	/* Resumed over a grid that also has new points: only those run. */
	r = RUN("sweep", "selftest", "--grid", "fail=false", "--grid", "wait_ns=10,20,30", "--iterations", "10",
		"--format", "json", "--out", out, "--resume", "-q");
	assert_int_equal(r.status, 0);
	assert_int_equal(journal_points(out), 3);
	assert_journal_whole(out);
	assert_true(real_time_of(out, "selftest/path:native/wait_ns:10/fail:false") == t10);   /* not rerun */
	real_time_of(out, "selftest/path:legacy/wait_ns:30/fail:false");
	fb_exec_free(&r);
	/* Everything finished: a resume runs nothing and keeps the file whole. */
	r = RUN("sweep", "selftest", "--grid", "fail=false", "--grid", "wait_ns=10,20,30", "--iterations", "10",
		"--format", "json", "--out", out, "--resume", "-q");
	assert_int_equal(r.status, 0);
	assert_int_equal(journal_points(out), 3);
	json_error_t je;
	json_t *doc = json_load_file(out, 0, &je);
	assert_int_equal(json_array_size(json_object_get(doc, "benchmarks")), 3 * 2 * 2);
	json_decref(doc);
	fb_exec_free(&r);
	/* A different sweep (another seed) cannot resume this journal. */
	r = RUN("sweep", "selftest", "--grid", "wait_ns=10", "--iterations", "10", "--seed", "9",
		"--out", out, "--resume", "-q");
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "different sweep"));
	fb_exec_free(&r);
	/* Without --resume the journal starts afresh. */
	r = RUN("sweep", "selftest", "--grid", "wait_ns=10", "--iterations", "10", "--format", "json", "--out", out, "-q");
	assert_int_equal(r.status, 0);
	assert_int_equal(journal_points(out), 1);
	fb_exec_free(&r);
	clean_tmpdir();
}

/* Line n (1: the header) of out's journal, with its newline.  New string. */
static char *journal_line(const char *out, size_t n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s.journal", out);
	char *s = fb_slurp(path), *p = s;
	assert_non_null(s);
	for (size_t i = 1; i < n && p; i++)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	assert_true(p && *p);
	char *line = strndup(p, (size_t)(strchr(p, '\n') - p) + 1);
	free(s);
	return line;
}

static void write_journal(const char *out, const char *text, const char *mode)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s.journal", out);
	FILE *f = fopen(path, mode);
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* --resume checks every journal line against the sweep, not only the first. */
static void resume_checks_every_journal_line(void **state)
{
	need_binary();
	const char *out = tmp_path("lines.json"), *other = tmp_path("other.json");
	#define SWEEP_LINES(grid, iters, ...) RUN("sweep", "selftest", "--grid", grid, "--iterations", iters, \
						  "--format", "json", "--out", out, "-q", __VA_ARGS__)
	struct fb_exec_result r = SWEEP_LINES("wait_ns=10,20", "10", NULL);
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	char *header = journal_line(out, 1), *line2 = journal_line(out, 2);
	/* A point of another --iterations, appended: refused, naming the line and the difference. */
	r = RUN("sweep", "selftest", "--grid", "wait_ns=30", "--iterations", "20", "--out", other, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	char *foreign = journal_line(other, 2);
	write_journal(out, foreign, "a");
	r = SWEEP_LINES("wait_ns=10,20,30", "10", "--resume");
	assert_refused(&r, "line 4 was written by a different sweep (iterations: 20 in the line, 10 in this sweep)");
	/* A point of another scenario. */
	r = RUN("sweep", "limits", "--grid", "batch=1", "--iterations", "1", "--cpus", "0", "--out", other, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	free(foreign);
	foreign = journal_line(other, 2);
	write_journal(out, header, "w");
	write_journal(out, foreign, "a");
	r = SWEEP_LINES("wait_ns=10,20", "10", "--resume");
	assert_refused(&r, "line 2 was written by a different sweep (");
	assert_non_null(strstr(foreign, "\"limits\""));
	/* A point without entries. */
	json_t *l = json_of(line2);
	json_object_set_new(l, "entries", json_array());
	char *bare = json_dumps(l, JSON_COMPACT);
	json_decref(l);
	write_journal(out, header, "w");
	write_journal(out, bare, "a");
	write_journal(out, "\n", "a");
	r = SWEEP_LINES("wait_ns=10,20", "10", "--resume");
	assert_refused(&r, "line 2 (point wait_ns=10) has no entries");
	/* A point whose parameters are not this sweep's (as after a change of a
	 * scenario's defaults), its entries agreeing with it. */
	l = json_of(line2);
	json_t *e;
	size_t i;
	json_object_set_new(json_object_get(l, "params"), "scale", json_string("2"));
	json_array_foreach(json_object_get(l, "entries"), i, e)
		json_object_set(json_object_get(e, "fencebench"), "params", json_object_get(l, "params"));
	char *changed = json_dumps(l, JSON_COMPACT);
	json_decref(l);
	write_journal(out, header, "w");
	write_journal(out, changed, "a");
	write_journal(out, "\n", "a");
	free(changed);
	r = SWEEP_LINES("wait_ns=10,20", "10", "--resume");
	assert_refused(&r, "line 2 (point wait_ns=10) has other parameters than this sweep's");
	/* The header cut short by a crash of this same sweep: it starts afresh. */
	write_journal(out, "", "w");
	header[strlen(header) - 3] = '\0';   /* the fingerprint whole, the line not */
	write_journal(out, header, "w");
	r = SWEEP_LINES("wait_ns=10,20", "10", "--resume");
	assert_int_equal(r.status, 0);
	assert_int_equal(journal_points(out), 2);
	assert_journal_whole(out);
	fb_exec_free(&r);
	/* ... and of another sweep: said so. */
	write_journal(out, header, "w");
	r = SWEEP_LINES("wait_ns=10,20", "10", "--seed", "5", "--resume");
	assert_refused(&r, "first line cut short");
	/* A journal of an older format. */
	write_journal(out, "{\"fencebench_journal\": 1, \"fingerprint\": \"{}\"}\n", "w");
	r = SWEEP_LINES("wait_ns=10,20", "10", "--resume");
	assert_refused(&r, "journal format 1");
	#undef SWEEP_LINES
	free(header);
	free(line2);
	free(foreign);
	free(bare);
	clean_tmpdir();
}

/* The sweep's output is rendered once, at the end (the journal is the
 * durable record): one rename onto --out, however many points. */
static void sweep_writes_its_output_once(void **state)
{
	need_binary();
	const char *out = tmp_path("once.json");
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, tmpdir, IN_MOVED_TO | IN_CLOSE_WRITE) >= 0);
	struct fb_exec_result r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2,3,4,5,6", "--iterations", "5",
				      "--format", "json", "--out", out, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	size_t renames = 0;
	for (ssize_t n; (n = read(in, buf, sizeof(buf))) > 0;) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;
			renames += (e->mask & IN_MOVED_TO) && e->len && !strcmp(e->name, "once.json");
			p += sizeof(*e) + e->len;
		}
	}
	close(in);
	assert_int_equal(renames, 1);
	assert_int_equal(journal_points(out), 6);
	clean_tmpdir();
}

/* Wait (bounded: 60 s) until out's journal holds n points; false on timeout. */
static bool wait_journal_points(const char *out, size_t n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s.journal", out);
	for (int i = 0; i < 12000; i++) {
		char *s = fb_slurp(path);
		size_t lines = fb_count_lines(s);
		free(s);
		if (lines > n)
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	}
	return false;
}

/* SIGINT or SIGTERM mid-sweep: the process dies of it, --out holds exactly
 * the journaled points, and no temporary is left. */
static void sweep_stopped_by_a_signal_writes_what_finished(void **state)
{
	need_binary();
	const int sigs[] = { SIGINT, SIGTERM };
	char grid[4096] = "wait_ns=1";
	for (int v = 2; v <= 400; v++)
		snprintf(grid + strlen(grid), sizeof(grid) - strlen(grid), ",%d", v);
	for (size_t i = 0; i < 2; i++) {
		const char *out = tmp_path("stopped.json");
		const char *argv[] = { fencebench, "sweep", "selftest", "--grid", grid, "--iterations", "3000",
				       "--path", "native", "--format", "json", "--out", out, "-q", NULL };
		pid_t pid = fb_exec_start(tmpdir, argv, FB_EXEC_SEPARATE);
		assert_true(pid > 0);
		bool started = wait_journal_points(out, 3);
		kill(pid, sigs[i]);
		struct fb_exec_result r = fb_exec_wait(tmpdir, pid, FB_EXEC_SEPARATE);
		assert_true(started);
		assert_int_equal(r.status, 128 + sigs[i]);
		assert_non_null(strstr(r.err, sigs[i] == SIGINT ? "SIGINT: stopped after" : "SIGTERM: stopped after"));
		size_t points = journal_points(out);
		json_error_t je;
		json_t *doc = json_load_file(out, 0, &je);
		if (!doc)
			fail_msg("%s after %s: %s", out, strsignal(sigs[i]), je.text);
		assert_true(points >= 3 && points < 400);
		assert_int_equal(json_array_size(json_object_get(doc, "benchmarks")), points * 2);   /* 2 sections */
		json_decref(doc);
		assert_int_equal(temporaries_in_tmpdir(), 0);
		fb_exec_free(&r);
		clean_tmpdir();
	}
}

/* The set of "wait_ns=...,shape=..." point keys a sharded CSV sweep ran. */
static void shard_points(const char *shard, char keys[][32], size_t *n)
{
	struct fb_exec_result r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2,3,4,5", "--grid", "shape=flat,ramp",
			      "--iterations", "5", "--path", "native", "--format", "csv", "--shard", shard, "-q");
	assert_int_equal(r.status, 0);
	for (char *line = strchr(r.out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		int w;
		char shape[8];
		if (sscanf(line + 1, "selftest/path:native/wait_ns:%d/shape:%7[a-z],", &w, shape) == 2)
			snprintf(keys[(*n)++], 32, "%d,%s", w, shape);
	}
	fb_exec_free(&r);
}

static void shard_partitions_the_grid(void **state)
{
	need_binary();
	char keys[64][32];
	size_t n = 0, per[3];
	for (int i = 0; i < 3; i++) {
		char shard[16];
		size_t before = n;
		snprintf(shard, sizeof(shard), "%d/3", i);
		shard_points(shard, keys, &n);
		per[i] = n - before;
	}
	assert_int_equal(n, 10);   /* union = the grid ... */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (!strcmp(keys[i], keys[j]))
				fail_msg("point %s ran in two shards", keys[i]);   /* ... and disjoint */
	assert_int_equal(per[0], 4);
	assert_int_equal(per[1], 3);
	assert_int_equal(per[2], 3);
}

/* The "name"s of a JSON output's entries, in order, joined by '\n'.  New string. */
static char *names_of(const char *jsonfile)
{
	json_error_t je;
	json_t *doc = json_load_file(jsonfile, 0, &je), *b;
	if (!doc)
		fail_msg("%s: %s", jsonfile, je.text);
	size_t i, len = 0;
	char *all = calloc(1, 1);
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b) {
		const char *n = json_string_value(json_object_get(b, "name"));
		all = realloc(all, len + strlen(n) + 2);
		len += (size_t)sprintf(all + len, "%s\n", n);
	}
	json_decref(doc);
	return all;
}

/* Shards given one --out each write their own file; merge joins them in grid
 * order (as one unsharded sweep orders them) and refuses shards of different sweeps. */
static void shards_write_apart_and_merge(void **state)
{
	need_binary();
	#define SHARD(shard, out, ...) RUN("sweep", "selftest", "--grid", "wait_ns=1,2,3,4,5", "--grid", "shape=flat,ramp", \
					   "--iterations", "5", "--path", "native", "--format", "json", "--shard", shard, \
					   "--out", out, "-q", __VA_ARGS__)
	char s0[PATH_MAX], s1[PATH_MAX], s2[PATH_MAX], all[PATH_MAX], whole[PATH_MAX];   /* tmp_path's buffers rotate */
	snprintf(s0, sizeof(s0), "%s/sh.shard0-of-3.json", tmpdir);
	snprintf(s1, sizeof(s1), "%s/sh.shard1-of-3.json", tmpdir);
	snprintf(s2, sizeof(s2), "%s/sh.shard2-of-3.json", tmpdir);
	snprintf(all, sizeof(all), "%s/all.json", tmpdir);
	snprintf(whole, sizeof(whole), "%s/whole.json", tmpdir);
	for (int i = 0; i < 3; i++) {
		char shard[16];
		snprintf(shard, sizeof(shard), "%d/3", i);
		struct fb_exec_result r = SHARD(shard, tmp_path("sh.json"), NULL);
		assert_int_equal(r.status, 0);
		fb_exec_free(&r);
	}
	assert_int_equal(access(tmp_path("sh.json"), F_OK), -1);
	struct fb_exec_result r = SHARD("0/1", whole, NULL);
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	r = RUN("merge", s2, s0, s1, "--out", all);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	fb_exec_free(&r);
	char *got = names_of(all), *want = names_of(whole);
	assert_int_equal(fb_count_lines(got), 10 * 2);   /* points x sections */
	assert_string_equal(got, want);
	free(got);
	free(want);
	/* Two of three: joined, with a warning. */
	r = RUN("merge", s0, s2, "--out", all);
	assert_int_equal(r.status, 0);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "2 of 3 shards given"));
	fb_exec_free(&r);
	/* A shard of another sweep, a shard twice, a file that is no sweep output. */
	r = SHARD("1/3", tmp_path("other.json"), "--seed", "9");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	r = RUN("merge", s0, tmp_path("other.shard1-of-3.json"), "--out", all);
	assert_refused(&r, "are shards of different sweeps (seed: 9 in ");
	r = RUN("merge", s0, s0);
	assert_refused(&r, "are both shard 0/3");
	r = RUN("run", "selftest", "--iterations", "5", "--format", "json", "--out", tmp_path("run.json"), "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	r = RUN("merge", s0, tmp_path("run.json"));
	assert_refused(&r, "is not the --format json output of a fencebench sweep");
	r = RUN("merge", s0, s1, "--out", tmpdir);
	assert_refused(&r, "is a folder");
	r = RUN("merge");
	assert_refused(&r, "merge: give the shard outputs");
	#undef SHARD
	clean_tmpdir();
}

/* A shard beyond a small grid gets no points: said, not silent. */
static void empty_shard_is_warned(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--shard", "3/4", "--iterations", "5",
				      "--format", "csv");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "shard 3/4 gets no points of this 2-point grid"));
	fb_exec_free(&r);
}

/* The shard arithmetic over many grids and shard counts. */
static void shard_arithmetic_is_exact(void **state)
{
	for (uint64_t points = 1; points <= 40; points++) {
		for (unsigned count = 1; count <= 9; count++) {
			uint64_t total = 0;
			for (uint64_t k = 0; k < points; k++) {
				unsigned owners = 0;
				for (unsigned i = 0; i < count; i++)
					owners += fb_shard_has(k, i, count);
				assert_int_equal(owners, 1);
			}
			for (unsigned i = 0; i < count; i++)
				total += fb_shard_size(points, i, count);
			assert_int_equal(total, points);
		}
	}
	struct fb_grid g = { 0 };
	char err[256];
	assert_int_equal(fb_grid_add_axis(&g, "a=1,2,3", err, sizeof(err)), 0);
	assert_int_equal(fb_grid_add_axis(&g, "b=x,y", err, sizeof(err)), 0);
	assert_int_equal(fb_grid_points(&g), 6);
	size_t idx[2];
	fb_grid_point(&g, 5, idx);
	assert_int_equal(idx[0], 2);
	assert_int_equal(idx[1], 1);
	fb_grid_point(&g, 1, idx);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	assert_int_equal(fb_grid_add_axis(&g, "c=1,2,3,4,5,6,7,8,9,10", err, sizeof(err)), 0);
	assert_int_equal(fb_grid_points(&g), 60);
	fb_grid_free(&g);
	unsigned i, c;
	assert_int_equal(fb_shard_parse("3/4", &i, &c, err, sizeof(err)), 0);
	assert_int_equal(i, 3);
	assert_int_equal(c, 4);
	assert_int_not_equal(fb_shard_parse("4/4", &i, &c, err, sizeof(err)), 0);
	assert_int_not_equal(fb_shard_parse("1/0", &i, &c, err, sizeof(err)), 0);
	assert_int_not_equal(fb_shard_parse("-1/3", &i, &c, err, sizeof(err)), 0);
	assert_int_not_equal(fb_shard_parse("1/", &i, &c, err, sizeof(err)), 0);
}

/* --perf-ctl-fd names perf's FIFO: an open regular file is refused. */
static void perf_fd_must_be_a_fifo(void **state)
{
	need_binary();
	int fd = open(tmp_path("not-a-fifo"), O_RDWR | O_CREAT, 0600);   /* no O_CLOEXEC: the child inherits it */
	assert_true(fd > 2);
	char num[16];
	snprintf(num, sizeof(num), "%d", fd);
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "5", "--perf-ctl-fd", num, "-q");
	close(fd);
	char want[64];
	snprintf(want, sizeof(want), "--perf-ctl-fd %d: not a FIFO", fd);
	assert_refused(&r, want);
	clean_tmpdir();
}

/* --duration: honoured by every scenario that declares takes_duration (the
 * region lasts at least that long, at least one iteration), refused with one
 * line by every other. */
static void duration_is_honoured_or_refused(void **state)
{
	need_binary();
	for (size_t i = 0; bm_scenarios[i]; i++) {
		if (bm_scenarios[i]->takes_duration)
			continue;
		struct fb_exec_result r = RUN("run", bm_scenarios[i]->name, "--duration", "1ms", "-q");
		char want[128];
		snprintf(want, sizeof(want), "--duration: scenario '%s' runs a count of iterations", bm_scenarios[i]->name);
		assert_refused(&r, want);
	}
	struct fb_exec_result r = RUN("run", "selftest", "--duration", "30ms", "--path", "native", "--format", "json", "-q");
	assert_int_equal(r.status, 0);
	json_t *doc = json_of(r.out), *b = fb_bench_named(doc, "selftest/path:native");
	double iters = (double)json_integer_value(json_object_get(b, "iterations"));
	assert_true(iters >= 1 && iters * json_number_value(json_object_get(b, "real_time")) >= 30e6 * (1 - 1e-9));
	json_decref(doc);
	fb_exec_free(&r);
	r = RUN("run", "selftest", "--duration", "1ns", "--path", "native", "--format", "json", "-q");
	assert_int_equal(r.status, 0);
	doc = json_of(r.out);
	assert_true(json_integer_value(json_object_get(fb_bench_named(doc, "selftest/path:native"), "iterations")) >= 1);
	assert_true(json_number_value(json_object_get(fb_bench_named(doc, "selftest/path:native"), "wait_count")) >= 1);
	json_decref(doc);
	fb_exec_free(&r);
}

/* --target-ci: repetitions until every p50's interval is narrower than asked,
 * never fewer than 6 (fewer give a range, no 95 % interval), or a cap; the
 * note says which.  selftest's numbers and the bootstrap's
 * seeds are fixed, so the count is too; nothing here depends on speed. */
static void target_ci_repeats_until_met_or_capped(void **state)
{
	need_binary();
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "200", "--set", "shape=ramp", "--target-ci", "3%",
				      "--format", "json");
	assert_int_equal(r.status, 0);
	json_t *doc = json_of(r.out), *b = fb_bench_named(doc, "selftest/path:native/shape:ramp_mean");
	long long reps = json_integer_value(json_object_get(b, "repetitions"));
	char want[128];
	snprintf(want, sizeof(want), "--target-ci 3%% at shape=ramp: met after %lld repetitions", reps);
	if (reps < 6 || !strstr(r.err, want))   /* fewer have no 95 % median interval to meet it */
		fail_msg("%lld repetitions; stderr:\n%s", reps, r.err);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "context"), "repetitions")), reps);
	double v = json_number_value(json_object_get(b, "wait_p50"));
	assert_true(json_number_value(json_object_get(b, "wait_p50_ci_hi")) - v <= 0.03 * v);
	assert_true(v - json_number_value(json_object_get(b, "wait_p50_ci_lo")) <= 0.03 * v);
	json_decref(doc);
	fb_exec_free(&r);
	/* A target it cannot reach: it stops at a cap and says so. */
	r = RUN("run", "selftest", "--iterations", "20", "--set", "shape=ramp", "--target-ci", "0.1%", "--max-time", "200ms",
		"--format", "json");
	assert_int_equal(r.status, 0);
	if (!strstr(r.err, "--target-ci 0.1% at shape=ramp: not met, time cap 0.2 s hit after ") &&
	    !strstr(r.err, "--target-ci 0.1% at shape=ramp: not met after 100 repetitions, the most it runs"))
		fail_msg("no cap note:\n%s", r.err);
	fb_exec_free(&r);
}

/* ---- the parsers and the registry, directly ---- */

static void options_parse(void **state)
{
	struct fb_opts o;
	char err[256];
	char *a1[] = { "fencebench", "run", "selftest", "--set=wait_ns=5", "--path=legacy", "--cpus", "0",
		       "--duration", "250ms", "--warmup=10ms", "--repetitions", "4", "--seed=18446744073709551615",
		       "--format", "csv", "--out=x.csv", "-q" };
	assert_int_equal(fb_opts_parse(17, a1, &o, err, sizeof(err)), 0);
	assert_int_equal(o.cmd, FB_CMD_RUN);
	assert_string_equal(o.scenario, "selftest");
	assert_int_equal(o.nsets, 1);
	assert_string_equal(o.sets[0].key, "wait_ns");
	assert_string_equal(o.sets[0].value, "5");
	assert_int_equal(o.paths, FB_PATHS_LEGACY);
	assert_true(o.duration_s > 0.2499 && o.duration_s < 0.2501);
	assert_true(o.warmup_s > 0.0099 && o.warmup_s < 0.0101);
	assert_int_equal(o.repetitions, 4);
	assert_true(o.seed == UINT64_MAX);
	assert_int_equal(o.format, FB_FORMAT_CSV);
	assert_string_equal(o.out, "x.csv");
	assert_true(o.quiet);
	fb_opts_free(&o);
	char *a2[] = { "fencebench", "sweep", "selftest", "--grid", "a=1,2", "--grid=b=x", "--shard", "1/2",
		       "--resume", "--out", "o.json" };
	assert_int_equal(fb_opts_parse(11, a2, &o, err, sizeof(err)), 0);
	assert_int_equal(o.grid.n, 2);
	assert_int_equal(o.shard_index, 1);
	assert_int_equal(o.shard_count, 2);
	assert_true(o.resume);
	fb_opts_free(&o);
	char *a6[] = { "fencebench", "compare", "base.json", "new.json", "--threshold=2.5%", "--format", "markdown",
		       "--all", "--lower-is-better", "a,b" };
	assert_int_equal(fb_opts_parse(10, a6, &o, err, sizeof(err)), 0);
	assert_int_equal(o.cmd, FB_CMD_COMPARE);
	assert_int_equal(o.ninputs, 2);
	assert_string_equal(o.inputs[1], "new.json");
	assert_true(fabs(o.threshold - 0.025) < 1e-12);
	assert_int_equal(o.format, FB_FORMAT_MARKDOWN);
	assert_true(o.all);
	assert_string_equal(o.lower_better, "a,b");
	fb_opts_free(&o);
	char *a7[] = { "fencebench", "run", "selftest", "--target-ci", "5", "--max-time=30s" };
	assert_int_equal(fb_opts_parse(6, a7, &o, err, sizeof(err)), 0);
	assert_true(fabs(o.target_ci - 0.05) < 1e-12 && o.max_time_s == 30);
	fb_opts_free(&o);
	char *a3[] = { "fencebench", "sweep", "selftest", "--grid", "a=1", "--resume" };
	assert_int_equal(fb_opts_parse(6, a3, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--resume needs --out"));
	fb_opts_free(&o);
	char *a4[] = { "fencebench", "run", "selftest", "--quiet=yes" };
	assert_int_equal(fb_opts_parse(4, a4, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--quiet takes no value"));
	fb_opts_free(&o);
	char *a5[] = { "fencebench", "run", "selftest", "--cpus" };
	assert_int_equal(fb_opts_parse(4, a5, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--cpus needs a value"));
	fb_opts_free(&o);
}

/* Every registered scenario is well formed: scenario writers get told here. */
static void registry_is_consistent(void **state)
{
	char err[256], text[128];
	for (size_t i = 0; bm_scenarios[i]; i++) {
		const struct fb_scenario *s = bm_scenarios[i];
		assert_non_null(s->name);
		assert_non_null(s->run);
		if (!s->summary || !*s->summary || strchr(s->summary, '\n'))
			fail_msg("scenario %s: the summary must be one non-empty line", s->name);
		assert_ptr_equal(fb_scenario_find(bm_scenarios, s->name), s);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(bm_scenarios[j]->name, s->name))
				fail_msg("scenario name %s registered twice", s->name);
		for (size_t k = 0; k < fb_scenario_nparams(s); k++) {
			const struct fb_param *p = &s->params[k];
			union fb_value v;
			assert_int_equal(fb_scenario_param_index(s, p->key), (int)k);   /* keys unique */
			fb_param_format(p, fb_param_default(p), text, sizeof(text));
			if (fb_param_parse(p, text, &v, err, sizeof(err)))
				fail_msg("scenario %s: default of %s does not pass its own check: %s", s->name, p->key, err);
			if (p->type == FB_PARAM_ENUM && strcmp(p->choices[v.e], p->edef))
				fail_msg("scenario %s: enum %s default '%s' is not a choice", s->name, p->key, p->edef);
			if (!p->help || !*p->help || !p->unit)
				fail_msg("scenario %s: parameter %s needs help and unit", s->name, p->key);
		}
		if (!s->default_iterations && !s->takes_duration)
			fail_msg("scenario %s: measured by a duration by default, but does not declare takes_duration",
				 s->name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(options_parse),
		cmocka_unit_test(registry_is_consistent),
		cmocka_unit_test(shard_arithmetic_is_exact),
		cmocka_unit_test(bad_input_fails_cleanly),
		cmocka_unit_test(out_dir_missing_is_bad_input),
		cmocka_unit_test(out_is_atomic),
		cmocka_unit_test(out_writes_fifos_and_devices_in_place),
		cmocka_unit_test(out_follows_links_and_keeps_the_mode),
		cmocka_unit_test(bad_out_is_refused_before_any_work),
		cmocka_unit_test(journal_is_a_plain_file_only),
		cmocka_unit_test(journal_in_use_is_refused),
		cmocka_unit_test(leftover_temporaries_are_removed),
		cmocka_unit_test(console_shows_paths_side_by_side),
		cmocka_unit_test(one_cpu_says_round_trip_unmeasurable),
		cmocka_unit_test(json_is_google_benchmark_schema),
		cmocka_unit_test(suppression_is_one_minus_the_interrupt_ratio),
		cmocka_unit_test(csv_has_one_row_per_section_path_point),
		cmocka_unit_test(path_selects_one_side),
		cmocka_unit_test(list_help_version_answer),
		cmocka_unit_test(every_help_text_is_clean_and_complete),
		cmocka_unit_test(sweep_resume_skips_finished_points),
		cmocka_unit_test(resume_checks_every_journal_line),
		cmocka_unit_test(sweep_writes_its_output_once),
		cmocka_unit_test(sweep_stopped_by_a_signal_writes_what_finished),
		cmocka_unit_test(shard_partitions_the_grid),
		cmocka_unit_test(shards_write_apart_and_merge),
		cmocka_unit_test(empty_shard_is_warned),
		cmocka_unit_test(headline_latencies_are_durations),
		cmocka_unit_test(perf_fd_must_be_a_fifo),
		cmocka_unit_test(duration_is_honoured_or_refused),
		cmocka_unit_test(target_ci_repeats_until_met_or_capped),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
