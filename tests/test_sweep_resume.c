/* tests/test_sweep_resume.c — results are never lost: a resumed sweep says
 * exactly what an uninterrupted one says, the output path's aliases are seen
 * through, and write errors are errors.
 *
 * Runs $(BUILD)/fencebench (the "selftest" scenario: deterministic numbers,
 * a "pollers" parameter that oversubscribes the CPUs) and compares result
 * files key by key.  Timing values (JSON reals: latencies, CPU times, the
 * machine limits) differ between runs and are left aside; points,
 * parameters, context and counts must not differ.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <errno.h>
#include <stdbool.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_sweep_resume.XXXXXX";
static uid_t run_uid;   /* run_with_fds: the user the child runs as (0: ours) */

FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

static struct fb_exec_result run_args(const char *const *args)
{
	return fb_exec_args(tmpdir, fencebench, args);
}
#define RUN(...) run_args((const char *const[]){ __VA_ARGS__, NULL })

static const char *tmp_path(const char *name)
{
	return fb_tmp_path(tmpdir, name);
}

/* Context keys measured anew by every session (the machine and its noise)
 * or naming this invocation: not part of what a resume must reproduce. */
static bool context_key_varies(const char *k)
{
	static const char *const vary[] = { "limits", "noise", "command_line", "date", "load_avg", "executable",
					    "host_name", "mhz_per_cpu", "caches", NULL };
	for (size_t i = 0; vary[i]; i++)
		if (!strcmp(k, vary[i]))
			return true;
	return false;
}

/* A measured value: a real, or null where a perf count was not counted (its
 * thread did not run in the region: timing too), with the reason in the
 * entry's "absent". */
static bool measured(json_t *v)
{
	return json_is_real(v) || json_is_null(v);
}

/* a and b are equal but for measured values (timing values, which may also
 * be missing on one side: a limit that could not be measured is left out).
 * false with where and what differs in why. */
static bool same_but_timing(json_t *a, json_t *b, const char *where, char *why, size_t len, bool top)
{
	if (measured(a) && measured(b))
		return true;
	if (json_typeof(a) != json_typeof(b) || !a || !b) {
		snprintf(why, len, "%s: %s vs %s", where, a ? "present" : "missing", b ? "present" : "missing");
		if (a && b)
			snprintf(why, len, "%s: types differ", where);
		return false;
	}
	char sub[512];
	if (json_is_object(a)) {
		const char *k;
		json_t *v;
		json_object_foreach(a, k, v) {
			/* A timing value that was not finite is left out (JSON has no NaN). */
			if ((top && context_key_varies(k)) || (measured(v) && !json_object_get(b, k)) ||
			    !strcmp(k, "absent"))
				continue;
			snprintf(sub, sizeof(sub), "%s.%s", where, k);
			if (!same_but_timing(v, json_object_get(b, k), sub, why, len, false))
				return false;
		}
		json_object_foreach(b, k, v) {
			if (!(top && context_key_varies(k)) && !measured(v) && strcmp(k, "absent") &&
			    !json_object_get(a, k)) {
				snprintf(why, len, "%s.%s: only in the second", where, k);
				return false;
			}
		}
		return true;
	}
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b)) {
			snprintf(why, len, "%s: %zu vs %zu items", where, json_array_size(a), json_array_size(b));
			return false;
		}
		for (size_t i = 0; i < json_array_size(a); i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", where, i);
			if (!same_but_timing(json_array_get(a, i), json_array_get(b, i), sub, why, len, false))
				return false;
		}
		return true;
	}
	if (!json_equal(a, b)) {
		char *ta = json_dumps(a, JSON_ENCODE_ANY), *tb = json_dumps(b, JSON_ENCODE_ANY);
		snprintf(why, len, "%s: %.150s vs %.150s", where, ta, tb);
		free(ta);
		free(tb);
		return false;
	}
	return true;
}

/* Leave in a result's context the warnings and notes that follow from its
 * points, without those the machine's noise gave this session, measured anew
 * each time: warnings other than oversubscription (limits that moved, other
 * processes), and the note of the limits' measurement (one timed out). */
static void drop_machine_noise(json_t *doc)
{
	json_t *c = json_object_get(doc, "context"), *w = json_object_get(c, "warnings"), *n = json_object_get(c, "notes");
	const char *limits = json_string_value(json_object_get(json_object_get(c, "limits"), "note"));
	for (size_t i = json_array_size(w); i-- > 0;)
		if (!strstr(json_string_value(json_array_get(w, i)), "polling threads"))
			json_array_remove(w, i);
	for (size_t i = json_array_size(n); limits && i-- > 0;)
		if (!strcmp(json_string_value(json_array_get(n, i)), limits))
			json_array_remove(n, i);
}

