/* src/fb_sweep.c — `fencebench sweep`: grid points, shards, the journal, --resume, progress.
 *
 * With --out FILE (a file, not a FIFO, device or open descriptor), every
 * finished point is appended to FILE.journal beside the file FILE reaches
 * (src/fb_journal.h), with its share of the context (fb_session_point_end):
 * the durable record, and what `--resume` skips and replays.  A point whose
 * append failed is not in the output either.  FILE itself is rendered once, when the sweep ends:
 * finished, failed at a point (FILE then holds the points before it), or
 * stopped by SIGINT or SIGTERM (src/fb_signal.h: the points that finished; the
 * point under way is lost and --resume runs it again).  Rendering once keeps
 * a sweep linear in its points.  Without --out the console shows each point
 * as it finishes and JSON or CSV go to stdout at the end.
 *
 * Threads: the CLI thread runs the points; the stop hook runs on the signal
 * thread.  sweep.lock covers what both touch: points, context, written, stdout.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lockfree/arch.h"
#include "lockfree/die.h"
#include "src/fb_app.h"
#include "src/fb_file.h"
#include "src/fb_journal.h"
#include "src/fb_output.h"
#include "src/fb_run.h"
#include "src/fb_signal.h"
#include "src/fb_util.h"

struct sweep {
	struct fb_session *s;
	const struct fb_opts *o;
	pthread_mutex_t lock;         /* points, context, written, stdout: CLI thread and stop hook */
	struct fb_journal *journal;   /* NULL without a file --out */
	char *fp;                     /* the sweep's fingerprint (fb_journal.h) */
	json_t *points;               /* points of this grid and shard, finished (either session) */
	json_t *context;              /* refreshed after each point: readable by the stop hook */
	bool written;                 /* the output is written (or being written): once only */
	uint64_t total, mine, finished, resumed;
	uint64_t t0_ns;
	bool progress;
};

