/* src/fb_signal.c — SIGINT and SIGTERM taken by one thread.  Contract in fb_signal.h. */
#include "src/fb_signal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

/* hook_lock: the hook and its argument, and a call under way (the signal
 * thread holds it across the call, so clearing waits for the call). */
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*hook_fn)(void *arg, int sig);
static void *hook_arg;
/* tmp_lock: held while a temporary output file exists; the signal thread
 * takes it last and never gives it back. */
static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set once by the signal thread when a signal arrives, before the hook;
 * relaxed: a flag that ends a poll, it publishes no data. */
static _Atomic bool stopping;

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
}

/* Die of sig: its default action, delivered to this thread (unblocked here only). */
static void die_of(int sig)
{
	sigset_t one;
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	raise(sig);   /* pending until unblocked just below */
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

static void *signal_thread(void *arg)
{
	sigset_t set;
	int sig;
	stop_signals(&set);
	while (sigwait(&set, &sig))
		;
	atomic_store_explicit(&stopping, true, memory_order_relaxed);
	pthread_mutex_lock(&hook_lock);
	if (hook_fn)
		hook_fn(hook_arg, sig);
	pthread_mutex_lock(&tmp_lock);   /* no temporary exists from here on */
	die_of(sig);
	return NULL;
}

int fb_signal_start(void)
{
	sigset_t set, old;
	pthread_t t;
	pthread_attr_t attr;
	stop_signals(&set);
	int rc = pthread_sigmask(SIG_BLOCK, &set, &old);
	if (rc)
		return -rc;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, signal_thread, NULL);
	pthread_attr_destroy(&attr);
	if (rc)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

void fb_signal_on_stop(void (*fn)(void *arg, int sig), void *arg)
{
	pthread_mutex_lock(&hook_lock);
	hook_fn = fn;
	hook_arg = arg;
	pthread_mutex_unlock(&hook_lock);
}

bool fb_signal_stopping(void)
{
	return atomic_load_explicit(&stopping, memory_order_relaxed);
}

void fb_signal_hold(void) { pthread_mutex_lock(&tmp_lock); }
void fb_signal_release(void) { pthread_mutex_unlock(&tmp_lock); }
