/* tests/test_boot.c — the bootstrap intervals (src/fb_boot.h) cover what they say.
 *
 * Coverage: from a known distribution (exponential, median mu ln 2, p90
 * mu ln 10), 1000 samples of 101 values each (1010 for the p90: the
 * percentile interval of a tail percentile covers a little less than its
 * level in small samples, 92.5 % at 101), every one recorded in a histogram;
 * the 95 % interval of its p50 (p90) must hold the true value in 93-97 % of
 * them (the binomial spread of 1000 trials at 95 % is 0.7 %).  Fixed seeds: the counts are the same on every
 * run, so nothing here is timed or flaky.  The check can fail: a 50 %
 * interval and a zero-width one are caught by the same bounds.
 * Then: the order-statistic shortcut draws what resampling every value does;
 * a run's interval is never narrower than its histogram bucket; repetitions
 * too few for 95 % give their range, called one; the change between two runs
 * (MOVER) holds both sides' spread; two estimates agree when their
 * intervals overlap (a verdict on the points alone is caught); the PRNG is
 * reproducible.  The coverage
 * across repetitions is tests/test_coverage.c's.
 */
#include "tests/fb_test.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "src/fb_boot.h"
#include "src/fb_hist.h"

#define TRIALS 1000
#define N      101
#define MU     100000.0   /* ns: bucket widths (1/256) are far below the interval */

enum variant { CORRECT, HALF_LEVEL, ZERO_WIDTH };

/* Share of TRIALS datasets of n values whose interval of percentile pct holds truth. */
static double coverage(unsigned n, double pct, double truth, enum variant v)
{
	struct fb_rng data = { 12345 }, boot = { 777 };
	static float rep[FB_BOOT_RESAMPLES];
	struct fb_hist *h = fb_hist_new();
	unsigned hit = 0;
	for (unsigned t = 0; t < TRIALS; t++) {
		fb_hist_reset(h);
		for (unsigned i = 0; i < n; i++)
			fb_hist_record(h, (uint64_t)llround(-MU * log(fb_rng_uniform(&data))));
		assert_int_equal(fb_boot_percentiles(h, &pct, 1, &boot, rep, FB_BOOT_RESAMPLES), 0);
		double lo, hi;
		fb_boot_interval_f(rep, FB_BOOT_RESAMPLES, v == HALF_LEVEL ? 0.5 : FB_BOOT_LEVEL, &lo, &hi);
		if (v == ZERO_WIDTH)
			lo = hi = (double)fb_hist_percentile(h, pct);
		hit += lo <= truth && truth <= hi;
	}
	fb_hist_free(h);
	return (double)hit / TRIALS;
}

static void median_interval_covers_at_the_stated_rate(void **state)
{
	double c = coverage(N, 50.0, MU * log(2.0), CORRECT);
	printf("  p50: 95%% intervals held the true median in %.1f%% of %d samples of %d\n", 100 * c, TRIALS, N);
	assert_true(c >= 0.93 && c <= 0.97);
	c = coverage(10 * N, 90.0, MU * log(10.0), CORRECT);
	printf("  p90: %.1f%% of %d samples of %d\n", 100 * c, TRIALS, 10 * N);
	assert_true(c >= 0.93 && c <= 0.97);
}

/* The bounds above catch intervals that are too narrow. */
static void broken_intervals_are_caught(void **state)
{
	double half = coverage(N, 50.0, MU * log(2.0), HALF_LEVEL), zero = coverage(N, 50.0, MU * log(2.0), ZERO_WIDTH);
	printf("  50%% intervals: %.1f%%, zero-width: %.1f%%\n", 100 * half, 100 * zero);
	assert_false(half >= 0.93 && half <= 0.97);
	assert_false(zero >= 0.93 && zero <= 0.97);
}

