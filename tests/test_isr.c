/* tests/test_isr.c — the isr-scaling payload variants and the log-overrun
 * scenario, by their counts (never their timings): what the interrupt
 * handler read per interrupt (fence values, log entries), overruns,
 * fallbacks, lost wake-ups; the parameters the scenarios refuse.  The
 * scenarios run as a user runs them (build/fencebench, JSON out); the rig's
 * lost-wake-up detector is shown to fail on a protocol without the overrun
 * fallback. */
#include <jansson.h>

#include "tests/fb_test.h"
#include "tests/fb_test_exec.h"
#include "benchmarks/fence_rig.h"

static char fencebench[PATH_MAX + 16];
static char tmpdir[] = "/tmp/fb_test_isr.XXXXXX";

FB_TEST_FIXTURES(fencebench, sizeof(fencebench), tmpdir)

/* Run fencebench with args (NULL-terminated) and --format json --out; the
 * exit status in *status, the result file parsed (NULL when it failed). */
static json_t *run_json(const char *const *args, int *status, char **err)
{
	const char *argv[64] = { fencebench };
	size_t n = 1;
	for (; args[n - 1]; n++)
		argv[n] = args[n - 1];
	const char *out = fb_tmp_path(tmpdir, "r.json");
	remove(out);
	argv[n++] = "--format";
	argv[n++] = "json";
	argv[n++] = "--out";
	argv[n++] = out;
	argv[n++] = "--warmup";
	argv[n++] = "0";
	argv[n] = NULL;
	struct fb_exec_result r = fb_exec(tmpdir, argv, FB_EXEC_SEPARATE);
	assert_int_not_equal(r.status, -1);
	*status = r.status;
	if (err)
		*err = r.err ? strdup(r.err) : strdup("");
	fb_exec_free(&r);
	return r.status == 0 ? json_load_file(out, 0, NULL) : NULL;
}
#define RUN_JSON(st, err, ...) run_json((const char *const[]){ __VA_ARGS__, NULL }, st, err)

/* Counter `name` of the result whose run_name is `run`; fails the test when absent. */
static double counter(json_t *j, const char *run, const char *name)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(j, "benchmarks"), i, b) {
		if (strcmp(json_string_value(json_object_get(b, "run_name")), run))
			continue;
		json_t *v = json_object_get(b, name);
		if (!json_is_number(v))
			fail_msg("%s: no counter %s", run, name);
		return json_number_value(v);
	}
	fail_msg("no result %s", run);
	return 0;
}

#define ISR(p, fences, payload) "isr-scaling/path:" p "/fences:" fences "/payload:" payload

/* The optimized interrupt: the payload names the queue, the OS reads that
 * queue's new entries (the signal and the runtime's progress write before
 * it) and no fence value; nothing overruns, every waiter released from the
 * log. */
static void isr_log_reads_only_its_queue_log(void **state)
{
	int st;
	/* 40 signals write 80 entries (each with its progress write) into the
	 * default log of 100: no overrun, however late the interrupt thread
	 * runs.  (With 100 signals, 200 entries, an interrupt thread starved by
	 * other load let the application run ahead on self-released waits, the
	 * log overran as the seed permits, and the fallback scan was counted:
	 * right behaviour, a wrong test; overruns have tests of their own.) */
	json_t *j = RUN_JSON(&st, NULL, "run", "isr-scaling", "--set", "fences=300", "--set", "payload=log",
			     "--path", "native", "--iterations", "40");
	assert_int_equal(st, 0);
	const char *n = ISR("native", "300", "log");
	/* one interrupt a waited signal; one fewer now and then when the OS,
	 * still reading the log for the previous one, finds the next entry and
	 * releases its waiter before the CMP compares (MonitoredValue moved on) */
	double irqs = counter(j, n, "interrupts");
	assert_true(irqs >= 38 && irqs <= 40);
	assert_int_equal(counter(j, n, "fences_scanned_per_irq"), 0);
	double e = counter(j, n, "log_entries_per_irq") * irqs;   /* entries read in all */
	assert_true(e >= 78.5 && e <= 80.5);   /* the last progress entry may be read by no interrupt */
	assert_int_equal(counter(j, n, "log_overruns"), 0);
	assert_int_equal(counter(j, n, "log_fallbacks"), 0);
	assert_int_equal(counter(j, n, "log_released"), 40);
	assert_int_equal(counter(j, n, "lost_wakeups"), 0);
	json_decref(j);
}

