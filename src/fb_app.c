/* src/fb_app.c — command dispatch, list, help and run.  Contract in fb_app.h. */
#include "src/fb_app.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_scenario.h"
#include "src/fb_output.h"
#include "src/fb_run.h"
#include "src/fb_signal.h"
#include "src/fb_util.h"

#ifndef FB_GIT_REV
#define FB_GIT_REV "unknown"
#endif
#ifndef FB_BUILD_TYPE
#define FB_BUILD_TYPE "unknown"
#endif

static int cmd_list(const struct fb_scenario *const *table)
{
	int w = 8;
	for (size_t i = 0; table[i]; i++)
		if ((int)strlen(table[i]->name) > w)
			w = (int)strlen(table[i]->name);
	for (size_t i = 0; table[i]; i++)
		printf("%-*s  %s%s%s\n", w, table[i]->name, table[i]->summary,
		       table[i]->compares_paths ? " [native vs legacy]" : "", table[i]->takes_trace ? " [timeline]" : "");
	return FB_EXIT_OK;
}

static void print_length(const struct fb_scenario *s)
{
	if (s->default_iterations)
		printf("measured: %llu iterations by default", (unsigned long long)s->default_iterations);
	else
		printf("measured: %g s by default", s->default_duration_s > 0 ? s->default_duration_s : 1.0);
	printf(" (%s), warm-up %g s (--warmup D)\n",
	       s->takes_duration ? "--iterations N or --duration D" : "--iterations N; it takes no --duration",
	       s->default_warmup_s);
	if (s->takes_trace)
		printf("timeline: run --trace FILE writes one (Chrome Trace Event Format JSON)\n");
}

/* The program's own commands (fb_program_commands), after the harness's usage. */
static void fb_program_usage(FILE *f)
{
	if (fb_program_command_list() && fb_program_command_list()->name)
		fputs("\nthe program's own commands:\n", f);
	for (const struct fb_command *c = fb_program_command_list(); c && c->name; c++)
		fprintf(f, "  %s\n", c->usage);
}

static int cmd_help(const struct fb_scenario *const *table, const char *name)
{
	char b[FB_SHOWN_MAX];
	if (!name) {
		fputs(fb_cli_usage(), stdout);
		fb_program_usage(stdout);
		return FB_EXIT_OK;
	}
	const struct fb_scenario *s = fb_scenario_find(table, name);
	if (!s && !fb_cli_command_help(name, stdout))
		return FB_EXIT_OK;
	const struct fb_command *pc = s ? NULL : fb_program_command(name);
	if (pc) {
		printf("usage: fencebench %s\n", pc->usage);
		return FB_EXIT_OK;
	}
	if (!s) {
		fprintf(stderr, "fencebench: unknown scenario or command '%s' (see: fencebench list, fencebench --help)\n",
			fb_shown(name, b, sizeof(b)));
		return FB_EXIT_USAGE;
	}
	printf("%s: %s\n", s->name, s->summary);
	printf("paths: %s\n", s->compares_paths ? "native and legacy, side by side (--path)" : "not compared");
	print_length(s);
	printf("polling threads: %u%s\n\n", s->polling_threads, s->polling_threads_fn ? " (depends on the parameters)" : "");
	size_t n = fb_scenario_nparams(s);
	if (!n) {
		printf("no parameters\n");
		return FB_EXIT_OK;
	}
	printf("%-16s %-6s %-8s %-12s %-24s %s\n", "parameter", "type", "unit", "default", "range", "description");
	for (size_t i = 0; i < n; i++) {
		const struct fb_param *p = fb_scenario_param(s, i);
		char def[64], range[256];
		fb_param_format(p, fb_param_default(p), def, sizeof(def));
		fb_param_range(p, range, sizeof(range));
		printf("%-16s %-6s %-8s %-12s %-24s %s\n", p->key, fb_param_type_name(p->type), *p->unit ? p->unit : "-",
		       def, range, p->help);
	}
	printf("\nset with --set key=value (run) or sweep with --grid key=v1,v2,...\n");
	return FB_EXIT_OK;
}

int fb_app_emit(const struct fb_session *s, const char *text, char *err, size_t errlen)
{
	if (!s->has_out)
		return fb_file_write_stdout(text, err, errlen);
	return fb_out_write(&s->out, text, strlen(text), err, errlen);
}

static json_t *command_line(int argc, char **argv)
{
	json_t *a = json_array();
	for (int i = 0; i < argc; i++) {
		json_t *v = json_string(argv[i]);   /* NULL when not UTF-8 */
		json_array_append_new(a, v ? v : json_string("?"));
	}
	return a;
}

