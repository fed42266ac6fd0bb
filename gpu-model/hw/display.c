/* gpu-model/hw/display.c — the display source: a vsync timeline and the
 * MMIO flip register (seed gpu-preemption, FlipOnVSyncMmIo).  Contract in
 * hw.h ("display").  The vsyncs are a timeline (creation time + k * period),
 * not a thread: the display latches a pending flip lazily, when anyone
 * looks (a later FLIP, a scanout read), at the vsync it was due at.  Calls
 * only lockfree/.
 */
#include <string.h>

#include "gpu-model/hw/hw_internal.h"
#include "lockfree/arch.h"
#include "lockfree/thread.h"

void hw_display_init(struct hw_adapter *a)
{
	struct hw_display *d = &a->display;
	pthread_mutex_init(&d->lock, NULL);
	d->t0 = lf_now_ns();
	d->period = a->caps.vsync_period_ns ? a->caps.vsync_period_ns : HW_VSYNC_DEFAULT_NS;
}

void hw_display_destroy(struct hw_adapter *a)
{
	pthread_mutex_destroy(&a->display.lock);
}

/* The first vsync after t. */
static uint64_t hw_next_vsync(const struct hw_display *d, uint64_t t)
{
	return d->t0 + ((t - d->t0) / d->period + 1) * d->period;
}

static void hw_display_show_locked(struct hw_display *d, uint64_t surface, uint64_t written, uint64_t visible)
{
	d->surface = surface;
	d->shown++;
	bool torn = (visible - d->t0) % d->period != 0;
	if (torn)
		d->torn++;
	if (d->nlog < HW_FLIP_LOG)
		d->log[d->nlog++] = (struct hw_flip_rec){ surface, written, visible, torn };
}

/* A pending flip whose vsync has come reaches the screen at that vsync. */
static void hw_display_latch_locked(struct hw_display *d, uint64_t now)
{
	lf_mutex_assert_held(&d->lock);
	if (!d->pending)
		return;
	uint64_t v = hw_next_vsync(d, d->pending_at);
	if (v > now)
		return;
	d->pending = false;
	hw_display_show_locked(d, d->pending_surface, d->pending_at, v);
}

void hw_display_flip(struct hw_adapter *a, uint64_t surface)
{
	struct hw_display *d = &a->display;
	uint64_t now = lf_now_ns();
	pthread_mutex_lock(&d->lock);
	d->flips++;
	hw_display_latch_locked(d, now);
	if (a->caps.flip_on_vsync_mmio) {
		/* the register holds the last value written: the display takes it at the vsync */
		if (d->pending)
			d->replaced++;
		d->pending = true;
		d->pending_surface = surface;
		d->pending_at = now;
	} else {
		hw_display_show_locked(d, surface, now, now);   /* scanout moves now: mid-frame */
	}
	pthread_mutex_unlock(&d->lock);
}

uint64_t hw_display_scanout(struct hw_adapter *a)
{
	struct hw_display *d = &a->display;
	pthread_mutex_lock(&d->lock);
	hw_display_latch_locked(d, lf_now_ns());
	uint64_t s = d->surface;
	pthread_mutex_unlock(&d->lock);
	return s;
}

size_t hw_display_log(struct hw_adapter *a, struct hw_flip_rec *out, size_t max)
{
	struct hw_display *d = &a->display;
	pthread_mutex_lock(&d->lock);
	hw_display_latch_locked(d, lf_now_ns());
	size_t n = d->nlog < max ? d->nlog : max;
	memcpy(out, d->log, n * sizeof(*out));
	pthread_mutex_unlock(&d->lock);
	return n;
}

void hw_display_stats(struct hw_adapter *a, struct hw_display_stats *out)
{
	struct hw_display *d = &a->display;
	pthread_mutex_lock(&d->lock);
	hw_display_latch_locked(d, lf_now_ns());
	out->flips = d->flips;
	out->shown = d->shown;
	out->replaced = d->replaced;
	out->torn = d->torn;
	pthread_mutex_unlock(&d->lock);
}

uint64_t hw_display_t0(const struct hw_adapter *a)
{
	return a->display.t0;
}

uint64_t hw_display_period(const struct hw_adapter *a)
{
	return a->display.period;
}