/* The fence array reads one fence value per interrupt; NULL and the legacy
 * scan read every waited fence (the 300 idle ones + the signaled one). */
static void isr_array_one_fence_null_and_legacy_scan_all(void **state)
{
	int st;
	json_t *j = RUN_JSON(&st, NULL, "sweep", "isr-scaling", "--set", "fences=300", "--grid", "payload=array,null",
			     "--iterations", "50");
	assert_int_equal(st, 0);
	assert_int_equal(counter(j, ISR("native", "300", "array"), "fences_scanned_per_irq"), 1);
	assert_int_equal(counter(j, ISR("native", "300", "null"), "fences_scanned_per_irq"), 301);
	assert_int_equal(counter(j, ISR("legacy", "300", "array"), "fences_scanned_per_irq"), 301);
	assert_int_equal(counter(j, ISR("native", "300", "array"), "log_entries_per_irq"), 0);
	assert_int_equal(counter(j, ISR("native", "300", "null"), "lost_wakeups"), 0);
	assert_int_equal(counter(j, ISR("legacy", "300", "array"), "lost_wakeups"), 0);
	json_decref(j);
}

/* log-overrun: a one-entry log overruns at every interrupt that finds new
 * entries; the OS falls back to reading every fence and loses no waiter. */
static void isr_log_overrun_falls_back_nothing_lost(void **state)
{
	int st;
	json_t *j = RUN_JSON(&st, NULL, "run", "isr-scaling", "--set", "fences=100", "--set", "payload=log-overrun",
			     "--path", "native", "--iterations", "50");
	assert_int_equal(st, 0);
	const char *n = ISR("native", "100", "log-overrun");
	assert_true(counter(j, n, "log_overruns") > 0);
	assert_int_equal(counter(j, n, "log_fallbacks"), counter(j, n, "log_overruns"));
	assert_true(counter(j, n, "fences_scanned_per_irq") > 0);
	assert_int_equal(counter(j, n, "log_entries_per_irq"), 0);   /* an overrun log is not read */
	assert_int_equal(counter(j, n, "waited_signals"), 50);
	assert_int_equal(counter(j, n, "lost_wakeups"), 0);
	json_decref(j);
}

#define OVR(bytes, rate) "log-overrun/log_bytes:" bytes "/rate:" rate

/* log-overrun: 100 signals per CPU wait (200 entries with the progress
 * writes) overrun an 11-entry log at every read and fit a 408-entry one;
 * 2 signals per wait (4 entries, 5 with a progress write racing the read)
 * fit both.  A log that holds exactly what lands between two reads counts
 * as overrun when one more entry races the read (the OS cannot tell it
 * from an overwrite), so the sizes keep a margin. */
