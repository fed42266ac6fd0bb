/* src/fb_app.h — the fencebench program's commands inside the harness: `run`, `sweep`, `merge`,
 * `compare`, `doctor`.
 *
 * The entry point, fb_main (all of main(), handed the scenario table), is
 * declared with the plug-in contract in src/fb_scenario.h.  The exit statuses
 * below are its.
 */
#ifndef FB_APP_H
#define FB_APP_H

#include <jansson.h>

#include "src/fb_cli.h"

struct fb_session;

#define FB_EXIT_OK    0
#define FB_EXIT_RUN   1
#define FB_EXIT_USAGE 2

/* `sweep`: every point of the grid in this shard, journaled beside --out so
 * that --resume skips finished points.  Returns the exit status. */
int fb_sweep_main(struct fb_session *s, const struct fb_opts *o, json_t *command_line);

/* `merge`: the JSON outputs of a sweep's shards joined into one (src/fb_merge.c).
 * Returns the exit status. */
int fb_merge_main(const struct fb_opts *o);

/* `compare BASE NEW`: each metric's change with its interval and a verdict
 * (src/fb_compare.c).  Returns the exit status: 1 when a metric regressed. */
int fb_compare_main(const struct fb_opts *o);

/* `doctor`: the machine's state for benchmarking and what to change; reads
 * only (src/fb_doctor.c).  Returns the exit status. */
int fb_doctor_main(const struct fb_opts *o);

/* Write text to the session's --out (src/fb_file.h), or to stdout when there
 * is none.  0, or -errno with err. */
int fb_app_emit(const struct fb_session *s, const char *text, char *err, size_t errlen);

#endif