/* The result files a and b (JSON) hold the same points, parameters, context and counts. */
static void assert_same_results(const char *a, const char *b)
{
	json_error_t e;
	json_t *ja = json_load_file(a, 0, &e), *jb = json_load_file(b, 0, &e);
	char why[1024] = "";
	if (!ja || !jb)
		fail_msg("%s is not JSON: %s", ja ? b : a, e.text);
	drop_machine_noise(ja);
	drop_machine_noise(jb);
	bool same = same_but_timing(json_object_get(ja, "context"), json_object_get(jb, "context"), "context", why,
				    sizeof(why), true) &&
		    same_but_timing(json_object_get(ja, "benchmarks"), json_object_get(jb, "benchmarks"), "benchmarks",
				    why, sizeof(why), false);
	json_decref(ja);
	json_decref(jb);
	if (!same)
		fail_msg("%s and %s differ: %s", a, b, why);
}

/* ---- an exact resume ---- */

/* A point journaled by one session and resumed by the next gives the output
 * the same context (threads, oversubscription, warnings, repetitions) as
 * when it ran in the session that writes the output. */
static void resume_rebuilds_each_points_context(void **state)
{
	(void)state;
	const char *part = tmp_path("part.json"), *whole = tmp_path("whole.json");
	/* The grid grown by one value: the point pollers=8 resumes from the journal. */
	struct fb_exec_result r = RUN("sweep", "selftest", "--cpus", "0-1", "--grid", "pollers=8", "--iterations", "5",
				      "--format", "json", "--out", part, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	r = RUN("sweep", "selftest", "--cpus", "0-1", "--grid", "pollers=8,1", "--iterations", "5", "--format", "json",
		"--out", part, "--resume", "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	r = RUN("sweep", "selftest", "--cpus", "0-1", "--grid", "pollers=8,1", "--iterations", "5", "--format", "json",
		"--out", whole, "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	assert_same_results(part, whole);
}


/* ---- the output path's aliases ---- */

/* Run fencebench with stdout on out_fd and, when extra_fd >= 0, extra_fd as
 * its descriptor 5; stderr into *err (new string).  The exit status. */
static int run_with_fds(const char *const *args, int out_fd, int extra_fd, char **err)
{
	const char *argv[64] = { fencebench };
	size_t n = 1;
	for (; args[n - 1]; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	const char *errpath = tmp_path(".err");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (e < 0 || dup2(out_fd, 1) < 0 || dup2(e, 2) < 0 || (extra_fd >= 0 && dup2(extra_fd, 5) < 0) ||
		    chdir(tmpdir) || (run_uid && (setgid(run_uid) || setuid(run_uid))))
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*err = fb_slurp(errpath);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
#define RUN_FDS(out_fd, extra_fd, err, ...) run_with_fds((const char *const[]){ __VA_ARGS__, NULL }, out_fd, extra_fd, err)

/* --trace and --out spelled differently but reaching one file are refused
 * before any work, and the file is left as it was. */
static void trace_and_out_reaching_one_file_are_refused(void **state)
{
	(void)state;
	const char *out = tmp_path("r.json"), *link = tmp_path("link.json");
	assert_int_equal(chdir(tmpdir), 0);
	const char *spellings[] = { "./r.json", link, "r.json" };
	assert_int_equal(symlink("r.json", link), 0);
	for (size_t i = 0; i < 3; i++) {
		/* i < 2: r.json exists (device and inode); i == 2: it does not yet (folder and name). */
		FILE *f = fopen(out, "w");
		if (i < 2) {
			fputs("before\n", f);
			fclose(f);
		} else {
			fclose(f);
			unlink(out);
		}
		struct fb_exec_result r = RUN("run", "cpu-wait", "--format", "json", "--out", "r.json", "--trace",
					      spellings[i]);
		if (r.status != 2 || !strstr(r.err, "--trace and --out name the same file"))
			fail_msg("--out r.json --trace %s: exit %d, %s", spellings[i], r.status, r.err);
		fb_exec_free(&r);
		char *text = fb_slurp(out);
		if (i < 2)
			assert_string_equal(text, "before\n");
		else
			assert_null(text);
		free(text);
	}
	unlink(link);
}

/* --out /dev/stdout (and /proc/self/fd/1, /dev/fd/1) writes through the
 * descriptor the shell opened: `>> log` appends, keeping what log held. */
static void out_naming_stdout_appends_through_it(void **state)
{
	(void)state;
	const char *log = tmp_path("all.log");
	/* However spelled: through links, "..", or relative to the folder it runs in (tmpdir). */
	char relative[PATH_MAX];
	size_t depth = 0;
	for (const char *p = tmpdir; *p; p++)
		depth += *p == '/';
	relative[0] = '\0';
	for (size_t d = 0; d < depth; d++)
		strcat(relative, "../");
	strcat(relative, "proc/self/fd/1");
	const char *names[] = { "/dev/stdout", "/proc/self/fd/1", "/dev/fd/1", "/dev/../proc/self/fd/1", relative };
	for (size_t i = 0; i < 5; i++) {
		FILE *f = fopen(log, "w");
		fputs("pre\n", f);
		fclose(f);
		int fd = open(log, O_WRONLY | O_APPEND);
		char *err;
		/* Without -q: the console table, which would go to stdout, is not
		 * mixed into the results that go there. */
		const char *cmd = i % 2 ? "run" : "sweep", *grid = i % 2 ? "--iterations" : "--grid",
			   *gridv = i % 2 ? "5" : "wait_ns=1,2";
		int st = RUN_FDS(fd, -1, &err, cmd, "selftest", grid, gridv, "--format", "csv", "--out", names[i]);
		close(fd);
		char *text = fb_slurp(log);
		if (st != 0 || strncmp(text, "pre\n", 4) || !strstr(text, "selftest") || strstr(text, "== selftest"))
			fail_msg("%s --out %s >> log: exit %d (%s); log: %.300s", cmd, names[i], st, err, text);
		free(text);
		free(err);
	}
}

/* A descriptor on a file no path reaches (deleted, a memfd) is written
 * through, not refused as "a block device". */
static void out_naming_a_descriptor_of_no_path_writes_it(void **state)
{
	(void)state;
	const char *gone = tmp_path("gone.csv");
	int fds[2];
	fds[0] = open(gone, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(unlink(gone), 0);
	fds[1] = memfd_create("results", 0);
	for (int i = 0; i < 2; i++) {
		assert_true(fds[i] >= 0);
		char *err;
		int st = RUN_FDS(1, fds[i], &err, "run", "selftest", "--iterations", "5", "--format", "csv", "--out",
				 "/proc/self/fd/5", "-q");
		char buf[1 << 16] = "";
		ssize_t n = pread(fds[i], buf, sizeof(buf) - 1, 0);
		if (st != 0 || n <= 0 || !strstr(buf, "selftest"))
			fail_msg("--out /proc/self/fd/5 (%s): exit %d (%s)", i ? "memfd" : "deleted file", st, err);
		free(err);
		close(fds[i]);
	}
}

/* A descriptor not open for writing (stdin, read-only) is refused before any work. */
static void out_naming_a_read_only_descriptor_is_refused(void **state)
{
	(void)state;
	int ro = open("/dev/null", O_RDONLY);
	assert_true(ro >= 0);
	char *err;
	int st = RUN_FDS(1, ro, &err, "run", "selftest", "--iterations", "5", "--format", "csv", "--out", "/proc/self/fd/5",
			 "-q");
	if (st != 2 || !strstr(err, "not open for writing"))
		fail_msg("--out a read-only descriptor: exit %d, %s", st, err);
	free(err);
	close(ro);
}

/* ---- errors are errors ---- */

/* Results on a full stdout: exit non-zero, with the reason. */
static void full_stdout_is_an_error(void **state)
{
	(void)state;
	int full = open("/dev/full", O_WRONLY);
	assert_true(full >= 0);
	const char *formats[] = { "json", "csv", "console" };
	for (size_t i = 0; i < 3; i++) {
		char *err;
		int st = RUN_FDS(full, -1, &err, "run", "selftest", "--iterations", "5", "--format", formats[i], "-q");
		if (st == 0 || !strstr(err, "No space left"))
			fail_msg("--format %s to /dev/full: exit %d, %s", formats[i], st, err);
		free(err);
		st = RUN_FDS(full, -1, &err, "sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "5",
			     "--format", formats[i], "-q");
		if (st == 0 || !strstr(err, "No space left"))
			fail_msg("sweep --format %s to /dev/full: exit %d, %s", formats[i], st, err);
		free(err);
	}
	close(full);
}

/* ---- the journal and the temporaries ---- */

/* One --out reached through a symbolic link and by its own name has one
 * journal and one lock: the second sweep is refused. */
static void journal_lock_is_the_real_targets(void **state)
{
	(void)state;
	const char *out = tmp_path("real.json"), *link = tmp_path("alias.json");
	assert_int_equal(symlink("real.json", link), 0);
	int fd = open(tmp_path("real.json.journal"), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);   /* a sweep writing real.json */
	struct fb_exec_result r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "5", "--out", link, "-q");
	if (r.status != 2 || !strstr(r.err, "another fencebench sweep"))
		fail_msg("sweep --out through a link to a locked journal's file: exit %d, %s", r.status, r.err);
	fb_exec_free(&r);
	close(fd);
	assert_int_equal(access(tmp_path("alias.json.journal"), F_OK), -1);
	unlink(link);
	unlink(tmp_path("real.json.journal"));
	unlink(out);
}

/* Temporaries beside --out: one a writer still holds (locked) stays, whatever
 * PID its name says; one no writer holds goes, even when its PID runs. */
static void leftover_temporaries_go_by_their_lock_not_their_pid(void **state)
{
	(void)state;
	const char *held = tmp_path("t.json.tmp.4194305.abcdef");    /* no such PID: another machine's writer */
	const char *orphan = tmp_path("t.json.tmp.1.abcdef");        /* PID 1 runs: a reused PID */
	int fd = open(held, O_RDWR | O_CREAT, 0600), o = open(orphan, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0 && o >= 0);
	close(o);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "5", "--out", tmp_path("t.json"), "-q");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	assert_int_equal(access(held, F_OK), 0);
	assert_int_equal(access(orphan, F_OK), -1);
	close(fd);
	unlink(held);
	unlink(tmp_path("t.json"));
}

/* ---- failures injected under write, fsync and rename ---- */

static struct fb_exec_result run_with_fault(const char *fault, const char *const *args)
{
	setenv("FENCEBENCH_IO_FAULT", fault, 1);
	struct fb_exec_result r = run_args(args);
	unsetenv("FENCEBENCH_IO_FAULT");
	return r;
}
#define RUN_FAULT(fault, ...) run_with_fault(fault, (const char *const[]){ __VA_ARGS__, NULL })

/* A rename that fails never deletes the only copy: the results stay, named
 * in the error, and the old file is untouched. */
static void failed_rename_keeps_the_results(void **state)
{
	(void)state;
	const char *out = tmp_path("keep.json");
	FILE *f = fopen(out, "w");
	fputs("old\n", f);
	fclose(f);
	struct fb_exec_result r = RUN_FAULT("rename:1:EPERM", "run", "selftest", "--iterations", "5", "--format", "json",
					    "--out", out, "-q");
	const char *named = r.err ? strstr(r.err, "the results are in ") : NULL;
	if (r.status == 0 || !named)
		fail_msg("a failed rename: exit %d, %s", r.status, r.err);
	char kept[PATH_MAX];
	snprintf(kept, sizeof(kept), "%s", named + strlen("the results are in "));
	kept[strcspn(kept, "\n")] = '\0';
	char *text = fb_slurp(kept), *old = fb_slurp(out);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"benchmarks\""));
	assert_string_equal(old, "old\n");
	free(text);
	free(old);
	fb_exec_free(&r);
	unlink(kept);
	unlink(out);
}

/* An fsync of the finished temporary interrupted by a signal (EINTR) is
 * retried, as the journal's and the folder's are: the results land, exit 0. */
static void interrupted_fsync_of_the_output_is_retried(void **state)
{
	(void)state;
	const char *out = tmp_path("eintr.json");
	/* fsync 1: the temporary's data. */
	struct fb_exec_result r = RUN_FAULT("fsync:1:EINTR", "run", "selftest", "--iterations", "5", "--format", "json",
					    "--out", out, "-q");
	if (r.status != 0)
		fail_msg("an fsync interrupted once: exit %d, %s", r.status, r.err);
	fb_exec_free(&r);
	json_t *doc = json_load_file(out, 0, NULL);
	assert_non_null(json_object_get(doc, "benchmarks"));
	json_decref(doc);
	unlink(out);
}

/* The replaced file keeps its permission bits, not its set-user-ID and
 * set-group-ID bits: the new file belongs to whoever runs fencebench, so
 * root replacing another user's set-ID file would make a set-ID root file. */
static void replaced_file_keeps_no_set_id_bits(void **state)
{
	(void)state;
	const char *out = tmp_path("setid.json");
	FILE *f = fopen(out, "w");
	fputs("old\n", f);
	fclose(f);
	assert_int_equal(chmod(out, 06755), 0);
	if (geteuid() == 0)
		assert_int_equal(chown(out, 65534, 65534), 0);
	assert_int_equal(chmod(out, 06755), 0);   /* chown cleared them */
	struct fb_exec_result r = RUN("run", "selftest", "--iterations", "5", "--format", "json", "--out", out, "-q");
	if (r.status != 0)
		fail_msg("--out a set-ID file: exit %d, %s", r.status, r.err);
	fb_exec_free(&r);
	struct stat st;
	assert_int_equal(stat(out, &st), 0);
	if ((st.st_mode & 07777) != 0755)
		fail_msg("the replaced file has mode %o, not 755", (unsigned)(st.st_mode & 07777));
	unlink(out);
}

/* In a sticky folder, a file of another user cannot be replaced: refused
 * before any work, not after. */
static void unreplaceable_out_is_refused_before_any_work(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();   /* needs a second user */
	const char *dir = tmp_path("sticky"), *out = tmp_path("sticky/theirs.json");
	assert_int_equal(mkdir(dir, 01777), 0);
	assert_int_equal(chmod(dir, 01777), 0);
	FILE *f = fopen(out, "w");
	fputs("theirs\n", f);
	fclose(f);
	chmod(out, 0666);
	assert_int_equal(chmod(tmpdir, 0755), 0);
	run_uid = 65534;
	char *err;
	int st = RUN_FDS(1, -1, &err, "run", "selftest", "--iterations", "5", "--format", "json", "--out", out, "-q");
	run_uid = 0;
	if (st != 2 || !strstr(err, "another user"))
		fail_msg("--out a file of another user in a sticky folder: exit %d, %s", st, err);
	free(err);
	char *text = fb_slurp(out);
	assert_string_equal(text, "theirs\n");
	free(text);
	chmod(tmpdir, 0700);
	fb_remove_tree(dir);
}

/* The folder is fsync'd after the rename: an fsync that fails there is an
 * error (the new file may not survive a power cut), not exit 0. */
static void folder_is_fsynced_after_the_rename(void **state)
{
	(void)state;
	const char *out = tmp_path("durable.json");
	/* fsync 1: the temporary's data; 2: the folder. */
	struct fb_exec_result r = RUN_FAULT("fsync:2:EIO", "run", "selftest", "--iterations", "5", "--format", "json",
					    "--out", out, "-q");
	if (r.status == 0 || !strstr(r.err, "fsync"))
		fail_msg("a failed folder fsync: exit %d, %s", r.status, r.err);
	fb_exec_free(&r);
	unlink(out);
}

/* The journal's folder is fsync'd once the journal is made: a failure there
 * stops the sweep before any point. */
static void folder_is_fsynced_after_the_journal_is_made(void **state)
{
	(void)state;
	const char *out = tmp_path("j.json");
	/* fsync 1: the journal's header; 2: its folder. */
	struct fb_exec_result r = RUN_FAULT("fsync:2:EIO", "sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "5",
					    "--format", "json", "--out", out, "-q");
	if (r.status == 0 || !strstr(r.err, "journal"))
		fail_msg("a failed journal folder fsync: exit %d, %s", r.status, r.err);
	fb_exec_free(&r);
	unlink(out);
	unlink(tmp_path("j.json.journal"));
}

/* Lines of out's journal. */
static size_t journal_lines(const char *out)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s.journal", out);
	char *text = fb_slurp(path);
	size_t n = fb_count_lines(text);
	free(text);
	return n;
}

