/* src/fb_sweep.c — `fencebench sweep`: grid points, shards, the journal, --resume, progress.
 *
 * With --out FILE, every finished point is appended (one JSON line, fsync'd)
 * to FILE.journal, and FILE is rewritten atomically with every point so far:
 * an interrupted sweep keeps what finished, and `--resume` skips the points
 * whose key ("k=v,k=v") the journal holds.  The journal's first line is a
 * fingerprint of what else shapes the results (scenario, --set, paths,
 * repetitions, length, warm-up, seed, CPUs); resuming under a different one
 * is refused.  The grid itself is not in it: a grid extended with new values
 * resumes the points it shares.  Without --resume the journal starts afresh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "src/fb_app.h"
#include "src/fb_output.h"
#include "src/fb_run.h"
#include "src/fb_util.h"

struct sweep {
	struct fb_session *s;
	const struct fb_opts *o;
	char *journal;        /* FILE.journal, NULL without --out */
	json_t *done;         /* point key -> point object, from the journal */
	json_t *points;       /* points of this grid and shard, finished (either session) */
	json_t *context;
	uint64_t total, mine, finished, resumed;
	uint64_t t0_ns;
	bool progress;
};

static char *fingerprint(const struct fb_session *s, const struct fb_opts *o)
{
	json_t *set = json_object();
	for (size_t i = 0; i < s->base->n; i++) {
		char v[128];
		if (!s->base->set[i])
			continue;
		fb_param_format(&s->scenario->params[i], s->base->v[i], v, sizeof(v));
		json_object_set_new(set, s->scenario->params[i].key, json_string(v));
	}
	json_t *fp = json_pack("{s:s, s:o, s:i, s:i, s:I, s:I, s:I, s:I, s:s}", "scenario", s->scenario->name,
			       "set", set, "paths", (int)s->paths, "repetitions", (int)o->repetitions,
			       "iterations", (json_int_t)s->iterations, "duration_ns", (json_int_t)s->duration_ns,
			       "warmup_ns", (json_int_t)s->warmup_ns, "seed", (json_int_t)o->seed, "cpus", s->cpus.text);
	char *text = json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(fp);
	return text;
}

static int append_line(const char *path, json_t *obj, bool truncate, char *err, size_t errlen)
{
	char *line = json_dumps(obj, JSON_COMPACT);
	char *text = fb_xasprintf("%s\n", line);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0666), rc = 0;
	/* One write() per line: a crash leaves at most one torn last line, which
	 * the reader skips. */
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fsync(fd))
		rc = errno ? -errno : -EIO;
	if (fd >= 0)
		close(fd);
	if (rc)
		snprintf(err, errlen, "journal %s: %s", path, strerror(-rc));
	free(line);
	free(text);
	return rc;
}

/* Load FILE.journal's points when its fingerprint matches.  -EINVAL on a mismatch. */
static int load_journal(struct sweep *w, const char *fp, char *err, size_t errlen)
{
	FILE *f = fopen(w->journal, "r");
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	off_t whole = 0;   /* end of the last complete line */
	ssize_t len;
	for (size_t n = 0; (len = getline(&line, &cap, f)) > 0; n++) {
		if (line[len - 1] == '\n')
			whole += len;
		json_t *j = json_loads(line, 0, NULL);
		if (!n && (!j || strcmp(json_string_value(json_object_get(j, "fingerprint")) ?: "", fp))) {
			snprintf(err, errlen, "--resume: %s was written by a different sweep (scenario, --set, "
				 "paths, repetitions, length, seed or CPUs differ): remove it or drop --resume", w->journal);
			rc = -EINVAL;
		} else if (n && json_is_string(json_object_get(j, "key"))) {
			json_object_set(w->done, json_string_value(json_object_get(j, "key")), j);
		}
		json_decref(j);
		if (rc)
			break;
	}
	free(line);
	fclose(f);
	/* A torn last line (a crash mid-write) goes, or the next appended line
	 * would be glued to it and unreadable on the following resume. */
	if (!rc && truncate(w->journal, whole) && errno != ENOENT) {
		rc = -errno;
		snprintf(err, errlen, "journal %s: %s", w->journal, strerror(-rc));
	}
	return rc;
}

