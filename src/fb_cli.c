/* src/fb_cli.c — command-line parsing.  Contract in fb_cli.h. */
#include "src/fb_cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_util.h"

enum opt_id {
	O_SET, O_GRID, O_PATH, O_DURATION, O_ITERATIONS, O_WARMUP, O_REPETITIONS, O_SEED,
	O_CPUS, O_FORMAT, O_OUT, O_PERF_EVENTS, O_PERF_CTL_FD, O_PERF_ACK_FD, O_QUIET,
	O_RESUME, O_SHARD, O_HELP, O_TRACE, O_TARGET_CI, O_MAX_TIME, O_THRESHOLD, O_ALL, O_GATE, O_LOWER_BETTER,
	O_HIGHER_BETTER,
};

#define RUN   (1u << FB_CMD_RUN)
#define SWEEP (1u << FB_CMD_SWEEP)
#define MERGE (1u << FB_CMD_MERGE)
#define COMPARE (1u << FB_CMD_COMPARE)
#define DOCTOR (1u << FB_CMD_DOCTOR)

static const struct opt {
	const char *name;
	enum opt_id id;
	bool value;       /* takes a value */
	unsigned cmds;    /* commands that accept it */
} opt_table[] = {
	{ "--set", O_SET, true, RUN | SWEEP },
	{ "--grid", O_GRID, true, SWEEP },
	{ "--path", O_PATH, true, RUN | SWEEP },
	{ "--duration", O_DURATION, true, RUN | SWEEP },
	{ "--iterations", O_ITERATIONS, true, RUN | SWEEP },
	{ "--warmup", O_WARMUP, true, RUN | SWEEP },
	{ "--repetitions", O_REPETITIONS, true, RUN | SWEEP },
	{ "--seed", O_SEED, true, RUN | SWEEP },
	{ "--cpus", O_CPUS, true, RUN | SWEEP | DOCTOR },
	{ "--format", O_FORMAT, true, RUN | SWEEP | MERGE | COMPARE },
	{ "--out", O_OUT, true, RUN | SWEEP | MERGE | COMPARE },
	{ "--trace", O_TRACE, true, RUN },
	{ "--perf-events", O_PERF_EVENTS, true, RUN | SWEEP },
	{ "--perf-ctl-fd", O_PERF_CTL_FD, true, RUN | SWEEP },
	{ "--perf-ack-fd", O_PERF_ACK_FD, true, RUN | SWEEP },
	{ "--quiet", O_QUIET, false, RUN | SWEEP | MERGE | COMPARE },
	{ "-q", O_QUIET, false, RUN | SWEEP | MERGE | COMPARE },
	{ "--resume", O_RESUME, false, SWEEP },
	{ "--shard", O_SHARD, true, SWEEP },
	{ "--target-ci", O_TARGET_CI, true, RUN | SWEEP },
	{ "--max-time", O_MAX_TIME, true, RUN | SWEEP },
	{ "--threshold", O_THRESHOLD, true, COMPARE },
	{ "--all", O_ALL, false, COMPARE },
	{ "--gate", O_GATE, true, COMPARE },
	{ "--lower-is-better", O_LOWER_BETTER, true, COMPARE },
	{ "--higher-is-better", O_HIGHER_BETTER, true, COMPARE },
	{ "--help", O_HELP, false, RUN | SWEEP | MERGE | COMPARE | DOCTOR },
	{ "-h", O_HELP, false, RUN | SWEEP | MERGE | COMPARE | DOCTOR },
};

