/* lockfree/asym.c — the heavy side of the asymmetric fence (asym.h). */
#include "lockfree/asym.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

int lf_asym_membarrier;
#ifdef FB_TSAN
_Atomic unsigned long lf_asym_sync;
#endif
static pthread_once_t asym_once = PTHREAD_ONCE_INIT;

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

static void asym_register(void)
{
#ifndef FB_TSAN
	long cmds = membarrier(MEMBARRIER_CMD_QUERY);
	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
		lf_asym_membarrier = 1;
#endif
}

void lf_asym_init(void)
{
	pthread_once(&asym_once, asym_register);
}

void lf_asym_heavy(void)
{
	LF_ASYM_FULL();
	if (lf_asym_membarrier && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
		return;
	/* membarrier can only fail here if registration was lost: the light
	 * side is then unprotected, which must not pass silently */
	if (lf_asym_membarrier)
		__builtin_trap();
}

void lf_asym_heavy_broken(void)
{
	atomic_signal_fence(memory_order_seq_cst);
}

const char *lf_asym_kind(void)
{
	return lf_asym_membarrier ? "membarrier" : "fence";
}