static int cmd_run(struct fb_session *s, const struct fb_opts *o, json_t *cmdline)
{
	char err[1024];
	json_t *entries;
	if (fb_session_run_point(s, s->base, &entries, err, sizeof(err))) {
		fprintf(stderr, "fencebench: %s\n", err);
		return FB_EXIT_RUN;
	}
	fb_session_finish(s);
	json_t *points = json_pack("[{s:i, s:s, s:o}]", "index", 0, "key", "", "entries", entries);
	json_t *ctx = fb_session_context(s);
	json_object_set(ctx, "command_line", cmdline);
	char *text = fb_output_render(o->format, ctx, points);
	int rc = fb_app_emit(s, text, err, sizeof(err));
	free(text);
	if (!rc)
		rc = fb_session_write_trace(s, err, sizeof(err));
	if (!rc && s->has_out && !o->quiet && o->format != FB_FORMAT_CONSOLE && !fb_out_is_stdout(&s->out)) {
		text = fb_output_render(FB_FORMAT_CONSOLE, ctx, points);
		fputs(text, stdout);
		free(text);
	}
	json_decref(points);
	json_decref(ctx);
	if (rc) {
		fprintf(stderr, "fencebench: %s\n", err);
		return FB_EXIT_RUN;
	}
	return FB_EXIT_OK;
}

static int cmd_session(const struct fb_scenario *const *table, const struct fb_opts *o, int argc, char **argv)
{
	struct fb_session s;
	char err[1024];
	int rc = fb_session_open(&s, table, o, err, sizeof(err)), status;
	if (rc) {
		fprintf(stderr, "fencebench: %s\n", err);
		fb_session_close(&s);
		return rc == -EINVAL ? FB_EXIT_USAGE : FB_EXIT_RUN;
	}
	json_t *cmdline = command_line(argc, argv);
	if (o->cmd == FB_CMD_SWEEP) {
		status = fb_sweep_main(&s, o, cmdline);
	} else if (fb_session_start(&s, err, sizeof(err))) {
		fprintf(stderr, "fencebench: %s\n", err);
		status = FB_EXIT_RUN;
	} else {
		status = cmd_run(&s, o, cmdline);
	}
	json_decref(cmdline);
	fb_session_close(&s);
	return status;
}

int fb_main(int argc, char **argv, const struct fb_scenario *const *table)
{
	struct fb_opts o;
	char err[1024];
	int status;
	/* a command of the program's own (fb_program_commands) */
	const struct fb_command *pc = argc > 1 ? fb_program_command(argv[1]) : NULL;
	if (pc)
		return pc->main(argc - 1, argv + 1);
	if (fb_opts_parse(argc, argv, &o, err, sizeof(err))) {
		fprintf(stderr, "fencebench: %s\n", err);
		fb_opts_free(&o);
		return FB_EXIT_USAGE;
	}
	switch (o.cmd) {
	case FB_CMD_USAGE:
		fputs(fb_cli_usage(), stderr);
		fb_program_usage(stderr);
		status = FB_EXIT_USAGE;
		break;
	case FB_CMD_VERSION:
		printf("fencebench %s (git %s, %s build)\n", FB_VERSION, FB_GIT_REV, FB_BUILD_TYPE);
		status = FB_EXIT_OK;
		break;
	case FB_CMD_LIST:
		status = cmd_list(table);
		break;
	case FB_CMD_HELP:
		status = cmd_help(table, o.scenario);
		break;
	case FB_CMD_COMPARE:
		status = fb_compare_main(&o);
		break;
	case FB_CMD_DOCTOR:
		status = fb_doctor_main(&o);
		break;
	default:
		if (fb_signal_start())   /* before any other thread: they inherit the blocked signals */
			fprintf(stderr, "fencebench: note: cannot take SIGINT/SIGTERM: an interrupted run may leave "
				"its output unwritten\n");
		status = o.cmd == FB_CMD_MERGE ? fb_merge_main(&o) : cmd_session(table, &o, argc, argv);
		break;
	}
	fb_opts_free(&o);
	/* What went to stdout through stdio (tables, lists) reached it: a full
	 * disk or a closed pipe is an error, not exit 0 with a truncated file. */
	int out_rc = fb_file_stdout_error();
	if (out_rc && status == FB_EXIT_OK) {
		fprintf(stderr, "fencebench: stdout: cannot write: %s\n", strerror(-out_rc));
		status = FB_EXIT_RUN;
	}
	return status;
}
