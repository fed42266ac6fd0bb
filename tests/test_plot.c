/* tests/test_plot.c — the report: scripts/plot/fbplot.py, fbrun.py, and `make report QUICK=1`.
 *
 * Fixtures: tests/plot/<scenario>.json, small result files in the schema
 * fencebench writes, with round numbers so every table row and every reading
 * is known exactly.  The tests run the scripts with /usr/bin/python3 through
 * posix_spawn and check:
 *   - every figure of the catalog (fbplot.py --list-figures) is drawn from the
 *     fixtures: PNG and SVG non-empty, every axis labelled with its unit, the
 *     labels in the SVG; report.md holds the tables, a caption per figure with
 *     its reading, machine, date, JSON and reproducing commands; report.html is
 *     self-contained (SVG inline, no network, fits a phone);
 *   - every scenario of `fencebench list` has a run and a figure, or is listed
 *     as not drawn, and a scenario added without them is caught;
 *   - the readings follow the numbers: a fixture changed so the seed's
 *     prediction fails changes the sentence, naming the departure;
 *   - a report from a modified tree is refused, by fbplot (the JSON says
 *     -dirty) and by fbrun (git status of a scratch repository), unless allowed;
 *   - results/README.md indexes the published runs with their headline numbers;
 *   - `fbrun.py --quick` (what `make report QUICK=1` runs) end to end;
 *   - bad or missing input exits 2 with one line naming the file, writes nothing.
 *
 * The script paths, the fixtures and the python are compiled in by
 * mk/report.mk.  Figure tests skip, saying why, when that python cannot import
 * matplotlib; the error-path tests need only python (inputs are validated
 * before matplotlib is imported).
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FB_PLOT_SCRIPT
#define FB_PLOT_SCRIPT "scripts/plot/fbplot.py"
#endif
#ifndef FB_RUN_SCRIPT
#define FB_RUN_SCRIPT "scripts/plot/fbrun.py"
#endif
#ifndef FB_PLOT_FIXTURES
#define FB_PLOT_FIXTURES "tests/plot"
#endif
#ifndef FB_PLOT_PYTHON
#define FB_PLOT_PYTHON "/usr/bin/python3"
#endif

#define MAX_ARGS 64

static char tmpdir[] = "/tmp/fb_test_plot.XXXXXX";

static const char *tmp_path(const char *name)
{
	return fb_tmp_path(tmpdir, name);
}

/* Run python SCRIPT args (NULL-terminated), stdout and stderr captured apart. */
static struct fb_exec_result script_args(const char *script, const char *const *args)
{
	const char *argv[MAX_ARGS] = { FB_PLOT_PYTHON, script };
	size_t n = 2;
	for (; args[n - 2]; n++) {
		assert_true(n < MAX_ARGS - 1);
		argv[n] = args[n - 2];
	}
	argv[n] = NULL;
	return fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
}
#define PLOT(...) script_args(FB_PLOT_SCRIPT, (const char *const[]){ __VA_ARGS__, NULL })
#define FBRUN(...) script_args(FB_RUN_SCRIPT, (const char *const[]){ __VA_ARGS__, NULL })

static void expect_ok(struct fb_exec_result *r, const char *what)
{
	if (r->status != 0)
		fail_msg("%s: exit %d\nstdout: %s\nstderr: %s", what, r->status, r->out, r->err);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void assert_contains(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("output lacks\n  %s\n--- output ---\n%s", want, text);
}

static void assert_lacks(const char *text, const char *unwanted)
{
	if (strstr(text, unwanted))
		fail_msg("output holds\n  %s\n--- output ---\n%s", unwanted, text);
}

static size_t count_of(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static char *slurp_in(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	char *s = fb_slurp(p);
	if (!s)
		fail_msg("%s: not written", p);
	return s;
}

/* Entries of dir other than . and .. (leftover temporaries count). */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static bool have_matplotlib(void)
{
	const char *argv[] = { FB_PLOT_PYTHON, "-c", "import matplotlib", NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	fb_exec_free(&r);
	return r.status == 0;
}

static void need_python(void)
{
	if (access(FB_PLOT_PYTHON, X_OK))
		fb_skip(FB_PLOT_PYTHON " not found (Debian's python3 runs scripts/plot/)");
	if (access(FB_PLOT_SCRIPT, R_OK))
		fail_msg("%s not found", FB_PLOT_SCRIPT);
}

static void need_matplotlib(void)
{
	need_python();
	if (!have_matplotlib())
		fb_skip(FB_PLOT_PYTHON " cannot import matplotlib (install python3-matplotlib)");
}

/* ---- fixtures ---- */

static const char *fixture(const char *scenario)
{
	static char p[4][PATH_MAX];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s.json", FB_PLOT_FIXTURES, scenario);
	return p[k];
}

/* Every tests/plot/ *.json, sorted, as argv entries after the first n; the new count. */
static size_t add_fixtures(const char **argv, size_t n)
{
	static char names[32][PATH_MAX];
	struct dirent **list;
	int k = scandir(FB_PLOT_FIXTURES, &list, NULL, alphasort);
	assert_true(k > 0);
	size_t m = 0;
	for (int i = 0; i < k; i++) {
		const char *e = list[i]->d_name;
		size_t len = strlen(e);
		bool trace = len > 11 && !strcmp(e + len - 11, ".trace.json");   /* read beside its result */
		if (len > 5 && !strcmp(e + len - 5, ".json") && !trace && m < 32 && n < MAX_ARGS - 3) {
			snprintf(names[m], sizeof(names[m]), "%s/%s", FB_PLOT_FIXTURES, e);
			argv[n++] = names[m++];
		}
		free(list[i]);
	}
	free(list);
	argv[n] = NULL;
	return n;
}

/* The fixture of scenario with counter set to value in the benchmark entry called bench
 * (and context.git_rev set to rev when rev is not NULL), written to tmp/<out>; its path. */
static const char *fixture_changed(const char *scenario, const char *bench, const char *counter,
				   double value, const char *rev, const char *out)
{
	json_error_t err;
	json_t *doc = json_load_file(fixture(scenario), 0, &err);
	if (!doc)
		fail_msg("%s: %s", fixture(scenario), err.text);
	bool found = !bench;
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b) {
		if (bench && !strcmp(json_string_value(json_object_get(b, "name")), bench)) {
			json_object_set_new(b, counter, json_real(value));
			found = true;
		}
	}
	if (!found)
		fail_msg("%s: no benchmark called %s", fixture(scenario), bench);
	if (rev)
		json_object_set_new(json_object_get(doc, "context"), "git_rev", json_string(rev));
	const char *path = tmp_path(out);
	assert_int_equal(json_dump_file(doc, path, JSON_INDENT(1)), 0);
	json_decref(doc);
	return path;
}

/* This build tree's fencebench (the test fails when it is not built). */
static const char *fencebench_path(void)
{
	static char path[PATH_MAX + 16];
	fb_build_path(path, sizeof(path), "fencebench");
	fb_need_binary(path);
	return path;
}

/* ---- the catalog: fbplot.py --list-figures ---- */

struct catalog {
	char figure[32][64], figure_scen[32][256], run_scen[32][64], not_drawn[16][64];
	size_t nfigure, nrun, nnot;
};

static void read_catalog(struct catalog *c)
{
	memset(c, 0, sizeof(*c));
	struct fb_exec_result r = PLOT("--list-figures");
	expect_ok(&r, "fbplot --list-figures");
	char kind[16], a[256], b[256];
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		if (sscanf(line, "%15s %255s %255s", kind, a, b) < 3)
			fail_msg("--list-figures: bad line %s", line);
		if (!strcmp(kind, "figure") && c->nfigure < 32) {
			snprintf(c->figure[c->nfigure], 64, "%.63s", a);
			snprintf(c->figure_scen[c->nfigure++], 256, ",%.250s,", b);
		} else if (!strcmp(kind, "run") && c->nrun < 32) {
			snprintf(c->run_scen[c->nrun++], 64, "%.63s", b);
		} else if (!strcmp(kind, "not-drawn") && c->nnot < 16) {
			snprintf(c->not_drawn[c->nnot++], 64, "%.63s", a);
		}
	}
	fb_exec_free(&r);
	assert_true(c->nfigure >= 12 && c->nrun >= 11);
}

/* Scenarios of `fencebench list` output with neither a figure and a run nor a not-drawn
 * line, space-separated into out ("" when all are covered). */
static void uncovered(const struct catalog *c, const char *list, char *out, size_t size)
{
	char *copy = strdup(list), name[64], key[80];
	out[0] = '\0';
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
		if (sscanf(line, "%63s", name) != 1)
			continue;
		snprintf(key, sizeof(key), ",%s,", name);
		bool drawn = false, run = false, excused = false;
		for (size_t i = 0; i < c->nfigure; i++)
			drawn |= strstr(c->figure_scen[i], key) != NULL;
		for (size_t i = 0; i < c->nrun; i++)
			run |= !strcmp(c->run_scen[i], name);
		for (size_t i = 0; i < c->nnot; i++)
			excused |= !strcmp(c->not_drawn[i], name);
		if (!excused && !(drawn && run))
			snprintf(out + strlen(out), size - strlen(out), "%s%s", *out ? " " : "", name);
	}
	free(copy);
}

