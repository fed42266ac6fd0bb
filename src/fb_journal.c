/* src/fb_journal.c — the sweep journal.  Contract in fb_journal.h. */
#include "src/fb_journal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "src/fb_file.h"
#include "src/fb_io.h"
#include "src/fb_util.h"

struct fb_journal {
	char *path;
	int fd;
	char *fp;           /* this sweep's fingerprint */
	char *scenario;     /* from fp */
	json_t *done;       /* key -> line object */
	json_t *lines;      /* key -> line number */
};

/* ---- messages ---- */

static int refuse(struct fb_journal *j, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int refuse(struct fb_journal *j, char *err, size_t errlen, const char *fmt, ...)
{
	char p[FB_FILE_SHOWN_MAX], why[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "--resume: %s %s: remove it or drop --resume", fb_file_shown(j->path, p, sizeof(p)), why);
	return -EINVAL;
}

static int io_error(struct fb_journal *j, char *err, size_t errlen, int rc)
{
	char p[FB_FILE_SHOWN_MAX];
	snprintf(err, errlen, "journal %s: %s", fb_file_shown(j->path, p, sizeof(p)), strerror(-rc));
	return rc;
}

static void value_text(json_t *v, char *buf, size_t len)
{
	char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	fb_shown(s ? s : "(none)", buf, len);
	free(s);
}

const char *fb_journal_fp_diff(const char *a, const char *a_name, const char *b, const char *b_name,
			       char *buf, size_t len)
{
	json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL), *keys = json_object(), *v;
	const char *k;
	size_t used = 0, n = 0;
	buf[0] = '\0';
	if (!json_is_object(ja) || !json_is_object(jb)) {
		snprintf(buf, len, "a fingerprint is not readable");
		goto out;
	}
	json_object_update(keys, ja);
	json_object_update(keys, jb);
	json_object_foreach(keys, k, v) {
		json_t *va = json_object_get(ja, k), *vb = json_object_get(jb, k);
		if ((va && vb && json_equal(va, vb)) || n == 3 || used >= len)
			continue;
		char ta[FB_SHOWN_MAX], tb[FB_SHOWN_MAX];
		value_text(va, ta, sizeof(ta));
		value_text(vb, tb, sizeof(tb));
		used += (size_t)snprintf(buf + used, len - used, "%s%s: %s in %s, %s in %s", n ? "; " : "", k, ta,
					 a_name, tb, b_name);
		n++;
	}
	if (!n)
		snprintf(buf, len, "the same settings written differently");
out:
	json_decref(ja);
	json_decref(jb);
	json_decref(keys);
	return buf;
}

/* ---- writing ---- */

static char *header_line(const char *fp)
{
	json_t *h = json_pack("{s:i, s:s}", "fencebench_journal", FB_JOURNAL_FORMAT, "fingerprint", fp);
	char *s = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER), *line = fb_xasprintf("%s\n", s);
	free(s);
	json_decref(h);
	return line;
}

/* Append a whole line and fsync.  Short writes are continued and EINTR
 * retried; a write or fsync that fails (a full disk: -ENOSPC) cuts the journal back
 * to where the line began, so no torn line stays behind.  A crash mid-line
 * leaves at most one torn last line, which the reader drops.  0 or -errno. */
static int write_line(int fd, const char *line)
{
	off_t start = lseek(fd, 0, SEEK_END);
	int rc = start < 0 ? -errno : fb_io_write_all(fd, line, strlen(line));
	if (!rc)
		rc = fb_io_fsync_all(fd);
	/* Failed: cut the line back (after a failed fsync it may be lost
	 * later anyway).  Should that fail too, the sweep stops here and the
	 * reader drops a torn last line. */
	if (rc && start >= 0 && ftruncate(fd, start) == 0)
		fb_io_fsync(fd);
	return rc;
}

static int start_afresh(struct fb_journal *j, char *err, size_t errlen)
{
	char *h = header_line(j->fp);
	int rc = ftruncate(j->fd, 0) ? -errno : write_line(j->fd, h);
	if (!rc)   /* the journal's name survives a power cut too */
		rc = fb_io_fsync_dir_of(j->path);
	free(h);
	json_object_clear(j->done);
	json_object_clear(j->lines);
	return rc ? io_error(j, err, errlen, rc) : 0;
}

