/* src/fb_cli.h — the fencebench command line, parsed (syntax only; pure, no I/O).
 *
 *   fencebench list
 *   fencebench help [SCENARIO]
 *   fencebench run SCENARIO [--set key=value ...] [options]
 *   fencebench sweep SCENARIO --grid key=v1,v2,... [--grid ...] [options]
 *   fencebench merge FILE... [--out FILE] [--format F] [--quiet]
 *   fencebench compare BASE.json NEW.json [--threshold PCT] [--gate LIST] [--format F] [--out FILE] [--all]
 *   fencebench doctor [--cpus LIST]
 *   fencebench --version | --help
 *
 * Options take their value as "--opt VALUE" or "--opt=VALUE".  fb_opts_parse
 * checks everything that needs no outside knowledge (numbers, enums, durations,
 * grid and shard syntax); the scenario, its parameter keys and values, the CPU
 * list and the perf events are checked by the runner against the registry,
 * libnuma and libpfm4.  On error it writes one line naming the bad part into
 * err and returns -EINVAL; it never prints and never exits (tests/fuzz/ runs it).
 * Single thread; allocation aborts on out-of-memory.
 */
#ifndef FB_CLI_H
#define FB_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "src/fb_grid.h"

#define FB_VERSION "0.1.0"

enum fb_cmd {
	FB_CMD_USAGE, FB_CMD_VERSION, FB_CMD_LIST, FB_CMD_HELP, FB_CMD_RUN, FB_CMD_SWEEP, FB_CMD_MERGE,
	FB_CMD_COMPARE, FB_CMD_DOCTOR,
};
/* markdown: compare only. */
enum fb_format { FB_FORMAT_CONSOLE, FB_FORMAT_JSON, FB_FORMAT_CSV, FB_FORMAT_MARKDOWN };

/* Path selection bits: --path native (1), legacy (2), both (3). */
#define FB_PATHS_NATIVE 1u
#define FB_PATHS_LEGACY 2u
#define FB_PATHS_BOTH   3u

struct fb_kv {
	char *key, *value;
};

struct fb_opts {
	enum fb_cmd cmd;
	char *scenario;               /* run, sweep; help: NULL for the general help */
	char **inputs;                /* merge: the shard outputs, in order; compare: BASE, NEW */
	size_t ninputs;
	struct fb_kv *sets;           /* --set, in order (each key once) */
	size_t nsets;
	struct fb_grid grid;          /* --grid (sweep) */
	unsigned paths;               /* FB_PATHS_* (default both) */
	uint64_t iterations;          /* --iterations, 0 = not given */
	double duration_s;            /* --duration, < 0 = not given */
	double warmup_s;              /* --warmup, < 0 = not given */
	unsigned repetitions;         /* --repetitions, default 1 */
	uint64_t seed;                /* --seed, default 1 */
	char *cpus;                   /* --cpus, NULL = all this process may use */
	enum fb_format format;        /* --format, default console (merge: json) */
	char *out;                    /* --out, NULL = stdout */
	char *trace;                  /* --trace (run), NULL = no timeline */
	char *perf_events;            /* --perf-events, NULL = the default spec */
	int perf_ctl_fd, perf_ack_fd; /* -1 = not given */
	bool quiet;                   /* --quiet: no context block, notes or progress on stderr */
	bool resume;                  /* --resume (sweep, needs --out) */
	unsigned shard_index, shard_count;   /* --shard I/N (sweep), default 0/1 */
	double target_ci;             /* --target-ci (run, sweep): relative half-width, 0 = off */
	double max_time_s;            /* --max-time (with --target-ci): per point, default 120 s */
	double threshold;             /* --threshold (compare): relative, default 0.05 */
	bool all;                     /* --all (compare): perf counters too */
	char *gate;                   /* --gate (compare): metric names, comma-separated; NULL: the headline's */
	char *lower_better;           /* --lower-is-better (compare): metric names, comma-separated */
	char *higher_better;          /* --higher-is-better (compare) */
};

/* Parse argv[1..argc-1] into o (which the caller frees with fb_opts_free, also
 * after an error).  0, or -EINVAL with the one-line message in err. */
int fb_opts_parse(int argc, char *const *argv, struct fb_opts *o, char *err, size_t errlen);
void fb_opts_free(struct fb_opts *o);

/* The usage text of `fencebench --help`. */
const char *fb_cli_usage(void);
/* The harness's command words (list, help, run, ...), NULL-terminated, in
 * the usage's order.  Any thread. */
const char *const *fb_cli_commands(void);
/* Write `fencebench help CMD` for the harness command cmd to f: its usage
 * line, what it does and its options, all taken from the usage text.  0, or
 * -ENOENT when cmd is not a harness command (nothing written). */
int fb_cli_command_help(const char *cmd, FILE *f);
/* "console", "json", "csv", "markdown". */
const char *fb_format_name(enum fb_format f);

#endif
