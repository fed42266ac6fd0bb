/* tests/test_docs.c — scripts/check-docs.py: a clone refers only to what it holds.
 *
 * The real tree must pass.  Then the script is handed fake trees in a mkdtemp
 * directory (the real tree is never touched): a clean one that must pass (a
 * seed map, links to tracked files and folders, public addresses, anchors,
 * a link inside a code block, a section cited that exists), and the same tree
 * with one bad reference planted per rule — a link leaving the repository, to
 * a missing file, an absolute path, a reference definition, an image, a
 * scheme other than http/https/mailto, a missing document cited by name, a
 * missing section, a short name not in the seed map, a seed's own file name, a
 * folder outside the repository, a DESIGN.md without its seed map, and (in a
 * git work tree) a link to a file that exists but is not tracked — each of
 * which must fail with exit 1 and a line naming the file, the line and why.
 *
 * The seed-requirements ledger: a proof naming a test that does not exist or
 * is not run, a proven row without a test, an open row without a reason, a
 * seed not in the map, a repeated id, and feature-table counts that differ or are
 * missing are each caught.
 *
 * Then scripts/plot/fbreading.py: it reads the reference machine from this
 * tree's DESIGN.md, and names DESIGN.md in a report only when it can.
 *
 * The strings planted below are cut in two ("seed " "x") so that this file
 * does not itself cite what it plants.  Paths come from mk/docs.mk.
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#ifndef FB_DOCS_SCRIPT
#define FB_DOCS_SCRIPT "scripts/check-docs.py"
#endif
#ifndef FB_SOURCE_ROOT
#define FB_SOURCE_ROOT "."
#endif
#ifndef FB_REFERENCE_SCRIPT
#define FB_REFERENCE_SCRIPT "scripts/check-reference.py"
#endif
#ifndef FB_RUN_DOCS_SCRIPT
#define FB_RUN_DOCS_SCRIPT "scripts/run-docs.py"
#endif
#ifndef FB_DOCS_PYTHON
#define FB_DOCS_PYTHON "/usr/bin/python3"
#endif

static char tmpdir[] = "/tmp/fb_test_docs.XXXXXX";

static const char design_md[] =
	"# design\n\n## Layers\n\ntext\n\n## The design documents the model follows\n\n"
	"| short name | document |\n|---|---|\n"
	"| `native-gpu-fence` | *Native GPU fence object* |\n"
	"| `gpu-preemption` | *GPU preemption* |\n";

/* The clean fake tree: every reference resolves. */
static const char *const clean_tree[][2] = {
	{ "DESIGN.md", design_md },
	{ "README.md", "# r\n\nSee [the design](DESIGN.md), [its layers](DESIGN.md#layers), [src](src),\n"
		       "[up](#r), <https://example.org> and [docs](https://learn.microsoft.com/x).\n"
		       "![fig](results/run/fig.png)\n\n```\n[not a link](nowhere.md)\n```\n"
		       "Inline `[code](nowhere.md)` is not a link.\n[ref]: src/x.c\n" },
	{ "results/README.md", "[a run](run/report.md)\n" },
	/* a published run's text is history: not checked */
	{ "results/run/report.md", "[old](../../gone.md) STYLE" ".md\n" },
	{ "results/run/fig.png", "\x89PNG\x00\x01" },
	{ "src/x.c", "/* seed native-gpu-fence, \"Current value\"; DESIGN.md, \"Layers\"; README.md */\n" },
};


/* A fresh fake tree tmpdir/name: the clean tree, then (file not NULL) file
 * replaced by text. */
static const char *make_tree(const char *name, const char *file, const char *text)
{
	const char *root = fb_tmp_path(tmpdir, name);
	assert_int_equal(mkdir(root, 0755), 0);
	for (size_t i = 0; i < sizeof(clean_tree) / sizeof(clean_tree[0]); i++)
		fb_write_file(root, clean_tree[i][0], clean_tree[i][1]);
	if (file)
		fb_write_file(root, file, text);
	return root;
}

static struct fb_exec_result check(const char *root)
{
	const char *argv[] = { FB_DOCS_PYTHON, FB_DOCS_SCRIPT, root, NULL };
	return fb_exec(tmpdir, argv, FB_EXEC_MERGED);
}