static int open_journal(struct sweep *w, char *err, size_t errlen)
{
	if (!w->o->out)
		return 0;
	w->journal = fb_xasprintf("%s.journal", w->o->out);
	char *fp = fingerprint(w->s, w->o);
	int rc = w->o->resume ? load_journal(w, fp, err, errlen) : 0;
	if (!rc && (!w->o->resume || !json_object_size(w->done))) {
		json_t *head = json_pack("{s:i, s:s}", "fencebench_journal", 1, "fingerprint", fp);
		rc = append_line(w->journal, head, true, err, errlen);
		json_decref(head);
	}
	free(fp);
	return rc;
}

static void progress(struct sweep *w)
{
	if (!w->progress)
		return;
	const int width = 30;
	uint64_t doneish = w->finished + w->resumed;
	int fill = w->mine ? (int)(width * doneish / w->mine) : width;
	double el = (double)(lf_now_ns() - w->t0_ns) / 1e9;
	double eta = w->finished ? el / (double)w->finished * (double)(w->mine - doneish) : 0;
	fprintf(stderr, "\r[%.*s%*s] %llu/%llu points", fill, "##############################", width - fill, "",
		(unsigned long long)doneish, (unsigned long long)w->mine);
	if (w->resumed)
		fprintf(stderr, " (%llu resumed)", (unsigned long long)w->resumed);
	fprintf(stderr, "  %.1fs elapsed, eta %.1fs ", el, eta);
	if (doneish == w->mine)
		fputc('\n', stderr);
	fflush(stderr);
}

/* The parameters of grid point k: the base (--set) plus one value per axis. */
static struct fb_params *point_params(struct sweep *w, uint64_t k)
{
	const struct fb_grid *g = &w->o->grid;
	size_t *idx = fb_xcalloc(g->n, sizeof(*idx));
	struct fb_params *p = fb_params_dup(w->s->base);
	char err[256];
	fb_grid_point(g, k, idx);
	for (size_t a = 0; a < g->n; a++) {
		int rc = fb_params_set(p, g->axes[a].key, g->axes[a].values[idx[a]], err, sizeof(err));
		if (rc)   /* checked by fb_session_open: cannot happen */
			lf_die("%s", err);
	}
	free(idx);
	return p;
}

static char *key_of(const struct fb_params *p)
{
	char *key = fb_xstrdup(""), *next;
	for (size_t i = 0; i < p->n; i++) {
		if (!p->set[i])
			continue;
		char v[128];
		fb_param_format(&p->scenario->params[i], p->v[i], v, sizeof(v));
		next = fb_xasprintf("%s%s%s=%s", key, *key ? "," : "", p->scenario->params[i].key, v);
		free(key);
		key = next;
	}
	return key;
}

/* Rewrite --out with every point so far (atomically). */
/* What the points learned since the context was made: notes, warnings, and
 * the most polling threads any point ran (0 before the first point). */
static void sweep_refresh_context(struct sweep *w)
{
	json_object_set(w->context, "notes", w->s->notes);
	json_object_set(w->context, "warnings", w->s->warnings);
	json_object_set_new(w->context, "polling_threads", json_integer((json_int_t)w->s->polling_threads));
	json_object_set_new(w->context, "oversubscribed", json_boolean(w->s->polling_threads > w->s->cpus.n));
}

static int write_out(struct sweep *w, char *err, size_t errlen)
{
	if (!w->o->out)
		return 0;
	sweep_refresh_context(w);
	char *text = fb_output_render(w->o->format, w->context, w->points);
	int rc = fb_output_write_atomic(w->o->out, text, strlen(text), err, errlen);
	free(text);
	return rc;
}

