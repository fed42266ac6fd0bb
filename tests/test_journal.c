/* tests/test_journal.c — the sweep journal (src/fb_journal.h) directly.
 *
 * A point that cannot be written as JSON is refused, never journaled as a
 * "(null)" line that every later --resume would refuse; an append that meets
 * a full disk (injected: src/fb_io.h) leaves no torn line.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "src/fb_io.h"
#include "src/fb_journal.h"

static char tmpdir[] = "/tmp/fb_test_journal.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fb_remove_tree(tmpdir);
	return 0;
}

static const char *fp = "{\"scenario\":\"selftest\"}";

static json_t *a_point(void)
{
	return json_pack("{s:i, s:s, s:{s:s}, s:[{s:{s:s, s:{s:s}}}]}", "index", 0, "key", "wait_ns=1", "params", "wait_ns",
			 "1", "entries", "fencebench", "scenario", "selftest", "params", "wait_ns", "1");
}

static json_t *a_record(void)
{
	return json_pack("{s:i, s:i, s:[], s:[]}", "polling_threads", 1, "repetitions", 1, "notes", "warnings");
}

static char *journal_text(const char *path)
{
	char *t = fb_slurp(path);
	assert_non_null(t);
	return t;
}

/* A point json_dumps cannot encode (a cycle) is an error, and the journal
 * holds only its header: a resume still reads it. */
static void unencodable_point_is_never_journaled(void **state)
{
	(void)state;
	const char *path = fb_tmp_path(tmpdir, "null.journal");
	struct fb_journal *j;
	char err[512];
	assert_int_equal(fb_journal_open(&j, path, fp, false, err, sizeof(err)), 0);
	json_t *point = a_point(), *record = a_record();
	json_t *inner = json_object();
	json_object_set(inner, "up", record);        /* a cycle: json_dumps gives NULL */
	json_object_set_new(record, "inner", inner);
	int rc = fb_journal_append(j, point, record, err, sizeof(err));
	json_object_del(inner, "up");
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(err, "cannot be written as JSON"));
	fb_journal_close(j);
	char *t = journal_text(path);
	assert_int_equal(fb_count_lines(t), 1);
	assert_null(strstr(t, "(null)"));
	free(t);
	assert_int_equal(fb_journal_open(&j, path, fp, true, err, sizeof(err)), 0);
	fb_journal_close(j);
	json_decref(point);
	json_decref(record);
}

/* Every way the append's write can fail leaves the journal as it was (no
 * torn line), says why (ENOSPC: "No space left on device"), and the next
 * append works; EINTR and a short write are continued. */
static void failed_append_leaves_no_torn_line(void **state)
{
	(void)state;
	const char *path = fb_tmp_path(tmpdir, "full.journal");
	struct fb_journal *j;
	char err[512];
	assert_int_equal(fb_journal_open(&j, path, fp, false, err, sizeof(err)), 0);
	json_t *point = a_point(), *record = a_record();
	static const struct { int err; bool ok; const char *says; } cases[] = {
		{ ENOSPC, false, "No space left on device" }, { EIO, false, "Input/output error" },
		{ EINTR, true, NULL }, { FB_IO_SHORT, true, NULL },
	};
	size_t lines = 1;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fb_io_fault(FB_IO_WRITE, 1, cases[i].err);
		int rc = fb_journal_append(j, point, record, err, sizeof(err));
		fb_io_fault(FB_IO_WRITE, 0, 0);
		lines += cases[i].ok;
		if (cases[i].ok)
			assert_int_equal(rc, 0);
		else
			assert_non_null(strstr(err, cases[i].says));
		char *t = journal_text(path);
		assert_int_equal(fb_count_lines(t), lines);
		assert_true(t[strlen(t) - 1] == '\n');
		free(t);
	}
	fb_journal_close(j);
	json_decref(point);
	json_decref(record);
}

/* An append whose fsync fails is cut back too: the point is neither in
 * the output (the sweep stops) nor, possibly lost later, in the journal. */
static void failed_fsync_cuts_the_line_back(void **state)
{
	(void)state;
	const char *path = fb_tmp_path(tmpdir, "fsync.journal");
	struct fb_journal *j;
	char err[512];
	assert_int_equal(fb_journal_open(&j, path, fp, false, err, sizeof(err)), 0);
	json_t *point = a_point(), *record = a_record();
	fb_io_fault(FB_IO_FSYNC, 1, EIO);
	int rc = fb_journal_append(j, point, record, err, sizeof(err));
	fb_io_fault(FB_IO_FSYNC, 0, 0);
	assert_int_equal(rc, -EIO);
	char *t = journal_text(path);
	assert_int_equal(fb_count_lines(t), 1);
	free(t);
	fb_journal_close(j);
	json_decref(point);
	json_decref(record);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unencodable_point_is_never_journaled),
		cmocka_unit_test(failed_append_leaves_no_torn_line),
		cmocka_unit_test(failed_fsync_cuts_the_line_back),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