/* A journal append that meets a full disk: "No space left on device", exit
 * non-zero, no torn line, and the point is not in the output (a resume runs
 * it).  One interrupted by a signal (EINTR) is retried: nothing lost. */
static void journal_write_errors_are_errors(void **state)
{
	(void)state;
	const char *out = tmp_path("nospace.json");
	const char *faults[] = { "write:2:ENOSPC", "write:3:ENOSPC" };   /* write 1: the header; 2, 3: points */
	for (size_t i = 0; i < 2; i++) {
		struct fb_exec_result r = RUN_FAULT(faults[i], "sweep", "selftest", "--grid", "wait_ns=1,2,3", "--iterations",
						    "5", "--format", "json", "--out", out, "-q");
		if (r.status == 0 || !strstr(r.err, "No space left on device"))
			fail_msg("%s: exit %d, %s", faults[i], r.status, r.err);
		fb_exec_free(&r);
		assert_int_equal(journal_lines(out), 1 + i);   /* the header and the points before */
		json_t *doc = json_load_file(out, 0, NULL);
		size_t entries = json_array_size(json_object_get(doc, "benchmarks"));
		json_decref(doc);
		r = RUN("sweep", "selftest", "--grid", "wait_ns=1", "--iterations", "5", "--format", "json", "--out",
			tmp_path("one.json"), "-q");
		fb_exec_free(&r);
		doc = json_load_file(tmp_path("one.json"), 0, NULL);
		size_t per_point = json_array_size(json_object_get(doc, "benchmarks"));
		json_decref(doc);
		assert_int_equal(entries, i * per_point);
		r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2,3", "--iterations", "5", "--format", "json", "--out", out,
			"--resume", "-q");
		assert_int_equal(r.status, 0);
		fb_exec_free(&r);
		assert_int_equal(journal_lines(out), 4);
	}
	const char *soft[] = { "write:2:EINTR", "write:2:short" };
	for (size_t i = 0; i < 2; i++) {
		struct fb_exec_result r = RUN_FAULT(soft[i], "sweep", "selftest", "--grid", "wait_ns=1,2,3", "--iterations",
						    "5", "--format", "json", "--out", out, "-q");
		if (r.status != 0)
			fail_msg("%s: exit %d, %s", soft[i], r.status, r.err);
		fb_exec_free(&r);
		assert_int_equal(journal_lines(out), 4);
		r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2,3", "--iterations", "5", "--format", "json", "--out", out,
			"--resume", "-q");
		if (r.status != 0)
			fail_msg("resume after %s: exit %d, %s", soft[i], r.status, r.err);
		fb_exec_free(&r);
	}
	unlink(out);
	unlink(tmp_path("nospace.json.journal"));
	unlink(tmp_path("one.json"));
	unlink(tmp_path("one.json.journal"));
}

