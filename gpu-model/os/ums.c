/* gpu-model/os/ums.c — the user-mode submission instance of an adapter:
 * config, attach (starts the scheduler and power threads), detach, statistics.
 * Contract in ums.h.  Devices, contexts and queues are in device.c, doorbells
 * in doorbell.c, the scheduler in sched.c, F/D states in power.c. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gpu-model/os/ums_internal.h"
#include "lockfree/alloc.h"
#include "lockfree/arch.h"
#include "lockfree/asym.h"
#include "lockfree/die.h"
#include "lockfree/thread.h"

void os_ums_config_default(struct os_ums_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sched_cpu = -1;
	cfg->power_cpu = -1;
	cfg->drain_timeout_ns = 10000000000ll;
	cfg->log_bytes = HW_LOG_SIZE;
	cfg->tdr_delay_ns = OS_TDR_DELAY_DEFAULT_NS;
	cfg->tdr_limit_count = OS_TDR_LIMIT_COUNT_DEFAULT;
	cfg->tdr_limit_time_ns = OS_TDR_LIMIT_TIME_DEFAULT_NS;
}

/* ---- attach / detach ---- */

int os_ums_attach(struct os_adapter *a, const struct os_ums_config *cfg, struct os_ums **out,
		  char *err, size_t errlen)
{
	const struct hw_caps *caps = hw_adapter_caps(os_adapter_hw(a));
	if (caps->doorbell_model > HW_DOORBELL_GLOBAL) {
		snprintf(err, errlen, "doorbell_model=%d: must be dedicated or global", (int)caps->doorbell_model);
		return -EINVAL;
	}
	if (caps->doorbells > HW_MAX_DOORBELLS) {
		snprintf(err, errlen, "doorbells=%u: at most %d physical doorbells", caps->doorbells, HW_MAX_DOORBELLS);
		return -EINVAL;
	}
	/* DxgkDdiQueryAdapterInfo(DXGKQAITYPE_USERMODESUBMISSION_CAPS): the
	 * doorbell memory size, for the dummy page and the mappings */
	size_t db_bytes = hw_doorbell_bytes(os_adapter_hw(a));
	os_ddi_log(a, OS_DDI_QUERY_UMS_CAPS, 0, db_bytes);
	if (db_bytes < 8 || db_bytes % 8 || db_bytes > HW_DOORBELL_MAX_BYTES) {
		snprintf(err, errlen, "doorbell_bytes=%zu: the doorbell memory size is a multiple of 8 up to %u bytes",
			 db_bytes, HW_DOORBELL_MAX_BYTES);
		return -EINVAL;
	}
	if (cfg->log_bytes < HW_LOG_HEADER_BYTES + sizeof(struct hw_log_entry) || cfg->log_bytes > OS_LOG_MAX_BYTES) {
		snprintf(err, errlen, "log_bytes=%zu: a native fence log buffer is %zu..%u bytes (header + at least one entry)",
			 cfg->log_bytes, (size_t)HW_LOG_HEADER_BYTES + sizeof(struct hw_log_entry), OS_LOG_MAX_BYTES);
		return -EINVAL;
	}
	struct os_ums *u = lf_alloc(sizeof(*u), LF_CACHELINE);
	u->a = a;
	u->hw = os_adapter_hw(a);
	u->cfg = *cfg;
	u->log_bytes = cfg->log_bytes;   /* os_ums_trace_start may raise it */
	/* the dummy page: the doorbell's size, in whole lines (rings there are
	 * stores nobody reads: apart from everything else) */
	u->db_bytes = db_bytes;
	u->dummy_bytes = (db_bytes + LF_CACHELINE - 1) / LF_CACHELINE * LF_CACHELINE;
	u->dummy = lf_alloc(u->dummy_bytes, LF_CACHELINE);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->drained, NULL);
	u->efd = eventfd(0, EFD_CLOEXEC);
	if (u->efd < 0) {
		int rc = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		pthread_cond_destroy(&u->drained);
		pthread_mutex_destroy(&u->lock);
		lf_free((void *)u->dummy, u->dummy_bytes, LF_CACHELINE);
		lf_free(u, sizeof(*u), LF_CACHELINE);
		return rc;
	}
	u->sched_clock = (clockid_t)-1;
	int rc = pthread_create(&u->sched, NULL, os_sched_main, u);
	if (!rc) {
		u->sched_started = true;
		if (pthread_getcpuclockid(u->sched, &u->sched_clock))
			u->sched_clock = (clockid_t)-1;
		rc = pthread_create(&u->power, NULL, os_power_main, u);
		u->power_started = !rc;
	}
	if (!rc)
		rc = os_tdr_start(u);
	if (rc) {
		snprintf(err, errlen, "starting the OS submission threads: %s", strerror(rc));
		os_ums_detach(u);
		return -rc;
	}
	while (!atomic_load(&u->sched_tid) || !atomic_load(&u->power_tid))
		sched_yield();
	*out = u;
	return 0;
}

