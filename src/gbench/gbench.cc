// src/gbench/gbench.cc — the C shim over Google Benchmark 1.7 (see gbench.h).
//
// Each C benchmark is registered as a lambda that wraps the benchmark::State
// of each of its threads in a gb_state on that thread's stack.  The hot loop
// runs in C on gb_state.gb__left: the first gb_keep_running* takes Google
// Benchmark's whole grant with one KeepRunningBatch call (what its range-for
// StateIterator does), so each iteration costs a decrement and a branch.
//
// Registration records live in a function-local static: GB_BENCHMARK
// constructors may run before this file's dynamic initializers.

#include "src/gbench/gbench.h"

#include <benchmark/benchmark.h>

#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

// The C flag and unit values are Google Benchmark's, so they pass through.
static_assert(GB_COUNTER_IS_RATE == unsigned(benchmark::Counter::kIsRate), "flag");
static_assert(GB_COUNTER_AVG_THREADS == unsigned(benchmark::Counter::kAvgThreads), "flag");
static_assert(GB_COUNTER_ITERATION_INVARIANT ==
		      unsigned(benchmark::Counter::kIsIterationInvariant), "flag");
static_assert(GB_COUNTER_AVG_ITERATIONS == unsigned(benchmark::Counter::kAvgIterations), "flag");
static_assert(GB_COUNTER_INVERT == unsigned(benchmark::Counter::kInvert), "flag");
static_assert(int(GB_NS) == int(benchmark::kNanosecond) && int(GB_US) == int(benchmark::kMicrosecond) &&
		      int(GB_MS) == int(benchmark::kMillisecond) && int(GB_S) == int(benchmark::kSecond),
	      "time unit");

// gb_state.gb__phase: where the owning thread is in its run.
enum gb_phase {
	GB__BEFORE_LOOP = 0,  // zero: a fresh gb_state
	GB__IN_LOOP,          // Google's grant taken; gb__left counts down
	GB__AFTER_LOOP,       // gb_keep_running* returned false
	GB__SETUP,            // a setup/teardown hook's read-only view
};

[[noreturn]] __attribute__((format(printf, 2, 3))) void die(const char *what, const char *fmt, ...)
{
	va_list ap;
	std::fprintf(stderr, "gbench: %s: ", what);
	va_start(ap, fmt);
	std::vfprintf(stderr, fmt, ap);
	va_end(ap);
	std::fputc('\n', stderr);
	std::fflush(stderr);
	std::abort();
}

bool g_started;  // gb_main has begun: registration is closed (main thread only)

}  // namespace

struct gb_bench {
	std::string name;
	gb_fn fn;
	benchmark::internal::Benchmark *b;  // owned by Google Benchmark's registry
	size_t nargs;                       // length of each argument set; 0 = none
	bool min_time = false;              // gb_min_time was called: a command-line value replaces it
};

