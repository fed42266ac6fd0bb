/* benchmarks/scenarios/table.h — fencebench's scenarios, in `fencebench list` order.
 *
 * bm_scenarios is the table benchmarks/main.c hands to fb_main (src/fb_scenario.h),
 * and the one tests walk to check every scenario's declarations.  Read-only.
 */
#ifndef BM_SCENARIOS_TABLE_H
#define BM_SCENARIOS_TABLE_H

#include "src/fb_scenario.h"

/* NULL-terminated. */
extern const struct fb_scenario *const bm_scenarios[];

#endif
