/* tests/fence_test_util.h — small helpers the fence-stack tests share. */
#ifndef FENCE_TEST_UTIL_H
#define FENCE_TEST_UTIL_H

#include <errno.h>
#include <time.h>

#include "gpu-model/os/os.h"
#include "lockfree/arch.h"
#include "lockfree/die.h"

/* Wait (bounded: 5 s) until cond() holds; returns whether it did. */
#define fbt_eventually(cond)                                                  \
	({                                                                    \
		uint64_t fbt_end__ = lf_now_ns() + 5000000000ull;             \
		bool fbt_ok__;                                                \
		while (!(fbt_ok__ = (cond)) && lf_now_ns() < fbt_end__) {     \
			struct timespec fbt_ts__ = { 0, 200000 };             \
			nanosleep(&fbt_ts__, NULL);                           \
		}                                                             \
		fbt_ok__;                                                     \
	})

/* Give threads a moment to do what they should not (absence checks). */
static inline void fbt_settle(void)
{
	struct timespec ts = { 0, 20000000 };
	nanosleep(&ts, NULL);
}

static inline struct os_adapter *fbt_adapter(struct os_config *cfg)
{
	char err[256] = "";
	struct os_adapter *a = NULL;
	if (os_adapter_create(cfg, &a, err, sizeof(err)) || os_adapter_start(a)) {
		lf_die("adapter: %s", err);
	}
	return a;
}

/* A queue the test cannot do without: dies with the reason if refused. */
static inline struct os_queue *fbt_queue(struct os_adapter *a, unsigned engine, size_t ring_slots)
{
	struct os_queue *q = NULL;
	int rc = os_queue_create(a, engine, ring_slots, &q);
	if (rc)
		lf_die("os_queue_create(engine %u, %zu slots): %d", engine, ring_slots, rc);
	return q;
}

static inline struct os_stats fbt_stats(struct os_adapter *a)
{
	struct os_stats s;
	os_adapter_stats(a, &s);
	return s;
}

static inline void fbt_signal_gpu(struct os_queue *q, struct os_fence *f, uint64_t v)
{
	struct hw_cmd c = { .op = HW_CMD_SIGNAL, .fence = os_fence_hw(f), .value = v };
	os_queue_submit(q, &c, 1);
}

#endif
