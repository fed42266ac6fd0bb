/* tests/test_coverage.c — the intervals across repetitions hold the true value as often as their label says.
 *
 * A simulation of repeated runs from known distributions: normal, lognormal
 * and a bimodal one (a fast and a slow mode, as the GPU waits of a shared VM
 * are).  Each repetition's samples are the distribution times a factor of its
 * own, exp(0.05 Z) (the machine's noise from run to run: median 1, so the
 * true percentile is the distribution's), and the whole of a trial is scaled
 * by a factor in [1, e^0.1): the true value falls anywhere on the grid of
 * histogram buckets, as a benchmark's does (a value rounded to its bucket's
 * midpoint is off by up to half a bucket, the same way in every trial were
 * the truth fixed).  A repetition's p50, p99 and p999
 * are drawn as the harness would measure them from 10^6 samples: the r-th
 * smallest of n values is F^-1(U) with U ~ Beta(r, n - r + 1) (the shortcut
 * src/fb_boot.h proves), rounded to its histogram bucket's value.
 *
 * For R = 3, 5, 10 and 30 repetitions, 2000 trials each, the median
 * aggregate's interval (fb_ci_median, floored at the bucket width as
 * src/fb_interval.c does) must hold the true percentile:
 *   - an interval (kind FB_CI_INTERVAL, R >= 6) in 93-97 % of the trials
 *     (its label, 95 %, +- 4 binomial standard errors of 2000 trials: a
 *     sound interval misses it by chance once in 15000 checks);
 *   - a range (kind FB_CI_RANGE, R < 6: what it must be called) at least as
 *     often as the coverage it states, less 4 standard errors (the bucket
 *     floor can only widen a narrow range).
 * The t interval of the mean aggregate likewise, on a plain metric (a rate)
 * whose repetitions are normal or lognormal around a known mean.
 * The same bounds catch the intervals fencebench printed before (a percentile
 * bootstrap of the median over the repetitions, called 95 %: 75 % at R = 3)
 * and a zero-width one.
 * Fixed seeds: the counts are the same on every run; nothing is timed.
 */
#include "tests/fb_test.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_boot.h"
#include "src/fb_hist.h"

#define TRIALS   2000
#define SAMPLES  1000000.0   /* samples per repetition (virtual: drawn as an order statistic) */
#define BETWEEN  0.05        /* log-sd of a repetition's factor */
#define MAXREPS  30

enum dist { NORMAL, LOGNORMAL, BIMODAL, NDIST };
static const char *const dist_name[NDIST] = { "normal", "lognormal", "bimodal" };

