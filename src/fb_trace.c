/* src/fb_trace.c — the timeline trace sink and its Chrome Trace Event
 * Format writer.  Contract in fb_trace.h. */
#include "src/fb_trace.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_util.h"

struct fb_trace_group {
	char *name;
	unsigned pid;
};

struct fb_trace_trk {
	char *name;
	unsigned group;                 /* index in groups */
};

struct fb_trace_ev {
	unsigned track;                 /* 1-based */
	char ph;                        /* 'X', 'i', 's', 'f' */
	const char *name, *cat;         /* interned in names */
	uint64_t ts, dur, id;
	size_t seq;                     /* order of addition: ties keep it */
	json_t *args;
};

struct fb_trace {
	struct fb_trace_group *groups;
	size_t ngroups;
	struct fb_trace_trk *tracks;
	size_t ntracks;
	struct fb_trace_ev *evs;
	size_t nevs, cap;
	char **names;                   /* interned event names and categories */
	size_t nnames;
	uint64_t next_flow;
	size_t nflows;
	json_t *other;
	enum fb_trace_broken broken;
};

struct fb_trace *fb_trace_new(void)
{
	struct fb_trace *t = fb_xcalloc(1, sizeof(*t));
	t->other = json_object();
	return t;
}

void fb_trace_free(struct fb_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ngroups; i++)
		free(t->groups[i].name);
	for (size_t i = 0; i < t->ntracks; i++)
		free(t->tracks[i].name);
	for (size_t i = 0; i < t->nevs; i++)
		json_decref(t->evs[i].args);
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->groups);
	free(t->tracks);
	free(t->evs);
	free(t->names);
	json_decref(t->other);
	free(t);
}

/* One copy of each name: events point into it (a trace repeats a few names). */
static const char *intern(struct fb_trace *t, const char *s)
{
	for (size_t i = t->nnames; i-- > 0;)
		if (!strcmp(t->names[i], s))
			return t->names[i];
	t->names = fb_xrealloc(t->names, (t->nnames + 1) * sizeof(*t->names));
	return t->names[t->nnames++] = fb_xstrdup(s);
}

static unsigned group_of(struct fb_trace *t, const char *process)
{
	for (size_t i = 0; i < t->ngroups; i++)
		if (!strcmp(t->groups[i].name, process))
			return (unsigned)i;
	t->groups = fb_xrealloc(t->groups, (t->ngroups + 1) * sizeof(*t->groups));
	t->groups[t->ngroups] = (struct fb_trace_group){ .name = fb_xstrdup(process), .pid = (unsigned)t->ngroups + 1 };
	return (unsigned)t->ngroups++;
}

unsigned fb_trace_track(struct fb_trace *t, const char *process, const char *thread)
{
	unsigned g = group_of(t, process);
	for (size_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].group == g && !strcmp(t->tracks[i].name, thread))
			return (unsigned)i + 1;
	t->tracks = fb_xrealloc(t->tracks, (t->ntracks + 1) * sizeof(*t->tracks));
	t->tracks[t->ntracks] = (struct fb_trace_trk){ .name = fb_xstrdup(thread), .group = g };
	return (unsigned)++t->ntracks;
}

static void add(struct fb_trace *t, struct fb_trace_ev ev)
{
	assert(ev.track >= 1 && ev.track <= t->ntracks);
	if (t->nevs == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->evs = fb_xrealloc(t->evs, t->cap * sizeof(*t->evs));
	}
	ev.seq = t->nevs;
	t->evs[t->nevs++] = ev;
}

void fb_trace_span(struct fb_trace *t, unsigned track, const char *name, const char *cat, uint64_t ts_ns,
		   uint64_t dur_ns, json_t *args)
{
	add(t, (struct fb_trace_ev){ .track = track, .ph = 'X', .name = intern(t, name), .cat = intern(t, cat),
				     .ts = ts_ns, .dur = dur_ns, .args = args });
}

void fb_trace_instant(struct fb_trace *t, unsigned track, const char *name, const char *cat, uint64_t ts_ns,
		      json_t *args)
{
	add(t, (struct fb_trace_ev){ .track = track, .ph = 'i', .name = intern(t, name), .cat = intern(t, cat),
				     .ts = ts_ns, .args = args });
}

