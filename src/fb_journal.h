/* src/fb_journal.h — a sweep's journal: every finished point, durable, so `--resume` can skip it.
 *
 * FILE.journal beside a sweep's --out FILE, one JSON object per line, each
 * written with one write() and fsync'd:
 *
 *   {"fencebench_journal": 3, "fingerprint": FP}                     the header
 *   {"fingerprint": FP, "index": k, "key": "a=1,b=x",                one line per point
 *    "params": {every parameter: "text"}, "entries": [Google Benchmark entries],
 *    "context": {"polling_threads": n, "repetitions": n, "notes": [...], "warnings": [...]}}
 *
 * "context" is what the point adds to the output's context (the threads it
 * declared, the repetitions it ran, its notes and warnings): a resumed
 * sweep's output says what an uninterrupted one would.
 *
 * FP is the sweep's fingerprint: a compact JSON object (sorted keys) of what
 * shapes its results besides the grid (scenario, --set, paths, repetitions,
 * length, warm-up, seed, CPUs).  On --resume every line is checked on its own:
 * the header's format and fingerprint, and each point's fingerprint, key,
 * parameters and entries (each of this scenario and these parameters).  A
 * line that fails is refused with its number and what differs; only the last
 * line may be cut short (a crash mid-write): it is dropped.  A header cut
 * short is this sweep's when it is the start of the header this sweep would
 * write: the sweep then starts afresh.  The grid is not in FP: a grid
 * extended with new values resumes the points it shares.
 *
 * Opened without resume, a journal that held points starts afresh and says
 * so on stderr (how many points it drops).
 *
 * The journal is opened through fb_file_open_journal (a regular file, never
 * a symbolic link) and locked (flock) while open: a second sweep writing the
 * same --out is refused.  Single thread.
 */
#ifndef FB_JOURNAL_H
#define FB_JOURNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define FB_JOURNAL_FORMAT 3

struct fb_journal;

/* Open path for the sweep with fingerprint fp.  resume: load and check every
 * line (a missing or empty journal resumes nothing); otherwise start afresh.
 * 0 with *out, or -EINVAL (refused: what the user must fix) / -errno (I/O),
 * with one line in err. */
int fb_journal_open(struct fb_journal **out, const char *path, const char *fp, bool resume,
		    char *err, size_t errlen);
/* The line recorded for point key (borrowed; "index", "key", "params",
 * "entries", "context"), or NULL; *line: its line number (1 = the header). */
json_t *fb_journal_point(struct fb_journal *j, const char *key, size_t *line);
/* Append point {"index", "key", "params", "entries"} with its context
 * record (the fingerprint is added) and fsync.  0 or -errno with err. */
int fb_journal_append(struct fb_journal *j, json_t *point, json_t *context, char *err, size_t errlen);
/* Unlock and close (NULL: nothing). */
void fb_journal_close(struct fb_journal *j);

/* What differs between the fingerprints a (of a_name) and b (of b_name), as
 * "seed: 9 in A, 1 in B; iterations: ..." (at most three keys).  buf is
 * returned. */
const char *fb_journal_fp_diff(const char *a, const char *a_name, const char *b, const char *b_name,
			       char *buf, size_t len);

#endif
