/* src/fb_hist.h — per-thread latency histograms (fb_hist), merged at the end.
 *
 * Log-linear buckets in the manner of HdrHistogram: every power of two is cut
 * into FB_HIST_SUB (128) equal buckets, and values below 256 are exact.  A
 * bucket [lo, lo + w) has w <= lo / 128, and a percentile is answered with the
 * bucket's midpoint clamped to the recorded [min, max], so the reported value
 * is within 1/256 (0.4 %) of the exact nearest-rank percentile — inside the
 * 1 % the harness promises.  Values are nanoseconds (any uint64_t works).
 *
 * Threads.  A histogram is owned by one thread: fb_hist_record is a plain
 * (non-atomic) update of memory no other thread touches, so the hot path
 * shares no cache line (fb_hist_new aligns the object to LF_CACHELINE and
 * nothing else lives in it).  After the recording threads are joined (or have
 * otherwise published their histograms with release/acquire), one thread
 * merges them with fb_hist_merge and reads the summary.
 *
 *   operation            | concurrent with record on the same hist?
 *   ---------------------+-----------------------------------------
 *   fb_hist_record       | no (owner thread only)
 *   fb_hist_merge (src)  | no: the owner must be done (joined)
 *   summary / percentile | no
 *
 * Memory: one histogram is ~59 KiB (7424 buckets of 8 bytes).  Nothing here
 * blocks; allocation aborts on out-of-memory (lockfree/alloc.h).
 */
#ifndef FB_HIST_H
#define FB_HIST_H

#include <stdint.h>

#define FB_HIST_SUB_BITS 7
#define FB_HIST_SUB      (1u << FB_HIST_SUB_BITS)          /* buckets per power of two */
#define FB_HIST_BUCKETS  ((64 - FB_HIST_SUB_BITS) * FB_HIST_SUB + FB_HIST_SUB)

struct fb_hist;

/* What the harness derives from a histogram (all in the recorded unit, ns). */
struct fb_hist_summary {
	uint64_t count;
	double   mean;
	uint64_t min, p50, p90, p99, p999, max;
};

/* A new, empty histogram, cache-line aligned.  Never NULL. */
struct fb_hist *fb_hist_new(void);
/* Free it.  NULL is ignored. */
void fb_hist_free(struct fb_hist *h);
/* Forget every recorded value (owner thread). */
void fb_hist_reset(struct fb_hist *h);

/* Record one value (owner thread only; wait-free, no atomics, no allocation). */
void fb_hist_record(struct fb_hist *h, uint64_t ns);
/* Record the same value n times (owner thread only). */
void fb_hist_record_n(struct fb_hist *h, uint64_t ns, uint64_t n);

/* Add src's values into dst.  src's owner must be finished (joined). */
void fb_hist_merge(struct fb_hist *dst, const struct fb_hist *src);

uint64_t fb_hist_count(const struct fb_hist *h);
uint64_t fb_hist_min(const struct fb_hist *h);   /* 0 when empty */
uint64_t fb_hist_max(const struct fb_hist *h);   /* 0 when empty */
double   fb_hist_mean(const struct fb_hist *h);  /* exact; 0 when empty */
/* The nearest-rank percentile p (0..100) within 1/256 relative error; 0 when empty. */
uint64_t fb_hist_percentile(const struct fb_hist *h, double p);
/* The nearest rank fb_hist_percentile answers percentile p (0..100) of count
 * values with: ceil(p/100 * count), within [1, count]. */
uint64_t fb_hist_rank(uint64_t count, double p);
/* count, mean, min, p50, p90, p99, p99.9, max in one pass. */
void fb_hist_summarize(const struct fb_hist *h, struct fb_hist_summary *out);

/* Bucket arithmetic, exposed for tests: index of a value, and the bucket's
 * lowest value and width. */
unsigned fb_hist_bucket_of(uint64_t v);
uint64_t fb_hist_bucket_lo(unsigned idx);
uint64_t fb_hist_bucket_width(unsigned idx);
/* The values recorded in bucket idx, and the value a percentile falling in
 * it is answered with (its midpoint, kept inside [min, max]): what the
 * bootstrap (src/fb_boot.h) resamples. */
uint64_t fb_hist_bucket_count(const struct fb_hist *h, unsigned idx);
uint64_t fb_hist_bucket_value(const struct fb_hist *h, unsigned idx);

#endif