void fb_trace_flow(struct fb_trace *t, const char *name, unsigned from, uint64_t from_ns, unsigned to,
		   uint64_t to_ns)
{
	uint64_t id = ++t->next_flow;
	const char *n = intern(t, name), *cat = intern(t, "flow");
	add(t, (struct fb_trace_ev){ .track = from, .ph = 's', .name = n, .cat = cat, .ts = from_ns, .id = id });
	if (t->broken != FB_TRACE_BROKEN_FLOW_END)   /* broken on purpose: an arrow with no end */
		add(t, (struct fb_trace_ev){ .track = to, .ph = 'f', .name = n, .cat = cat, .ts = to_ns, .id = id });
	t->nflows++;
}

void fb_trace_note(struct fb_trace *t, const char *key, const char *value)
{
	json_object_set_new(t->other, key, json_string(value));
}

size_t fb_trace_events(const struct fb_trace *t) { return t->nevs; }
size_t fb_trace_flows(const struct fb_trace *t) { return t->nflows; }

void fb_trace_test_break(struct fb_trace *t, enum fb_trace_broken how)
{
	t->broken = how;
}

/* Track, then time; at one time spans before points and the longer span
 * first (so spans that start together nest), then the order of addition. */
static int ev_cmp(const void *pa, const void *pb)
{
	const struct fb_trace_ev *a = pa, *b = pb;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if ((a->ph == 'X') != (b->ph == 'X'))
		return a->ph == 'X' ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static json_t *us(uint64_t ns)
{
	return json_real((double)ns / 1000.0);
}

static json_t *metadata(const char *what, unsigned pid, unsigned tid, const char *key, json_t *value)
{
	return json_pack("{s:s, s:s, s:f, s:I, s:I, s:{s:o}}", "name", what, "ph", "M", "ts", 0.0,
			 "pid", (json_int_t)pid, "tid", (json_int_t)tid, "args", key, value);
}

static json_t *event_json(const struct fb_trace *t, const struct fb_trace_ev *e, uint64_t origin)
{
	const struct fb_trace_trk *k = &t->tracks[e->track - 1];
	char ph[2] = { e->ph, 0 };
	json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I}", "name", e->name, "cat", e->cat, "ph", ph,
			      "ts", us(e->ts - origin), "pid", (json_int_t)t->groups[k->group].pid,
			      "tid", (json_int_t)e->track);
	if (e->ph == 'X')
		json_object_set_new(o, "dur", us(e->dur));
	if (e->ph == 'i')
		json_object_set_new(o, "s", json_string("t"));
	if (e->ph == 's' || e->ph == 'f')
		json_object_set_new(o, "id", json_integer((json_int_t)e->id));
	if (e->ph == 'f')
		json_object_set_new(o, "bp", json_string("e"));
	if (e->args)
		json_object_set(o, "args", e->args);
	return o;
}

char *fb_trace_render(const struct fb_trace *t)
{
	json_t *evs = json_array();
	uint64_t origin = UINT64_MAX;
	for (size_t i = 0; i < t->nevs; i++)
		origin = t->evs[i].ts < origin ? t->evs[i].ts : origin;
	for (size_t g = 0; g < t->ngroups; g++) {
		unsigned pid = t->groups[g].pid;
		json_array_append_new(evs, metadata("process_name", pid, 0, "name", json_string(t->groups[g].name)));
		json_array_append_new(evs, metadata("process_sort_index", pid, 0, "sort_index", json_integer(pid)));
	}
	for (size_t k = 0; k < t->ntracks; k++) {
		unsigned pid = t->groups[t->tracks[k].group].pid, tid = (unsigned)k + 1;
		json_array_append_new(evs, metadata("thread_name", pid, tid, "name", json_string(t->tracks[k].name)));
		json_array_append_new(evs, metadata("thread_sort_index", pid, tid, "sort_index", json_integer(tid)));
	}
	struct fb_trace_ev *sorted = fb_xcalloc(t->nevs ? t->nevs : 1, sizeof(*sorted));
	memcpy(sorted, t->evs, t->nevs * sizeof(*sorted));
	qsort(sorted, t->nevs, sizeof(*sorted), ev_cmp);
	for (size_t i = 0; i < t->nevs; i++)
		json_array_append_new(evs, event_json(t, &sorted[i], origin));
	free(sorted);
	json_t *other = json_deep_copy(t->other);
	json_object_set_new(other, "time_origin_ns", json_integer(origin == UINT64_MAX ? 0 : (json_int_t)origin));
	json_t *root = json_pack("{s:o, s:s, s:o}", "traceEvents", evs, "displayTimeUnit", "ns", "otherData", other);
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!text)
		abort();
	size_t n = strlen(text);
	text = fb_xrealloc(text, n + 2);   /* jansson's malloc is libc's */
	text[n] = '\n';
	text[n + 1] = 0;
	return text;
}
