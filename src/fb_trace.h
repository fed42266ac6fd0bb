/* src/fb_trace.h — a timeline trace: tracks, spans, instants and flow
 * arrows, written as Chrome Trace Event Format JSON (the JSON Object
 * Format: {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}})
 * that Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * The harness owns the file (`run --trace FILE`: checked before any work
 * like --out, fb_file.h; written atomically once the run succeeded, never
 * half) and this sink; a scenario adds events (fb_run_trace) in the terms of
 * what it measures: the sink names no scenario and knows no GPU.
 *
 * Times are nanoseconds on one clock (the caller's: fencebench uses
 * lf_now_ns, CLOCK_MONOTONIC); the file has microseconds from the earliest
 * event.  A track is a thread `thread` of a process `process` (a group, such
 * as "native: GPU engines"): each gets a pid/tid, its name as metadata
 * ("process_name", "thread_name", ts 0) and a sort index in creation order.
 * Events are written track by track, in time order on each track (spans
 * starting together: the longer first, so they nest).  A flow is an arrow
 * from a point on one track to a point on another: an "s" and an "f" event
 * with the same id, the "f" bound to the slice enclosing it ("bp": "e");
 * Perfetto draws it when each end lies in a span of its track.
 *
 * Event fields written: name, cat, ph, ts, pid, tid; dur ("X"); s ("i",
 * thread scope); id ("s", "f"); args when given.
 *
 * Single thread (the scenario's, then the CLI's).  Allocation failures abort.
 */
#ifndef FB_TRACE_H
#define FB_TRACE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct fb_trace;

struct fb_trace *fb_trace_new(void);
void fb_trace_free(struct fb_trace *t);           /* NULL is ignored */

/* The track named thread in the group named process, created on first use
 * (the same two names give the same track).  Returns its id (>= 1). */
unsigned fb_trace_track(struct fb_trace *t, const char *process, const char *thread);
/* A span [ts, ts + dur) ("X").  args: a JSON object, stolen; NULL: none. */
void fb_trace_span(struct fb_trace *t, unsigned track, const char *name, const char *cat, uint64_t ts_ns,
		   uint64_t dur_ns, json_t *args);
/* A point in time ("i", thread scope). */
void fb_trace_instant(struct fb_trace *t, unsigned track, const char *name, const char *cat, uint64_t ts_ns,
		      json_t *args);
/* An arrow from (from, from_ns) to (to, to_ns): "s" and "f" with a new id. */
void fb_trace_flow(struct fb_trace *t, const char *name, unsigned from, uint64_t from_ns, unsigned to,
		   uint64_t to_ns);
/* A string in the file's otherData (the last value of a key wins). */
void fb_trace_note(struct fb_trace *t, const char *key, const char *value);

size_t fb_trace_events(const struct fb_trace *t);   /* spans, instants and flow ends added */
size_t fb_trace_flows(const struct fb_trace *t);

/* The file's text, a new string (free it). */
char *fb_trace_render(const struct fb_trace *t);

/* Tests only: a deliberately broken writer that the trace's format test
 * must catch.  FB_TRACE_BROKEN_FLOW_END: flows written without their "f". */
enum fb_trace_broken { FB_TRACE_OK, FB_TRACE_BROKEN_FLOW_END };
void fb_trace_test_break(struct fb_trace *t, enum fb_trace_broken how);

#endif