static void log_overrun_follows_log_size_and_rate(void **state)
{
	int st;
	json_t *j = RUN_JSON(&st, NULL, "sweep", "log-overrun", "--grid", "log_bytes=504,16384",
			     "--grid", "rate=2000,100000", "--iterations", "400");
	assert_int_equal(st, 0);
	/* lost first: a lost waiter's CPU signal lets the run go on without the
	 * OS reading the log, which would show as overruns below */
	const char *runs[] = { OVR("504", "2000"), OVR("504", "100000"), OVR("16384", "2000"), OVR("16384", "100000") };
	for (int i = 0; i < 4; i++)
		assert_int_equal(counter(j, runs[i], "lost_wakeups"), 0);
	assert_int_equal(counter(j, OVR("504", "100000"), "log_capacity"), 11);
	assert_int_equal(counter(j, OVR("504", "100000"), "interrupts"), 4);
	/* every read but the first (the warm-up's leftovers aside) overruns */
	assert_true(counter(j, OVR("504", "100000"), "log_overruns") >= 3);
	assert_true(counter(j, OVR("504", "100000"), "log_overruns_per_1000_signals") >= 7.5);
	assert_int_equal(counter(j, OVR("504", "100000"), "log_fallbacks"),
			 counter(j, OVR("504", "100000"), "log_overruns"));
	assert_int_equal(counter(j, OVR("16384", "100000"), "log_overruns"), 0);
	assert_int_equal(counter(j, OVR("16384", "100000"), "log_released"), 4);
	assert_int_equal(counter(j, OVR("504", "2000"), "log_overruns"), 0);
	assert_int_equal(counter(j, OVR("16384", "2000"), "log_overruns"), 0);
	assert_int_equal(counter(j, OVR("504", "2000"), "signals_per_wait"), 2);
	json_decref(j);
}

/* Parameters that make no sense are refused with one clear line. */
static void log_overrun_refuses_senseless_parameters(void **state)
{
	int st;
	char *err;
	assert_null(RUN_JSON(&st, &err, "run", "log-overrun", "--set", "rate=100", "--set", "wait_us=1000"));
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(err, "signals per CPU wait: under one"));
	free(err);
	assert_null(RUN_JSON(&st, &err, "run", "log-overrun", "--set", "rate=1000000", "--set", "wait_us=10000",
			     "--iterations", "100"));
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(err, "more than the 100 signals of the run"));
	free(err);
	assert_null(RUN_JSON(&st, &err, "run", "log-overrun", "--set", "log_bytes=100"));
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(err, "log_bytes"));
	free(err);
	assert_null(RUN_JSON(&st, &err, "run", "isr-scaling", "--set", "fences=100001"));
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(err, "fences"));
	free(err);
	assert_null(RUN_JSON(&st, &err, "run", "isr-scaling", "--set", "payload=log-overrun-x"));
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(err, "payload"));
	free(err);
}

/* The detector behind "lost wake-ups: 0": the rig on a one-entry log whose
 * overruns the OS does not fall back from (OS_FAULT_NO_LOG_FALLBACK) counts
 * the waiters it loses, and ends (each freed by a CPU signal). */
static uint64_t overrun_rig_lost(enum os_fault fault)
{
	struct os_config cfg;
	rig_config(&cfg, RIG_FENCE_NATIVE);
	cfg.caps.engines = 1;
	cfg.caps.payload = HW_PAYLOAD_OPTIMIZED;
	cfg.fault = fault;
	struct rig_irq_params p = {
		.path = RIG_FENCE_NATIVE, .signals = 10, .waited_fraction = 1.0, .cfg = &cfg,
		.deadline_ns = 20000000, .user_mode = true,
		.log_bytes = HW_LOG_HEADER_BYTES + sizeof(struct hw_log_entry),
	};
	struct rig_irq_result r;
	char err[256];
	assert_int_equal(rig_irq_run(&p, &r, err, sizeof(err)), 0);
	fb_hist_free(r.wait_lat);
	assert_int_equal(r.waited, 10);
	assert_true(r.os.log_overruns > 0);
	return r.lost_wakeups;
}

static void overrun_rig_counts_lost_without_fallback(void **state)
{
	assert_int_equal(overrun_rig_lost(OS_FAULT_NONE), 0);
	assert_true(overrun_rig_lost(OS_FAULT_NO_LOG_FALLBACK) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(isr_log_reads_only_its_queue_log),
		cmocka_unit_test(isr_array_one_fence_null_and_legacy_scan_all),
		cmocka_unit_test(isr_log_overrun_falls_back_nothing_lost),
		cmocka_unit_test(log_overrun_follows_log_size_and_rate),
		cmocka_unit_test(log_overrun_refuses_senseless_parameters),
		cmocka_unit_test(overrun_rig_counts_lost_without_fallback),
	};
	return cmocka_run_group_tests_name(__FILE__, tests, setup, teardown);
}
