/* gpu-model/os/rcu.c — RCU reader registration for the adapter's fence
 * handle table (lf_htab), nesting per thread.  Called by every os/ file that
 * looks a handle up; calls only lockfree/.
 */
#include "gpu-model/os/os_internal.h"

/* RCU registration that nests: fence create/destroy run on any thread, the
 * interrupt thread stays registered for its lifetime. */
static __thread unsigned os_rcu_depth;

void os_rcu_enter(void)
{
	if (os_rcu_depth++ == 0)
		lf_htab_thread_online();
}

void os_rcu_leave(void)
{
	if (--os_rcu_depth == 0)
		lf_htab_thread_offline();
}
