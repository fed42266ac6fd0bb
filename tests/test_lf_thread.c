/* tests/test_lf_thread.c — pinning and lock assertions (lockfree/thread.h).
 *
 * Pinning is checked where the thread ends up: sched_getcpu() after pinning
 * itself, at the first instruction of a thread created pinned, and the mask
 * restored afterwards.  The lock check is checked both ways: it is true under
 * the lock (held here or by another thread, as the header says) and false
 * without it, and lf_mutex_assert_held kills a child process whose caller
 * forgot the lock. */
#include "tests/fb_test.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lockfree/thread.h"

/* The k-th CPU of the calling thread's mask, -1 if there is none. */
static int nth_allowed(const cpu_set_t *mask, int k)
{
	for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, mask) && seen++ == k)
			return cpu;
	return -1;
}

static void pin_self_moves_the_caller_to_that_cpu(void **state)
{
	cpu_set_t saved, now;
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
	for (int k = 0, cpu; (cpu = nth_allowed(&saved, k)) >= 0; k++) {
		assert_int_equal(lf_thread_pin_self(cpu), 0);
		assert_int_equal(sched_getcpu(), cpu);
		assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(now), &now), 0);
		assert_int_equal(CPU_COUNT(&now), 1);
	}
	lf_thread_pin_restore(pthread_self(), &saved);
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(now), &now), 0);
	assert_true(CPU_EQUAL(&now, &saved));
}

static void pin_self_leaves_a_negative_cpu_alone_and_refuses_a_bad_one(void **state)
{
	cpu_set_t before, after;
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
	assert_int_equal(lf_thread_pin_self(-1), 0);
	assert_int_equal(lf_thread_pin_self(CPU_SETSIZE), -EINVAL);
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(after), &after), 0);
	assert_true(CPU_EQUAL(&before, &after));
}

static void *where_am_i(void *arg)
{
	*(int *)arg = sched_getcpu();
	return NULL;
}

static void create_pinned_runs_the_thread_on_that_cpu_from_the_start(void **state)
{
	cpu_set_t mask;
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(mask), &mask), 0);
	for (int k = 0, cpu; (cpu = nth_allowed(&mask, k)) >= 0; k++) {
		pthread_t t;
		int seen = -1;
		assert_int_equal(lf_thread_create_pinned(&t, cpu, where_am_i, &seen), 0);
		pthread_join(t, NULL);
		assert_int_equal(seen, cpu);
	}
	pthread_t t;
	assert_int_equal(lf_thread_create_pinned(&t, -1, where_am_i, NULL), -EINVAL);
}

static void pin_nth_counts_only_the_allowed_cpus_and_restores(void **state)
{
	cpu_set_t mask, saved, now;
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(mask), &mask), 0);
	int n = CPU_COUNT(&mask);
	assert_true(lf_thread_pin_nth(pthread_self(), n - 1, &saved));
	assert_true(CPU_EQUAL(&saved, &mask));
	assert_int_equal(sched_getcpu(), nth_allowed(&mask, n - 1));
	lf_thread_pin_restore(pthread_self(), &saved);
	assert_false(lf_thread_pin_nth(pthread_self(), n, &saved));   /* no such CPU: left alone */
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(now), &now), 0);
	assert_true(CPU_EQUAL(&now, &mask));
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int holder_state;   /* 1: the holder holds the lock; 2: it may let go */

static void *hold_lock(void *arg)
{
	pthread_mutex_lock(&lock);
	atomic_store(&holder_state, 1);
	while (atomic_load(&holder_state) != 2)
		sched_yield();
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void mutex_is_locked_tells_held_from_free(void **state)
{
	assert_false(lf_mutex_is_locked(&lock));
	assert_false(lf_mutex_is_locked(&lock));         /* asking did not leave it locked */
	pthread_mutex_lock(&lock);
	assert_true(lf_mutex_is_locked(&lock));
	lf_mutex_assert_held(&lock);
	pthread_mutex_unlock(&lock);
	assert_false(lf_mutex_is_locked(&lock));

	/* held by another thread: "locked" too (the documented limit) */
	pthread_t t;
	atomic_store(&holder_state, 0);
	assert_int_equal(pthread_create(&t, NULL, hold_lock, NULL), 0);
	while (atomic_load(&holder_state) != 1)
		sched_yield();
	assert_true(lf_mutex_is_locked(&lock));
	atomic_store(&holder_state, 2);
	pthread_join(t, NULL);
	assert_false(lf_mutex_is_locked(&lock));
}

/* What a `_locked` function starts with. */
static int count_locked(int *n)
{
	lf_mutex_assert_held(&lock);
	return ++*n;
}

static void assert_held_aborts_a_caller_without_the_lock(void **state)
{
	int n = 0;
	pthread_mutex_lock(&lock);
	assert_int_equal(count_locked(&n), 1);
	pthread_mutex_unlock(&lock);

	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(126);
		count_locked(&n);   /* forgot the lock */
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
}

FB_TEST_MAIN(cmocka_unit_test(pin_self_moves_the_caller_to_that_cpu),
	     cmocka_unit_test(pin_self_leaves_a_negative_cpu_alone_and_refuses_a_bad_one),
	     cmocka_unit_test(create_pinned_runs_the_thread_on_that_cpu_from_the_start),
	     cmocka_unit_test(pin_nth_counts_only_the_allowed_cpus_and_restores),
	     cmocka_unit_test(mutex_is_locked_tells_held_from_free),
	     cmocka_unit_test(assert_held_aborts_a_caller_without_the_lock))