static const char usage_text[] =
	"usage: fencebench COMMAND [ARGS]\n"
	"\n"
	"Benchmarks the WDDM 3.2 native GPU fence against the legacy monitored fence,\n"
	"each latency beside the machine's own limits, under Linux perf.\n"
	"\n"
	"commands:\n"
	"  list                              scenarios, one line each\n"
	"  help SCENARIO                     every parameter: type, unit, default, range\n"
	"  help COMMAND                      a command's usage and options\n"
	"  run SCENARIO [--set key=value]... run one parameter point\n"
	"  sweep SCENARIO --grid key=v1,v2,... [--grid ...]\n"
	"                                    run every point of the grid\n"
	"  merge FILE... [--out ALL]         join the --format json outputs of a sweep's shards\n"
	"                                    (JSON unless --format; refuses shards of different sweeps)\n"
	"  compare BASE.json NEW.json        each metric's change with its 95 % interval and a verdict:\n"
	"                                    improved, regressed or within noise (two outputs of the\n"
	"                                    same scenario; Google Benchmark's compare.py reads them too)\n"
	"  doctor                            the machine's state for benchmarking and what to change\n"
	"                                    (as pyperf system show; reads only, changes nothing)\n"
	"  --version, --help\n"
	"\n"
	"options of run and sweep:\n"
	"  --set key=value       a scenario parameter (see: fencebench help SCENARIO)\n"
	"  --path P              native | legacy | both (default both, side by side)\n"
	"  --duration D          measured time per run: 2s, 500ms, 100us (exclusive with --iterations;\n"
	"                        only scenarios that take one: fencebench help SCENARIO)\n"
	"  --iterations N        measured iterations per run\n"
	"  --warmup D            warm-up before the measured region (duration)\n"
	"  --repetitions N       repeat each run N times: mean/median/stddev/cv aggregates, and\n"
	"                        every metric's 95 % interval across the repetitions (6 or more;\n"
	"                        fewer give the median the repetitions' range, called one)\n"
	"  --target-ci PCT       repeat (6 times at least) until every p50's 95 % interval is\n"
	"                        narrower than +-PCT % (5%), or --max-time D per point (120s)\n"
	"  --seed N              seed of every random choice (default 1)\n"
	"  --cpus LIST           CPUs to pin to, libnuma syntax: 0-1, 0,2, all (default: all allowed)\n"
	"  --format F            console | json | csv (default console; also for merge)\n"
	"  --out FILE            write results to FILE (default stdout; also for merge): a file is\n"
	"                        replaced atomically and durably and keeps its mode (not its owner,\n"
	"                        ACLs or hard links), a link is followed, a FIFO, device or\n"
	"                        /dev/stdout (/proc/self/fd/N) is written in place; checked first\n"
	"  --perf-events LIST    perf events per role thread, as `perf list` names them; none:\n"
	"                        no counters (the default with --perf-ctl-fd)\n"
	"  --perf-ctl-fd FD      perf stat --control fd:CTL,ACK: enable perf only around\n"
	"  --perf-ack-fd FD        the measured region (with perf stat -D -1); both FIFOs\n"
	"  --quiet, -q           no context block, notes or progress on stderr\n"
	"options of run only:\n"
	"  --trace FILE          write the run's timeline to FILE as Chrome Trace Event Format JSON\n"
	"                        (open it in ui.perfetto.dev or chrome://tracing); checked and\n"
	"                        written like --out; only scenarios that have one: fencebench help SCENARIO\n"
	"options of sweep only:\n"
	"  --grid key=v1,v2,...  an axis of the grid (repeatable: the grid is their product)\n"
	"  --resume              skip points already in FILE's journal (needs --out FILE)\n"
	"  --shard I/N           run only points k with k % N == I (0 <= I < N); with --out F\n"
	"                        the shard writes F.shardI-of-N.EXT: join them with merge\n"
	"options of compare:\n"
	"  --threshold PCT       a change inside +-PCT % is within noise (default 5%)\n"
	"  --gate LIST           the metrics (comma-separated) whose regression fails the exit\n"
	"                        status (default: the files' headline metrics, else every p50);\n"
	"                        a Mann-Whitney U test over the repetitions, Holm across them\n"
	"  --format F            console | markdown | json (default console)\n"
	"  --all                 perf counters too\n"
	"  --lower-is-better LIST, --higher-is-better LIST\n"
	"                        metrics (comma-separated names) that are regressions when they\n"
	"                        rise / fall; latencies and times (ns) are lower-is-better already\n"
	"options of doctor:\n"
	"  --cpus LIST           the CPUs a run would use (default: all allowed)\n"
	"\n"
	"Every run checks the machine before and after (governor, turbo, SMT siblings, load,\n"
	"other processes' CPU time, steal, the limits again, the spread of repetitions) and\n"
	"warns (***WARNING***, and in the JSON context) when it was not quiet.\n"
	"\n"
	"A sweep with --out F journals each finished point in F.journal and writes F once at\n"
	"the end, also when a point fails or SIGINT/SIGTERM stops it (--resume goes on).\n"
	"\n"
	"exit status: 0 ok, 1 a run failed (compare: a gated metric regressed beyond --threshold),\n"
	"2 bad command line (nothing ran; compare: cannot gate, too few repetitions), 128+N\n"
	"killed by signal N\n";

const char *fb_cli_usage(void) { return usage_text; }