namespace {

std::deque<gb_bench> &registry()  // deque: records never move
{
	static std::deque<gb_bench> recs;
	return recs;
}

benchmark::State &state_of(const gb_state *st)
{
	if (!st || !st->gb__st)
		die("gb_state", "NULL or not a benchmark's state");
	return *static_cast<benchmark::State *>(st->gb__st);
}

const char *name_of(const gb_state *st)
{
	return st->gb__b ? st->gb__b->name.c_str() : "?";
}

// The state of a running benchmark thread, for calls that report or time: a
// setup/teardown hook's State has no timer and no thread manager.
benchmark::State &run_state(gb_state *st, const char *fn)
{
	benchmark::State &s = state_of(st);
	if (st->gb__phase == GB__SETUP)
		die(name_of(st), "%s called in a setup/teardown hook", fn);
	return s;
}

gb_bench *builder(gb_bench *b, const char *fn)
{
	if (!b)
		die(fn, "NULL gb_bench");
	if (g_started)
		die(fn, "%s: builders must run before gb_main", b->name.c_str());
	return b;
}

// A thread may leave its function before its loop ended only after
// gb_skip_with_error (Google Benchmark's own rule; on return its
// NotifyThreadComplete takes the thread out of the start/stop barrier, so the
// run's other threads do not wait for it).
void check_loop_ended(const gb_state *st, const benchmark::State &s)
{
	if (st->gb__phase != GB__AFTER_LOOP && !s.error_occurred())
		die(name_of(st), "returned before gb_keep_running() returned false");
}

void run_thread(const gb_bench *rec, benchmark::State &s)
{
	gb_state st = {0, &s, rec, GB__BEFORE_LOOP};
	rec->fn(&st);
	check_loop_ended(&st, s);
}

// ---- setup/teardown: Google Benchmark takes a plain function pointer with
// no user data, so each hook gets its own trampoline from a fixed table. ----

struct hook {
	gb_setup_fn fn;
	const gb_bench *rec;
};
constexpr size_t k_max_hooks = 256;
hook g_hooks[k_max_hooks];  // zero-initialized; filled before gb_main, read after
size_t g_nhooks;

using hook_ptr = void (*)(const benchmark::State &);

template <size_t I> void hook_trampoline(const benchmark::State &s)
{
	gb_state st = {0, const_cast<benchmark::State *>(&s), g_hooks[I].rec, GB__SETUP};
	g_hooks[I].fn(&st);
}

template <size_t... I> constexpr std::array<hook_ptr, sizeof...(I)> make_trampolines(std::index_sequence<I...>)
{
	return {{&hook_trampoline<I>...}};
}
constexpr std::array<hook_ptr, k_max_hooks> k_trampolines =
	make_trampolines(std::make_index_sequence<k_max_hooks>{});

hook_ptr add_hook(gb_bench *b, gb_setup_fn fn, const char *what)
{
	if (!fn)
		die(what, "%s: NULL function", b->name.c_str());
	if (g_nhooks == k_max_hooks)
		die(what, "%s: more than %zu setup/teardown hooks in this process", b->name.c_str(),
		    k_max_hooks);
	g_hooks[g_nhooks] = hook{fn, b};
	return k_trampolines[g_nhooks++];
}

// Keys the JSON reporter already writes into "context" (1.7): a custom key
// with one of these names would make the JSON object ambiguous.
bool reserved_context_key(const std::string &k)
{
	static const char *const keys[] = {"date",        "host_name",           "executable",
					   "num_cpus",    "mhz_per_cpu",         "cpu_scaling_enabled",
					   "caches",      "load_avg",            "library_build_type",
					   "json_schema_version"};
	for (const char *r : keys)
		if (k == r)
			return true;
	return false;
}

}  // namespace

