/* src/fb_boot.h — 95 % intervals: within a run by bootstrap, across repetitions by order statistics and t; the gate's test.
 *
 * Within one run: a percentile bootstrap, B = FB_BOOT_RESAMPLES (1000)
 * replicates of the statistic drawn from the data, the interval the 2.5th and
 * 97.5th percentiles of the replicates (the "percentile interval", as
 * criterion.rs reports).  Across repetitions: no resampling (fb_ci_* below).
 *
 *   within one run   a latency histogram (src/fb_hist.h).  A resample of n
 *                    values drawn with replacement from the histogram has as
 *                    its nearest-rank percentile of rank r (the rank
 *                    fb_hist_percentile answers) the value of the histogram's
 *                    empirical quantile function at U, where U is the r-th
 *                    smallest of n uniform numbers: U ~ Beta(r, n - r + 1)
 *                    (the inverse transform keeps order, so the r-th smallest
 *                    draw is F^-1 of the r-th smallest uniform).  So each
 *                    replicate draws one Beta variate (two Gamma variates,
 *                    Marsaglia-Tsang) and looks its rank up in the buckets'
 *                    cumulative counts (binary search): the same distribution
 *                    as resampling all n values, at O(log buckets) per
 *                    replicate whatever n is — a run of 10^8 samples costs
 *                    what one of 100 does.  The value of a bucket is what
 *                    fb_hist_percentile answers (its midpoint within [min,
 *                    max]), so the interval carries the histogram's 1/256.
 *   across repetitions  see "across repetitions" below: the repetitions' values
 *                    alone, by order statistics (median) and t (mean).
 *
 * The bootstrap treats the samples of a run as independent.  On a shared
 * machine they are not (a slow vCPU placement lasts), so a within-run interval
 * is sampling noise only: repeat the run (--repetitions 6 or more) for the
 * interval that also holds the noise between runs.
 *
 * The PRNG is splitmix64 (the generator benchmarks/fence_rig.c's rig_rand
 * uses), seeded per metric from the run's --seed and the metric's identity
 * (fb_boot_seed), so every interval is the same on every re-run of the same
 * numbers and independent of the order metrics are reported in.
 *
 * Single thread per struct fb_rng; nothing blocks or allocates except where
 * said (fb_boot_percentiles, fb_boot_interval: malloc, abort on OOM).
 */
#ifndef FB_BOOT_H
#define FB_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fb_hist;

#define FB_BOOT_RESAMPLES 1000      /* replicates per interval */
#define FB_BOOT_LEVEL     0.95      /* two-sided coverage of every interval */

/* splitmix64 state. */
struct fb_rng {
	uint64_t s;
};

/* The next 64 random bits. */
uint64_t fb_rng_next(struct fb_rng *r);
/* Uniform in (0, 1), never 0 or 1. */
double fb_rng_uniform(struct fb_rng *r);
/* Uniform integer in [0, n) (n >= 1). */
uint64_t fb_rng_below(struct fb_rng *r, uint64_t n);
/* A Gamma(shape, 1) variate, shape >= 1 (Marsaglia and Tsang, 2000). */
double fb_rng_gamma(struct fb_rng *r, double shape);
/* A Beta(a, b) variate, a, b >= 1. */
double fb_rng_beta(struct fb_rng *r, double a, double b);

/* A seed for the metric named by the strings (any may be NULL) and n,
 * mixed with seed: FNV-1a over the text, then splitmix64. */
uint64_t fb_boot_seed(uint64_t seed, const char *a, const char *b, const char *c, uint64_t n);

/* Replicates of fb_hist_percentile(h, pct[k]) for k < npct: out[k * nres + j],
 * j < nres.  An empty histogram leaves out untouched and returns -ENODATA;
 * 0 otherwise.  One pass over the buckets, then O(log buckets) per replicate. */
int fb_boot_percentiles(const struct fb_hist *h, const double *pct, size_t npct, struct fb_rng *rng,
			float *out, size_t nres);

/* The percentile interval of the replicates rep[0..n-1] at level (0.95: the
 * 2.5th and 97.5th percentiles, by linear interpolation between order
 * statistics).  Non-finite replicates are left out; none: lo = hi = NAN. */
void fb_boot_interval(const double *rep, size_t n, double level, double *lo, double *hi);
/* The same over float replicates. */
void fb_boot_interval_f(const float *rep, size_t n, double level, double *lo, double *hi);

/* The larger of the interval's two half-widths relative to the value
 * (|v| > 0): what "249 ns ±4%" shows; NAN when there is no interval. */
double fb_boot_rel_halfwidth(double v, double lo, double hi);

/* The change from a base value b (interval [blo, bhi]) to a new value n
 * ([nlo, nhi]) of two independent runs, relative to b: *change = n/b - 1
 * and its interval [*lo, *hi], by the method of variance estimates recovery
 * (MOVER, Zou and Donner 2008): each side's distance from its estimate to
 * its bound stands for its spread, and the two add in quadrature —
 *     log n/b - sqrt((log n - log nlo)^2 + (log bhi - log b)^2)   and the upper likewise
 * on the log scale when every number is positive, on the difference n - b
 * (divided by |b|) otherwise.  b == 0: the difference itself, *relative =
 * false.  An interval missing on either side (NAN): *lo = *hi = NAN. */
void fb_boot_change(double b, double blo, double bhi, double n, double nlo, double nhi, double *change,
		    double *lo, double *hi, int *relative);