static void the_real_tree_refers_only_to_what_it_holds(void **state)
{
	struct fb_exec_result r = check(FB_SOURCE_ROOT);
	if (r.status != 0)
		printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "check-docs: ok"));
	/* the seed-requirements ledger was read and checked */
	assert_non_null(strstr(r.out, " seed requirements)"));
	fb_exec_free(&r);
}

static void a_tree_whose_references_resolve_passes(void **state)
{
	struct fb_exec_result r = check(make_tree("clean", NULL, NULL));
	if (r.status != 0)
		printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 0);
	/* 4 text files (the figure is binary); README's six links and one
	 * reference definition, results/README.md's one */
	if (!strstr(r.out, "check-docs: ok (4 files, 8 links)")) printf("%s", r.out);
	assert_non_null(strstr(r.out, "check-docs: ok (4 files, 8 links)"));
	fb_exec_free(&r);
}

/* Each planted text, the file it goes in, and the line check-docs must print. */
static const struct {
	const char *file, *text, *want;
} planted[] = {
	{ "README.md", "[x](../outside.md)\n", "README.md:1: link ../outside.md (points outside the repository)" },
	{ "README.md", "text\n[x](docs/gone.md#part)\n", "README.md:2: link docs/gone.md#part (no such file in the repository)" },
	{ "README.md", "[x](/etc/hosts)\n", "README.md:1: link /etc/hosts (an absolute path" },
	{ "README.md", "[r]: src/gone.c\n", "README.md:1: link src/gone.c (no such file in the repository)" },
	{ "README.md", "![f](results/run/gone.png)\n", "README.md:1: link results/run/gone.png (no such file" },
	{ "README.md", "[f](ftp://example.org/x)\n", "README.md:1: link ftp://example.org/x (only http, https and mailto" },
	{ "results/README.md", "[r](../../x/report.md)\n", "results/README.md:1: link ../../x/report.md (points outside" },
	{ "src/x.c", "/* as STYLE" ".md asks */\n", "src/x.c:1: STYLE" ".md (no such document in the repository)" },
	{ "src/x.c", "/* DESIGN.md, \"Metrics\" */\n", "src/x.c:1: DESIGN.md, \"Metrics\" (DESIGN.md has no section of that title)" },
	{ "src/x.c", "/* seed " "made-up-doc */\n", "src/x.c:1: seed " "made-up-doc (not a short name of DESIGN.md's seed map)" },
	{ "src/x.c", "/* native-gpu-fence" ".txt */\n", "src/x.c:1: native-gpu-fence" ".txt (a seed's file is not in the repository" },
	{ "src/x.c", "# see ../" "shared/x\n", "src/x.c:1: ../" "shared (a folder outside the repository" },
	{ "src/x.c", "# see docs/" "shared/" "seeds/x\n", "src/x.c:1: shared/" "seeds (a folder outside the repository" },
	{ "DESIGN.md", "# design\n\n## Layers\n\nno map\n", "DESIGN.md:1: seed map (DESIGN.md has no table" },
};