static void show_point(struct sweep *w, json_t *point)
{
	bool console_stdout = w->o->out ? !w->o->quiet : w->o->format == FB_FORMAT_CONSOLE;
	if (!console_stdout)
		return;
	char *text = fb_output_console_point(point);
	if (w->progress)
		fputs("\r\033[K", stderr);
	fputs(text, stdout);
	fflush(stdout);
	free(text);
}

static int run_one(struct sweep *w, uint64_t k, char *err, size_t errlen)
{
	struct fb_params *p = point_params(w, k);
	char *key = key_of(p);
	json_t *point = json_object_get(w->done, key), *entries;
	int rc = 0;
	if (point) {
		json_t *copy = json_copy(point);
		json_object_set_new(copy, "index", json_integer((json_int_t)k));
		json_array_append_new(w->points, copy);
		w->resumed++;
		goto out;
	}
	rc = fb_session_run_point(w->s, p, &entries, err, errlen);
	if (rc)
		goto out;
	point = json_pack("{s:I, s:s, s:o}", "index", (json_int_t)k, "key", key, "entries", entries);
	json_array_append_new(w->points, point);
	w->finished++;
	if (w->journal)
		rc = append_line(w->journal, point, false, err, errlen);
	if (!rc)
		rc = write_out(w, err, errlen);
	show_point(w, point);
out:
	free(key);
	fb_params_free(p);
	return rc;
}

static void sweep_free(struct sweep *w)
{
	free(w->journal);
	json_decref(w->done);
	json_decref(w->points);
	json_decref(w->context);
}

static int finish(struct sweep *w, char *err, size_t errlen)
{
	if (w->o->out)
		return write_out(w, err, errlen);   /* also when every point was resumed */
	if (w->o->format == FB_FORMAT_CONSOLE)
		return 0;                            /* already printed point by point */
	sweep_refresh_context(w);
	char *text = fb_output_render(w->o->format, w->context, w->points);
	fputs(text, stdout);
	free(text);
	return 0;
}

int fb_sweep_main(struct fb_session *s, const struct fb_opts *o, json_t *command_line)
{
	struct sweep w = { .s = s, .o = o, .done = json_object(), .points = json_array() };
	char err[1024];
	int rc = open_journal(&w, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "fencebench: %s\n", err);
		sweep_free(&w);
		return rc == -EINVAL ? FB_EXIT_USAGE : FB_EXIT_RUN;
	}
	if (fb_session_start(s, err, sizeof(err))) {
		fprintf(stderr, "fencebench: %s\n", err);
		sweep_free(&w);
		return FB_EXIT_RUN;
	}
	w.context = fb_session_context(s);
	json_object_set(w.context, "command_line", command_line);
	json_object_set_new(w.context, "shard", json_pack("{s:i, s:i}", "index", (int)o->shard_index,
							  "count", (int)o->shard_count));
	w.total = fb_grid_points(&o->grid);
	w.mine = fb_shard_size(w.total, o->shard_index, o->shard_count);
	w.progress = !o->quiet && isatty(STDERR_FILENO);
	w.t0_ns = lf_now_ns();
	if ((o->out ? !o->quiet : o->format == FB_FORMAT_CONSOLE)) {
		char *text = fb_output_console_context(w.context);
		fputs(text, stdout);
		fflush(stdout);
		free(text);
	}
	for (uint64_t k = 0; k < w.total && !rc; k++) {
		if (!fb_shard_has(k, o->shard_index, o->shard_count))
			continue;
		rc = run_one(&w, k, err, sizeof(err));
		progress(&w);
	}
	if (!rc)
		rc = finish(&w, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%sfencebench: %s\n", w.progress ? "\n" : "", err);
	sweep_free(&w);
	return rc ? FB_EXIT_RUN : FB_EXIT_OK;
}