int fb_journal_append(struct fb_journal *j, json_t *point, json_t *context, char *err, size_t errlen)
{
	json_t *line = json_copy(point);
	json_object_set_new(line, "fingerprint", json_string(j->fp));
	json_object_set(line, "context", context);
	char *s = json_dumps(line, JSON_COMPACT), *text = s ? fb_xasprintf("%s\n", s) : NULL;
	json_decref(line);
	if (!s) {   /* never a "(null)" line, which every later --resume would refuse */
		char p[FB_FILE_SHOWN_MAX];
		snprintf(err, errlen, "journal %s: the point cannot be written as JSON", fb_file_shown(j->path, p, sizeof(p)));
		return -EINVAL;
	}
	int rc = write_line(j->fd, text);
	free(s);
	free(text);
	return rc ? io_error(j, err, errlen, rc) : 0;
}

/* ---- reading and checking ---- */

static int read_all(int fd, char **buf, size_t *len)
{
	size_t cap = 1 << 16;
	*buf = fb_xcalloc(1, cap);
	*len = 0;
	for (;;) {
		if (*len == cap)
			*buf = fb_xrealloc(*buf, cap *= 2);
		ssize_t n = pread(fd, *buf + *len, cap - *len, (off_t)*len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		*len += (size_t)n;
	}
}

static int check_header(struct fb_journal *j, const char *text, size_t n, char *err, size_t errlen)
{
	json_t *h = json_loadb(text, n, 0, NULL);
	json_t *format = json_object_get(h, "fencebench_journal");
	const char *fp = json_string_value(json_object_get(h, "fingerprint"));
	char diff[512];
	int rc = 0;
	if (!json_is_integer(format))
		rc = refuse(j, err, errlen, "is not a fencebench journal (line 1)");
	else if (json_integer_value(format) != FB_JOURNAL_FORMAT)
		rc = refuse(j, err, errlen, "is in journal format %lld of another fencebench version (this one writes %d)",
			    json_integer_value(format), FB_JOURNAL_FORMAT);
	else if (!fp || strcmp(fp, j->fp))
		rc = refuse(j, err, errlen, "was written by a different sweep (%s)",
			    fb_journal_fp_diff(fp ? fp : "", "the journal", j->fp, "this sweep", diff, sizeof(diff)));
	json_decref(h);
	return rc;
}

/* Every entry of the line is of this scenario and of the line's parameters. */
static bool entries_match(struct fb_journal *j, json_t *entries, json_t *params)
{
	size_t i;
	json_t *e;
	json_array_foreach(entries, i, e) {
		json_t *meta = json_object_get(e, "fencebench");
		const char *sc = json_string_value(json_object_get(meta, "scenario"));
		if (!sc || strcmp(sc, j->scenario) || !json_equal(json_object_get(meta, "params"), params))
			return false;
	}
	return true;
}

static bool strings_only(json_t *a)
{
	size_t i;
	json_t *v;
	if (!json_is_array(a))
		return false;
	json_array_foreach(a, i, v)
		if (!json_is_string(v))
			return false;
	return true;
}

/* A point's context record: what fb_session_point_replay takes. */
static bool context_ok(json_t *c)
{
	json_t *pt = json_object_get(c, "polling_threads"), *reps = json_object_get(c, "repetitions");
	return json_is_integer(pt) && json_integer_value(pt) >= 0 && json_is_integer(reps) &&
	       json_integer_value(reps) >= 0 && strings_only(json_object_get(c, "notes")) &&
	       strings_only(json_object_get(c, "warnings"));
}

static int check_line(struct fb_journal *j, json_t *l, size_t n, char *err, size_t errlen)
{
	const char *fp = json_string_value(json_object_get(l, "fingerprint"));
	const char *key = json_string_value(json_object_get(l, "key"));
	json_t *params = json_object_get(l, "params"), *entries = json_object_get(l, "entries");
	char diff[512], k[FB_SHOWN_MAX];
	if (!json_is_object(l))
		return refuse(j, err, errlen, "line %zu is not a JSON object (the journal is damaged)", n);
	if (!fp)
		return refuse(j, err, errlen, "line %zu has no fingerprint (not a point of a sweep)", n);
	if (strcmp(fp, j->fp))
		return refuse(j, err, errlen, "line %zu was written by a different sweep (%s)", n,
			      fb_journal_fp_diff(fp, "the line", j->fp, "this sweep", diff, sizeof(diff)));
	if (!key || !json_is_object(params) || !json_is_integer(json_object_get(l, "index")))
		return refuse(j, err, errlen, "line %zu lacks its point's key, index or parameters", n);
	fb_shown(key, k, sizeof(k));
	if (!context_ok(json_object_get(l, "context")))
		return refuse(j, err, errlen, "line %zu (point %s) lacks its context (threads, repetitions, notes, "
			      "warnings)", n, k);
	if (!json_array_size(entries))
		return refuse(j, err, errlen, "line %zu (point %s) has no entries", n, k);
	if (!entries_match(j, entries, params))
		return refuse(j, err, errlen, "line %zu (point %s) holds results of another scenario or parameters", n, k);
	json_object_set(j->done, key, l);
	json_object_set_new(j->lines, key, json_integer((json_int_t)n));
	return 0;
}

/* The header was cut short: this sweep's when it is the start of its header. */
static int torn_header(struct fb_journal *j, const char *text, size_t n, char *err, size_t errlen)
{
	char *h = header_line(j->fp);
	bool ours = n < strlen(h) && !memcmp(text, h, n);
	free(h);
	if (!ours)
		return refuse(j, err, errlen, "has a first line cut short (a crash while it was written?) "
			      "that is not this sweep's header");
	return start_afresh(j, err, errlen);
}

/* Check the lines of text (the whole journal); drop a torn last line. */
static int check_all(struct fb_journal *j, char *text, size_t len, char *err, size_t errlen)
{
	char *nl = memchr(text, '\n', len);
	if (!len)
		return start_afresh(j, err, errlen);
	if (!nl)
		return torn_header(j, text, len, err, errlen);
	int rc = check_header(j, text, (size_t)(nl - text), err, errlen);
	size_t whole = (size_t)(nl - text) + 1, n = 2;
	for (char *p = nl + 1; !rc && (nl = memchr(p, '\n', len - (size_t)(p - text))); p = nl + 1, n++) {
		json_t *l = json_loadb(p, (size_t)(nl - p), 0, NULL);
		rc = check_line(j, l, n, err, errlen);
		json_decref(l);
		whole = (size_t)(nl - text) + 1;
	}
	/* A torn last line (a crash mid-write) goes, or the next appended line
	 * would be glued to it and unreadable on the following resume. */
	if (!rc && whole < len && ftruncate(j->fd, (off_t)whole))
		rc = io_error(j, err, errlen, -errno);
	return rc;
}

static int load(struct fb_journal *j, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc = read_all(j->fd, &text, &len);
	rc = rc ? io_error(j, err, errlen, rc) : check_all(j, text, len, err, errlen);
	free(text);
	return rc;
}

/* Without --resume a journal of finished points starts afresh: said on
 * stderr (also with --quiet: results are being dropped), with how many. */
static void warn_wiped(struct fb_journal *j)
{
	char *text, p[FB_FILE_SHOWN_MAX];
	size_t len, lines = 0;
	if (read_all(j->fd, &text, &len) == 0)
		for (size_t i = 0; i < len; i++)
			lines += text[i] == '\n';
	free(text);
	if (lines > 1)
		fprintf(stderr, "fencebench: %s held %zu finished point%s of an earlier sweep: starting afresh without "
			"them (--resume keeps them)\n", fb_file_shown(j->path, p, sizeof(p)), lines - 1,
			lines == 2 ? "" : "s");
}

int fb_journal_open(struct fb_journal **out, const char *path, const char *fp, bool resume,
		    char *err, size_t errlen)
{
	struct fb_journal *j = fb_xcalloc(1, sizeof(*j));
	json_t *fpj = json_loads(fp, 0, NULL);
	j->path = fb_xstrdup(path);
	j->fp = fb_xstrdup(fp);
	j->scenario = fb_xstrdup(json_string_value(json_object_get(fpj, "scenario")) ?: "");
	j->done = json_object();
	j->lines = json_object();
	json_decref(fpj);
	j->fd = fb_file_open_journal(path, err, errlen);
	int rc = j->fd < 0 ? j->fd : 0;
	if (!rc && flock(j->fd, LOCK_EX | LOCK_NB)) {
		char p[FB_FILE_SHOWN_MAX];
		snprintf(err, errlen, "journal %s is locked: another fencebench sweep is writing the same --out "
			 "(give each its own)", fb_file_shown(path, p, sizeof(p)));
		rc = -EINVAL;
	}
	if (!rc && !resume)
		warn_wiped(j);
	if (!rc)
		rc = resume ? load(j, err, errlen) : start_afresh(j, err, errlen);
	if (rc) {
		fb_journal_close(j);
		j = NULL;
	}
	*out = j;
	return rc;
}

json_t *fb_journal_point(struct fb_journal *j, const char *key, size_t *line)
{
	json_t *l = json_object_get(j->done, key);
	if (l && line)
		*line = (size_t)json_integer_value(json_object_get(j->lines, key));
	return l;
}

void fb_journal_close(struct fb_journal *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);   /* drops the flock */
	free(j->path);
	free(j->fp);
	free(j->scenario);
	json_decref(j->done);
	json_decref(j->lines);
	free(j);
}
