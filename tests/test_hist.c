/* tests/test_hist.c — fb_hist against exact percentiles of random data (<= 1 % error),
 * bucket arithmetic at every power of two, and per-thread recording merged at the end. */
#include "tests/fb_test.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "src/fb_hist.h"

#define N_VALUES 200000

/* xorshift64*: reproducible data without libc's rand state. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) / 9007199254740992.0; }

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The exact nearest-rank percentile of sorted data. */
/* Nearest rank ceil(p/100 * n), in integers: the test's percentiles have at
 * most two decimals (p * 100 is whole). */
static uint64_t exact_pct(const uint64_t *sorted, size_t n, double p)
{
	uint64_t p100 = (uint64_t)llround(p * 100.0);
	size_t rank = (size_t)((n * p100 + 9999) / 10000);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static void assert_close(uint64_t got, uint64_t want, const char *what)
{
	double err = want ? fabs((double)got - (double)want) / (double)want : (double)got;
	if (err > 0.01)
		fail_msg("%s: histogram says %llu, exact %llu (error %.3f%%)", what,
			 (unsigned long long)got, (unsigned long long)want, err * 100.0);
}

enum dist { UNIFORM, LOG_UNIFORM, EXPONENTIAL, BIMODAL };

static uint64_t draw(enum dist d, uint64_t *s)
{
	switch (d) {
	case UNIFORM:     return 1 + rng_next(s) % 1000000;
	case LOG_UNIFORM: return (uint64_t)exp(rng_unit(s) * log(1e10));
	case EXPONENTIAL: return (uint64_t)(-log(1.0 - rng_unit(s)) * 5000.0);
	case BIMODAL:     return rng_next(s) % 8 ? 100 + rng_next(s) % 50 : 30000 + rng_next(s) % 5000;
	}
	return 0;
}

static void check_distribution(enum dist d, const char *name)
{
	uint64_t *v = malloc(N_VALUES * sizeof(*v)), seed = 0x9e3779b97f4a7c15ull + d;
	struct fb_hist *h = fb_hist_new();
	long double sum = 0;
	for (size_t i = 0; i < N_VALUES; i++) {
		v[i] = draw(d, &seed);
		sum += v[i];
		fb_hist_record(h, v[i]);
	}
	qsort(v, N_VALUES, sizeof(*v), cmp_u64);
	struct fb_hist_summary s;
	fb_hist_summarize(h, &s);
	char what[64];
	static const double pct[] = { 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99 };
	for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		snprintf(what, sizeof(what), "%s p%g", name, pct[i]);
		assert_close(fb_hist_percentile(h, pct[i]), exact_pct(v, N_VALUES, pct[i]), what);
	}
	assert_int_equal(s.count, N_VALUES);
	assert_int_equal(s.min, v[0]);
	assert_int_equal(s.max, v[N_VALUES - 1]);
	assert_int_equal(s.p50, fb_hist_percentile(h, 50));
	assert_int_equal(s.p90, fb_hist_percentile(h, 90));
	assert_int_equal(s.p99, fb_hist_percentile(h, 99));
	assert_int_equal(s.p999, fb_hist_percentile(h, 99.9));
	assert_true(fabs(s.mean - (double)(sum / N_VALUES)) <= 1e-9 * s.mean + 1e-9);
	fb_hist_free(h);
	free(v);
}

static void percentiles_uniform(void **state) { check_distribution(UNIFORM, "uniform"); }
static void percentiles_log_uniform(void **state) { check_distribution(LOG_UNIFORM, "log-uniform"); }
static void percentiles_exponential(void **state) { check_distribution(EXPONENTIAL, "exponential"); }
static void percentiles_bimodal(void **state) { check_distribution(BIMODAL, "bimodal"); }

/* Every value lands in a bucket that contains it, bucket width <= lo/128, and
 * bucket indices are monotonic — checked around every power of two. */
static void buckets_cover_every_power_of_two(void **state)
{
	unsigned prev = 0;
	for (unsigned e = 0; e < 64; e++) {
		uint64_t base = 1ull << e;
		uint64_t probe[] = { base - 1, base, base + 1, base + base / 2, base * 2 - 1 };
		for (size_t i = 0; i < 5; i++) {
			uint64_t x = probe[i];
			if (e == 63 && i == 4)
				x = UINT64_MAX;
			unsigned b = fb_hist_bucket_of(x);
			assert_true(b < FB_HIST_BUCKETS);
			uint64_t lo = fb_hist_bucket_lo(b), w = fb_hist_bucket_width(b);
			assert_true(x >= lo);
			assert_true(x - lo < w);
			assert_true(w == 1 || w * FB_HIST_SUB <= lo);
		}
		unsigned b = fb_hist_bucket_of(base);
		assert_true(b >= prev);
		prev = b;
	}
	assert_int_equal(fb_hist_bucket_of(UINT64_MAX), FB_HIST_BUCKETS - 1);
	for (uint64_t x = 0; x < 256; x++)   /* small values are exact */
		assert_int_equal(fb_hist_bucket_lo(fb_hist_bucket_of(x)), x);
}