extern "C" {

// ---- registration ----

gb_bench *gb_register(const char *name, gb_fn fn)
{
	if (!name || !*name)
		die("gb_register", "NULL or empty benchmark name");
	if (!fn)
		die("gb_register", "%s: NULL function", name);
	if (g_started)
		die("gb_register", "%s: registered after gb_main started", name);
	for (const gb_bench &r : registry())
		if (r.name == name)
			die("gb_register", "%s: name registered twice (names must be unique for compare.py)",
			    name);
	registry().push_back(gb_bench{name, fn, nullptr, 0});
	gb_bench *rec = &registry().back();
	rec->b = benchmark::RegisterBenchmark(name, [rec](benchmark::State &s) { run_thread(rec, s); });
	return rec;
}

gb_bench *gb_arg_add(gb_bench *b, int64_t a)
{
	builder(b, "gb_arg_add")->b->Arg(a);
	b->nargs = 1;
	return b;
}

gb_bench *gb_args_add(gb_bench *b, const int64_t *a, size_t n)
{
	builder(b, "gb_args_add");
	if (!a || n == 0)
		die("gb_args_add", "%s: empty argument set", b->name.c_str());
	b->b->Args(std::vector<int64_t>(a, a + n));
	b->nargs = n;
	return b;
}

gb_bench *gb_range(gb_bench *b, int64_t lo, int64_t hi)
{
	builder(b, "gb_range")->b->Range(lo, hi);
	b->nargs = 1;
	return b;
}

gb_bench *gb_dense_range(gb_bench *b, int64_t lo, int64_t hi, int step)
{
	builder(b, "gb_dense_range")->b->DenseRange(lo, hi, step);
	b->nargs = 1;
	return b;
}

gb_bench *gb_range_multiplier(gb_bench *b, int mult)
{
	builder(b, "gb_range_multiplier")->b->RangeMultiplier(mult);
	return b;
}

gb_bench *gb_ranges2(gb_bench *b, int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1)
{
	builder(b, "gb_ranges2")->b->Ranges({{lo0, hi0}, {lo1, hi1}});
	b->nargs = 2;
	return b;
}

gb_bench *gb_arg_name(gb_bench *b, const char *name)
{
	if (!name)
		die("gb_arg_name", "NULL name");
	builder(b, "gb_arg_name")->b->ArgName(name);
	return b;
}

gb_bench *gb_arg_names(gb_bench *b, const char *const *names, size_t n)
{
	builder(b, "gb_arg_names");
	std::vector<std::string> v;
	for (size_t i = 0; i < n; i++) {
		if (!names || !names[i])
			die("gb_arg_names", "%s: NULL name %zu", b->name.c_str(), i);
		v.emplace_back(names[i]);
	}
	b->b->ArgNames(v);
	return b;
}

gb_bench *gb_threads(gb_bench *b, int n)
{
	builder(b, "gb_threads")->b->Threads(n);
	return b;
}

gb_bench *gb_thread_range(gb_bench *b, int lo, int hi)
{
	builder(b, "gb_thread_range")->b->ThreadRange(lo, hi);
	return b;
}

gb_bench *gb_dense_thread_range(gb_bench *b, int lo, int hi, int step)
{
	builder(b, "gb_dense_thread_range")->b->DenseThreadRange(lo, hi, step);
	return b;
}

gb_bench *gb_thread_per_cpu(gb_bench *b)
{
	builder(b, "gb_thread_per_cpu")->b->ThreadPerCpu();
	return b;
}

gb_bench *gb_min_time(gb_bench *b, double seconds)
{
	builder(b, "gb_min_time")->b->MinTime(seconds);
	b->min_time = true;
	return b;
}

gb_bench *gb_min_warmup_time(gb_bench *b, double seconds)
{
	builder(b, "gb_min_warmup_time")->b->MinWarmUpTime(seconds);
	return b;
}

gb_bench *gb_iterations_fixed(gb_bench *b, int64_t n)
{
	builder(b, "gb_iterations_fixed")->b->Iterations(n);
	return b;
}

gb_bench *gb_repetitions(gb_bench *b, int n)
{
	builder(b, "gb_repetitions")->b->Repetitions(n);
	return b;
}

gb_bench *gb_report_aggregates_only(gb_bench *b, bool only)
{
	builder(b, "gb_report_aggregates_only")->b->ReportAggregatesOnly(only);
	return b;
}

gb_bench *gb_display_aggregates_only(gb_bench *b, bool only)
{
	builder(b, "gb_display_aggregates_only")->b->DisplayAggregatesOnly(only);
	return b;
}

gb_bench *gb_unit(gb_bench *b, enum gb_time_unit u)
{
	builder(b, "gb_unit");
	if (u < GB_NS || u > GB_S)
		die("gb_unit", "%s: unknown time unit %d", b->name.c_str(), int(u));
	b->b->Unit(static_cast<benchmark::TimeUnit>(u));
	return b;
}

gb_bench *gb_use_real_time(gb_bench *b)
{
	builder(b, "gb_use_real_time")->b->UseRealTime();
	return b;
}

gb_bench *gb_use_manual_time(gb_bench *b)
{
	builder(b, "gb_use_manual_time")->b->UseManualTime();
	return b;
}

gb_bench *gb_measure_process_cpu_time(gb_bench *b)
{
	builder(b, "gb_measure_process_cpu_time")->b->MeasureProcessCPUTime();
	return b;
}

gb_bench *gb_setup(gb_bench *b, gb_setup_fn fn)
{
	builder(b, "gb_setup")->b->Setup(add_hook(b, fn, "gb_setup"));
	return b;
}

gb_bench *gb_teardown(gb_bench *b, gb_setup_fn fn)
{
	builder(b, "gb_teardown")->b->Teardown(add_hook(b, fn, "gb_teardown"));
	return b;
}

int gb_add_context(const char *key, const char *value)
{
	if (!key || !*key || !value)
		return -EINVAL;
	if (g_started)
		die("gb_add_context", "%s: must be called before gb_main", key);
	const std::map<std::string, std::string> *ctx = benchmark::internal::GetGlobalContext();
	if (reserved_context_key(key) || (ctx && ctx->count(key)))
		return -EEXIST;
	benchmark::AddCustomContext(key, value);
	return 0;
}

int gb_main(int argc, char **argv)
{
	if (g_started)
		die("gb_main", "called twice");
	g_started = true;
	// Google Benchmark lets a benchmark's MinTime win over the flag; here the
	// command line wins.  Read it before Initialize consumes it (the last
	// one counts, as for Google's parser, which validates it below).
	static const char k_min_time[] = "--benchmark_min_time=";
	const char *min_time = nullptr;
	for (int i = 1; i < argc; i++)
		if (std::strncmp(argv[i], k_min_time, sizeof(k_min_time) - 1) == 0)
			min_time = argv[i] + sizeof(k_min_time) - 1;
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
		benchmark::Shutdown();
		return 1;
	}
	double t = min_time ? std::strtod(min_time, nullptr) : 0;
	if (t > 0)  // MinTime takes only t > 0; the name shows the value: "/min_time:t"
		for (gb_bench &r : registry())
			if (r.min_time)
				r.b->MinTime(t);
	size_t matched = benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return matched ? 0 : 1;
}

