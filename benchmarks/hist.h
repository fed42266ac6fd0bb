/* benchmarks/hist.h — moved to src/fb_hist.h (the harness); this forward goes once the benchmarks include it directly. */
#include "src/fb_hist.h"
