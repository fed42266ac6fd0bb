/* src/fb_hist.c — log-linear latency histogram.  Contract in fb_hist.h. */
#include "src/fb_hist.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "lockfree/alloc.h"
#include "lockfree/cacheline.h"

struct fb_hist {
	uint64_t count;
	uint64_t sum;      /* ns: overflows only past 584 years of recorded time */
	uint64_t min;
	uint64_t max;
	uint64_t bucket[FB_HIST_BUCKETS];
};

_Static_assert(FB_HIST_BUCKETS == 7424, "bucket count follows from 7 sub-bucket bits");

unsigned fb_hist_bucket_of(uint64_t v)
{
	if (v < FB_HIST_SUB)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	unsigned shift = msb - FB_HIST_SUB_BITS;         /* 0 for [128, 256) */
	unsigned mant = (unsigned)(v >> shift);           /* in [128, 256) */
	return shift * FB_HIST_SUB + mant;
}

uint64_t fb_hist_bucket_lo(unsigned idx)
{
	assert(idx < FB_HIST_BUCKETS);
	if (idx < FB_HIST_SUB)
		return idx;
	unsigned shift = (idx >> FB_HIST_SUB_BITS) - 1;
	uint64_t mant = (idx & (FB_HIST_SUB - 1)) | FB_HIST_SUB;
	return mant << shift;
}

uint64_t fb_hist_bucket_width(unsigned idx)
{
	assert(idx < FB_HIST_BUCKETS);
	if (idx < FB_HIST_SUB)
		return 1;
	return 1ull << ((idx >> FB_HIST_SUB_BITS) - 1);
}

struct fb_hist *fb_hist_new(void)
{
	struct fb_hist *h = lf_alloc(sizeof(*h), LF_CACHELINE);
	fb_hist_reset(h);
	return h;
}

void fb_hist_free(struct fb_hist *h)
{
	lf_free(h, sizeof(*h), LF_CACHELINE);
}

void fb_hist_reset(struct fb_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void fb_hist_record_n(struct fb_hist *h, uint64_t ns, uint64_t n)
{
	if (!n)
		return;
	h->bucket[fb_hist_bucket_of(ns)] += n;
	h->count += n;
	h->sum += ns * n;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
}

void fb_hist_record(struct fb_hist *h, uint64_t ns)
{
	fb_hist_record_n(h, ns, 1);
}

void fb_hist_merge(struct fb_hist *dst, const struct fb_hist *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < FB_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t fb_hist_count(const struct fb_hist *h) { return h->count; }
uint64_t fb_hist_min(const struct fb_hist *h) { return h->count ? h->min : 0; }
uint64_t fb_hist_max(const struct fb_hist *h) { return h->max; }

double fb_hist_mean(const struct fb_hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

/* Nearest rank of percentile p among count values: ceil(p/100 * count), >= 1.
 * In integers (p in millionths of a percent): in doubles 99.9/100*1000 is
 * 999.0000000000001, and ceil made p99.9 of 1000 samples the maximum. */
uint64_t fb_hist_rank(uint64_t count, double p)
{
	if (p <= 0.0)
		return 1;
	if (p >= 100.0)
		return count;
	unsigned __int128 ppm = (unsigned __int128)llround(p * 1e6);   /* of 100e6 */
	unsigned __int128 r = ((unsigned __int128)count * ppm + 100000000u - 1) / 100000000u;
	if (r < 1)
		return 1;
	return r >= count ? count : (uint64_t)r;
}

uint64_t fb_hist_bucket_count(const struct fb_hist *h, unsigned idx)
{
	assert(idx < FB_HIST_BUCKETS);
	return h->bucket[idx];
}

/* The value reported for bucket idx: its midpoint, kept inside [min, max]. */
uint64_t fb_hist_bucket_value(const struct fb_hist *h, unsigned idx)
{
	uint64_t v = fb_hist_bucket_lo(idx) + (fb_hist_bucket_width(idx) - 1) / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

/* Answer several ascending ranks in one walk of the buckets. */
static void ranks_to_values(const struct fb_hist *h, const uint64_t *rank, uint64_t *out, unsigned n)
{
	uint64_t seen = 0;
	unsigned k = 0;
	for (unsigned i = 0; i < FB_HIST_BUCKETS && k < n; i++) {
		seen += h->bucket[i];
		while (k < n && seen >= rank[k])
			out[k++] = fb_hist_bucket_value(h, i);
	}
	while (k < n)   /* unreachable with consistent counts; keep the answer defined */
		out[k++] = h->max;
}

uint64_t fb_hist_percentile(const struct fb_hist *h, double p)
{
	if (!h->count)
		return 0;
	if (p <= 0.0)
		return h->min;
	if (p >= 100.0)
		return h->max;
	uint64_t r = fb_hist_rank(h->count, p), v;
	ranks_to_values(h, &r, &v, 1);
	return v;
}

void fb_hist_summarize(const struct fb_hist *h, struct fb_hist_summary *out)
{
	memset(out, 0, sizeof(*out));
	if (!h->count)
		return;
	static const double pct[] = { 50.0, 90.0, 99.0, 99.9 };
	uint64_t rank[4], val[4];
	for (unsigned i = 0; i < 4; i++)
		rank[i] = fb_hist_rank(h->count, pct[i]);
	ranks_to_values(h, rank, val, 4);
	out->count = h->count;
	out->mean = fb_hist_mean(h);
	out->min = h->min;
	out->p50 = val[0];
	out->p90 = val[1];
	out->p99 = val[2];
	out->p999 = val[3];
	out->max = h->max;
}