/* ---- checks on the outputs ---- */

static unsigned be32(const unsigned char *p)
{
	return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

/* A PNG: signature, IHDR first, a non-empty image, and more than a header. */
static void assert_png(const char *path)
{
	unsigned char h[24];
	struct stat st;
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: not written", path);
	size_t n = fread(h, 1, sizeof(h), f);
	fclose(f);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 5000);
	assert_int_equal(n, sizeof(h));
	assert_memory_equal(h, "\x89PNG\r\n\x1a\n", 8);
	assert_memory_equal(h + 12, "IHDR", 4);
	assert_true(be32(h + 16) >= 300 && be32(h + 20) >= 200);    /* width, height in pixels */
}

/* A label names its unit or scale in parentheses: "latency (µs, log scale)". */
static void assert_labelled(const char *fig, const char *axis, const char *label, const char *svg)
{
	const char *open = label ? strchr(label, '(') : NULL;
	if (!label || !*label || !open || !strchr(open, ')'))
		fail_msg("figure %s: %s label \"%s\" names no unit in parentheses", fig, axis, label ? label : "");
	if (!strpbrk(label, "&<>'\"") && !strstr(svg, label))       /* text stays text in the SVG */
		fail_msg("figure %s: %s label \"%s\" not in its SVG", fig, axis, label);
}

/* Every catalog figure drawn into dir: PNG and SVG, each panel labelled and drawing something. */
static void assert_every_figure(const struct catalog *c, const char *dir)
{
	char *text = slurp_in(dir, "figures.json");
	json_error_t err;
	json_t *m = json_loads(text, 0, &err);
	if (!m)
		fail_msg("figures.json: %s", err.text);
	size_t i, j;
	json_t *f, *ax;
	size_t seen = 0;
	json_array_foreach(json_object_get(m, "figures"), i, f) {
		const char *name = json_string_value(json_object_get(f, "name"));
		if (!json_is_true(json_object_get(f, "drawn")))
			fail_msg("figure %s not drawn (%s): add a fixture to tests/plot/", name,
				 json_string_value(json_object_get(f, "why")));
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%s.png", dir, name);
		assert_png(p);
		snprintf(p, sizeof(p), "%s.svg", name);
		char *svg = slurp_in(dir, p);
		assert_non_null(strstr(svg, "<svg"));
		assert_non_null(strstr(svg, "</svg>"));
		json_t *axes = json_object_get(f, "axes");
		assert_true(json_array_size(axes) >= 1);
		json_array_foreach(axes, j, ax) {
			assert_labelled(name, "x", json_string_value(json_object_get(ax, "xlabel")), svg);
			assert_labelled(name, "y", json_string_value(json_object_get(ax, "ylabel")), svg);
			if (json_integer_value(json_object_get(ax, "artists")) < 1)
				fail_msg("figure %s: a panel draws nothing", name);
		}
		free(svg);
		if (json_array_size(json_object_get(f, "reading")) != 2)
			fail_msg("figure %s: %zu reading sentences, not 2", name,
				 json_array_size(json_object_get(f, "reading")));
		seen++;
	}
	assert_int_equal(seen, c->nfigure);
	json_decref(m);
	free(text);
}

/* ---- tests ---- */