/* ---- across repetitions: intervals without resampling ----
 *
 * A repetition is one draw of the run's outcome; its within-run noise is
 * already in its value, so the repetitions' values alone (the top level) hold
 * everything, and resampling each run's samples again would count that noise
 * twice.  Two intervals on the R values, with the coverage each really has:
 *
 *   median   distribution-free, from order statistics: the ranks (k, R-k+1)
 *            hold the median with probability 1 - 2 P(Bin(R, 1/2) < k),
 *            exactly, whatever the distribution; k is the largest whose
 *            coverage reaches FB_BOOT_LEVEL, and the bounds are interpolated
 *            towards ranks k+1 and R-k so the coverage is the level, not
 *            above it (Hettmansperger and Sheather, 1986).  Below
 *            FB_CI_MIN_REPS repetitions no ranks reach 95 %: the interval is
 *            the range of the values, kind FB_CI_RANGE, with the coverage the
 *            range has (1 - 2^(1-R): 75 % at R = 3, 93.75 % at R = 5).
 *   mean     Student's t on the values: mean +- t(R-1) s / sqrt(R), 95 %
 *            when the values are near normal (a mean of many samples is);
 *            R >= 2.
 *
 * Either way a floor (fb_ci_floor): no half-width below the resolution the
 * value was measured at (a histogram's bucket width), and an interval that
 * still has zero width (every repetition gave one count) is kind
 * FB_CI_RANGE: the values agree, which is not an interval. */

#define FB_CI_MIN_REPS 6    /* the fewest repetitions whose median interval reaches 95 % */

enum fb_ci_kind {
	FB_CI_NONE,         /* no interval (fewer than 2 values, or none finite) */
	FB_CI_INTERVAL,     /* an interval of coverage .level (FB_BOOT_LEVEL) */
	FB_CI_RANGE,        /* the range of the values; .level the coverage it has */
};

struct fb_ci {
	enum fb_ci_kind kind;
	double lo, hi;
	double level;       /* the probability the interval holds the true value */
};

/* The coverage of the order statistics (k, n-k+1) for the median: 1 - 2 P(Bin(n, 1/2) < k). */
double fb_ci_rank_coverage(size_t n, size_t k);
/* The median interval of v[0..n-1] (non-finite values left out).  Allocates. */
struct fb_ci fb_ci_median(const double *v, size_t n);
/* The t interval of the mean of v[0..n-1] (non-finite values left out). */
struct fb_ci fb_ci_mean(const double *v, size_t n);
/* Student's t quantile t(df) at 0.975 (df >= 1). */
double fb_ci_t975(size_t df);
/* The resolution w of the values (w <= 0: exact): every value is its
 * bucket's and the true one within w/2 of it, so ci widens by w/2 on each
 * side, and to half-widths of at least w around v; then a zero-width one is
 * called a range. */
void fb_ci_floor(struct fb_ci *ci, double v, double w);
/* The width of the histogram bucket holding v (src/fb_hist.h): the floor of
 * a percentile's half-width; 0 for v < 1. */
double fb_ci_bucket_width(double v);
/* The ratio n / b of two positive values of independent runs with intervals
 * nci, bci: MOVER on the log scale (as fb_boot_change), so never narrower than
 * either side's own interval (and so its floor) allows; its level is the
 * lower of the two, a range when either is.  Not positive: kind FB_CI_NONE. */
struct fb_ci fb_ci_ratio(double n, struct fb_ci nci, double b, struct fb_ci bci);

/* ---- do two estimates of one quantity agree? ----
 *
 * Two estimates of the same quantity, each measured with its own noise (a
 * device's native/legacy ratio and the model's prediction of it, both from
 * repeated runs), each with its 95 % interval.  They agree when the two
 * intervals overlap; they disagree when they are further apart than the
 * intervals (disjoint).  Overlap, not "b's point inside a's interval": both
 * sides are measured, so neither point is the truth the other is judged
 * against.  Disjoint 95 % intervals are a conservative test of a difference
 * (their overlap rejects at well below 5 %), so DISAGREE is never claimed
 * lightly; AGREE means no difference was shown at this resolution, not that
 * there is none.  A range (FB_CI_RANGE: every repetition gave one value) is
 * taken as the interval it spans.  No interval on either side: no verdict. */
enum fb_agree {
	FB_AGREE_NONE,      /* an interval is missing: nothing can be said */
	FB_AGREE,           /* the intervals overlap (touching counts) */
	FB_DISAGREE,        /* further apart than the intervals */
};
enum fb_agree fb_ci_agree(struct fb_ci a, struct fb_ci b);
/* "agree", "DISAGREE", or "no verdict". */
const char *fb_agree_name(enum fb_agree v);

/* ---- did two sets of repetitions differ? ----
 *
 * The Mann-Whitney U test (Wilcoxon rank sum), two-sided, as Google
 * Benchmark's compare.py uses it across repetitions: a[0..m-1] against
 * b[0..n-1] (non-finite values left out), ties at their mid-rank.  Exact (the
 * permutation distribution of the rank sum, ties included) up to 80 values in
 * all; above, the normal approximation with the tie correction.  NAN when
 * either side has no value.  Allocates. */
double fb_mwu_p(const double *a, size_t m, const double *b, size_t n);
/* The smallest p-value fb_mwu_p can give for m and n values: 2 / C(m+n, m)
 * (one side wholly below the other).  1 when m or n is 0. */
double fb_mwu_min_p(size_t m, size_t n);
/* Holm's step-down over p[0..k-1] at family-wise level alpha: reject[i] for
 * the hypotheses it rejects (the i-th smallest p against alpha / (k - i),
 * until the first that fails).  NAN p-values are never rejected. */
void fb_holm(const double *p, size_t k, double alpha, bool *reject);

#endif
