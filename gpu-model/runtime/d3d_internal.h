/* gpu-model/runtime/d3d_internal.h — the command list, as the queues read it
 * (d3d_list.c writes, d3d_queue.c executes).  Runtime folder only. */
#ifndef RT_D3D_INTERNAL_H
#define RT_D3D_INTERNAL_H

#include "gpu-model/runtime/d3d.h"

struct rt_clist {
	enum rt_list_type type;
	bool recording;
	size_t n;                               /* commands recorded */
	uint64_t work_ns;
	struct hw_cmd cmds[RT_LIST_MAX_CMDS];   /* WORK, one per unit */
	uint8_t ops[RT_LIST_MAX_CMDS];          /* enum rt_op of each */
	char err[160];
};

#endif
