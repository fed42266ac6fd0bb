/* src/fb_output.h — results as console tables, Google Benchmark JSON or CSV.
 *
 * The input is always the same: a context object (fb_session_context) and an
 * array of points, each {"index": k, "key": "a=1,b=2", "entries": [...]} with
 * the entries of fb_session_run_point.  Everything is rendered into memory
 * first, so a file is written whole or not at all (src/fb_file.h writes it).
 *
 *   console  the context block, then per point and section a table: one row
 *            per metric, native and legacy side by side (and their ratio),
 *            each value with its 95 % interval as "±4.1%" (the larger half,
 *            relative) where it has one, each latency followed by its ratio to
 *            its machine limit; a native/legacy ratio whose interval holds 1
 *            says "no clear difference"
 *   json     {"context": {...}, "benchmarks": [...]}: Google Benchmark's schema
 *            (compare.py reads it); family_index numbered by run_name
 *   csv      one row per scenario × section × path × point (the mean of the
 *            repetitions when there are several); parameters and every
 *            counter as columns (the intervals too: M_ci_lo, M_ci_hi)
 *
 * Single thread; nothing blocks.
 */
#ifndef FB_OUTPUT_H
#define FB_OUTPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "src/fb_cli.h"

/* The whole result in format f: a new string (free it). */
char *fb_output_render(enum fb_format f, json_t *context, json_t *points);
/* Console pieces, for printing a sweep point by point. */
char *fb_output_console_context(json_t *context);
char *fb_output_console_point(json_t *point);
/* A value in its unit as the console shows it: "24.13 us", "0.1 irq/signal", "-" (not finite). */
void fb_output_value(double v, const char *unit, char *buf, size_t len);
/* " ±4.1%": the larger half of the 95 % interval [lo, hi] of v relative to v
 * (src/fb_boot.h); " +120%/-3%" when it is lopsided (the larger half above
 * 10 % and twice the smaller: a tail's); "" without one or with one of width 0. */
void fb_output_interval(double v, double lo, double hi, char *buf, size_t len);
/* The same, or where the interval is the range of runs (>= 2) repetitions
 * (M_ci_range: fewer than a 95 % interval needs) the range called one:
 * " (3 runs: 35.97 us–36.99 us)", or for a unitless ratio " ±3.1% (3-run ranges)". */
void fb_output_span(double v, double lo, double hi, double runs, const char *unit, char *buf, size_t len);
/* fb_output_span for key in e (key_ci_lo, key_ci_hi, key_ci_range). */
void fb_output_plus_minus(json_t *e, const char *key, char *buf, size_t len);
/* Columns s takes on a terminal: UTF-8 continuation bytes take none ("±" is two bytes). */
int fb_output_width(const char *s);

#endif
