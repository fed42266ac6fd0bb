/* lockfree/thread.c — pinning and lock assertions.  Contract in thread.h. */
#include "lockfree/thread.h"

#include <errno.h>

/* The set holding only cpu.  False when cpu cannot be in a cpu_set_t. */
static bool lf_cpu_set_one(int cpu, cpu_set_t *set)
{
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return false;
	CPU_ZERO(set);
	CPU_SET(cpu, set);
	return true;
}

int lf_thread_pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	if (!lf_cpu_set_one(cpu, &set))
		return -EINVAL;
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int lf_thread_create_pinned(pthread_t *t, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;

	if (!lf_cpu_set_one(cpu, &set))
		return -EINVAL;
	pthread_attr_init(&attr);
	int rc = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!rc)
		rc = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -rc;
}

bool lf_thread_pin_nth(pthread_t t, int n, cpu_set_t *saved)
{
	if (pthread_getaffinity_np(t, sizeof(*saved), saved))
		return false;
	for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, saved) || seen++ != n)
			continue;
		cpu_set_t one;
		lf_cpu_set_one(cpu, &one);
		return pthread_setaffinity_np(t, sizeof(one), &one) == 0;
	}
	return false;
}

void lf_thread_pin_restore(pthread_t t, const cpu_set_t *saved)
{
	pthread_setaffinity_np(t, sizeof(*saved), saved);
}

bool lf_mutex_is_locked(pthread_mutex_t *m)
{
	int rc = pthread_mutex_trylock(m);

	if (rc == 0) {
		pthread_mutex_unlock(m);
		return false;
	}
	return rc == EBUSY;
}