/* A sweep writing a FIFO that no one reads ends on SIGINT, within a bound. */
static void sigint_ends_a_wait_for_a_fifo_reader(void **state)
{
	(void)state;
	const char *fifo = tmp_path("nobody.fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	const char *argv[] = { fencebench, "sweep", "selftest", "--grid", "wait_ns=1", "--iterations", "5", "--format",
			       "json", "--out", fifo, NULL };
	pid_t pid = fb_exec_start(tmpdir, argv, FB_EXEC_SEPARATE);
	assert_true(pid > 0);
	const struct timespec tick = { 0, 50 * 1000 * 1000 };
	/* The point is shown on stdout once it finished: the output's write
	 * (waiting for a reader) comes right after. */
	char *shown = NULL;
	for (int i = 0; i < 600 && !(shown && strstr(shown, "== selftest")); i++) {
		free(shown);
		nanosleep(&tick, NULL);
		shown = fb_slurp(tmp_path(".stdout"));
	}
	free(shown);
	nanosleep(&tick, NULL);
	nanosleep(&tick, NULL);
	kill(pid, SIGINT);
	fb_wait_bounded(pid, 10000, "the sweep, after SIGINT while waiting for a FIFO reader,");
	struct fb_exec_result r = fb_exec_wait(tmpdir, -1, FB_EXEC_SEPARATE);
	fb_exec_free(&r);
	unlink(fifo);
}