static const char *const command_words[] = { "list", "help", "run", "sweep", "merge", "compare", "doctor", NULL };

const char *const *fb_cli_commands(void) { return command_words; }

/* Does the usage line at `line` (indented by two) start with the word cmd? */
static bool names_command(const char *line, const char *cmd)
{
	size_t n = strlen(cmd);
	return !strncmp(line, "  ", 2) && line[2] != ' ' && !strncmp(line + 2, cmd, n) &&
	       (line[2 + n] == ' ' || line[2 + n] == '\n');
}

/* Does an "options of A and B:" / "options of A only:" header name cmd? */
static bool header_names(const char *line, size_t len, const char *cmd)
{
	size_t n = strlen(cmd);
	for (const char *p = line + strlen("options of"); p + n <= line + len; p++)
		if (p[-1] == ' ' && !strncmp(p, cmd, n) && (p[n] == ' ' || p[n] == ':'))
			return true;
	return false;
}

/* One source for `--help` and `help CMD`: the command's lines of the usage's
 * "commands:" block, then every "options of ...:" block that names it. */
int fb_cli_command_help(const char *cmd, FILE *f)
{
	size_t i;
	for (i = 0; command_words[i] && strcmp(command_words[i], cmd); i++)
		;
	if (!command_words[i])
		return -ENOENT;
	bool in_cmd = false, in_opts = false, first = true;
	for (const char *line = usage_text; *line;) {
		size_t len = strcspn(line, "\n");
		if (!strncmp(line, "options of", 10)) {
			in_opts = header_names(line, len, cmd);
			if (in_opts)
				fprintf(f, "\n%.*s\n", (int)len, line);
		} else if (len == 0 || line[0] != ' ') {
			in_opts = in_cmd = false;
		} else if (names_command(line, cmd)) {
			in_cmd = true;
			fprintf(f, "%s%.*s\n", first ? "usage: fencebench " : "       fencebench ", (int)(len - 2), line + 2);
			first = false;
		} else if (line[2] != ' ') {
			in_cmd = false;
			if (in_opts)
				fprintf(f, "%.*s\n", (int)len, line);
		} else if (in_cmd || in_opts) {
			fprintf(f, "%.*s\n", (int)len, line);
		}
		line += len + (line[len] == '\n');
	}
	return 0;
}