static void every_planted_bad_reference_is_caught(void **state)
{
	for (size_t i = 0; i < sizeof(planted) / sizeof(planted[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "planted%zu", i);
		struct fb_exec_result r = check(make_tree(name, planted[i].file, planted[i].text));
		if (r.status != 1 || !r.out || !strstr(r.out, planted[i].want))
			printf("planted %s: status %d, output:\n%s", planted[i].text, r.status, r.out ? r.out : "(none)\n");
		assert_int_equal(r.status, 1);
		assert_non_null(strstr(r.out, planted[i].want));
		/* only the planted problem, then "check-docs: 1 problem(s)" */
		if (fb_count_lines(r.out) != 2) printf("%s", r.out);
		assert_int_equal(fb_count_lines(r.out), 2);
		assert_non_null(strstr(r.out, "check-docs: 1 problem(s)"));
		fb_exec_free(&r);
	}
}

/* The seed-requirements ledger (tests/seed-requirements.md): a fake tree
 * with a ledger of three rows, the test file its proven row names, and the
 * feature table's row with its counts; then one fault at a time. */
static const char ledger_ok[] =
	"# ledger\n\n| # | seed | requirement | status | proof |\n|---|---|---|---|---|\n"
	"| M1 | native-gpu-fence | a rule | proven | `tests/test_x.c:a_rule_holds` |\n"
	"| M2 | gpu-preemption | another | missing | the model has no such thing |\n"
	"| U1 | native-gpu-fence | a third | unproven | built; no test checks it |\n";
static const char ledger_test[] =
	"static void a_rule_holds(void **state) {}\nstatic void not_run(void **state) {}\n"
	"int main(void) { const struct CMUnitTest t[] = { cmocka_unit_test(a_rule_holds) }; }\n";
static const char ledger_features[] =
	"# r\n\n| mechanism | seed | status | proof |\n|---|---|---|---|\n"
	"| seed requirements | all | 1 proven, 1 built but unproven, 1 missing | the ledger |\n";

static struct fb_exec_result check_ledger_tree(const char *name, const char *ledger, const char *features)
{
	const char *root = make_tree(name, "tests/test_x.c", ledger_test);
	fb_write_file(root, "tests/seed-requirements.md", ledger);
	fb_write_file(root, "docs/features.md", features);
	return check(root);
}

/* ledger_ok with `from` replaced by `to` (from NULL: as it is), in buf */
static const char *ledger_with(char *buf, size_t len, const char *from, const char *to)
{
	if (!from)
		return ledger_ok;
	const char *at = strstr(ledger_ok, from);
	assert_non_null(at);
	snprintf(buf, len, "%.*s%s%s", (int)(at - ledger_ok), ledger_ok, to, at + strlen(from));
	return buf;
}

static void the_seed_requirements_ledger_is_checked(void **state)
{
	struct fb_exec_result r = check_ledger_tree("ledger-ok", ledger_ok, ledger_features);
	if (r.status != 0) printf("%s", r.out);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, ", 3 seed requirements)"));
	fb_exec_free(&r);
	const struct { const char *from, *to, *features, *want; } bad[] = {
		{ "a_rule_holds`", "no_such_test`", ledger_features, "tests/test_x.c defines no test function no_such_test" },
		{ "a_rule_holds`", "not_run`", ledger_features, "tests/test_x.c does not run not_run" },
		{ "`tests/test_x.c:a_rule_holds`", "it works", ledger_features, "M1 (proven, but names no test" },
		{ "the model has no such thing", "-", ledger_features, "M2 (missing, but gives no reason)" },
		{ "| gpu-preemption |", "| made-up |", ledger_features, "M2 made-up (not a short name" },
		{ "| U1 |", "| M2 |", ledger_features, "M2 (a second row with this id)" },
		{ NULL, NULL, "# r\n\n| seed requirements | all | 2 proven, 1 built but unproven, 0 missing | x |\n",
		  "docs/features.md:3: 2 proven, 1 built but unproven, 0 missing (the ledger has 1 proven, 1 built but unproven, 1 missing)" },
		{ NULL, NULL, "# r\n", "docs/features.md:1: seed requirements (no feature-table row" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char name[32], buf[1024];
		snprintf(name, sizeof(name), "ledger%zu", i);
		r = check_ledger_tree(name, ledger_with(buf, sizeof(buf), bad[i].from, bad[i].to), bad[i].features);
		if (r.status != 1 || !strstr(r.out, bad[i].want))
			printf("ledger case %zu: status %d, output:\n%s", i, r.status, r.out ? r.out : "(none)\n");
		assert_int_equal(r.status, 1);
		assert_non_null(strstr(r.out, bad[i].want));
		fb_exec_free(&r);
	}
}

static int git(const char *dir, const char *a, const char *b)
{
	const char *argv[] = { "/usr/bin/git", "-C", dir, a, b, NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_MERGED);
	int st = r.status;
	fb_exec_free(&r);
	return st;
}