static char *fingerprint(const struct fb_session *s, const struct fb_opts *o)
{
	json_t *set = json_object();
	for (size_t i = 0; i < s->base->n; i++) {
		if (!s->base->set[i])
			continue;
		char *v = fb_param_text(fb_scenario_param(s->scenario, i), s->base->v[i]);
		json_object_set_new(set, fb_scenario_param(s->scenario, i)->key, json_string(v));
		free(v);
	}
	json_t *fp = json_pack("{s:s, s:o, s:i, s:i, s:I, s:I, s:I, s:I, s:s}", "scenario", s->scenario->name,
			       "set", set, "paths", (int)s->paths, "repetitions", (int)o->repetitions,
			       "iterations", (json_int_t)s->iterations, "duration_ns", (json_int_t)s->duration_ns,
			       "warmup_ns", (json_int_t)s->warmup_ns, "seed", (json_int_t)o->seed, "cpus", s->cpus.text);
	char *text = json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(fp);
	return text;
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

/* Every journaled point of this grid and shard has this sweep's parameters
 * (the scenario's defaults may have changed since). */
static int check_resumed(struct sweep *w, char *err, size_t errlen)
{
	int rc = 0;
	for (uint64_t k = 0; k < w->total && !rc; k++) {
		if (!fb_shard_has(k, w->o->shard_index, w->o->shard_count))
			continue;
		struct fb_params *p = point_params(w, k);
		char *key = fb_results_point_key(p), p1[FB_FILE_SHOWN_MAX], k1[FB_SHOWN_MAX];
		size_t line;
		json_t *l = fb_journal_point(w->journal, key, &line), *params = fb_results_params(p);
		if (l && !json_equal(json_object_get(l, "params"), params)) {
			snprintf(err, errlen, "--resume: %s.journal line %zu (point %s) has other parameters than this "
				 "sweep's (the scenario's defaults changed?): remove it or drop --resume",
				 fb_file_shown(w->s->out.path, p1, sizeof(p1)), line, fb_shown(key, k1, sizeof(k1)));
			rc = -EINVAL;
		}
		json_decref(params);
		free(key);
		fb_params_free(p);
	}
	return rc;
}

static int open_journal(struct sweep *w, char *err, size_t errlen)
{
	const struct fb_session *s = w->s;
	char p[FB_FILE_SHOWN_MAX];
	bool file = s->has_out && !s->out.in_place;
	if (w->o->resume && !file) {
		snprintf(err, errlen, "--resume: --out %s is not a file: it has no journal to resume from",
			 fb_file_shown(s->out.path, p, sizeof(p)));
		return -EINVAL;
	}
	if (!file)
		return 0;
	/* Beside the file --out reaches (links followed): every spelling of
	 * one --out shares one journal and its lock. */
	char *path = fb_xasprintf("%s.journal", s->out.target);
	int rc = fb_journal_open(&w->journal, path, w->fp, w->o->resume, err, errlen);
	free(path);
	if (!rc && w->o->resume)
		rc = check_resumed(w, err, errlen);
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

/* What the points learned since the context was made: notes, warnings, and
 * the most polling threads any point ran (0 before the first point).  Copies:
 * the stop hook may render the context while a point's threads add notes. */
static void refresh_context(struct sweep *w)
{
	json_object_set_new(w->context, "notes", json_deep_copy(w->s->notes));
	json_object_set_new(w->context, "warnings", json_deep_copy(w->s->warnings));
	json_object_set_new(w->context, "polling_threads", json_integer((json_int_t)w->s->polling_threads));
	json_object_set_new(w->context, "oversubscribed", json_boolean(w->s->polling_threads > w->s->cpus.n));
	if (w->s->noise)
		json_object_set_new(w->context, "noise", json_deep_copy(w->s->noise));
	json_object_set_new(w->context, "repetitions", json_integer((json_int_t)(w->s->repetitions_run > w->o->repetitions
										    ? w->s->repetitions_run
										    : w->o->repetitions)));
}

static bool console_on_stdout(const struct sweep *w)
{
	if (w->s->has_out)   /* not into the results, when --out is stdout's file */
		return !w->o->quiet && !fb_out_is_stdout(&w->s->out);
	return w->o->format == FB_FORMAT_CONSOLE;
}

static void show_point(struct sweep *w, json_t *point)
{
	if (!console_on_stdout(w))
		return;
	char *text = fb_output_console_point(point);
	if (w->progress)
		fputs("\r\033[K", stderr);
	fputs(text, stdout);
	fb_file_flush_stdout();
	free(text);
}

/* Take a finished point (journaled first, with its record: what it said and
 * ran, fb_session_point_end) or a resumed one.  Under the lock: the output
 * written on a signal holds exactly the journaled points; a point whose
 * append failed is left out. */
static int add_point(struct sweep *w, json_t *point, json_t *record, bool resumed, char *err, size_t errlen)
{
	pthread_mutex_lock(&w->lock);
	if (w->written) {   /* stopped by a signal: the output is out, the process about to die */
		pthread_mutex_unlock(&w->lock);
		return 0;
	}
	int rc = !resumed && w->journal ? fb_journal_append(w->journal, point, record, err, errlen) : 0;
	if (rc) {   /* not journaled: not in the output either (--resume runs it again) */
		pthread_mutex_unlock(&w->lock);
		return rc;
	}
	json_array_append(w->points, point);
	if (resumed)
		w->resumed++;
	else
		w->finished++;
	refresh_context(w);
	if (!resumed)
		show_point(w, point);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

static int run_one(struct sweep *w, uint64_t k, char *err, size_t errlen)
{
	struct fb_params *p = point_params(w, k);
	char *key = fb_results_point_key(p);
	json_t *done = w->journal ? fb_journal_point(w->journal, key, NULL) : NULL, *point = NULL, *entries;
	int rc = 0;
	json_t *record = NULL;
	if (done) {
		point = json_pack("{s:I, s:s, s:O, s:O}", "index", (json_int_t)k, "key", key, "params",
				  json_object_get(done, "params"), "entries", json_object_get(done, "entries"));
		fb_session_point_replay(w->s, json_object_get(done, "context"));
		rc = add_point(w, point, NULL, true, err, errlen);
	} else {
		fb_session_point_begin(w->s);
		rc = fb_session_run_point(w->s, p, &entries, err, errlen);
		record = fb_session_point_end(w->s);
		if (!rc) {
			point = json_pack("{s:I, s:s, s:o, s:o}", "index", (json_int_t)k, "key", key, "params",
					  fb_results_params(p), "entries", entries);
			rc = add_point(w, point, record, false, err, errlen);
		}
	}
	json_decref(record);
	json_decref(point);
	free(key);
	fb_params_free(p);
	return rc;
}

/* Write the points so far, once (w->lock held).  to_stdout: JSON/CSV without --out too. */
static int write_output_locked(struct sweep *w, bool to_stdout, char *err, size_t errlen)
{
	if (w->written)
		return 0;
	w->written = true;
	if (!w->s->has_out && (!to_stdout || w->o->format == FB_FORMAT_CONSOLE))
		return 0;   /* the console showed each point as it finished */
	char *text = fb_output_render(w->o->format, w->context, w->points);
	int rc = 0;
	if (w->s->has_out)
		rc = fb_out_write(&w->s->out, text, strlen(text), err, errlen);
	else
		rc = fb_file_write_stdout(text, err, errlen);
	free(text);
	return rc;
}

/* The stop hook: on SIGINT or SIGTERM, write what finished (signal thread). */
static void on_stop(void *arg, int sig)
{
	struct sweep *w = arg;
	char err[1024], p[FB_FILE_SHOWN_MAX];
	pthread_mutex_lock(&w->lock);
	bool first = !w->written;
	int rc = write_output_locked(w, true, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%sfencebench: %s\n", w->progress ? "\n" : "", err);
	else if (first)
		fprintf(stderr, "%sfencebench: %s: stopped after %llu of %llu points%s%s%s\n", w->progress ? "\n" : "",
			sig == SIGINT ? "SIGINT" : "SIGTERM", (unsigned long long)(w->finished + w->resumed),
			(unsigned long long)w->mine, w->journal ? " (in " : "",
			w->journal ? fb_file_shown(w->s->out.path, p, sizeof(p)) : "",
			w->journal ? "; --resume runs the rest)" : "");
	pthread_mutex_unlock(&w->lock);
}

static int finish(struct sweep *w, bool failed, char *err, size_t errlen)
{
	pthread_mutex_lock(&w->lock);
	int rc = write_output_locked(w, !failed, err, errlen);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

static void make_context(struct sweep *w, json_t *command_line)
{
	const struct fb_opts *o = w->o;
	w->context = fb_session_context(w->s);
	json_object_set(w->context, "command_line", command_line);
	json_object_set_new(w->context, "shard", json_pack("{s:i, s:i}", "index", (int)o->shard_index,
							   "count", (int)o->shard_count));
	json_object_set_new(w->context, "sweep_fingerprint", json_string(w->fp));
	refresh_context(w);
	if (console_on_stdout(w)) {
		char *text = fb_output_console_context(w->context);
		fputs(text, stdout);
		fb_file_flush_stdout();
		free(text);
	}
}

static void warn_empty_shard(struct sweep *w)
{
	if (w->mine)
		return;
	char *msg = fb_xasprintf("shard %u/%u gets no points of this %llu-point grid: its output is empty",
				 w->o->shard_index, w->o->shard_count, (unsigned long long)w->total);
	fb_session_warn(w->s, msg);
	free(msg);
}

static void sweep_free(struct sweep *w)
{
	fb_journal_close(w->journal);
	free(w->fp);
	json_decref(w->points);
	json_decref(w->context);
	pthread_mutex_destroy(&w->lock);
}

/* Every point of this shard, then the output.  0, or -errno with err. */
static int run_points(struct sweep *w, char *err, size_t errlen)
{
	int rc = 0;
	for (uint64_t k = 0; k < w->total && !rc; k++) {
		if (!fb_shard_has(k, w->o->shard_index, w->o->shard_count))
			continue;
		rc = run_one(w, k, err, errlen);
		progress(w);
	}
	if (!rc) {   /* the limits again and what else ran: warnings into the output */
		fb_session_finish(w->s);
		pthread_mutex_lock(&w->lock);
		refresh_context(w);
		pthread_mutex_unlock(&w->lock);
	}
	char ferr[1024];
	int frc = finish(w, rc != 0, ferr, sizeof(ferr));
	if (frc && !rc) {
		snprintf(err, errlen, "%s", ferr);
		rc = frc;
	} else if (frc) {
		fprintf(stderr, "fencebench: %s\n", ferr);
	}
	return rc;
}

int fb_sweep_main(struct fb_session *s, const struct fb_opts *o, json_t *command_line)
{
	struct sweep w = { .s = s, .o = o, .points = json_array() };
	char err[1024];
	int status = FB_EXIT_OK, rc;
	pthread_mutex_init(&w.lock, NULL);
	w.fp = fingerprint(s, o);
	w.total = fb_grid_points(&o->grid);
	w.mine = fb_shard_size(w.total, o->shard_index, o->shard_count);
	if ((rc = open_journal(&w, err, sizeof(err))) != 0) {
		fprintf(stderr, "fencebench: %s\n", err);
		status = rc == -EINVAL ? FB_EXIT_USAGE : FB_EXIT_RUN;
		goto out;
	}
	if (fb_session_start(s, err, sizeof(err))) {
		fprintf(stderr, "fencebench: %s\n", err);
		status = FB_EXIT_RUN;
		goto out;
	}
	warn_empty_shard(&w);
	w.progress = !o->quiet && isatty(STDERR_FILENO);
	w.t0_ns = lf_now_ns();
	make_context(&w, command_line);
	fb_signal_on_stop(on_stop, &w);
	if (run_points(&w, err, sizeof(err))) {
		fprintf(stderr, "%sfencebench: %s\n", w.progress ? "\n" : "", err);
		status = FB_EXIT_RUN;
	}
	fb_signal_on_stop(NULL, NULL);
out:
	sweep_free(&w);
	return status;
}
