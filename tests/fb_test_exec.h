/* tests/fb_test_exec.h — for tests that run a program and check what it wrote.
 *
 * Included only by tests/test_*.c (test_cli, test_compare, test_plot, test_costs), after
 * tests/fb_test.h: the helpers use cmocka and are static inline, one copy per
 * test binary.  What it offers:
 *
 *   fb_exec(dir, argv, capture)     posix_spawn argv[0] with argv and this environment,
 *                                   wait for it, return its exit status (128 + signal
 *                                   when killed, -1 when it could not be started or
 *                                   waited for) and its output, captured through
 *                                   dir/.stdout and dir/.stderr (removed again):
 *                                     FB_EXEC_SEPARATE  stdout in .out, stderr in .err
 *                                     FB_EXEC_MERGED    stderr onto stdout, both in .out
 *                                                       in the order written; .err NULL
 *   fb_exec_args(dir, prog, args)   fb_exec of prog with the NULL-terminated args after it,
 *                                   stdout and stderr apart; fails the test when it
 *                                   could not be started (RUN(...) in the tests that use it)
 *   fb_exec_start(dir, argv, capture)  the same, without waiting: the child's pid (-1: not
 *                                   started), for a test that acts on it while it runs
 *   fb_exec_wait(dir, pid, capture) wait for it and collect as fb_exec does
 *   fb_wait_bounded(pid, ms, what)  its wait status within ms; past that it is
 *                                   killed and the test fails naming what
 *   fb_exec_json(dir, argv, out)    fb_exec argv (which writes JSON to the file out),
 *                                   fail the test unless it exits 0, and return out's
 *                                   document (json_decref it)
 *   fb_exec_free(&r)                free what fb_exec returned
 *   fb_json_num(e, key)             the number key of a results entry; the test
 *                                   fails, naming the entry, when it is not one
 *   fb_slurp(path)                  a whole file as a NUL-terminated malloc'd string;
 *                                   NULL when it cannot be opened
 *   fb_count_lines(s)               the '\n' in s (0 for NULL)
 *   fb_build_path(buf, size, name)  name in this test binary's build tree
 *                                   (/proc/self/exe is BUILD/tests/test_x: BUILD/name)
 *   fb_need_binary(path)            fail the test unless path is an executable
 *   fb_tmp_path(dir, name)          "dir/name" in one of 8 rotating static buffers,
 *                                   so a few can be live in one expression
 *   fb_remove_tree(dir)             rm -r dir, for the teardown of a mkdtemp directory
 *   fb_write_file(dir, rel, text)   write text to dir/rel, making rel's folders first
 *                                   (a fake tree's files); fails the test when it cannot
 *   fb_bench_named(doc, name)       the benchmark entry of a result document called name;
 *                                   fails the test when there is none
 *
 * Nothing here is thread-safe (fb_tmp_path's buffers are shared); tests call it
 * from the cmocka thread only.
 */
#ifndef FB_TEST_EXEC_H
#define FB_TEST_EXEC_H

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/fb_test.h"

extern char **environ;

enum fb_exec_capture {
	FB_EXEC_SEPARATE,   /* stdout -> out, stderr -> err */
	FB_EXEC_MERGED,     /* stdout and stderr interleaved -> out; err is NULL */
};

struct fb_exec_result {
	int status;         /* exit status, 128 + signal, or -1: not started */
	char *out, *err;    /* malloc'd; NULL when the capture file could not be read */
};

static inline char *fb_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = calloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = '\0';
	fclose(f);
	return s;
}

/* Start argv[0] with argv and this environment, its output going to dir's
 * capture files; fb_exec_wait collects it.  argv is NULL-terminated, argv[0]
 * a path (no PATH search).  The pid, or -1 when it could not be started. */