const char *fb_format_name(enum fb_format f)
{
	return f == FB_FORMAT_JSON ? "json" : f == FB_FORMAT_CSV ? "csv" : f == FB_FORMAT_MARKDOWN ? "markdown" : "console";
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int bad_value(char *err, size_t errlen, const char *opt, const char *value, const char *expected)
{
	char b[FB_SHOWN_MAX];
	return fail(err, errlen, "%s %s: expected %s", opt, fb_shown(value, b, sizeof(b)), expected);
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = fb_xstrdup(v);
}

static int add_set(struct fb_opts *o, const char *v, char *err, size_t errlen)
{
	const char *eq = strchr(v, '=');
	char b[FB_SHOWN_MAX], f[FB_SHOWN_MAX];
	if (!eq || eq == v)
		return bad_value(err, errlen, "--set", v, "key=value");
	for (size_t i = 0; i < o->nsets; i++) {
		if (strlen(o->sets[i].key) == (size_t)(eq - v) && !strncmp(o->sets[i].key, v, (size_t)(eq - v)))
			return fail(err, errlen, "--set %s: %s is already set (--set %s=%s): give each key once",
				    fb_shown(v, b, sizeof(b)), o->sets[i].key, o->sets[i].key,
				    fb_shown(o->sets[i].value, f, sizeof(f)));
	}
	o->sets = fb_xrealloc(o->sets, (o->nsets + 1) * sizeof(*o->sets));
	o->sets[o->nsets].key = fb_xstrndup(v, (size_t)(eq - v));
	o->sets[o->nsets].value = fb_xstrdup(eq + 1);
	o->nsets++;
	return 0;
}

static int parse_u64_opt(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out,
			 char *err, size_t errlen)
{
	unsigned long long x;
	char expected[64];
	if (fb_parse_u64(v, '\0', &x) || x < lo || x > hi) {
		snprintf(expected, sizeof(expected), "an integer in [%llu, %llu]",
			 (unsigned long long)lo, (unsigned long long)hi);
		return bad_value(err, errlen, opt, v, expected);
	}
	*out = x;
	return 0;
}

static int parse_fd_opt(const char *opt, const char *v, int *out, char *err, size_t errlen)
{
	uint64_t x;
	int rc = parse_u64_opt(opt, v, 0, INT_MAX, &x, err, errlen);
	if (!rc)
		*out = (int)x;
	return rc;
}

static int parse_choice(const char *opt, const char *v, const char *const *names, int *out,
			char *err, size_t errlen, const char *expected)
{
	for (int i = 0; names[i]; i++) {
		if (!strcmp(v, names[i])) {
			*out = i;
			return 0;
		}
	}
	return bad_value(err, errlen, opt, v, expected);
}

static int apply(struct fb_opts *o, const struct opt *op, const char *v, char *err, size_t errlen)
{
	static const char *const paths[] = { "native", "legacy", "both", NULL };
	static const char *const formats[] = { "console", "json", "csv", "markdown", NULL };
	static const unsigned path_bits[] = { FB_PATHS_NATIVE, FB_PATHS_LEGACY, FB_PATHS_BOTH };
	int i = 0, rc = 0;
	uint64_t x;
	switch (op->id) {
	case O_SET:      return add_set(o, v, err, errlen);
	case O_GRID:     return fb_grid_add_axis(&o->grid, v, err, errlen);
	case O_PATH:
		rc = parse_choice(op->name, v, paths, &i, err, errlen, "native, legacy or both");
		if (!rc)
			o->paths = path_bits[i];
		return rc;
	case O_DURATION:
		if (fb_parse_seconds(v, &o->duration_s) || o->duration_s <= 0)
			return bad_value(err, errlen, op->name, v, "a positive duration like 2s, 500ms, 100us");
		return 0;
	case O_ITERATIONS: return parse_u64_opt(op->name, v, 1, UINT64_MAX / 2, &o->iterations, err, errlen);
	case O_WARMUP:
		if (fb_parse_seconds(v, &o->warmup_s))
			return bad_value(err, errlen, op->name, v, "a duration like 0, 100ms, 1s");
		return 0;
	case O_REPETITIONS:
		rc = parse_u64_opt(op->name, v, 1, 10000, &x, err, errlen);
		o->repetitions = rc ? o->repetitions : (unsigned)x;
		return rc;
	case O_SEED:     return parse_u64_opt(op->name, v, 0, UINT64_MAX, &o->seed, err, errlen);
	case O_CPUS:     set_str(&o->cpus, v); return 0;
	case O_FORMAT:
		rc = parse_choice(op->name, v, formats, &i, err, errlen,
				  o->cmd == FB_CMD_COMPARE ? "console, markdown or json" : "console, json or csv");
		if (!rc)
			o->format = (enum fb_format)i;
		return rc;
	case O_OUT:      set_str(&o->out, v); return 0;
	case O_TRACE:    set_str(&o->trace, v); return 0;
	case O_PERF_EVENTS: set_str(&o->perf_events, v); return 0;
	case O_PERF_CTL_FD: return parse_fd_opt(op->name, v, &o->perf_ctl_fd, err, errlen);
	case O_PERF_ACK_FD: return parse_fd_opt(op->name, v, &o->perf_ack_fd, err, errlen);
	case O_QUIET:    o->quiet = true; return 0;
	case O_RESUME:   o->resume = true; return 0;
	case O_SHARD:    return fb_shard_parse(v, &o->shard_index, &o->shard_count, err, errlen);
	case O_TARGET_CI:
		if (fb_parse_percent(v, &o->target_ci) || o->target_ci <= 0 || o->target_ci >= 10)
			return bad_value(err, errlen, op->name, v, "a percentage above 0 like 5%");
		return 0;
	case O_MAX_TIME:
		if (fb_parse_seconds(v, &o->max_time_s) || o->max_time_s <= 0)
			return bad_value(err, errlen, op->name, v, "a positive duration like 60s");
		return 0;
	case O_THRESHOLD:
		if (fb_parse_percent(v, &o->threshold) || o->threshold >= 10)
			return bad_value(err, errlen, op->name, v, "a percentage like 5%");
		return 0;
	case O_ALL:      o->all = true; return 0;
	case O_GATE:          set_str(&o->gate, v); return 0;
	case O_LOWER_BETTER:  set_str(&o->lower_better, v); return 0;
	case O_HIGHER_BETTER: set_str(&o->higher_better, v); return 0;
	case O_HELP:     o->cmd = FB_CMD_HELP; return 0;
	}
	return 0;
}

static const struct opt *find_opt(const char *arg, size_t len)
{
	for (size_t i = 0; i < sizeof(opt_table) / sizeof(opt_table[0]); i++)
		if (strlen(opt_table[i].name) == len && !strncmp(opt_table[i].name, arg, len))
			return &opt_table[i];
	return NULL;
}

static const char *cmd_name(enum fb_cmd cmd)
{
	static const char *const names[] = {
		[FB_CMD_RUN] = "run", [FB_CMD_SWEEP] = "sweep", [FB_CMD_MERGE] = "merge",
		[FB_CMD_COMPARE] = "compare", [FB_CMD_DOCTOR] = "doctor",
	};
	return (size_t)cmd < sizeof(names) / sizeof(names[0]) && names[cmd] ? names[cmd] : "?";
}

/* One option at argv[*i] (advanced past its value). */
static int parse_option(int argc, char *const *argv, int *i, struct fb_opts *o, enum fb_cmd cmd,
			char *err, size_t errlen)
{
	const char *arg = argv[*i], *eq = strchr(arg, '=');
	size_t len = eq && arg[1] == '-' ? (size_t)(eq - arg) : strlen(arg);
	const struct opt *op = find_opt(arg, len);
	char b[FB_SHOWN_MAX];
	if (!op)
		return fail(err, errlen, "unknown option '%s' (see: fencebench --help)", fb_shown(arg, b, sizeof(b)));
	if (!(op->cmds & (1u << cmd)))
		return fail(err, errlen, "option %s is not for '%s' (see: fencebench --help)", op->name, cmd_name(cmd));
	const char *v = NULL;
	if (op->value) {
		if (eq && arg[1] == '-')
			v = eq + 1;
		else if (*i + 1 < argc)
			v = argv[++*i];
		else
			return fail(err, errlen, "option %s needs a value", op->name);
		if (!*v)
			return fail(err, errlen, "option %s needs a non-empty value", op->name);
	} else if (eq && arg[1] == '-') {
		return fail(err, errlen, "option %s takes no value", op->name);
	}
	return apply(o, op, v, err, errlen);
}

/* Checks that need every option seen. */
static int check_combination(struct fb_opts *o, char *err, size_t errlen)
{
	if (o->cmd == FB_CMD_HELP)
		return 0;
	if (o->iterations && o->duration_s >= 0)
		return fail(err, errlen, "--duration and --iterations exclude each other: give one");
	if (o->perf_ack_fd >= 0 && o->perf_ctl_fd < 0)
		return fail(err, errlen, "--perf-ack-fd needs --perf-ctl-fd");
	if (o->resume && !o->out)
		return fail(err, errlen, "--resume needs --out FILE (the sweep journal lives beside it)");
	if (o->cmd == FB_CMD_SWEEP && !o->grid.n)
		return fail(err, errlen, "sweep %s: give at least one --grid key=v1,v2,...", o->scenario);
	if (o->cmd == FB_CMD_MERGE && !o->ninputs)
		return fail(err, errlen, "merge: give the shard outputs to join (merge A.json B.json ... --out ALL.json)");
	if (o->cmd == FB_CMD_COMPARE && o->ninputs != 2)
		return fail(err, errlen, "compare: give two result files, BASE.json NEW.json (got %zu)", o->ninputs);
	if (o->format == FB_FORMAT_MARKDOWN && o->cmd != FB_CMD_COMPARE)
		return fail(err, errlen, "--format markdown is for compare only (run and sweep: console, json or csv)");
	if (o->cmd == FB_CMD_COMPARE && o->format == FB_FORMAT_CSV)
		return fail(err, errlen, "--format csv: compare writes console, markdown or json");
	if (o->max_time_s > 0 && o->target_ci <= 0)
		return fail(err, errlen, "--max-time caps --target-ci: give --target-ci PCT too");
	return 0;
}

static void opts_init(struct fb_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->paths = FB_PATHS_BOTH;
	o->duration_s = -1;
	o->warmup_s = -1;
	o->repetitions = 1;
	o->seed = 1;
	o->perf_ctl_fd = o->perf_ack_fd = -1;
	o->shard_count = 1;
	o->threshold = 0.05;
}

/* The arguments after the command word: options, and for merge the input files. */
static int parse_args(int argc, char *const *argv, int first, struct fb_opts *o, char *err, size_t errlen)
{
	char b[FB_SHOWN_MAX];
	const char *cmd = argv[1];
	for (int i = first; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1]) {
			int rc = parse_option(argc, argv, &i, o, o->cmd, err, errlen);
			if (rc)
				return rc;
		} else if (o->cmd == FB_CMD_MERGE || o->cmd == FB_CMD_COMPARE) {
			o->inputs = fb_xrealloc(o->inputs, (o->ninputs + 1) * sizeof(*o->inputs));
			o->inputs[o->ninputs++] = fb_xstrdup(argv[i]);
		} else {
			return fail(err, errlen, "%s: unexpected argument '%s'", cmd, fb_shown(argv[i], b, sizeof(b)));
		}
	}
	return check_combination(o, err, errlen);
}