// ---- inside a benchmark ----

bool gb__keep_running_slow(gb_state *st, int64_t n)
{
	benchmark::State &s = state_of(st);
	if (n <= 0)
		die(name_of(st), "gb_keep_running_batch(st, %lld): n must be > 0", (long long)n);
	switch (st->gb__phase) {
	case GB__BEFORE_LOOP: {
		// Take Google's whole grant in multiples of n; a remainder (< n)
		// stays with Google so that its batch-overshoot accounting counts it.
		int64_t grant = s.max_iterations - s.max_iterations % n;
		if (grant == 0)
			grant = n;  // max_iterations < n: one overshooting batch
		st->gb__phase = GB__IN_LOOP;
		if (!s.KeepRunningBatch(grant)) {  // an error was reported before the loop
			st->gb__phase = GB__AFTER_LOOP;
			return false;
		}
		st->gb__left = grant - n;
		return true;
	}
	case GB__IN_LOOP:
		if (st->gb__left != 0)
			die(name_of(st), "gb_keep_running_batch: n changed within a run (to %lld)", (long long)n);
		if (s.KeepRunningBatch(n))  // Google's remainder: the last, overshooting batch
			return true;
		st->gb__phase = GB__AFTER_LOOP;
		return false;
	case GB__AFTER_LOOP:
		die(name_of(st), "gb_keep_running called again after it returned false");
	default:
		die(name_of(st), "gb_keep_running called in a setup/teardown hook");
	}
}

void gb_pause_timing(gb_state *st)
{
	if (st && st->gb__phase != GB__IN_LOOP)
		die(name_of(st), "gb_pause_timing outside the gb_keep_running loop");
	state_of(st).PauseTiming();
}

void gb_resume_timing(gb_state *st)
{
	if (st && st->gb__phase != GB__IN_LOOP)
		die(name_of(st), "gb_resume_timing outside the gb_keep_running loop");
	state_of(st).ResumeTiming();
}

int64_t gb_arg(const gb_state *st, size_t i)
{
	const benchmark::State &s = state_of(st);
	if (st->gb__b && i >= st->gb__b->nargs)
		die(name_of(st), "gb_arg(st, %zu) but the benchmark has %zu argument(s)", i, st->gb__b->nargs);
	return s.range(i);
}

int64_t gb_iterations(const gb_state *st)
{
	// Google counts the whole grant as started; the C loop has not yet
	// started gb__left of it.
	return state_of(st).iterations() - st->gb__left;
}

int gb_thread_index(const gb_state *st)
{
	return state_of(st).thread_index();
}

int gb_thread_count(const gb_state *st)
{
	return state_of(st).threads();
}

void gb_set_items_processed(gb_state *st, int64_t n)
{
	run_state(st, "gb_set_items_processed").SetItemsProcessed(n);
}

void gb_set_bytes_processed(gb_state *st, int64_t n)
{
	run_state(st, "gb_set_bytes_processed").SetBytesProcessed(n);
}

void gb_set_label(gb_state *st, const char *label)
{
	run_state(st, "gb_set_label").SetLabel(label ? label : "");
}

void gb_skip_with_error(gb_state *st, const char *msg)
{
	benchmark::State &s = run_state(st, "gb_skip_with_error");
	s.SkipWithError(msg && *msg ? msg : "error");
	st->gb__left = 0;  // the next gb_keep_running* asks Google, which says stop
}

void gb_set_iteration_time(gb_state *st, double seconds)
{
	run_state(st, "gb_set_iteration_time").SetIterationTime(seconds);
}

void gb_counter(gb_state *st, const char *name, double value, unsigned flags)
{
	benchmark::State &s = run_state(st, "gb_counter");
	if (!name)
		die(name_of(st), "gb_counter with a NULL name");
	if (flags & ~GB_COUNTER_ALL_FLAGS)
		die(name_of(st), "gb_counter(%s): unknown flag bits 0x%x", name, flags & ~GB_COUNTER_ALL_FLAGS);
	s.counters[name] = benchmark::Counter(value, static_cast<benchmark::Counter::Flags>(flags));
}

}  // extern "C"