static void empty_and_extremes(void **state)
{
	struct fb_hist *h = fb_hist_new();
	struct fb_hist_summary s;
	fb_hist_summarize(h, &s);
	assert_int_equal(s.count, 0);
	assert_int_equal(fb_hist_percentile(h, 50), 0);
	assert_int_equal(fb_hist_min(h), 0);
	fb_hist_record(h, 0);
	fb_hist_record(h, UINT64_MAX);
	assert_int_equal(fb_hist_percentile(h, 50), 0);
	assert_int_equal(fb_hist_percentile(h, 100), UINT64_MAX);
	assert_close(fb_hist_percentile(h, 99.9), UINT64_MAX, "p99.9 of {0, max}");
	fb_hist_reset(h);
	fb_hist_record_n(h, 777, 10);
	fb_hist_summarize(h, &s);
	assert_int_equal(s.count, 10);
	assert_int_equal(s.p50, 777);   /* clamped into [min, max] */
	assert_int_equal(s.p999, 777);
	fb_hist_free(h);
}

#define N_THREADS 4
struct recorder {
	struct fb_hist *h;
	uint64_t seed;
	uint64_t *out;   /* the values it recorded, for the exact answer */
};

static void *record_thread(void *arg)
{
	struct recorder *r = arg;
	for (size_t i = 0; i < N_VALUES / N_THREADS; i++) {
		r->out[i] = draw(LOG_UNIFORM, &r->seed);
		fb_hist_record(r->h, r->out[i]);
	}
	return NULL;
}

/* Each thread owns its histogram; merged after join they equal the exact answer. */
static void per_thread_merge(void **state)
{
	uint64_t *all = malloc(N_VALUES * sizeof(*all));
	struct recorder r[N_THREADS];
	pthread_t t[N_THREADS];
	for (int i = 0; i < N_THREADS; i++) {
		r[i] = (struct recorder){ fb_hist_new(), 1234567ull * (i + 1), all + i * (N_VALUES / N_THREADS) };
		assert_int_equal(pthread_create(&t[i], NULL, record_thread, &r[i]), 0);
	}
	struct fb_hist *m = fb_hist_new();
	for (int i = 0; i < N_THREADS; i++) {
		pthread_join(t[i], NULL);
		fb_hist_merge(m, r[i].h);
		fb_hist_free(r[i].h);
	}
	qsort(all, N_VALUES, sizeof(*all), cmp_u64);
	assert_int_equal(fb_hist_count(m), N_VALUES);
	assert_int_equal(fb_hist_max(m), all[N_VALUES - 1]);
	assert_int_equal(fb_hist_min(m), all[0]);
	assert_close(fb_hist_percentile(m, 50), exact_pct(all, N_VALUES, 50), "merged p50");
	assert_close(fb_hist_percentile(m, 99), exact_pct(all, N_VALUES, 99), "merged p99");
	assert_close(fb_hist_percentile(m, 99.9), exact_pct(all, N_VALUES, 99.9), "merged p99.9");
	fb_hist_free(m);
	free(all);
}

/* p99.9 of 1000 samples is the 999th, not the maximum (in doubles,
 * 99.9/100*1000 is 999.0000000000001, and its ceil was 1000). */
static void percentile_rank_is_exact_at_round_counts(void **state)
{
	struct fb_hist *h = fb_hist_new();
	fb_hist_record_n(h, 1000, 999);
	fb_hist_record(h, 1000000);
	assert_close(fb_hist_percentile(h, 99.9), 1000, "p99.9 of 999 x 1 us + 1 x 1 ms");
	assert_close(fb_hist_percentile(h, 100.0), 1000000, "p100");
	fb_hist_reset(h);
	fb_hist_record_n(h, 1000, 9990);
	fb_hist_record_n(h, 1000000, 10);
	assert_close(fb_hist_percentile(h, 99.9), 1000, "p99.9 of 9990 x 1 us + 10 x 1 ms");
	assert_close(fb_hist_percentile(h, 99.91), 1000000, "p99.91 of the same");
	struct fb_hist_summary sm;
	fb_hist_summarize(h, &sm);
	assert_int_equal(sm.p999, fb_hist_percentile(h, 99.9));
	fb_hist_free(h);
}

FB_TEST_MAIN(cmocka_unit_test(percentile_rank_is_exact_at_round_counts),
	     cmocka_unit_test(percentiles_uniform),
	     cmocka_unit_test(percentiles_log_uniform),
	     cmocka_unit_test(percentiles_exponential),
	     cmocka_unit_test(percentiles_bimodal),
	     cmocka_unit_test(buckets_cover_every_power_of_two),
	     cmocka_unit_test(empty_and_extremes),
	     cmocka_unit_test(per_thread_merge))