static inline pid_t fb_exec_start(const char *dir, const char *const *argv, enum fb_exec_capture capture)
{
	char out[PATH_MAX], err[PATH_MAX];
	snprintf(out, sizeof(out), "%s/.stdout", dir);
	snprintf(err, sizeof(err), "%s/.stderr", dir);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (capture == FB_EXEC_MERGED)
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t pid;
	if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

/* Wait for a child of fb_exec_start (pid -1: none) and collect its output. */
static inline struct fb_exec_result fb_exec_wait(const char *dir, pid_t pid, enum fb_exec_capture capture)
{
	char out[PATH_MAX], err[PATH_MAX];
	snprintf(out, sizeof(out), "%s/.stdout", dir);
	snprintf(err, sizeof(err), "%s/.stderr", dir);
	int st = 0;
	struct fb_exec_result r = { -1, NULL, NULL };
	if (pid > 0 && waitpid(pid, &st, 0) == pid)
		r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = fb_slurp(out);
	unlink(out);
	if (capture == FB_EXEC_SEPARATE) {
		r.err = fb_slurp(err);
		unlink(err);
	}
	return r;
}

/* Blocks until the child exits. */
static inline struct fb_exec_result fb_exec(const char *dir, const char *const *argv,
					    enum fb_exec_capture capture)
{
	return fb_exec_wait(dir, fb_exec_start(dir, argv, capture), capture);
}

/* prog args... (at most 62 args), stdout and stderr apart; fails the test
 * when the child could not be started or waited for. */
static inline struct fb_exec_result fb_exec_args(const char *dir, const char *prog, const char *const *args)
{
	const char *argv[64] = { prog };
	size_t n = 1;
	for (; args[n - 1]; n++) {
		assert_true(n < 63);
		argv[n] = args[n - 1];
	}
	argv[n] = NULL;
	struct fb_exec_result r = fb_exec(dir, argv, FB_EXEC_SEPARATE);
	assert_int_not_equal(r.status, -1);   /* spawned and waited for */
	return r;
}

/* The wait status of child pid, which must end within ms: past that it is
 * killed (SIGKILL, reaped) and the test fails naming what. */
static inline int fb_wait_bounded(pid_t pid, int ms, const char *what)
{
	int status = -1;
	for (int t = 0; t < ms; t += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail_msg("%s did not end within %d ms", what, ms);
	return status;
}

static inline void fb_exec_free(struct fb_exec_result *r)
{
	free(r->out);
	free(r->err);
}

/* Run argv, which writes its results as JSON to out: the test fails unless
 * it exits 0 and out parses.  The document; the caller json_decrefs it. */
static inline json_t *fb_exec_json(const char *dir, const char *const *argv, const char *out)
{
	struct fb_exec_result r = fb_exec(dir, argv, FB_EXEC_SEPARATE);
	if (r.status)
		fail_msg("%s %s exited %d: %s", argv[1], argv[2] ? argv[2] : "", r.status, r.err ? r.err : "");
	fb_exec_free(&r);
	json_error_t je;
	json_t *doc = json_load_file(out, 0, &je);
	assert_non_null(doc);
	return doc;
}

/* The number key of results entry e (an object with a "name"); the test
 * fails, naming the entry and the key, when e has no number there. */
static inline double fb_json_num(json_t *e, const char *key)
{
	json_t *v = json_object_get(e, key);
	if (!json_is_number(v))
		fail_msg("%s: no number %s", json_string_value(json_object_get(e, "name")), key);
	return json_number_value(v);
}

static inline size_t fb_count_lines(const char *s)
{
	size_t n = 0;
	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static inline void fb_build_path(char *buf, size_t size, const char *name)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';   /* .../tests */
	*strrchr(self, '/') = '\0';   /* the build tree */
	snprintf(buf, size, "%s/%s", self, name);
}

static inline void fb_need_binary(const char *path)
{
	if (access(path, X_OK))
		fail_msg("%s not built (make builds it before the tests: mk/harness.mk)", path);
}

static inline const char *fb_tmp_path(const char *dir, const char *name)
{
	static char p[8][PATH_MAX];
	static int k;
	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static inline json_t *fb_bench_named(json_t *doc, const char *name)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b)
		if (!strcmp(json_string_value(json_object_get(b, "name")), name))
			return b;
	fail_msg("no benchmark named %s", name);
	return NULL;
}

static inline void fb_write_file(const char *dir, const char *rel, const char *text)
{
	char path[2 * PATH_MAX], part[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	memcpy(part, path, sizeof(part));
	for (char *p = part + 1; (p = strchr(p, '/')); p++) {   /* mkdir -p; EEXIST is fine */
		*p = '\0';
		mkdir(part, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static inline void fb_remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	char p[PATH_MAX];
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= sizeof(p))
			continue;   /* cannot name it: leave it */
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			fb_remove_tree(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* A test binary's fixtures: setup() makes the temporary folder tmpdir (a
 * mkdtemp template) and, when bin is not NULL, writes the path of the built
 * fencebench into bin; teardown() removes the folder and what is in it. */
static inline int fb_fixture_setup(char *bin, size_t binsize, char *tmpdir)
{
	if (bin)
		fb_build_path(bin, binsize, "fencebench");
	return mkdtemp(tmpdir) ? 0 : -1;
}

#define FB_TEST_FIXTURES(bin, binsize, tmpdir)                                \
	static int setup(void **state)                                        \
	{                                                                     \
		(void)state;                                                  \
		return fb_fixture_setup(bin, binsize, tmpdir);                \
	}                                                                     \
	static int teardown(void **state)                                     \
	{                                                                     \
		(void)state;                                                  \
		fb_remove_tree(tmpdir);                                       \
		return 0;                                                     \
	}

#endif