/* argv[1] is a command word: list, help, run, sweep, merge. */
static int parse_command(int argc, char *const *argv, struct fb_opts *o, char *err, size_t errlen)
{
	const char *cmd = argv[1];
	char b[FB_SHOWN_MAX];
	if (!strcmp(cmd, "list")) {
		o->cmd = FB_CMD_LIST;
		return argc > 2 ? fail(err, errlen, "list: unexpected argument '%s'", fb_shown(argv[2], b, sizeof(b))) : 0;
	}
	if (!strcmp(cmd, "help")) {
		o->cmd = FB_CMD_HELP;
		if (argc > 2)
			o->scenario = fb_xstrdup(argv[2]);
		return argc > 3 ? fail(err, errlen, "help: unexpected argument '%s'", fb_shown(argv[3], b, sizeof(b))) : 0;
	}
	if (!strcmp(cmd, "merge")) {
		o->cmd = FB_CMD_MERGE;
		o->format = FB_FORMAT_JSON;   /* what its inputs are */
		return parse_args(argc, argv, 2, o, err, errlen);
	}
	if (!strcmp(cmd, "compare") || !strcmp(cmd, "doctor")) {
		o->cmd = cmd[0] == 'c' ? FB_CMD_COMPARE : FB_CMD_DOCTOR;
		return parse_args(argc, argv, 2, o, err, errlen);
	}
	if (strcmp(cmd, "run") && strcmp(cmd, "sweep"))
		return fail(err, errlen, "unknown command '%s' (expected list, help, run, sweep, merge, compare or doctor)",
			    fb_shown(cmd, b, sizeof(b)));
	o->cmd = cmd[0] == 'r' ? FB_CMD_RUN : FB_CMD_SWEEP;
	if (argc < 3 || argv[2][0] == '-')
		return fail(err, errlen, "%s: missing SCENARIO (see: fencebench list)", cmd);
	o->scenario = fb_xstrdup(argv[2]);
	return parse_args(argc, argv, 3, o, err, errlen);
}