static double phi(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

/* The distribution's CDF; values in ns, near the VM's waits (tens of us). */
static double cdf(enum dist d, double x)
{
	switch (d) {
	case NORMAL:
		return phi((x - 36000.0) / 2000.0);
	case LOGNORMAL:
		return x <= 0 ? 0 : phi(log(x / 36000.0) / 0.5);
	default:
		return 0.7 * phi((x - 20000.0) / 1500.0) + 0.3 * phi((x - 60000.0) / 4000.0);
	}
}

/* F^-1(u) by bisection: 0 < u < 1; the distributions live in (0, 10^7). */
static double quantile(enum dist d, double u)
{
	double lo = 0, hi = 1e7;
	for (int i = 0; i < 64 && hi - lo > 1e-3; i++) {
		double mid = (lo + hi) / 2;
		if (cdf(d, mid) < u)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static double normal_draw(struct fb_rng *r)
{
	return sqrt(-2.0 * log(fb_rng_uniform(r))) * cos(2.0 * M_PI * fb_rng_uniform(r));
}

/* What a histogram reports for x: its bucket's midpoint. */
static double bucketed(double x)
{
	unsigned i = fb_hist_bucket_of((uint64_t)llround(x));
	return (double)fb_hist_bucket_lo(i) + (double)(fb_hist_bucket_width(i) - 1) / 2.0;
}

/* One repetition's percentile pct: an order statistic of SAMPLES values, times the run's factor. */
static double repetition(struct fb_rng *r, enum dist d, double pct, double scale)
{
	double rank = ceil(pct / 100.0 * SAMPLES);
	double u = fb_rng_beta(r, rank, SAMPLES - rank + 1);
	return bucketed(scale * quantile(d, u) * exp(BETWEEN * normal_draw(r)));
}

enum method { CURRENT, BOOTSTRAP_BEFORE, ZERO_WIDTH };

/* The median aggregate's interval over v[0..reps-1], as method draws it. */
static struct fb_ci median_interval(const double *v, unsigned reps, enum method m, struct fb_rng *boot)
{
	double sorted[MAXREPS];
	memcpy(sorted, v, reps * sizeof(*v));
	for (unsigned i = 1; i < reps; i++)   /* insertion sort: the median */
		for (unsigned j = i; j > 0 && sorted[j] < sorted[j - 1]; j--) {
			double t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	double med = reps % 2 ? sorted[reps / 2] : (sorted[reps / 2 - 1] + sorted[reps / 2]) / 2;
	if (m == ZERO_WIDTH)
		return (struct fb_ci){ FB_CI_INTERVAL, med, med, FB_BOOT_LEVEL };
	if (m == BOOTSTRAP_BEFORE) {   /* the medians of resampled repetitions, their percentile interval, "95 %" */
		static double rep[FB_BOOT_RESAMPLES];
		struct fb_ci ci = { FB_CI_INTERVAL, 0, 0, FB_BOOT_LEVEL };
		for (unsigned j = 0; j < FB_BOOT_RESAMPLES; j++) {
			double pick[MAXREPS];
			for (unsigned i = 0; i < reps; i++)
				pick[i] = v[fb_rng_below(boot, reps)];
			for (unsigned i = 1; i < reps; i++)
				for (unsigned k = i; k > 0 && pick[k] < pick[k - 1]; k--) {
					double t = pick[k];
					pick[k] = pick[k - 1];
					pick[k - 1] = t;
				}
			rep[j] = reps % 2 ? pick[reps / 2] : (pick[reps / 2 - 1] + pick[reps / 2]) / 2;
		}
		fb_boot_interval(rep, FB_BOOT_RESAMPLES, FB_BOOT_LEVEL, &ci.lo, &ci.hi);
		return ci;
	}
	struct fb_ci ci = fb_ci_median(v, reps);
	fb_ci_floor(&ci, med, fb_ci_bucket_width(med));
	return ci;
}

/* Is the coverage c of TRIALS trials what level says: within 4 standard errors? */
static bool as_labelled(double c, double level)
{
	double se = sqrt(level * (1 - level) / TRIALS);
	return fabs(c - level) <= 4 * se;
}

struct tally {
	unsigned hit, ranges, intervals;
	double level;   /* the level every trial stated (they agree: it depends on R only) */
};

static struct tally median_coverage(enum dist d, double pct, unsigned reps, enum method m, uint64_t seed)
{
	struct fb_rng r = { seed }, boot = { seed ^ 0xb007 };
	double q = quantile(d, pct / 100.0), v[MAXREPS];
	struct tally t = { 0, 0, 0, NAN };
	for (unsigned k = 0; k < TRIALS; k++) {
		/* the true value anywhere on the bucket grid, not at one fixed place in one bucket */
		double scale = exp(0.1 * fb_rng_uniform(&r)), truth = scale * q;
		for (unsigned i = 0; i < reps; i++)
			v[i] = repetition(&r, d, pct, scale);
		struct fb_ci ci = median_interval(v, reps, m, &boot);
		assert_true(ci.kind != FB_CI_NONE);
		t.ranges += ci.kind == FB_CI_RANGE;
		t.intervals += ci.kind == FB_CI_INTERVAL;
		t.level = ci.level;
		t.hit += ci.lo <= truth && truth <= ci.hi;
	}
	return t;
}

/* FB_COVERAGE_SEED shifts every seed: the bounds hold whatever the seed but
 * for chance (each check is +-4 standard errors). */
static uint64_t seed_base(void)
{
	const char *s = getenv("FB_COVERAGE_SEED");
	return s ? strtoull(s, NULL, 0) * 1000003u : 0;
}

static const unsigned reps_of[] = { 3, 5, 10, 30 };
static const double pct_of[] = { 50.0, 99.0, 99.9 };

/* Every distribution, percentile and R: intervals at 95 %, ranges at the coverage they state. */
static void median_intervals_cover_as_labelled(void **state)
{
	for (int d = 0; d < NDIST; d++)
		for (size_t p = 0; p < 3; p++)
			for (size_t k = 0; k < 4; k++) {
				unsigned reps = reps_of[k];
				struct tally t = median_coverage(d, pct_of[p], reps, CURRENT, seed_base() + 1000 * d + 10 * p + k);
				double c = (double)t.hit / TRIALS;
				printf("  %-9s p%-4g R=%-2u %s at %.1f%%: covered %.1f%%\n", dist_name[d], pct_of[p], reps,
				       t.ranges ? "range   " : "interval", 100 * t.level, 100 * c);
				if (reps < FB_CI_MIN_REPS) {
					/* too few for 95 %: every one is a range, stating 1 - 2^(1-R) */
					assert_int_equal(t.ranges, TRIALS);
					assert_true(fabs(t.level - (1 - ldexp(1.0, 1 - (int)reps))) < 1e-12);
					/* the bucket floor may widen a narrow range: at least its level */
					assert_true(c >= t.level - 4 * sqrt(t.level * (1 - t.level) / TRIALS));
				} else {
					assert_int_equal(t.intervals, TRIALS);
					assert_true(t.level == FB_BOOT_LEVEL);
					assert_true(c >= 0.93 && c <= 0.97);
				}
			}
}

/* The same bounds fail the intervals printed before (a bootstrap over the
 * repetitions, labelled 95 %) and zero-width ones. */
static void broken_intervals_are_caught(void **state)
{
	struct tally before = median_coverage(NORMAL, 50.0, 3, BOOTSTRAP_BEFORE, 7);
	struct tally zero = median_coverage(NORMAL, 50.0, 10, ZERO_WIDTH, 7);
	printf("  before: a \"95 %%\" bootstrap of 3 repetitions covered %.1f%%; zero-width at R=10: %.1f%%\n",
	       100.0 * before.hit / TRIALS, 100.0 * zero.hit / TRIALS);
	assert_false(as_labelled((double)before.hit / TRIALS, before.level));
	assert_false(as_labelled((double)zero.hit / TRIALS, zero.level));
}

/* The mean aggregate's t interval on a plain metric: normal and lognormal repetitions. */
static void mean_intervals_cover_as_labelled(void **state)
{
	struct fb_rng r = { seed_base() + 99 };
	double v[MAXREPS];
	for (int d = 0; d < 2; d++)
		for (size_t k = 0; k < 4; k++) {
			unsigned reps = reps_of[k], hit = 0;
			/* a rate of 1000/s: sd 5 %, or lognormal of log-sd 0.05 (mean exp(0.00125) * 1000) */
			double truth = d == NORMAL ? 1000.0 : 1000.0 * exp(0.00125);
			for (unsigned t = 0; t < TRIALS; t++) {
				for (unsigned i = 0; i < reps; i++)
					v[i] = d == NORMAL ? 1000.0 * (1 + 0.05 * normal_draw(&r))
							   : 1000.0 * exp(0.05 * normal_draw(&r));
				struct fb_ci ci = fb_ci_mean(v, reps);
				assert_int_equal(ci.kind, FB_CI_INTERVAL);
				hit += ci.lo <= truth && truth <= ci.hi;
			}
			double c = (double)hit / TRIALS;
			printf("  mean, %-9s R=%-2u: covered %.1f%%\n", dist_name[d], reps, 100 * c);
			assert_true(c >= 0.93 && c <= 0.97);
		}
}

/* The rank coverage is the binomial one; the floor widens and names a zero width. */
static void ranks_and_floor(void **state)
{
	assert_true(fabs(fb_ci_rank_coverage(3, 1) - 0.75) < 1e-12);
	assert_true(fabs(fb_ci_rank_coverage(10, 2) - (1 - 2 * 11.0 / 1024)) < 1e-12);
	double same[6] = { 7, 7, 7, 7, 7, 7 };
	struct fb_ci ci = fb_ci_median(same, 6);
	fb_ci_floor(&ci, 7, 0);
	assert_int_equal(ci.kind, FB_CI_RANGE);   /* every repetition agrees: not an interval */
	ci = fb_ci_median(same, 6);
	fb_ci_floor(&ci, 7, 0.5);
	assert_int_equal(ci.kind, FB_CI_INTERVAL);
	assert_true(ci.lo == 6.5 && ci.hi == 7.5);   /* at least the bucket around the value */
	double one = 3;
	assert_int_equal(fb_ci_median(&one, 1).kind, FB_CI_NONE);
	assert_int_equal(fb_ci_mean(&one, 1).kind, FB_CI_NONE);
	assert_true(fabs(fb_ci_t975(2) - 4.303) < 1e-9 && fabs(fb_ci_t975(100) - 1.984) < 1e-3);
	/* a ratio is never narrower than either side's floor allows */
	struct fb_ci a = { FB_CI_INTERVAL, 99, 101, 0.95 }, b = { FB_CI_INTERVAL, 100, 100.1, 0.95 };
	struct fb_ci q = fb_ci_ratio(100, a, 100, b);
	assert_true(q.lo <= 0.99 && q.hi >= 1.0099 && q.kind == FB_CI_INTERVAL);
}

FB_TEST_MAIN(cmocka_unit_test(median_intervals_cover_as_labelled),
	     cmocka_unit_test(broken_intervals_are_caught),
	     cmocka_unit_test(mean_intervals_cover_as_labelled),
	     cmocka_unit_test(ranks_and_floor))