/* Every figure from the fixtures, and the report around them. */
static void plot_every_figure_and_the_report(void **state)
{
	need_matplotlib();
	struct catalog c;
	read_catalog(&c);
	const char *out = tmp_path("out");
	const char *argv[MAX_ARGS] = { FB_PLOT_PYTHON, FB_PLOT_SCRIPT, "-o", out, "--reproduce", "make report" };
	add_fixtures(argv, 6);
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	expect_ok(&r, "fbplot on the fixtures");
	fb_exec_free(&r);
	assert_every_figure(&c, out);
	/* 2 files per figure + report.md, report.html, figures.json; no temporaries */
	assert_int_equal(dir_entries(out), (int)(2 * c.nfigure + 3));

	char *md = slurp_in(out, "report.md");
	/* how it was made; the headline table */
	assert_contains(md, "| revision | git `abc1234`, clean tree |");
	assert_contains(md, "| command | `make report` |");
	assert_contains(md, "| interrupts per signal (10.0% CPU-waited) | 0.1 | 1 |");
	/* equal work: per signal; the power proxy at one paced rate */
	assert_contains(md, "| OS interrupt-thread CPU per signal | 500 ns | 8 µs |");
	assert_contains(md, "| application CPU per signal | 10 µs | 80 µs |");
	assert_contains(md, "| OS interrupt-thread idle fraction at 2000 signals/s | 0.999 | 0.98 |");
	assert_contains(md, "| OS interrupt-thread wake-ups/s at 2000 signals/s | 200 | 2000 |");
	/* no rate over unequal spans in the headline table; the power table
	 * leads with per-signal wake-ups and marks its rates as own-span */
	char *figures = strstr(md, "## Figures");
	assert_non_null(figures);
	*figures = '\0';
	assert_lacks(md, "own span");
	*figures = '#';
	assert_contains(md, "| workload | OS wake-ups/signal native | OS wake-ups/signal legacy | "
			    "OS wake-ups/s native (own span) |");
	assert_contains(md, "| irq-suppression waited=0.5 | 0.5 | 1 |");
	assert_contains(md, "| user-mode submission p50 / p99 | 200 ns / 400 ns (×5 cache-line one way) | — |");
	assert_contains(md, "| GPU wait p50 / p99 | 200 ns / 400 ns (×2.5 cache-line round trip) | "
			    "28 µs / 70 µs (×350 cache-line round trip) |");
	/* a caption per figure: reading, machine and date, its JSON, the commands */
	assert_int_equal(count_of(md, "**Reading.** "), c.nfigure);
	assert_int_equal(count_of(md, "testhost (2 × Test CPU, Linux test), 2026-01-02 · from `"), c.nfigure);
	assert_contains(md, "### Figure 3. Interrupts per GPU signal vs waited fraction\n\n"
			    "![Interrupts per GPU signal vs waited fraction](irq_per_signal.png)");
	assert_contains(md, "from `irq-suppression.json` · also as [SVG](irq_per_signal.svg) · reproduce:\n\n```sh\n"
			    "build/fencebench sweep irq-suppression --grid waited=0,0.5,1 --format json "
			    "--out results/test/irq-suppression.json\n");
	assert_contains(md, " --only irq_per_signal ");
	/* native vs legacy: workload, signals, irq native, irq legacy, irq/signal n, l, suppression,
	 * spurious n, l, lost wake-ups */
	assert_contains(md, "| irq-suppression waited=0 | 1000 | 0 | 1000 | 0 | 1 | 100.0% | 0 | 1000 | 0 |");
	assert_contains(md, "| irq-suppression waited=0.5 | 1000 | 500 | 1000 | 0.5 | 1 | 50.0% | 0 | 500 | 0 |");
	assert_contains(md, "| irq-suppression waited=1 | 1000 | 1000 | 1000 | 1 | 1 | 0.0% | 0 | 0 | 0 |");
	assert_contains(md, "| gpu-wait | 1000 | 0 | 1000 | 0 | 1 | 100.0% | 0 | 1000 | 0 |");
	/* power: a thread that never woke has no idle fraction to show */
	assert_contains(md, "| irq-suppression waited=0 | 0 | 1 | 0 | 10000 | n/a (0 wake-ups) | 0.9 | n/a (0 irq) | 1 µs |");
	assert_contains(md, "| irq-suppression waited=1 | 1 | 1 | 10000 | 10000 | 0.95 | 0.9 | 2 µs | 1 µs |");
	/* each latency beside its machine limit */
	assert_contains(md, "| cpu-wait | cpu_wait p50 | 25 µs | 30 µs | futex wake-to-run 20 µs | ×1.25 | ×1.5 |");
	assert_contains(md, "| cpu-wait | cpu_wait p99 | 60 µs | 90 µs | futex wake-to-run 20 µs | ×3 | ×4.5 |");
	assert_contains(md, "| gpu-wait | gpu_wait p50 | 200 ns | 28 µs | cache-line round trip 80 ns | ×2.5 | ×350 |");
	/* context, checks, what is not drawn, reproduction */
	assert_contains(md, "| host | testhost |");
	assert_contains(md, "| `irq-suppression.json` | irq-suppression | 2026-01-02T03:04:05 |");
	assert_contains(md, "- Lost wake-ups: 0 in every run.");
	assert_contains(md, "- Note: a test note");
	assert_contains(md, "- `selftest`: synthetic latencies");
	assert_contains(md, "```sh\nmake report\n```");
	assert_contains(md, "fbplot.py -o ");
	free(md);

	/* report.html: self-contained, every figure inline, readable on a phone */
	char *html = slurp_in(out, "report.html");
	assert_contains(html, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
	assert_contains(html, "max-width:");
	assert_int_equal(count_of(html, "<svg "), c.nfigure);
	assert_int_equal(count_of(html, "<figure id=\"fig-"), c.nfigure);
	assert_contains(html, "id=\"irq_per_signal-");                /* ids prefixed per figure */
	assert_contains(html, "<strong>Reading.</strong> ");
	assert_contains(html, "<td class=r>0.1</td>");
	static const char *const net[] = { "src=\"http", "href=\"http", "url(http", "<link", "<script", "@import" };
	for (size_t i = 0; i < sizeof(net) / sizeof(net[0]); i++)
		assert_lacks(html, net[i]);
	free(html);
}

/* A new scenario without a run and a figure fails here (the catalog is scripts/plot/fbcatalog.py). */
static void every_scenario_has_a_figure(void **state)
{
	need_python();
	struct catalog c;
	read_catalog(&c);
	const char *fencebench = fencebench_path();
	const char *argv[] = { fencebench, "list", NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	expect_ok(&r, "fencebench list");
	char missing[1024];
	uncovered(&c, r.out, missing, sizeof(missing));
	if (*missing)
		fail_msg("scenarios without a run and a figure in the report: %s (scripts/plot/fbcatalog.py; "
			 "CONTRIBUTING.md, 'Adding a figure')", missing);
	/* the check can fail: a scenario the catalog does not know */
	size_t n = strlen(r.out);
	char *more = malloc(n + 64);
	snprintf(more, n + 64, "%snew-scenario     what a later issue adds\n", r.out);
	uncovered(&c, more, missing, sizeof(missing));
	assert_string_equal(missing, "new-scenario");
	free(more);
	fb_exec_free(&r);
}

/* The report of one changed fixture; its report.md (caller frees). */
static char *report_of(const char *input, const char *out)
{
	struct fb_exec_result r = PLOT("-o", tmp_path(out), "--formats", "svg", input);
	expect_ok(&r, "fbplot");
	fb_exec_free(&r);
	return slurp_in(tmp_path(out), "report.md");
}

/* A compare entry of the legacy path (section "compare"): run_type and
 * aggregate_name as given (NULL: an iteration entry), repetitions reps, the
 * fencebench block of the device's legacy entry b. */
static json_t *compare_entry(json_t *b, const char *agg, int reps)
{
	json_t *e = json_object(), *fb = json_deep_copy(json_object_get(b, "fencebench"));
	json_object_set_new(fb, "section", json_string("compare"));
	json_object_set_new(fb, "units", json_object());
	json_object_set_new(e, "fencebench", fb);
	char name[128];
	snprintf(name, sizeof(name), "frame/compare/path:legacy%s%s", agg ? "_" : "", agg ? agg : "");
	json_object_set_new(e, "name", json_string(name));
	json_object_set_new(e, "run_name", json_string("frame/compare/path:legacy"));
	json_object_set_new(e, "run_type", json_string(agg ? "aggregate" : "iteration"));
	if (agg)
		json_object_set_new(e, "aggregate_name", json_string(agg));
	json_object_set_new(e, "repetitions", json_integer(reps));
	return e;
}

static void put3(json_t *e, const char *key, double v, double lo, double hi)
{
	char k[128];
	json_object_set_new(e, key, json_real(v));
	snprintf(k, sizeof(k), "%s_ci_lo", key);
	json_object_set_new(e, k, json_real(lo));
	snprintf(k, sizeof(k), "%s_ci_hi", key);
	json_object_set_new(e, k, json_real(hi));
}

/* The frame fixture as a compare_model run on a Vulkan device (main
 * section, backend=vulkan compare_model=true) with its section "compare":
 * host CPU per frame native/legacy 0.6 [0.5, 0.7] on the device and 0.3
 * [model_lo, model_hi] in the model, verdict agree (1) or not (0), over 3
 * repetitions (mean and median aggregates); reps 1: one iteration entry,
 * no interval, no verdict. */
static const char *beside_fixture(double model_lo, double model_hi, int agree, int reps, const char *out)
{
	json_error_t err;
	json_t *d = json_load_file(fixture("frame"), 0, &err);
	if (!d)
		fail_msg("%s: %s", fixture("frame"), err.text);
	json_t *benches = json_object_get(d, "benchmarks"), *legacy = NULL;
	size_t i;
	json_t *b;
	json_array_foreach(benches, i, b) {
		json_t *fb = json_object_get(b, "fencebench"), *params = json_object_get(fb, "params");
		json_object_set_new(params, "backend", json_string("vulkan"));
		json_object_set_new(params, "compare_model", json_string("true"));
		if (!strcmp(json_string_value(json_object_get(fb, "path")), "legacy"))
			legacy = b;
	}
	assert_non_null(legacy);
	const char *aggs[] = { "mean", "median" };
	for (int a = 0; a < (reps > 1 ? 2 : 1); a++) {
		json_t *e = compare_entry(legacy, reps > 1 ? aggs[a] : NULL, reps);
		if (reps > 1) {
			put3(e, "host_cpu_per_frame_ratio_device", 0.6, 0.5, 0.7);
			put3(e, "host_cpu_per_frame_ratio_model", 0.3, model_lo, model_hi);
			put3(e, "held_waits_per_frame_legacy_device", 4, 4, 4);
			put3(e, "held_waits_per_frame_legacy_model", 4, 4, 4);
			if (a == 0) {
				json_object_set_new(e, "host_cpu_per_frame_ratio_agree", json_integer(agree));
				json_object_set_new(e, "held_waits_per_frame_legacy_agree", json_integer(1));
			}
		} else {
			json_object_set_new(e, "host_cpu_per_frame_ratio_device", json_real(0.6));
			json_object_set_new(e, "host_cpu_per_frame_ratio_model", json_real(0.3));
		}
		json_array_append_new(benches, e);
	}
	const char *path = tmp_path(out);
	assert_int_equal(json_dump_file(d, path, JSON_INDENT(1)), 0);
	json_decref(d);
	return path;
}

/* "The model beside a real GPU": only for a compare_model run; the device's
 * and the model's values with their 95 % intervals and the run's verdict;
 * one repetition: no interval, no verdict. */
static void model_beside_a_real_gpu(void **state)
{
	(void)state;
	need_python();
	char *md = report_of(fixture("frame"), "beside-none");
	assert_lacks(md, "The model beside a real GPU");
	free(md);
	md = report_of(beside_fixture(0.1, 0.55, 1, 3, "beside.json"), "beside-agree");
	assert_contains(md, "## The model beside a real GPU");
	assert_contains(md, "| host CPU per frame native ÷ legacy | 0.6 [0.5–0.7] | 0.3 [0.1–0.55] | agree |");
	assert_contains(md, "| held waits per frame, legacy | 4 [4–4] | 4 [4–4] | agree |");
	assert_lacks(md, "DISAGREE**");
	free(md);
	md = report_of(beside_fixture(0.25, 0.35, 0, 3, "beside2.json"), "beside-differ");
	assert_contains(md, "| host CPU per frame native ÷ legacy | 0.6 [0.5–0.7] | 0.3 [0.25–0.35] | **DISAGREE** |");
	free(md);
	md = report_of(beside_fixture(0, 0, 0, 1, "beside1.json"), "beside-one");
	assert_contains(md, "| host CPU per frame native ÷ legacy | 0.6 | 0.3 | no interval (one repetition) |");
	assert_lacks(md, "| agree |");
	free(md);
}

/* The two sentences are computed from the run's numbers: change them and the reading follows. */
static void readings_follow_the_numbers(void **state)
{
	need_matplotlib();
	char *md = report_of(fixture("irq-suppression"), "read-irq");
	assert_contains(md, "Native interrupts per signal go from 0 at waited 0 to 1 at waited 1, equal to the "
			    "waited fraction at every point, while legacy stays at 1 per signal. This is what the "
			    "native-gpu-fence seed predicts:");
	free(md);
	/* native interrupts on 300 of 1000 unwaited signals */
	md = report_of(fixture_changed("irq-suppression", "irq-suppression/path:native/waited:0",
				       "interrupts_per_signal", 0.3, NULL, "irq.json"), "read-irq2");
	assert_contains(md, "Native interrupts per signal go from 0.3 at waited 0 to 1 at waited 1, within 0.3 of "
			    "the waited fraction (the largest gap at waited=0)");
	assert_contains(md, "this run departs from it: at waited=0 native raised 0.3 interrupts per signal, "
			    "0.3 above the waited fraction.");
	free(md);

	/* Figure 7: the parked engine's numbers it prints are checked too, and the
	 * doorbell-floor claim says it is about the polling engine */
	md = report_of(fixture("submit-latency"), "read-sub");
	assert_contains(md, "stays within 3× of the doorbell floor with the engine polling");
	free(md);
	md = report_of(fixture_changed("submit-latency", "submit-latency/parked", "km_submit_p50", 35000, NULL,
				       "sub.json"), "read-sub2");
	assert_contains(md, "with the engine parked in F1 they take 20 µs and 35 µs");
	assert_contains(md, "with the engine parked in F1 kernel-mode submission is only 1.8× slower than user-mode");
	free(md);

	/* the interrupts table: paths that ran different signal counts (isr-scaling's
	 * log payloads) show both counts, and suppression is per signal */
	json_error_t jerr;
	json_t *irq = json_load_file(fixture("irq-suppression"), 0, &jerr);
	assert_non_null(irq);
	size_t k;
	json_t *b;
	json_array_foreach(json_object_get(irq, "benchmarks"), k, b) {
		if (!strcmp(json_string_value(json_object_get(b, "name")), "irq-suppression/path:native/waited:0.5")) {
			json_object_set_new(b, "signals", json_real(2000));
			json_object_set_new(b, "interrupts", json_real(1000));
		}
	}
	assert_int_equal(json_dump_file(irq, tmp_path("irq2.json"), JSON_INDENT(1)), 0);
	json_decref(irq);
	md = report_of(tmp_path("irq2.json"), "read-irq3");
	assert_contains(md, "| irq-suppression waited=0.5 | 2000 / 1000 | 1000 | 1000 | 0.5 | 1 | 50.0% |");
	free(md);

	md = report_of(fixture("isr-scaling"), "read-isr");
	assert_contains(md, "goes 5 µs → 5 µs with the fence array, 5 µs → 520 µs with a NULL payload");
	assert_contains(md, "This is what the native-gpu-fence seed predicts: the fence array and the optimized interrupt");
	free(md);
	/* the array's handler grows with the fences as a scan would */
	md = report_of(fixture_changed("isr-scaling", "isr-scaling/power/path:native/fences:1024/payload:array",
				       "isr_ns_per_irq", 520000, NULL, "isr.json"), "read-isr2");
	assert_contains(md, "goes 5 µs → 520 µs with the fence array");
	assert_contains(md, "this run departs from it: with the fence array the cost grows as fences^0.67.");
	free(md);

	md = report_of(fixture("isr-scaling"), "read-isr3");
	assert_contains(md, "6 µs → 6 µs with the optimized interrupt (the queue's log), 5 µs → 520 µs with an "
			    "overrunning log (fallback)");
	free(md);
	/* the optimized interrupt's handler grows as a scan would */
	md = report_of(fixture_changed("isr-scaling", "isr-scaling/power/path:native/fences:1024/payload:log",
				       "isr_ns_per_irq", 520000, NULL, "isr3.json"), "read-isr4");
	assert_contains(md, "this run departs from it: with the optimized interrupt (the queue's log) the cost "
			    "grows as fences^0.64.");
	free(md);

	md = report_of(fixture("log-overrun"), "read-lo");
	assert_contains(md, "at 5000 signals/s (5 per CPU wait) 199 at 256 bytes and 0 at 4096 bytes");
	assert_contains(md, "This is what the native-gpu-fence seed predicts: a log overruns exactly when");
	free(md);
	/* a 100-entry log that overran with 10 entries between reads */
	md = report_of(fixture_changed("log-overrun", "log-overrun/log_bytes:4096/rate:5000", "log_overruns", 3, NULL,
				       "lo.json"), "read-lo2");
	assert_contains(md, "this run departs from it: 3 overruns at 4096 bytes (100 entries) with 10 entries "
			    "between reads; only 211 fallback scans for 214 overruns.");
	free(md);
	/* a lost wake-up is a departure, whatever the overruns */
	md = report_of(fixture_changed("log-overrun", "log-overrun/log_bytes:1024/rate:200000", "lost_wakeups", 2,
				       NULL, "lo3.json"), "read-lo3");
	assert_contains(md, "and 2 wake-ups were lost.");
	assert_contains(md, "this run departs from it: 2 wake-ups lost at 1024 bytes, 200000 signals/s.");
	free(md);

	/* a native GPU wait as slow as the CPU-held one */
	md = report_of(fixture_changed("gpu-wait", "gpu-wait/path:native", "gpu_wait_p50", 20000, NULL, "gw.json"),
		       "read-gw");
	assert_contains(md, "A native GPU wait ends 20 µs after the signal at p50 (250× the cache-line round trip)");
	assert_contains(md, "this run departs from it: the native p50 is only 1.4× below the legacy one.");
	free(md);

	/* the headline under a calibrated profile: inside real hardware's 3-8x, then outside it */
	md = report_of(fixture("headline-h200-pcie5"), "read-hp");
	assert_contains(md, "under h200-pcie5 the native GPU wait took 6 µs at p50 against legacy's 30 µs (5×)");
	assert_contains(md, "This is what a real machine predicts: under h200-pcie5 the ratio is within the 3–8×");
	free(md);
	md = report_of(fixture_changed("headline-h200-pcie5", "headline/path:legacy/profile:h200-pcie5", "gpu_wait_p50",
				       60000, NULL, "hp.json"), "read-hp2");
	assert_contains(md, "this run departs from it: h200-pcie5 gives 10×.");
	free(md);

	/* the profiles table's OS interrupt-thread CPU row says what its numbers do:
	 * equal under both profiles, then moved by one */
	struct fb_exec_result pr = PLOT("-o", tmp_path("read-prof"), "--formats", "svg", fixture("headline"),
					fixture("headline-h200-pcie5"));
	expect_ok(&pr, "fbplot");
	fb_exec_free(&pr);
	md = slurp_in(tmp_path("read-prof"), "report.md");
	assert_contains(md, "CPU work: within 25 % under every profile here");
	free(md);
	const char *moved = fixture_changed("headline-h200-pcie5", "headline/path:native/profile:h200-pcie5",
					    "os_irq_cpu_per_signal", 200, NULL, "prof.json");
	pr = PLOT("-o", tmp_path("read-prof2"), "--formats", "svg", fixture("headline"), moved);
	expect_ok(&pr, "fbplot");
	fb_exec_free(&pr);
	md = slurp_in(tmp_path("read-prof2"), "report.md");
	assert_contains(md, "CPU work, yet it moves with the profile here: native 500 ns → 200 ns");
	assert_null(strstr(md, "held buffers' re-entry"));
	free(md);

	/* analogs: every operation within 30 % of its profile, or named with its ratio */
	md = report_of(fixture("analogs"), "read-an");
	assert_contains(md, "Under profile h200-pcie5, 6 of 9 operations came within ±30 % of the real machine's p50");
	assert_lacks(md, "GPU write seen by a CPU poll 2.00×");
	free(md);
	md = report_of(fixture_changed("analogs", "analogs/rounds:50/profile:h200-pcie5", "write_seen_vs_profile", 2.0,
				       NULL, "an.json"), "read-an2");
	assert_contains(md, "5 of 9 operations came within ±30 %");
	assert_contains(md, "GPU write seen by a CPU poll 2.00×");
	free(md);
}

/* The preemption and TDR readings follow their numbers (scripts/plot/fbreading_preempt.py). */
static void preempt_readings_follow_the_numbers(void **state)
{
	need_matplotlib();
	char *md = report_of(fixture("preempt"), "read-pre");
	assert_contains(md, "This is what the gpu-preemption seed predicts: finer preemption granularity");
	assert_contains(md, "This is what the gpu-preemption seed predicts: high-priority work such as the DWM's");
	free(md);
	/* the finest granularity no faster than NONE */
	md = report_of(fixture_changed("preempt", "preempt/path:native/granularity:shader", "frame_latency_p50",
				       30000000, NULL, "pre.json"), "read-pre2");
	assert_contains(md, "this run departs from it: at shader granularity the p50 is only ×1.07 below NONE's");
	free(md);
	md = report_of(fixture_changed("preempt", "preempt/path:native/granularity:shader", "missed_vsync_fraction",
				       0.5, NULL, "pre3.json"), "read-pre3");
	assert_contains(md, "this run departs from it: at shader granularity 50.0% of the frames still missed");
	free(md);
	md = report_of(fixture("tdr"), "read-tdr");
	assert_contains(md, "innocent work lost: 0 buffers. This is what the gpu-preemption seed predicts");
	free(md);
	md = report_of(fixture_changed("tdr", "tdr/path:legacy", "innocent_lost", 2, NULL, "tdr.json"), "read-tdr2");
	assert_contains(md, "this run departs from it: 2 buffers of the innocent process were lost");
	free(md);
}

/* The workload reading follows its numbers (scripts/plot/fbreading.py, workloads). */
/* The timeline's reading counts one frame of the trace beside the result:
 * the fixture's, then the same trace with its paths' names swapped (native
 * then holds waits on the CPU: a departure the reading names). */
static void timeline_reading_follows_the_trace(void **state)
{
	need_matplotlib();
	char *md = report_of(fixture("timeline-frame"), "read-tl");
	assert_contains(md, "frame: legacy holds 6 waits on the CPU (3145 µs summed over its queues), released by 19 "
			    "DPCs; native 0 held, 5 GPU waits, 1 DPCs. This is what the native-gpu-fence seed predicts");
	free(md);
	const char *res = tmp_path("swapped.json"), *tr = tmp_path("swapped.trace.json");
	char *text = slurp_in(FB_PLOT_FIXTURES, "timeline-frame.json");
	FILE *fp = fopen(res, "w");
	fputs(text, fp);
	fclose(fp);
	free(text);
	text = slurp_in(FB_PLOT_FIXTURES, "timeline-frame.trace.json");
	for (char *p = text; (p = strstr(p, "\"native: ")); p += 8)
		memcpy(p + 1, "LEGACY", 6);
	for (char *p = text; (p = strstr(p, "\"legacy: ")); p += 8)
		memcpy(p + 1, "native", 6);
	for (char *p = text; (p = strstr(p, "\"LEGACY: ")); p += 8)
		memcpy(p + 1, "legacy", 6);
	fp = fopen(tr, "w");
	fputs(text, fp);
	fclose(fp);
	free(text);
	md = report_of(res, "read-tl2");
	assert_contains(md, "this run departs from it: frame's native frame holds 6 waits on the CPU; frame's legacy "
			    "frame holds no wait on the CPU");
	free(md);
}

static void workload_readings_follow_the_numbers(void **state)
{
	need_matplotlib();
	char *md = report_of(fixture("frame"), "read-wl");
	assert_contains(md, "Interrupts per frame, native vs legacy: frame 0.99 vs 19 (19× fewer on the native "
			    "path); frames/s, native vs legacy: frame 500 vs 530; host CPU per frame (application "
			    "and OS threads), native vs legacy: frame 25 µs vs 95 µs (OS threads 5 µs vs 75 µs). This "
			    "is what the native-gpu-fence seed predicts: the native fence raises an interrupt only for "
			    "signals a CPU waits on");
	free(md);
	/* the host CPU panel's reading: native's OS threads costlier per frame than legacy's */
	md = report_of(fixture_changed("frame", "frame/path:native", "os_cpu_per_frame", 90, NULL, "wl5.json"),
		       "read-wl5");
	assert_contains(md, "(OS threads 90 µs vs 75 µs). The native-gpu-fence seed predicts");
	assert_contains(md, "this run departs from it: frame: native's OS threads spent 90 µs of CPU per frame "
			    "against legacy's 75 µs.");
	free(md);
	/* native interrupts on every GPU signal, as legacy's */
	md = report_of(fixture_changed("frame", "frame/path:native", "interrupts_per_frame", 19, NULL, "wl.json"),
		       "read-wl2");
	assert_contains(md, "this run departs from it: frame: native raised 19 interrupts per frame for 1.01 CPU "
			    "waits.");
	free(md);
	/* legacy silent on most of its signals */
	md = report_of(fixture_changed("frame", "frame/path:legacy", "interrupts_per_frame", 1, NULL, "wl3.json"),
		       "read-wl3");
	assert_contains(md, "this run departs from it: frame: legacy raised only 1 interrupts per frame for 19 GPU "
			    "signals.");
	free(md);
	/* the native path far slower than legacy */
	md = report_of(fixture_changed("frame", "frame/path:native", "frames_per_s", 200, NULL, "wl4.json"),
		       "read-wl4");
	assert_contains(md, "frames/s, native vs legacy: frame 200 vs 530; host CPU per frame");
	assert_contains(md, "this run departs from it: frames/s differ by more than 25 % in frame (native 0.38× "
			    "legacy's); the run was oversubscribed: 3 polling threads on 2 CPUs.");
	free(md);
}

/* A report from results of a modified tree is refused unless allowed, and then says so. */
static void modified_tree_refused(void **state)
{
	need_python();
	const char *in = fixture_changed("headline", NULL, NULL, 0, "abc1234-dirty", "headline.json");
	const char *out = tmp_path("out-dirty");
	struct fb_exec_result r = PLOT("-o", out, in);
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_contains(r.err, "headline.json: built from a modified tree (git abc1234-dirty)");
	assert_contains(r.err, "make report ALLOW_DIRTY=1");
	assert_int_equal(access(out, F_OK), -1);                  /* nothing written */
	fb_exec_free(&r);
	if (!have_matplotlib())
		fb_skip(FB_PLOT_PYTHON " cannot import matplotlib (install python3-matplotlib)");
	r = PLOT("-o", out, "--allow-dirty", in);
	expect_ok(&r, "fbplot --allow-dirty");
	fb_exec_free(&r);
	char *md = slurp_in(out, "report.md");
	assert_contains(md, "| revision | git `abc1234-dirty`, **modified tree** (made with ALLOW_DIRTY=1");
	free(md);
}

static int git(const char *repo, const char *a, const char *b, const char *c)
{
	const char *argv[] = { "/usr/bin/git", "-C", repo, "-c", "user.name=fencebench test",
			       "-c", "user.email=test@example.invalid", a, b, c, NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	fb_exec_free(&r);
	return r.status;
}

/* fbrun (make report) checks the source tree before it runs anything. */
static void fbrun_refuses_a_modified_tree(void **state)
{
	need_python();
	if (access("/usr/bin/git", X_OK))
		fb_skip("/usr/bin/git not found");
	const char *repo = tmp_path("repo"), *file = tmp_path("repo/tracked.txt"), *out = tmp_path("runs");
	assert_int_equal(mkdir(repo, 0755), 0);
	struct fb_exec_result r = FBRUN("--fencebench", "build/fencebench", "-o", out, "--dry-run",
					"--source-dir", repo);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "not a git checkout");
	fb_exec_free(&r);
	write_text(file, "one\n");
	assert_int_equal(git(repo, "init", "-q", "."), 0);
	assert_int_equal(git(repo, "add", "tracked.txt", NULL), 0);
	assert_int_equal(git(repo, "commit", "-qm", "one"), 0);

	r = FBRUN("--fencebench", "build/fencebench", "-o", out, "--dry-run", "--source-dir", repo);
	expect_ok(&r, "fbrun --dry-run, clean tree");
	assert_contains(r.out, "build/fencebench run headline --repetitions 3 --format json --out ");
	assert_contains(r.out, "/runs/idle.json -q\n");
	struct catalog c;
	read_catalog(&c);
	assert_int_equal(fb_count_lines(r.out), c.nrun);   /* one line per RUNS entry */
	fb_exec_free(&r);

	write_text(file, "two\n");
	r = FBRUN("--fencebench", "build/fencebench", "-o", out, "--dry-run", "--source-dir", repo);
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_contains(r.err, "uncommitted changes to tracked.txt");
	assert_contains(r.err, "ALLOW_DIRTY=1");
	fb_exec_free(&r);
	r = FBRUN("--fencebench", "build/fencebench", "-o", out, "--dry-run", "--allow-dirty", "--quick",
		  "--source-dir", repo);
	expect_ok(&r, "fbrun --dry-run --allow-dirty");
	assert_contains(r.out, "--repetitions 1 ");
	fb_exec_free(&r);
	assert_int_equal(access(out, F_OK), -1);                  /* a dry run writes nothing */
}

/* results/README.md: one row per published run, newest first, with its headline numbers. */
static void index_of_published_runs(void **state)
{
	need_python();
	const char *results = tmp_path("results");
	assert_int_equal(mkdir(results, 0755), 0);
	static const char *const runs[] = { "2026-01-02-testhost", "2026-01-05-testhost", "scratch" };
	char dir[PATH_MAX], cmd[PATH_MAX + 32];
	for (size_t i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", results, runs[i]);
		assert_int_equal(mkdir(dir, 0755), 0);
		if (i < 2) {               /* a run directory: report.md beside the JSON */
			snprintf(cmd, sizeof(cmd), "%s/report.md", dir);
			write_text(cmd, "# report\n");
		}
		snprintf(cmd, sizeof(cmd), "%s/headline.json", dir);
		char *s = fb_slurp(i == 1 ? fixture_changed("headline", NULL, NULL, 0, "def5678-dirty", "h.json")
				   : fixture("headline"));
		write_text(cmd, s);
		free(s);
	}
	struct fb_exec_result r = PLOT("--index", results);
	expect_ok(&r, "fbplot --index");
	fb_exec_free(&r);
	char *md = slurp_in(results, "README.md");
	const char *row = "| 2026-01-02 | testhost (2 × Test CPU, Linux test) | `abc1234` | 90.0% | 200 ns | "
			  "4 µs / 8 µs | 25 µs / 30 µs | 200 ns / 28 µs | 0 / 0 | "
			  "[report](2026-01-02-testhost/report.md) |";
	assert_contains(md, row);
	assert_contains(md, "| `def5678-dirty` (modified tree) |");
	assert_true(strstr(md, "2026-01-05-testhost/report.md") < strstr(md, "2026-01-02-testhost/report.md"));
	assert_lacks(md, "scratch");
	free(md);
}

/* `make report QUICK=1`: every scenario run, every figure drawn, both reports written. */
static void quick_report_end_to_end(void **state)
{
#ifdef FB_SANITIZER
	fb_skip("a sanitized fencebench makes the QUICK report slow; the release `make test` runs it");
#endif
	need_matplotlib();
	struct catalog c;
	read_catalog(&c);
	const char *fencebench = fencebench_path();
	const char *out = tmp_path("quick");
	struct fb_exec_result r = FBRUN("--fencebench", fencebench, "-o", out, "--quick", "--allow-dirty",
					"--reproduce", "make report QUICK=1");
	expect_ok(&r, "fbrun --quick");
	assert_contains(r.out, "fbplot: wrote ");
	fb_exec_free(&r);
	assert_every_figure(&c, out);
	char *md = slurp_in(out, "report.md");
	assert_contains(md, "| report | QUICK=1: fewer points and iterations");
	assert_contains(md, "| command | `make report QUICK=1` |");
	assert_contains(md, "- Lost wake-ups: 0 in every run.");
	free(md);
	char *html = slurp_in(out, "report.html");
	assert_int_equal(count_of(html, "<svg "), c.nfigure);
	free(html);
}

/* With repetitions, the median aggregate stands for each run (not the mean, not one repetition). */
static json_t *bench(const char *path, double p50, const char *agg)
{
	char name[96];
	snprintf(name, sizeof(name), "cpu-wait/path:%s%s%s", path, agg ? "_" : "", agg ? agg : "");
	json_t *b = json_pack("{s:s, s:s, s:i, s:f, s:f, s:f, s:{s:s, s:s, s:s, s:s, s:{}, s:{}, s:{s:s}}}",
			      "name", name, "run_type", agg ? "aggregate" : "iteration", "repetitions", 3,
			      "cpu_wait_count", 100.0, "cpu_wait_p50", p50, "cpu_wait_p50_limit", 20000.0,
			      "fencebench", "scenario", "cpu-wait", "section", "", "path", path, "point", "",
			      "params", "units", "limits", "cpu_wait_p50", "futex-wake");
	if (agg)
		json_object_set_new(b, "aggregate_name", json_string(agg));
	return b;
}

static void plot_median_of_repetitions(void **state)
{
	need_matplotlib();
	json_error_t err;
	json_t *doc = json_load_file(fixture("cpu-wait"), 0, &err);
	assert_non_null(doc);
	json_t *ctx = json_object_get(doc, "context"), *b = json_array();
	json_object_set_new(ctx, "repetitions", json_integer(3));
	static const char *const paths[] = { "native", "legacy" };
	for (int i = 0; i < 2; i++) {
		for (int rep = 0; rep < 3; rep++)
			json_array_append_new(b, bench(paths[i], 10000.0, NULL));
		json_array_append_new(b, bench(paths[i], 99000.0, "mean"));
		json_array_append_new(b, bench(paths[i], i ? 30000.0 : 25000.0, "median"));
		json_array_append_new(b, bench(paths[i], 1000.0, "stddev"));
	}
	json_object_set_new(doc, "benchmarks", b);
	const char *in = tmp_path("repeated.json"), *out = tmp_path("out-reps");
	assert_int_equal(json_dump_file(doc, in, JSON_INDENT(1)), 0);
	json_decref(doc);
	struct fb_exec_result r = PLOT("-o", out, "--formats", "png", in);
	expect_ok(&r, "fbplot on repetitions");
	fb_exec_free(&r);
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/cpu_wait.png", out);
	assert_png(p);
	snprintf(p, sizeof(p), "%s/cpu_wait.svg", out);
	assert_int_equal(access(p, F_OK), -1);             /* --formats png: no SVG */
	char *md = slurp_in(out, "report.md");
	assert_contains(md, "| cpu-wait | cpu_wait p50 | 25 µs | 30 µs | futex wake-to-run 20 µs | ×1.25 | ×1.5 |");
	assert_contains(md, "_Not drawn: no irq-suppression result among the inputs._");
	free(md);
}

static void plot_missing_input(void **state)
{
	need_python();
	const char *out = tmp_path("out-missing"), *nofile = tmp_path("no-such.json");
	struct fb_exec_result r = PLOT("-o", out, nofile);
	assert_int_equal(r.status, 2);
	assert_int_equal(fb_count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "no-such.json: no such file"));
	assert_int_equal(access(out, F_OK), -1);     /* nothing written, not even the directory */
	fb_exec_free(&r);
}

struct bad_input {
	const char *text;
	const char *says;     /* what the one error line must contain */
};

static const struct bad_input bad_inputs[] = {
	{ "{\"context\": {}, \"benchmarks\": [", "not valid JSON (line 1" },
	{ "", "empty file" },
	{ "[1, 2]", "not a fencebench result file" },
	{ "{\"context\": {}, \"benchmarks\": []}", "\"benchmarks\" array is empty" },
	{ "{\"context\": {}, \"benchmarks\": [{\"name\": \"x\"}]}", "has no \"fencebench\" block" },
};

static void plot_malformed_input(void **state)
{
	need_python();
	const char *out = tmp_path("out-bad"), *bad = tmp_path("bad.json");
	char old[PATH_MAX];
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(old, sizeof(old), "%s/report.md", out);
	write_text(old, "previous report\n");
	for (size_t i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]); i++) {
		write_text(bad, bad_inputs[i].text);
		/* a good file first: the bad one is named, not the first */
		struct fb_exec_result r = PLOT("-o", out, fixture("limits"), bad);
		if (r.status != 2 || fb_count_lines(r.err) != 1 || !strstr(r.err, "bad.json: ") ||
		    !strstr(r.err, bad_inputs[i].says))
			fail_msg("input %zu: exit %d, stderr: %s(wanted exit 2, one line naming bad.json: %s)",
				 i, r.status, r.err, bad_inputs[i].says);
		fb_exec_free(&r);
		char *s = fb_slurp(old);
		assert_string_equal(s, "previous report\n");      /* the old output untouched */
		free(s);
		assert_int_equal(dir_entries(out), 1);             /* no partial output, no temporaries */
	}
}