/* In a git work tree only tracked files count: a clone has nothing else. */
static void a_link_to_an_untracked_file_is_caught(void **state)
{
	if (access("/usr/bin/git", X_OK) != 0)
		fb_skip("no /usr/bin/git");
	const char *root = make_tree("git", NULL, NULL);
	assert_int_equal(git(root, "init", "-q"), 0);
	assert_int_equal(git(root, "add", "."), 0);
	struct fb_exec_result r = check(root);
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
	fb_write_file(root, "notes/local.md", "mine\n");
	fb_write_file(root, "README.md", "[notes](notes/local.md)\n");
	r = check(root);
	if (r.status != 1)
		printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "README.md:1: link notes/local.md (not tracked: a clone does not have it)"));
	fb_exec_free(&r);
}

/* Run python code with scripts/plot on its path; its output. */
static struct fb_exec_result python(const char *code)
{
	char prog[2048];
	snprintf(prog, sizeof(prog), "import sys; sys.path.insert(0, '%s/scripts/plot'); %s", FB_SOURCE_ROOT, code);
	const char *argv[] = { FB_DOCS_PYTHON, "-c", prog, NULL };
	return fb_exec(tmpdir, argv, FB_EXEC_MERGED);
}

/* The reference machine a report compares against is the table in this
 * tree's DESIGN.md; without that file the report does not name it. */
static void reports_name_the_reference_machine_only_where_design_md_has_it(void **state)
{
	struct fb_exec_result r = python("import fbreading as r; print(r.reference_machine())");
	if (r.status != 0)
		printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "('cache-line round trip', 'cacheline_rtt_p50', 105.0)"));
	assert_non_null(strstr(r.out, "('bare syscall', 'syscall_p50', 220.0)"));
	assert_non_null(strstr(r.out, "('futex wake-to-run', 'futex_wake_p50', 34000.0)"));
	fb_exec_free(&r);

	char code[1024];
	snprintf(code, sizeof(code),
		 "import fbreading as r, fbresults as fr; f = fr.load_all(['%s/tests/plot/limits.json']); "
		 "print(r.limits(f)[1]); r.DESIGN = '%s/no-such-DESIGN.md'; print(r.limits(f)[1])",
		 FB_SOURCE_ROOT, tmpdir);
	r = python(code);
	if (r.status != 0)
		printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 0);
	char *second = strchr(r.out, '\n');
	assert_non_null(second);
	*second++ = 0;
	assert_non_null(strstr(r.out, "against the reference machine in DESIGN.md (\"Machine limits and the reference machine\""));
	assert_null(strstr(second, "DESIGN"));
	assert_non_null(strstr(second, "yardsticks every latency is read against."));
	fb_exec_free(&r);
}

FB_TEST_FIXTURES(NULL, 0, tmpdir)

/* The reference cannot drift: check-reference passes on this tree (the
 * binary, the manual page make built, README.md and docs/), and fails,
 * naming what is missing, on a manual page without a scenario's section and
 * a command, and on a guide without an option. */
static struct fb_exec_result check_reference(const char *man, const char *root)
{
	char bin[PATH_MAX + 32];
	fb_build_path(bin, sizeof(bin), "fencebench");
	fb_need_binary(bin);
	const char *argv[] = { FB_DOCS_PYTHON, FB_REFERENCE_SCRIPT, bin, man, root, NULL };
	return fb_exec(tmpdir, argv, FB_EXEC_MERGED);
}

/* text with every line that contains cut removed */
static char *without_lines(const char *text, const char *cut)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	assert_non_null(out);
	for (const char *line = text; *line;) {
		size_t len = strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n');
		char one[4096];
		snprintf(one, sizeof(one), "%.*s", (int)len, line);
		if (!strstr(one, cut)) {
			memcpy(o, line, len);
			o += len;
		}
		line += len;
	}
	*o = '\0';
	return out;
}

