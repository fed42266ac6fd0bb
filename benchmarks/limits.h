/* benchmarks/limits.h — moved to src/fb_limits.h (the harness); this forward goes once the benchmarks include it directly. */
#include "src/fb_limits.h"