static void plot_usage(void **state)
{
	need_python();
	struct fb_exec_result r = PLOT("--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: fbplot.py"));
	assert_non_null(strstr(r.out, "--out-dir"));
	assert_non_null(strstr(r.out, "--allow-dirty"));
	assert_non_null(strstr(r.out, "Exit status"));
	fb_exec_free(&r);
	static const char *const bad[][2] = { { "--formats", "pdf" }, { "--only", "no_such_figure" } };
	for (size_t i = 0; i < 2; i++) {
		r = PLOT(bad[i][0], bad[i][1], tmp_path("x.json"));
		assert_int_equal(r.status, 2);
		assert_int_equal(fb_count_lines(r.err), 1);
		assert_non_null(strstr(r.err, bad[i][0]));
		fb_exec_free(&r);
	}
}

/* ---- fixture ---- */

FB_TEST_FIXTURES(NULL, 0, tmpdir)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plot_every_figure_and_the_report),
		cmocka_unit_test(every_scenario_has_a_figure),
		cmocka_unit_test(readings_follow_the_numbers),
		cmocka_unit_test(preempt_readings_follow_the_numbers),
		cmocka_unit_test(workload_readings_follow_the_numbers),
		cmocka_unit_test(timeline_reading_follows_the_trace),
		cmocka_unit_test(modified_tree_refused),
		cmocka_unit_test(fbrun_refuses_a_modified_tree),
		cmocka_unit_test(index_of_published_runs),
		cmocka_unit_test(quick_report_end_to_end),
		cmocka_unit_test(plot_median_of_repetitions),
		cmocka_unit_test(plot_missing_input),
		cmocka_unit_test(plot_malformed_input),
		cmocka_unit_test(plot_usage),
		cmocka_unit_test(model_beside_a_real_gpu),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
