/* src/fb_grid.h — sweep grids: axes of values, their points, shards (pure; no I/O).
 *
 * `--grid fences=1,4,16 --grid payload=array,null` is a grid of 2 axes and
 * 3 x 2 = 6 points.  Points are numbered 0..N-1 in row-major order (the last
 * axis varies fastest), so a point's number depends only on the grid as typed.
 * `--shard I/N` takes the points k with k % N == I: the N shards are disjoint
 * and their union is the grid, whatever N.
 *
 * Single-threaded data; every function is pure apart from allocation (which
 * aborts on out-of-memory).  The parsers write a one-line message naming the
 * bad part into err and return -EINVAL; they never print.
 */
#ifndef FB_GRID_H
#define FB_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FB_GRID_MAX_POINTS 1000000u   /* a larger grid is refused: it is surely a typo */

struct fb_grid_axis {
	char *key;
	char **values;   /* n strings, as typed */
	size_t n;
};

struct fb_grid {
	struct fb_grid_axis *axes;
	size_t n;
};

/* Parse "key=v1,v2,..." and append it as an axis.  0, or -EINVAL: no '=',
 * empty key, an empty value, the key already an axis, or more than
 * FB_GRID_MAX_POINTS points in all. */
int fb_grid_add_axis(struct fb_grid *g, const char *spec, char *err, size_t errlen);
/* Number of points (1 for a grid with no axes). */
uint64_t fb_grid_points(const struct fb_grid *g);
/* The value index on each axis of point k (< fb_grid_points): idx[0..g->n-1]. */
void fb_grid_point(const struct fb_grid *g, uint64_t k, size_t *idx);
/* Free the axes; g itself is left empty and reusable. */
void fb_grid_free(struct fb_grid *g);

/* Parse "I/N" with 0 <= I < N <= 1000000.  0 or -EINVAL. */
int fb_shard_parse(const char *text, unsigned *index, unsigned *count, char *err, size_t errlen);
/* Point k belongs to shard index of count. */
static inline bool fb_shard_has(uint64_t k, unsigned index, unsigned count)
{
	return count <= 1 || k % count == index;
}
/* How many of the first `points` points shard index/count holds. */
uint64_t fb_shard_size(uint64_t points, unsigned index, unsigned count);

#endif
