/* tests/test_layers.c — scripts/check-layers.sh: includes point down the layers.
 *
 * The real tree must pass.  Then the script is handed fake trees in a mkdtemp
 * directory (the real tree is never touched): a clean one that must pass, and
 * the same tree with one upward include planted, per rule — hw including os,
 * os including runtime, lockfree including the harness, gpu-model including
 * src/ and benchmarks/, src/ including gpu-model/ and benchmarks/, a
 * *_internal.h included from another folder — each of which must fail with
 * exit 1 and a line naming the file, the line and the include.
 *
 * The script and the source root are compiled in by mk/layers.mk
 * (FB_LAYERS_SCRIPT, FB_SOURCE_ROOT).
 */
#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"

#include <string.h>
#include <sys/stat.h>

#ifndef FB_LAYERS_SCRIPT
#define FB_LAYERS_SCRIPT "scripts/check-layers.sh"
#endif
#ifndef FB_SOURCE_ROOT
#define FB_SOURCE_ROOT "."
#endif

static char tmpdir[] = "/tmp/fb_test_layers.XXXXXX";

/* The fake tree: one file per layer, each including only what it may. */
static const char *const clean_tree[][2] = {
	{ "lockfree/ring.h", "#include <stddef.h>\n" },
	{ "lockfree/ring.c", "#include \"lockfree/ring.h\"\n" },
	{ "gpu-model/hw/hw.h", "#include \"lockfree/ring.h\"\n" },
	{ "gpu-model/hw/hw_internal.h", "#include \"gpu-model/hw/hw.h\"\n" },
	{ "gpu-model/hw/engine.c", "#include \"gpu-model/hw/hw_internal.h\"\n" },
	{ "gpu-model/os/os.h", "#include \"gpu-model/hw/hw.h\"\n" },
	{ "gpu-model/os/fence.c", "#include \"gpu-model/os/os.h\"\n#include \"lockfree/ring.h\"\n" },
	{ "gpu-model/runtime/rt.h", "#include \"gpu-model/os/os.h\"\n" },
	{ "src/fb_scenario.h", "#include \"lockfree/ring.h\"\n" },
	{ "src/fb_app.c", "#include \"src/fb_scenario.h\"\n" },
	{ "benchmarks/scenarios/fence.c", "#include \"gpu-model/runtime/rt.h\"\n#include \"src/fb_scenario.h\"\n" },
	{ "tests/test_x.c", "#include \"benchmarks/fence_rig.h\"\n#include \"gpu-model/os/os.h\"\n" },
};


/* A fresh fake tree under tmpdir/name: the clean tree, plus (when file is not
 * NULL) a first line `#include "inc"` in file. */
static const char *make_tree(const char *name, const char *file, const char *inc)
{
	const char *root = fb_tmp_path(tmpdir, name);
	assert_int_equal(mkdir(root, 0755), 0);
	for (size_t i = 0; i < sizeof(clean_tree) / sizeof(clean_tree[0]); i++)
		fb_write_file(root, clean_tree[i][0], clean_tree[i][1]);
	if (file) {
		char text[512];
		snprintf(text, sizeof(text), "#include \"%s\"\n#include <stdint.h>\n", inc);
		fb_write_file(root, file, text);
	}
	return root;
}

static struct fb_exec_result check(const char *root)
{
	const char *argv[] = { "/bin/sh", FB_LAYERS_SCRIPT, root, NULL };
	return fb_exec(tmpdir, argv, FB_EXEC_MERGED);
}

static void the_real_tree_has_no_upward_include(void **state)
{
	struct fb_exec_result r = check(FB_SOURCE_ROOT);
	if (r.status != 0)
		printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "check-layers: ok"));
	fb_exec_free(&r);
}

static void a_tree_whose_includes_point_down_passes(void **state)
{
	struct fb_exec_result r = check(make_tree("clean", NULL, NULL));
	if (r.status != 0)
		printf("%s", r.out ? r.out : "(no output)\n");
	assert_int_equal(r.status, 0);
	fb_exec_free(&r);
}

/* Each planted include, and the words the script must say about it. */
static const struct {
	const char *file, *inc, *why;
} planted[] = {
	{ "gpu-model/hw/engine.c", "gpu-model/os/os.h", "layer hw may not include layer os" },
	{ "gpu-model/hw/hw.h", "gpu-model/runtime/rt.h", "layer hw may not include layer runtime" },
	{ "gpu-model/os/fence.c", "gpu-model/runtime/rt.h", "layer os may not include layer runtime" },
	{ "lockfree/ring.c", "src/fb_scenario.h", "layer lockfree may not include layer src" },
	{ "lockfree/ring.h", "gpu-model/hw/hw.h", "layer lockfree may not include layer hw" },
	{ "gpu-model/os/os.h", "src/fb_scenario.h", "layer os may not include layer src" },
	{ "gpu-model/runtime/rt.h", "benchmarks/fence_rig.h", "layer runtime may not include layer benchmarks" },
	{ "src/fb_app.c", "gpu-model/runtime/rt.h", "layer src may not include layer runtime" },
	{ "src/fb_scenario.h", "benchmarks/scenarios/table.h", "layer src may not include layer benchmarks" },
	{ "benchmarks/scenarios/fence.c", "tests/fb_test.h", "layer benchmarks may not include layer tests" },
	{ "gpu-model/os/fence.c", "gpu-model/hw/hw_internal.h", "a *_internal.h stays in its folder" },
	{ "tests/test_x.c", "gpu-model/hw/hw_internal.h", "a *_internal.h stays in its folder" },
};

static void every_planted_upward_include_is_caught(void **state)
{
	for (size_t i = 0; i < sizeof(planted) / sizeof(planted[0]); i++) {
		char name[32], want[256];
		snprintf(name, sizeof(name), "planted%zu", i);
		struct fb_exec_result r = check(make_tree(name, planted[i].file, planted[i].inc));
		snprintf(want, sizeof(want), "%s:1: includes %s (%s)", planted[i].file, planted[i].inc, planted[i].why);
		if (r.status != 1 || !r.out || !strstr(r.out, want))
			printf("planted %s in %s: status %d, output:\n%s", planted[i].inc, planted[i].file, r.status,
			       r.out ? r.out : "(none)\n");
		assert_int_equal(r.status, 1);
		assert_non_null(strstr(r.out, want));
		/* only the planted line is reported, besides the closing line */
		assert_int_equal(fb_count_lines(r.out), 2);
		fb_exec_free(&r);
	}
}

FB_TEST_FIXTURES(NULL, 0, tmpdir)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_real_tree_has_no_upward_include),
		cmocka_unit_test(a_tree_whose_includes_point_down_passes),
		cmocka_unit_test(every_planted_upward_include_is_caught),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