/* A sweep writing a FIFO whose reader opened it but reads nothing ends on
 * SIGINT, within a bound: the write, blocked on a full pipe, does not keep
 * the stop hook waiting for ever.  The pipe is shrunk to one page, so the
 * output (several pages) fills it. */
static void sigint_ends_a_write_to_a_fifo_nobody_drains(void **state)
{
	(void)state;
	const char *fifo = tmp_path("stalled.fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	int rd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_true(fcntl(rd, F_SETPIPE_SZ, 4096) > 0);
	int cap = fcntl(rd, F_GETPIPE_SZ);
	const char *argv[] = { fencebench, "sweep", "selftest", "--grid", "wait_ns=1", "--iterations", "5", "--format",
			       "json", "-q", "--out", fifo, NULL };
	pid_t pid = fb_exec_start(tmpdir, argv, FB_EXEC_SEPARATE);
	assert_true(pid > 0);
	const struct timespec tick = { 0, 50 * 1000 * 1000 };
	int queued = 0;
	for (int i = 0; i < 1200 && queued < cap; i++) {   /* 60 s at most: the pipe is full, the writer blocked */
		nanosleep(&tick, NULL);
		if (ioctl(rd, FIONREAD, &queued))
			queued = 0;
	}
	if (queued < cap) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("the sweep never filled the pipe (%d of %d bytes)", queued, cap);
	}
	kill(pid, SIGINT);
	int st = fb_wait_bounded(pid, 10000, "the sweep, after SIGINT while writing a FIFO nobody reads,");
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
	struct fb_exec_result r = fb_exec_wait(tmpdir, -1, FB_EXEC_SEPARATE);
	fb_exec_free(&r);
	close(rd);
	unlink(fifo);
}