/* Draw Beta(r, n-r+1) and look the rank up: the same distribution as
 * resampling the n values and taking the r-th smallest.  51 values on a
 * grid of 100 ns; 4000 replicates each way; the intervals agree to a step. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void shortcut_draws_what_resampling_draws(void **state)
{
	enum { M = 51, R = 4000 };
	uint64_t v[M], pick[M];
	struct fb_hist *h = fb_hist_new();
	for (unsigned i = 0; i < M; i++) {
		v[i] = 1000 + 100 * (uint64_t)((i * 37) % M);   /* every grid value once, shuffled */
		fb_hist_record(h, v[i]);
	}
	static float fast[R];
	static double slow[R];
	struct fb_rng a = { 1 }, b = { 2 };
	const double pct[] = { 50.0, 90.0 };
	for (unsigned k = 0; k < 2; k++) {
		assert_int_equal(fb_boot_percentiles(h, &pct[k], 1, &a, fast, R), 0);
		uint64_t rank = fb_hist_rank(M, pct[k]);
		for (unsigned j = 0; j < R; j++) {
			for (unsigned i = 0; i < M; i++)
				pick[i] = v[fb_rng_below(&b, M)];
			qsort(pick, M, sizeof(*pick), cmp_u64);
			slow[j] = (double)pick[rank - 1];
		}
		double flo, fhi, slo, shi;
		fb_boot_interval_f(fast, R, FB_BOOT_LEVEL, &flo, &fhi);
		fb_boot_interval(slow, R, FB_BOOT_LEVEL, &slo, &shi);
		printf("  p%.0f: shortcut [%.0f, %.0f], resampling [%.0f, %.0f]\n", pct[k], flo, fhi, slo, shi);
		assert_true(fabs(flo - slo) <= 100 && fabs(fhi - shi) <= 100);
	}
	fb_hist_free(h);
}

static void edge_cases(void **state)
{
	struct fb_hist *h = fb_hist_new();
	struct fb_rng r = { 3 };
	float rep[16];
	double p = 50.0, lo, hi;
	assert_int_equal(fb_boot_percentiles(h, &p, 1, &r, rep, 16), -ENODATA);
	fb_hist_record(h, 4242);
	assert_int_equal(fb_boot_percentiles(h, &p, 1, &r, rep, 16), 0);
	for (int i = 0; i < 16; i++)
		assert_true(rep[i] == 4242.0f);
	fb_boot_interval_f(rep, 16, FB_BOOT_LEVEL, &lo, &hi);
	/* every replicate in one bucket: the replicates alone say [4242, 4242], but
	 * the histogram cannot tell values within its bucket apart: the interval
	 * the harness reports is floored at the bucket, never zero-width */
	struct fb_ci ci = { FB_CI_INTERVAL, lo, hi, FB_BOOT_LEVEL };
	fb_ci_floor(&ci, 4242, fb_ci_bucket_width(4242));
	assert_int_equal(ci.kind, FB_CI_INTERVAL);
	assert_true(ci.hi > ci.lo);
	assert_true(ci.lo <= 4242 - fb_ci_bucket_width(4242) && ci.hi >= 4242 + fb_ci_bucket_width(4242));
	assert_true(fb_ci_bucket_width(4242) == (double)fb_hist_bucket_width(fb_hist_bucket_of(4242)));
	double nan_only[2] = { NAN, NAN };
	fb_boot_interval(nan_only, 2, FB_BOOT_LEVEL, &lo, &hi);
	assert_true(isnan(lo) && isnan(hi));
	assert_true(fabs(fb_boot_rel_halfwidth(100, 96, 103) - 0.04) < 1e-12);
	assert_true(isnan(fb_boot_rel_halfwidth(0, -1, 1)));
	fb_hist_free(h);
}

/* Three repetitions around 100, 200 and 300: too few for a 95 % median
 * interval, so the median's is their range, called a range with the 75 % it
 * covers; the mean's t interval spans the spread (t(2) = 4.3); identical
 * plain values (a count) give no interval at all, only a range of one value. */