static void the_reference_names_what_the_binary_knows(void **state)
{
	char man[PATH_MAX + 32];
	fb_build_path(man, sizeof(man), "fencebench.1");
	struct fb_exec_result r = check_reference(man, FB_SOURCE_ROOT);
	if (r.status != 0) printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "check-reference: ok ("));
	fb_exec_free(&r);

	char *page = fb_slurp(man);
	assert_non_null(page);
	char *a = without_lines(page, ".SS selftest"), *b = without_lines(a, "doctor");
	fb_write_file(tmpdir, "ref/fencebench.1", b);
	free(a);
	free(b);
	free(page);
	char *readme = fb_slurp(FB_SOURCE_ROOT "/README.md");
	fb_write_file(tmpdir, "ref/README.md", readme);
	free(readme);
	char path[PATH_MAX];
	DIR *d = opendir(FB_SOURCE_ROOT "/docs");
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n < 4 || strcmp(e->d_name + n - 3, ".md"))
			continue;
		snprintf(path, sizeof(path), FB_SOURCE_ROOT "/docs/%s", e->d_name);
		char *text = fb_slurp(path);
		assert_non_null(text);
		char *cut = without_lines(text, "--seed");
		snprintf(path, sizeof(path), "ref/docs/%s", e->d_name);
		fb_write_file(tmpdir, path, cut);
		free(cut);
		free(text);
	}
	closedir(d);
	snprintf(man, sizeof(man), "%s/ref/fencebench.1", tmpdir);
	snprintf(path, sizeof(path), "%s/ref", tmpdir);
	r = check_reference(man, path);
	if (r.status != 1) printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "fencebench.1: scenario selftest (missing)"));
	assert_non_null(strstr(r.out, "fencebench.1: command doctor (missing)"));
	assert_non_null(strstr(r.out, "guide: option --seed (missing)"));
	assert_null(strstr(r.out, "guide: command doctor"));
	fb_exec_free(&r);
}

/* Documentation that runs: run-docs runs each `sh` block and no other, fails
 * naming the block that exits non-zero, and runs the guide's GNU parallel
 * example for real: four shards through Debian's parallel, then merge. */
static void documented_commands_run_and_a_failing_one_is_named(void **state)
{
	char root[PATH_MAX], build[PATH_MAX + 32], link[PATH_MAX + 16];
	snprintf(root, sizeof(root), "%s/run-docs", tmpdir);
	fb_write_file(root, "README.md",
		      "# r\n\n```sh\n"
		      "parallel -j2 build/fencebench sweep selftest --grid wait_ns=1000,2000 --grid shape=flat,ramp \\\n"
		      "    --shard {}/4 --format json --out s.json --resume -q ::: 0 1 2 3\n"
		      "build/fencebench merge s.shard*-of-4.json --out s.json\n"
		      "test \"$(grep -c '\"name\": \"selftest' s.json)\" -ge 4\n```\n"
		      "\n```text\nexit 7\n```\n");
	fb_write_file(root, "docs/bad.md", "# b\n\n```sh\ntrue\nexit 3\n```\n\n```\nexit 5\n```\n");
	fb_build_path(build, sizeof(build), "");
	build[strlen(build) - 1] = '\0';   /* the build tree, without the trailing slash */
	const char *const links[][2] = { { build, "build" }, { FB_SOURCE_ROOT "/benchmarks", "benchmarks" },
					 { FB_SOURCE_ROOT "/scripts", "scripts" }, { FB_SOURCE_ROOT "/results", "results" } };
	for (size_t i = 0; i < 4; i++) {
		snprintf(link, sizeof(link), "%s/%s", root, links[i][1]);
		assert_int_equal(symlink(links[i][0], link), 0);
	}
	const char *argv[] = { FB_DOCS_PYTHON, FB_RUN_DOCS_SCRIPT, root, NULL };
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_MERGED);
	if (r.status != 1) printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "README.md:3: ok"));
	assert_non_null(strstr(r.out, "docs/bad.md:3: FAILED (exit 3)"));
	assert_null(strstr(r.out, "exit 7"));
	assert_null(strstr(r.out, "exit 5)"));
	assert_non_null(strstr(r.out, "run-docs: 1 of 2 block(s) failed"));
	fb_exec_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_real_tree_refers_only_to_what_it_holds),
		cmocka_unit_test(a_tree_whose_references_resolve_passes),
		cmocka_unit_test(every_planted_bad_reference_is_caught),
		cmocka_unit_test(the_seed_requirements_ledger_is_checked),
		cmocka_unit_test(a_link_to_an_untracked_file_is_caught),
		cmocka_unit_test(reports_name_the_reference_machine_only_where_design_md_has_it),
		cmocka_unit_test(the_reference_names_what_the_binary_knows),
		cmocka_unit_test(documented_commands_run_and_a_failing_one_is_named),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