/* ---- no parameter is cut ---- */

/* Two string values that differ only past byte 127 are two points: both
 * run, each under its whole value (point key, parameters, journal). */
static void long_string_values_are_kept_whole(void **state)
{
	(void)state;
	char frame[PATH_MAX + 64], dir[512], a[640], b[640];
	fb_build_path(frame, sizeof(frame), "../benchmarks/workloads/frame.json");
	char *graph = fb_slurp(frame);
	assert_non_null(graph);
	char longname[201];
	memset(longname, 'd', 200);
	longname[200] = '\0';
	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, longname);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(a, sizeof(a), "%s/frame-1.json", dir);
	snprintf(b, sizeof(b), "%s/frame-2.json", dir);
	const char *files[] = { a, b };
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "w");
		fputs(graph, f);
		fclose(f);
	}
	free(graph);
	char grid[2 * PATH_MAX + 16];
	snprintf(grid, sizeof(grid), "file=%s,%s", a, b);
	const char *out = tmp_path("long.json");
	struct fb_exec_result r = RUN("sweep", "replay", "--grid", grid, "--iterations", "2", "--format", "json", "--out",
				      out, "-q");
	if (r.status != 0)
		fail_msg("a grid of two long paths: exit %d, %s", r.status, r.err);
	fb_exec_free(&r);
	json_t *doc = json_load_file(out, 0, NULL), *e;
	size_t i, seen[2] = { 0, 0 };
	json_array_foreach(json_object_get(doc, "benchmarks"), i, e) {
		json_t *meta = json_object_get(e, "fencebench");
		const char *file = json_string_value(json_object_get(json_object_get(meta, "params"), "file"));
		const char *point = json_string_value(json_object_get(meta, "point"));
		assert_non_null(file);
		for (int k = 0; k < 2; k++) {
			if (strcmp(file, files[k]))
				continue;
			seen[k]++;
			assert_non_null(strstr(point, files[k]));
		}
	}
	json_decref(doc);
	assert_true(seen[0] > 0 && seen[0] == seen[1]);
	/* The journal keeps both whole: a resume runs nothing again and agrees. */
	r = RUN("sweep", "replay", "--grid", grid, "--iterations", "2", "--format", "json", "--out", out, "--resume", "-q");
	if (r.status != 0)
		fail_msg("resume: exit %d, %s", r.status, r.err);
	fb_exec_free(&r);
	for (int k = 0; k < 2; k++)
		unlink(files[k]);
	rmdir(dir);
}