static void repetitions_give_ranges_or_intervals(void **state)
{
	double values[3] = { 100, 200, 300 };
	struct fb_ci med = fb_ci_median(values, 3), mean = fb_ci_mean(values, 3);
	printf("  reps 100/200/300: median range [%.0f, %.0f] (%.0f %%), mean in [%.0f, %.0f]\n", med.lo, med.hi,
	       100 * med.level, mean.lo, mean.hi);
	assert_int_equal(med.kind, FB_CI_RANGE);
	assert_true(med.lo == 100 && med.hi == 300 && med.level == 0.75);
	assert_int_equal(mean.kind, FB_CI_INTERVAL);
	assert_true(fabs(mean.lo - (200 - 4.303 * 100 / sqrt(3))) < 1e-9 && mean.hi > 400);
	double six[6] = { 1, 2, 3, 4, 5, 6 };
	med = fb_ci_median(six, 6);   /* ranks (1, 6) cover 96.9 %: interpolated inward to 95 % */
	assert_int_equal(med.kind, FB_CI_INTERVAL);
	assert_true(med.lo > 1 && med.lo < 2 && med.hi > 5 && med.hi < 6 && med.level == FB_BOOT_LEVEL);
	double plain[3] = { 10, 10, 10 };
	struct fb_ci ci = fb_ci_mean(plain, 3);
	fb_ci_floor(&ci, 10, 0);
	assert_int_equal(ci.kind, FB_CI_RANGE);
	assert_true(ci.lo == 10 && ci.hi == 10);
}

/* The change between two runs: MOVER on the log scale, the difference otherwise. */
static void change_interval_adds_both_sides(void **state)
{
	double c, lo, hi;
	int rel;
	fb_boot_change(100, 90, 110, 200, 180, 220, &c, &lo, &hi, &rel);
	assert_true(rel && fabs(c - 1.0) < 1e-12);
	assert_true(fabs(lo - (2 * exp(-hypot(log(200.0 / 180), log(110.0 / 100))) - 1)) < 1e-12);
	assert_true(fabs(hi - (2 * exp(hypot(log(220.0 / 200), log(100.0 / 90))) - 1)) < 1e-12);
	assert_true(lo > 0.5 && lo < 0.8 && hi > 1.2 && hi < 1.6);   /* wider than either side alone */
	fb_boot_change(100, 100, 100, 100, 100, 100, &c, &lo, &hi, &rel);
	assert_true(c == 0 && lo == 0 && hi == 0);
	fb_boot_change(0, 0, 0, 3, 2, 4, &c, &lo, &hi, &rel);   /* from 0: the difference */
	assert_true(!rel && c == 3 && lo == 2 && hi == 4);
	fb_boot_change(-1, -2, 0, 1, 0, 2, &c, &lo, &hi, &rel);  /* across 0: the difference over |b| */
	assert_true(rel && c == 2 && fabs(lo - (2 - sqrt(2))) < 1e-12 && fabs(hi - (2 + sqrt(2))) < 1e-12);
	fb_boot_change(100, NAN, NAN, 120, 110, 130, &c, &lo, &hi, &rel);
	assert_true(fabs(c - 0.2) < 1e-12 && isnan(lo) && isnan(hi));
}

/* Two estimates of one quantity (point, 95 % interval), and the verdict
 * they must get: agree when the intervals overlap, DISAGREE when they are
 * further apart than the intervals, none without an interval. */
struct agree_case {
	double pa;
	struct fb_ci a;
	double pb;
	struct fb_ci b;
	enum fb_agree want;
};

#define CI(lo, hi) { FB_CI_INTERVAL, (lo), (hi), FB_BOOT_LEVEL }
#define RANGE(v)   { FB_CI_RANGE, (v), (v), FB_BOOT_LEVEL }

static const struct agree_case agree_cases[] = {
	{ 1.00, CI(0.90, 1.10), 1.20, CI(1.05, 1.35), FB_AGREE },     /* points 20 % apart, intervals overlap */
	{ 1.00, CI(0.90, 1.10), 1.60, CI(1.05, 2.20), FB_AGREE },     /* b's point far outside a's interval */
	{ 0.53, CI(0.50, 0.56), 0.60, CI(0.58, 0.62), FB_DISAGREE },  /* points 12 % apart, intervals disjoint */
	{ 1.00, CI(0.99, 1.01), 1.03, CI(1.02, 1.04), FB_DISAGREE },  /* 3 % apart, both narrow */
	{ 1.50, CI(1.00, 2.00), 2.50, CI(2.00, 3.00), FB_AGREE },     /* touching */
	{ 4.00, RANGE(4.0), 4.00, RANGE(4.0), FB_AGREE },             /* a count, the same in every repetition */
	{ 0.00, RANGE(0.0), 4.00, RANGE(4.0), FB_DISAGREE },
	{ 1.00, { FB_CI_NONE, NAN, NAN, NAN }, 1.00, CI(0.9, 1.1), FB_AGREE_NONE },   /* one repetition */
	{ 1.00, CI(0.9, 1.1), 1.00, { FB_CI_INTERVAL, NAN, NAN, NAN }, FB_AGREE_NONE },
};

