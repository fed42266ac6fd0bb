/* benchmarks/scenarios/analogs.h — the analogs scenario's note on an
 * operation outside the profile's tolerance, as a pure function (tests plant
 * its numbers).  Any thread; no side effects. */
#ifndef BENCHMARKS_SCENARIOS_ANALOGS_H
#define BENCHMARKS_SCENARIOS_ANALOGS_H

#include <stddef.h>

#include "benchmarks/profile.h"

/* Why op cannot come within the tolerance on this machine, appended to the
 * note ("; ..."), or "" when nothing is known.  A floor of the model's own
 * (the futex wake-to-runs it cannot avoid, wake_ns each) is named as one
 * only when the op's measured p50, model_ns, is not below it: a p50 under
 * the sum says the wake-ups overlapped, and the note says that instead. */
void bm_analogs_floor(enum bm_op op, double wake_ns, double model_ns, char *buf, size_t len);

#endif