/* ---- killed at random moments, resumed, exact ---- */

#define CRASH_GRID  "wait_ns=1,2,3", "--grid", "pollers=1,8"
#define CRASH_ARGS  "sweep", "selftest", "--cpus", "0-1", "--grid", CRASH_GRID, "--iterations", "3", "--seed", "7", \
		    "--format", "json", "-q", "--out"

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Temporaries (NAME.tmp.*) left in tmpdir. */
static size_t temporaries(void)
{
	DIR *d = opendir(tmpdir);
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strstr(e->d_name, ".tmp.") != NULL;
	closedir(d);
	return n;
}

/* 20 sweeps killed (SIGKILL) at random moments: after a random delay, or
 * just before a chosen write, fsync or rename (the journal's lines, the final
 * output's write, its rename).  Each is resumed and its output compared, key
 * by key, with an uninterrupted sweep of the same grid and seed. */
static void killed_anywhere_resumes_exactly(void **state)
{
	(void)state;
	const char *whole = tmp_path("whole-run.json"), *out = tmp_path("crash.json");
	char journal[PATH_MAX];
	snprintf(journal, sizeof(journal), "%s.journal", out);
	uint64_t t0 = now_ns();
	struct fb_exec_result r = RUN(CRASH_ARGS, whole);
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	uint64_t span = now_ns() - t0;
	unsigned seed = (unsigned)now_ns();
	srand(seed);
	const char *ops[] = { "write", "fsync", "rename", "any" };
	size_t exact = 0;
	for (int i = 0; i < 20; i++) {
		unlink(out);
		unlink(journal);
		char fault[64] = "", how[96];
		int kind = i % 5;
		if (kind < 4) {
			/* writes: the header, 6 points, the output; fsyncs: one more each,
			 * and the folders; one rename.  A number past the last: no crash. */
			snprintf(fault, sizeof(fault), "%s:%d:kill", ops[kind], kind == 2 ? 1 : 1 + rand() % 18);
			snprintf(how, sizeof(how), "before %s", fault);
			r = RUN_FAULT(fault, CRASH_ARGS, out);
		} else {
			uint64_t delay = (uint64_t)rand() % (span + 1);
			snprintf(how, sizeof(how), "after %.1f ms", (double)delay / 1e6);
			const char *argv[] = { fencebench, CRASH_ARGS, out, NULL };
			pid_t pid = fb_exec_start(tmpdir, argv, FB_EXEC_SEPARATE);
			struct timespec d = { (time_t)(delay / 1000000000u), (long)(delay % 1000000000u) };
			nanosleep(&d, NULL);
			kill(pid, SIGKILL);
			r = fb_exec_wait(tmpdir, pid, FB_EXEC_SEPARATE);
		}
		/* Killed, or done before the moment came; anything else (a
		 * sanitizer's report: exit 66) is a failure of its own. */
		if (r.status != 0 && r.status != 128 + SIGKILL)
			fail_msg("try %d (seed %u), killed %s: the killed run exits %d: %s", i, seed, how, r.status, r.err);
		fb_exec_free(&r);
		struct stat st;
		if (!stat(out, &st)) {   /* what a crash left as the output is whole, never half-written */
			json_t *doc = json_load_file(out, 0, NULL);
			if (!doc)
				fail_msg("try %d (seed %u), killed %s: %s is not whole JSON", i, seed, how, out);
			json_decref(doc);
		}
		r = RUN(CRASH_ARGS, out, "--resume");
		if (r.status != 0)
			fail_msg("try %d (seed %u), killed %s: the resume exits %d: %s", i, seed, how, r.status, r.err);
		fb_exec_free(&r);
		assert_same_results(out, whole);
		if (temporaries())
			fail_msg("try %d (seed %u), killed %s: a temporary is left after the resume", i, seed, how);
		exact++;
	}
	assert_int_equal(exact, 20);
	unlink(out);
	unlink(journal);
	unlink(whole);
	unlink(tmp_path("whole-run.json.journal"));
}