typedef enum fb_agree (*agree_fn)(const struct agree_case *c);

static enum fb_agree agree_real(const struct agree_case *c)
{
	return fb_ci_agree(c->a, c->b);
}

/* Broken: the points alone, within the 25 % the notes once allowed. */
static enum fb_agree agree_points(const struct agree_case *c)
{
	return fabs(c->pb / c->pa - 1) <= 0.25 ? FB_AGREE : FB_DISAGREE;
}

/* Broken: b's point must lie in a's interval (a taken as the truth). */
static enum fb_agree agree_point_in_a(const struct agree_case *c)
{
	if (c->a.kind == FB_CI_NONE || c->b.kind == FB_CI_NONE || isnan(c->a.lo) || isnan(c->b.lo))
		return FB_AGREE_NONE;
	return c->pb >= c->a.lo && c->pb <= c->a.hi ? FB_AGREE : FB_DISAGREE;
}

static size_t agree_wrong(agree_fn f)
{
	size_t wrong = 0;
	for (size_t i = 0; i < sizeof(agree_cases) / sizeof(agree_cases[0]); i++)
		wrong += f(&agree_cases[i]) != agree_cases[i].want;
	return wrong;
}

static void estimates_agree_when_their_intervals_overlap(void **state)
{
	assert_int_equal(agree_wrong(agree_real), 0);
	assert_string_equal(fb_agree_name(FB_AGREE), "agree");
	assert_string_equal(fb_agree_name(FB_DISAGREE), "DISAGREE");
	size_t points = agree_wrong(agree_points), inside = agree_wrong(agree_point_in_a);
	printf("  broken verdicts caught: points only %zu, point in the other's interval %zu of %zu cases\n", points,
	       inside, sizeof(agree_cases) / sizeof(agree_cases[0]));
	assert_true(points > 0 && inside > 0);
}

static void rng_is_reproducible(void **state)
{
	struct fb_rng a = { 5 }, b = { 5 };
	for (int i = 0; i < 100; i++)
		assert_true(fb_rng_next(&a) == fb_rng_next(&b));
	assert_true(fb_boot_seed(1, "s", "m", "native", 0) == fb_boot_seed(1, "s", "m", "native", 0));
	assert_true(fb_boot_seed(1, "s", "m", "native", 0) != fb_boot_seed(1, "s", "m", "legacy", 0));
	assert_true(fb_boot_seed(1, "ab", "c", NULL, 0) != fb_boot_seed(1, "a", "bc", NULL, 0));
	/* Gamma(k) has mean k: 20000 draws, within 2 % at every shape */
	const double shape[] = { 1, 3.5, 1000, 1e7 };
	for (int s = 0; s < 4; s++) {
		double sum = 0;
		for (int i = 0; i < 20000; i++)
			sum += fb_rng_gamma(&a, shape[s]);
		assert_true(fabs(sum / 20000 / shape[s] - 1) < 0.02);
	}
}

FB_TEST_MAIN(cmocka_unit_test(median_interval_covers_at_the_stated_rate),
	     cmocka_unit_test(broken_intervals_are_caught),
	     cmocka_unit_test(shortcut_draws_what_resampling_draws),
	     cmocka_unit_test(edge_cases),
	     cmocka_unit_test(repetitions_give_ranges_or_intervals),
	     cmocka_unit_test(change_interval_adds_both_sides),
	     cmocka_unit_test(estimates_agree_when_their_intervals_overlap),
	     cmocka_unit_test(rng_is_reproducible))
