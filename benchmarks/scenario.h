/* benchmarks/scenario.h — moved to src/fb_scenario.h (the harness); this forward goes once the benchmarks include it directly. */
#include "src/fb_scenario.h"