int fb_opts_parse(int argc, char *const *argv, struct fb_opts *o, char *err, size_t errlen)
{
	opts_init(o);
	if (errlen)
		err[0] = '\0';
	if (argc < 2) {
		o->cmd = FB_CMD_USAGE;
		return 0;
	}
	const char *a = argv[1];
	bool version = !strcmp(a, "--version") || !strcmp(a, "-V"), help = !strcmp(a, "--help") || !strcmp(a, "-h");
	if (version || help) {
		char b[FB_SHOWN_MAX];
		o->cmd = version ? FB_CMD_VERSION : FB_CMD_HELP;
		if (argc > 2)
			return fail(err, errlen, "%s takes no argument ('%s'%s)", a, fb_shown(argv[2], b, sizeof(b)),
				    help ? "; see: fencebench help SCENARIO" : "");
		return 0;
	}
	if (a[0] == '-') {
		char b[FB_SHOWN_MAX];
		return fail(err, errlen, "unknown option '%s' (options follow the command; see: fencebench --help)",
			    fb_shown(a, b, sizeof(b)));
	}
	return parse_command(argc, argv, o, err, errlen);
}

void fb_opts_free(struct fb_opts *o)
{
	for (size_t i = 0; i < o->nsets; i++) {
		free(o->sets[i].key);
		free(o->sets[i].value);
	}
	free(o->sets);
	for (size_t i = 0; i < o->ninputs; i++)
		free(o->inputs[i]);
	free(o->inputs);
	fb_grid_free(&o->grid);
	free(o->scenario);
	free(o->cpus);
	free(o->out);
	free(o->trace);
	free(o->perf_events);
	free(o->gate);
	free(o->lower_better);
	free(o->higher_better);
	memset(o, 0, sizeof(*o));
}