/* A rerun without --resume drops the journal's points: it says so (also
 * with -q), naming how many. */
static void rerun_without_resume_says_it_drops_the_journal(void **state)
{
	(void)state;
	const char *out = tmp_path("again.json");
	struct fb_exec_result r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "3", "--format", "json",
				      "--out", out, "-q");
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.err, "starting afresh"));   /* a new journal drops nothing */
	fb_exec_free(&r);
	r = RUN("sweep", "selftest", "--grid", "wait_ns=1,2", "--iterations", "3", "--format", "json", "--out", out, "-q");
	assert_int_equal(r.status, 0);
	if (!strstr(r.err, "held 2 finished points") || !strstr(r.err, "starting afresh"))
		fail_msg("a rerun without --resume: %s", r.err);
	fb_exec_free(&r);
	unlink(out);
	unlink(tmp_path("again.json.journal"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resume_rebuilds_each_points_context),
		cmocka_unit_test(trace_and_out_reaching_one_file_are_refused),
		cmocka_unit_test(out_naming_stdout_appends_through_it),
		cmocka_unit_test(out_naming_a_descriptor_of_no_path_writes_it),
		cmocka_unit_test(out_naming_a_read_only_descriptor_is_refused),
		cmocka_unit_test(full_stdout_is_an_error),
		cmocka_unit_test(journal_lock_is_the_real_targets),
		cmocka_unit_test(leftover_temporaries_go_by_their_lock_not_their_pid),
		cmocka_unit_test(failed_rename_keeps_the_results),
		cmocka_unit_test(interrupted_fsync_of_the_output_is_retried),
		cmocka_unit_test(replaced_file_keeps_no_set_id_bits),
		cmocka_unit_test(unreplaceable_out_is_refused_before_any_work),
		cmocka_unit_test(folder_is_fsynced_after_the_rename),
		cmocka_unit_test(folder_is_fsynced_after_the_journal_is_made),
		cmocka_unit_test(journal_write_errors_are_errors),
		cmocka_unit_test(sigint_ends_a_wait_for_a_fifo_reader),
		cmocka_unit_test(sigint_ends_a_write_to_a_fifo_nobody_drains),
		cmocka_unit_test(long_string_values_are_kept_whole),
		cmocka_unit_test(killed_anywhere_resumes_exactly),
		cmocka_unit_test(rerun_without_resume_says_it_drops_the_journal),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