void os_ums_detach(struct os_ums *u)
{
	if (!u)
		return;
	for (uint32_t i = 0; i < u->ndevices; i++)
		if (!u->devices[i]->dead)
			os_device_destroy(u->devices[i]);
	atomic_store_explicit(&u->stop, true, memory_order_seq_cst);
	if (u->sched_started) {
		uint64_t one = 1;
		if (write(u->efd, &one, sizeof(one)) < 0)
			lf_die("stopping the scheduler thread: eventfd write: %s", strerror(errno));
		pthread_join(u->sched, NULL);
	}
	if (u->power_started) {
		hw_state_irq_kick(u->hw);
		pthread_join(u->power, NULL);
	}
	os_tdr_stop(u);
	close(u->efd);
	uint32_t nq = atomic_load(&u->nqueues);
	for (uint32_t i = 0; i < nq; i++) {
		lf_ring_destroy(u->queues[i]->subq);
		os_ctx_alloc_destroy(u->a, &u->queues[i]->ctx_alloc);   /* user-mode ones left (ctxalloc.c) */
		lf_free(u->queues[i], sizeof(struct os_hwqueue), LF_CACHELINE);
	}
	for (uint32_t i = 0; i < u->ncontexts; i++)
		lf_free(u->contexts[i], sizeof(struct os_context), LF_CACHELINE);
	for (uint32_t i = 0; i < u->ndevices; i++) {
		free(u->devices[i]->fences);
		for (struct os_ring_alloc *r = u->devices[i]->allocs, *next; r; r = next) {
			next = r->next;
			if (r->kept)
				lf_free(r->kept, r->bytes, LF_DESTRUCTIVE);   /* never destroyed after a termination */
			lf_free(r, sizeof(*r), LF_CACHELINE);   /* rings: freed at destroy or with their queue */
		}
		lf_free(u->devices[i], sizeof(struct os_device), LF_CACHELINE);
	}
	pthread_cond_destroy(&u->drained);
	pthread_mutex_destroy(&u->lock);
	lf_free((void *)u->dummy, u->dummy_bytes, LF_CACHELINE);
	lf_free(u, sizeof(*u), LF_CACHELINE);
}

struct os_adapter *os_ums_adapter(struct os_ums *u)
{
	return u->a;
}

pid_t os_ums_sched_tid(const struct os_ums *u)
{
	return atomic_load(&u->sched_tid);
}

pid_t os_ums_power_tid(const struct os_ums *u)
{
	return atomic_load(&u->power_tid);
}

size_t os_ums_doorbell_bytes(const struct os_ums *u)
{
	return u->db_bytes;
}

size_t os_ums_dummy_page_bytes(const struct os_ums *u)
{
	return u->dummy_bytes;
}

uint64_t os_ums_kernel_calls(const struct os_ums *u)
{
	return atomic_load_explicit(&u->thunks, memory_order_relaxed) +
	       atomic_load_explicit(&u->km_submits, memory_order_relaxed) +
	       atomic_load_explicit(&u->notifies, memory_order_relaxed);
}

pid_t os_ums_tdr_tid(const struct os_ums *u)
{
	return atomic_load(&u->tdr_tid);
}

bool os_ums_bugchecked(struct os_ums *u)
{
	pthread_mutex_lock(&u->lock);
	bool b = u->bugchecked;
	pthread_mutex_unlock(&u->lock);
	return b;
}

/* ---- statistics ---- */

#define UMS_LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

void os_ums_stats(struct os_ums *u, struct os_ums_stats *o)
{
	memset(o, 0, sizeof(*o));
	pthread_mutex_lock(&u->lock);
	o->connects = UMS_LOAD(u->connects);
	o->victimizations = UMS_LOAD(u->victimizations);
	o->f1_requests = UMS_LOAD(u->f1_requests);
	o->hung_reports = UMS_LOAD(u->hung_reports);
	o->f1_disconnects = UMS_LOAD(u->f1_disconnects);
	o->f0_by_connect = UMS_LOAD(u->f0_by_connect);
	o->d3_entries = UMS_LOAD(u->d3_entries);
	o->d0_exits = UMS_LOAD(u->d0_exits);
	o->d3_ns = UMS_LOAD(u->d3_ns);
	o->ring_evictions = UMS_LOAD(u->ring_evictions);
	o->ring_restores = UMS_LOAD(u->ring_restores);
	o->suspends = UMS_LOAD(u->suspends);
	o->resumes = UMS_LOAD(u->resumes);
	o->aborts = UMS_LOAD(u->aborts);
	o->drain_timeouts = UMS_LOAD(u->drain_timeouts);
	o->lost_at_abnormal = UMS_LOAD(u->lost_at_abnormal);
	pthread_mutex_unlock(&u->lock);
	o->km_rejected = UMS_LOAD(u->km_rejected);
	o->km_discarded = UMS_LOAD(u->km_discarded);
	o->sched_wakeups = UMS_LOAD(u->sched_wakeups);
	/* the scheduler thread's CPU time: its clock while it runs, its last
	 * reading (taken as it exits) once stopped */
	o->sched_busy_ns = UMS_LOAD(u->sched_busy_ns);
	uint64_t cpu = 0;
	if (u->sched_started && !atomic_load_explicit(&u->stop, memory_order_acquire) &&
	    u->sched_clock != (clockid_t)-1 && lf_clock_ns(u->sched_clock, &cpu) == 0)
		o->sched_busy_ns = cpu;
	o->preempt_requests = UMS_LOAD(u->preempt_requests);
	o->tdr_timeouts = UMS_LOAD(u->tdr_timeouts);
	o->tdr_hung = UMS_LOAD(u->tdr_hung);
	o->tdr_preempt_requests = UMS_LOAD(u->tdr_preempt_requests);
	o->tdr_preempted = UMS_LOAD(u->tdr_preempted);
	o->tdr_resets = UMS_LOAD(u->tdr_resets);
	o->tdr_guilty = UMS_LOAD(u->tdr_guilty);
	o->tdr_bugchecks = UMS_LOAD(u->tdr_bugchecks);
	o->km_submits = UMS_LOAD(u->km_submits);
	o->notifies = UMS_LOAD(u->notifies);
}
