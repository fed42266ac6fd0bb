/* src/fb_boot.c — bootstrap intervals and their PRNG.  Contract in fb_boot.h. */
#include "src/fb_boot.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "src/fb_hist.h"
#include "src/fb_util.h"

/* ---- the PRNG ---- */

uint64_t fb_rng_next(struct fb_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double fb_rng_uniform(struct fb_rng *r)
{
	/* 53 random bits, shifted half a step off 0: in (0, 1) */
	return ((double)(fb_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

uint64_t fb_rng_below(struct fb_rng *r, uint64_t n)
{
	/* multiply-shift: bias below 2^-64 * n, nothing a 1000-replicate interval sees */
	return (uint64_t)(((unsigned __int128)fb_rng_next(r) * n) >> 64);
}

static double normal(struct fb_rng *r)
{
	double u1 = fb_rng_uniform(r), u2 = fb_rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double fb_rng_gamma(struct fb_rng *r, double shape)
{
	double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
	for (;;) {
		double x, v;
		do {
			x = normal(r);
			v = 1.0 + c * x;
		} while (v <= 0.0);
		v = v * v * v;
		double u = fb_rng_uniform(r);
		if (u < 1.0 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
			return d * v;
	}
}

double fb_rng_beta(struct fb_rng *r, double a, double b)
{
	double x = fb_rng_gamma(r, a), y = fb_rng_gamma(r, b);
	return x / (x + y);
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;   /* a separator: ("ab","c") differs from ("a","bc") */
}

uint64_t fb_boot_seed(uint64_t seed, const char *a, const char *b, const char *c, uint64_t n)
{
	uint64_t h = fnv1a(fnv1a(fnv1a(0xcbf29ce484222325ull, a), b), c);
	struct fb_rng r = { seed ^ h ^ (n * 0x9e3779b97f4a7c15ull) };
	return fb_rng_next(&r);
}

/* ---- within a run: percentiles of a histogram ---- */

/* The non-empty buckets: cumulative counts and the values percentiles report. */
struct cumulative {
	uint64_t *cum;
	double *val;
	size_t n;
};

static void cumulative_of(const struct fb_hist *h, struct cumulative *c)
{
	size_t cap = 0;
	for (unsigned i = 0; i < FB_HIST_BUCKETS; i++)
		cap += fb_hist_bucket_count(h, i) != 0;
	c->cum = fb_xcalloc(cap, sizeof(*c->cum));
	c->val = fb_xcalloc(cap, sizeof(*c->val));
	c->n = 0;
	uint64_t seen = 0;
	for (unsigned i = 0; i < FB_HIST_BUCKETS; i++) {
		uint64_t k = fb_hist_bucket_count(h, i);
		if (!k)
			continue;
		seen += k;
		c->cum[c->n] = seen;
		c->val[c->n++] = (double)fb_hist_bucket_value(h, i);
	}
}

/* The value of rank k (1..count): the first bucket whose cumulative count reaches it. */
static double value_of_rank(const struct cumulative *c, uint64_t k)
{
	size_t lo = 0, hi = c->n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->cum[mid] >= k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return c->val[lo];
}

int fb_boot_percentiles(const struct fb_hist *h, const double *pct, size_t npct, struct fb_rng *rng,
			float *out, size_t nres)
{
	uint64_t n = fb_hist_count(h);
	if (!n)
		return -ENODATA;
	struct cumulative c;
	cumulative_of(h, &c);
	for (size_t k = 0; k < npct; k++) {
		uint64_t r = fb_hist_rank(n, pct[k]);
		for (size_t j = 0; j < nres; j++) {
			/* the r-th smallest of n uniforms; its rank among the n values */
			double u = fb_rng_beta(rng, (double)r, (double)(n - r + 1));
			double x = ceil(u * (double)n);
			uint64_t rank = x < 1.0 ? 1 : x >= (double)n ? n : (uint64_t)x;
			out[k * nres + j] = (float)value_of_rank(&c, rank);
		}
	}
	free(c.cum);
	free(c.val);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* ---- intervals ---- */

static double quantile_sorted(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

static void interval_of(double *v, size_t m, double level, double *lo, double *hi)
{
	if (!m) {
		*lo = *hi = NAN;
		return;
	}
	qsort(v, m, sizeof(*v), cmp_double);
	double tail = (1.0 - level) / 2.0;
	*lo = quantile_sorted(v, m, tail);
	*hi = quantile_sorted(v, m, 1.0 - tail);
}

void fb_boot_interval(const double *rep, size_t n, double level, double *lo, double *hi)
{
	double *v = fb_xcalloc(n ? n : 1, sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(rep[i]))
			v[m++] = rep[i];
	interval_of(v, m, level, lo, hi);
	free(v);
}

void fb_boot_interval_f(const float *rep, size_t n, double level, double *lo, double *hi)
{
	double *v = fb_xcalloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = rep[i];
	fb_boot_interval(v, n, level, lo, hi);
	free(v);
}

double fb_boot_rel_halfwidth(double v, double lo, double hi)
{
	if (!isfinite(v) || !isfinite(lo) || !isfinite(hi) || v == 0)
		return NAN;
	double up = hi - v, down = v - lo;
	return (up > down ? up : down) / fabs(v);
}

/* ---- the change between two runs ---- */

void fb_boot_change(double b, double blo, double bhi, double n, double nlo, double nhi, double *change,
		    double *lo, double *hi, int *relative)
{
	bool have = isfinite(blo) && isfinite(bhi) && isfinite(nlo) && isfinite(nhi);
	*relative = b != 0;
	*lo = *hi = NAN;
	if (b > 0 && n > 0 && blo > 0 && nlo > 0) {
		double d = log(n / b);
		*change = n / b - 1.0;
		if (have) {
			*lo = expm1(d - hypot(log(n) - log(nlo), log(bhi) - log(b)));
			*hi = expm1(d + hypot(log(nhi) - log(n), log(b) - log(blo)));
		}
		return;
	}
	double d = n - b, scale = b != 0 ? fabs(b) : 1.0;
	*change = d / scale;
	if (have) {
		*lo = (d - hypot(n - nlo, bhi - b)) / scale;
		*hi = (d + hypot(nhi - n, b - blo)) / scale;
	}
}

/* ---- across repetitions: order statistics and t ---- */

double fb_ci_rank_coverage(size_t n, size_t k)
{
	/* P(Bin(n, 1/2) < k), summed in logs: n may be 100 */
	double below = 0;
	for (size_t j = 0; j < k && j <= n; j++)
		below += exp(lgamma((double)n + 1) - lgamma((double)j + 1) - lgamma((double)(n - j) + 1) -
			     (double)n * log(2.0));
	return 1.0 - 2.0 * below;
}

static size_t finite_sorted(const double *v, size_t n, double *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			out[m++] = v[i];
	qsort(out, m, sizeof(*out), cmp_double);
	return m;
}

struct fb_ci fb_ci_median(const double *v, size_t n)
{
	struct fb_ci ci = { FB_CI_NONE, NAN, NAN, NAN };
	double *x = fb_xcalloc(n ? n : 1, sizeof(*x));
	size_t m = finite_sorted(v, n, x);
	if (m >= 2 && m < FB_CI_MIN_REPS) {
		ci = (struct fb_ci){ FB_CI_RANGE, x[0], x[m - 1], fb_ci_rank_coverage(m, 1) };
	} else if (m >= FB_CI_MIN_REPS) {
		size_t k = 1;   /* the largest k whose ranks (k, m-k+1) still reach the level */
		while (fb_ci_rank_coverage(m, k + 1) >= FB_BOOT_LEVEL)
			k++;
		double gk = fb_ci_rank_coverage(m, k), g1 = fb_ci_rank_coverage(m, k + 1);
		double in = (gk - FB_BOOT_LEVEL) / (gk - g1);
		double lambda = (double)(m - k) * in / ((double)k + (double)(m - 2 * k) * in);
		ci.kind = FB_CI_INTERVAL;
		ci.level = FB_BOOT_LEVEL;
		ci.lo = (1 - lambda) * x[k - 1] + lambda * x[k];
		ci.hi = (1 - lambda) * x[m - k] + lambda * x[m - k - 1];
	}
	free(x);
	return ci;
}

double fb_ci_t975(size_t df)
{
	static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
				    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
				    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };
	if (df < sizeof(t) / sizeof(t[0]))
		return t[df];
	/* Cornish-Fisher expansion about z = 1.96: within 1e-4 above 30 */
	double z = 1.959964, d = (double)df;
	return z + (z * z * z + z) / (4 * d) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

struct fb_ci fb_ci_mean(const double *v, size_t n)
{
	struct fb_ci ci = { FB_CI_NONE, NAN, NAN, NAN };
	double sum = 0, ss = 0;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i])) {
			sum += v[i];
			m++;
		}
	if (m < 2)
		return ci;
	double mean = sum / (double)m;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			ss += (v[i] - mean) * (v[i] - mean);
	double half = fb_ci_t975(m - 1) * sqrt(ss / (double)(m - 1) / (double)m);
	return (struct fb_ci){ FB_CI_INTERVAL, mean - half, mean + half, FB_BOOT_LEVEL };
}

void fb_ci_floor(struct fb_ci *ci, double v, double w)
{
	if (ci->kind == FB_CI_NONE || !isfinite(v))
		return;
	if (w > 0) {
		if (ci->lo > v - w)
			ci->lo = v - w;
		if (ci->hi < v + w)
			ci->hi = v + w;
	}
	if (ci->hi <= ci->lo)
		ci->kind = FB_CI_RANGE;
}

double fb_ci_bucket_width(double v)
{
	if (!(v >= 1.0) || v >= 0x1.0p63)
		return 0;
	return (double)fb_hist_bucket_width(fb_hist_bucket_of((uint64_t)v));
}

struct fb_ci fb_ci_ratio(double n, struct fb_ci nci, double b, struct fb_ci bci)
{
	struct fb_ci ci = { FB_CI_NONE, NAN, NAN, NAN };
	if (nci.kind == FB_CI_NONE || bci.kind == FB_CI_NONE || !(n > 0) || !(b > 0) || !(nci.lo > 0) ||
	    !(bci.lo > 0))
		return ci;
	double change, lo, hi;
	int relative;
	fb_boot_change(b, bci.lo, bci.hi, n, nci.lo, nci.hi, &change, &lo, &hi, &relative);
	ci.lo = 1 + lo;
	ci.hi = 1 + hi;
	ci.level = nci.level < bci.level ? nci.level : bci.level;
	ci.kind = nci.kind == FB_CI_RANGE || bci.kind == FB_CI_RANGE || ci.hi <= ci.lo ? FB_CI_RANGE : FB_CI_INTERVAL;
	return ci;
}

/* ---- agreement ---- */

static bool ci_usable(struct fb_ci c)
{
	return c.kind != FB_CI_NONE && isfinite(c.lo) && isfinite(c.hi) && c.lo <= c.hi;
}

enum fb_agree fb_ci_agree(struct fb_ci a, struct fb_ci b)
{
	if (!ci_usable(a) || !ci_usable(b))
		return FB_AGREE_NONE;
	return a.lo <= b.hi && b.lo <= a.hi ? FB_AGREE : FB_DISAGREE;
}

const char *fb_agree_name(enum fb_agree v)
{
	return v == FB_AGREE ? "agree" : v == FB_DISAGREE ? "DISAGREE" : "no verdict";
}

/* ---- Mann-Whitney U and Holm ---- */

#define MWU_EXACT_MAX 80

struct ranked {
	double v;
	int side;   /* 0: a, 1: b */
};

static int cmp_ranked(const void *x, const void *y)
{
	double a = ((const struct ranked *)x)->v, b = ((const struct ranked *)y)->v;
	return a < b ? -1 : a > b;
}

/* Twice each value's mid-rank (an integer), in sorted order; the sum of
 * side a's, and the tie correction sum(t^3 - t). */
static void doubled_ranks(const struct ranked *r, size_t N, unsigned *d2, unsigned long *sa, double *ties)
{
	*sa = 0;
	*ties = 0;
	for (size_t i = 0; i < N;) {
		size_t j = i;
		while (j + 1 < N && r[j + 1].v == r[i].v)
			j++;
		for (size_t k = i; k <= j; k++) {
			d2[k] = (unsigned)(i + j + 2);   /* (i+1 + j+1) = twice the mid-rank */
			if (r[k].side == 0)
				*sa += d2[k];
		}
		double t = (double)(j - i + 1);
		*ties += t * t * t - t;
		i = j + 1;
	}
}

/* The exact two-sided p: the share of the C(N, m) subsets of m doubled ranks
 * whose sum is at least as far from its mean as sa. */
static double mwu_exact(const unsigned *d2, size_t N, size_t m, unsigned long sa)
{
	size_t smax = 2 * N * m + 1;
	double *w = fb_xcalloc((m + 1) * smax, sizeof(*w));   /* w[j * smax + s]: j chosen, doubled sum s */
	w[0] = 1;
	for (size_t i = 0; i < N; i++)
		for (size_t j = (i + 1 < m ? i + 1 : m); j >= 1; j--)
			for (size_t s = d2[i]; s < smax; s++)
				w[j * smax + s] += w[(j - 1) * smax + s - d2[i]];
	double mean = (double)m * (double)(N + 1), far = fabs((double)sa - mean) - 1e-9, hit = 0, all = 0;
	for (size_t s = 0; s < smax; s++) {
		all += w[m * smax + s];
		if (fabs((double)s - mean) >= far)
			hit += w[m * smax + s];
	}
	free(w);
	return hit / all;
}

double fb_mwu_p(const double *a, size_t m, const double *b, size_t n)
{
	struct ranked *r = fb_xcalloc(m + n + 1, sizeof(*r));
	size_t N = 0, ma = 0;
	for (size_t i = 0; i < m; i++)
		if (isfinite(a[i])) {
			r[N++] = (struct ranked){ a[i], 0 };
			ma++;
		}
	for (size_t i = 0; i < n; i++)
		if (isfinite(b[i]))
			r[N++] = (struct ranked){ b[i], 1 };
	double p = NAN;
	if (ma && ma < N) {
		qsort(r, N, sizeof(*r), cmp_ranked);
		unsigned *d2 = fb_xcalloc(N, sizeof(*d2));
		unsigned long sa;
		double ties;
		doubled_ranks(r, N, d2, &sa, &ties);
		if (N <= MWU_EXACT_MAX) {
			p = mwu_exact(d2, N, ma, sa);
		} else {
			double mb = (double)(N - ma), mm = (double)ma, nn = (double)N;
			double u = (double)sa / 2 - mm * (mm + 1) / 2, mu = mm * mb / 2;
			double var = mm * mb / 12 * ((nn + 1) - ties / (nn * (nn - 1)));
			double z = var > 0 ? (fabs(u - mu) - 0.5) / sqrt(var) : 0;
			p = z > 0 ? erfc(z / M_SQRT2) : 1.0;
		}
		free(d2);
		if (p > 1)
			p = 1;
	}
	free(r);
	return p;
}

double fb_mwu_min_p(size_t m, size_t n)
{
	if (!m || !n)
		return 1;
	double lc = lgamma((double)(m + n) + 1) - lgamma((double)m + 1) - lgamma((double)n + 1);
	double p = 2 * exp(-lc);
	return p < 1 ? p : 1;
}

void fb_holm(const double *p, size_t k, double alpha, bool *reject)
{
	size_t *order = fb_xcalloc(k ? k : 1, sizeof(*order)), m = 0;
	for (size_t i = 0; i < k; i++) {
		reject[i] = false;
		if (isfinite(p[i]))
			order[m++] = i;
	}
	for (size_t i = 1; i < m; i++)   /* insertion sort by p: k is a handful */
		for (size_t j = i; j > 0 && p[order[j]] < p[order[j - 1]]; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t i = 0; i < m && p[order[i]] <= alpha / (double)(m - i); i++)
		reject[order[i]] = true;
	free(order);
}
