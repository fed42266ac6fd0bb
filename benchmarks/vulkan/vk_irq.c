/* benchmarks/vulkan/vk_irq.c — interrupts a real GPU raised, from
 * /proc/interrupts: the lines whose action names a GPU kernel driver
 * (amdgpu, i915, xe, nvidia, nouveau, radeon, and the embedded ones),
 * summed over every CPU's column.  A CPU implementation (lavapipe) has no
 * such line: its "GPU" is threads of this process.  Contract in
 * vk_graph_internal.h. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/vulkan/vk_graph_internal.h"

static const char *const vkg_gpu_drivers[] = {
	"amdgpu", "i915", "xe", "nvidia", "nouveau", "radeon", "msm", "panfrost", "panthor", "lima",
	"v3d", "vc4", "etnaviv", "mali", "powervr", "asahi", NULL,
};

/* Does the line's text after the counts name a GPU driver (a whole word)? */
static const char *vkg_irq_driver(const char *rest)
{
	for (size_t i = 0; vkg_gpu_drivers[i]; i++) {
		size_t n = strlen(vkg_gpu_drivers[i]);
		for (const char *p = strstr(rest, vkg_gpu_drivers[i]); p; p = strstr(p + 1, vkg_gpu_drivers[i])) {
			bool start = p == rest || !isalnum((unsigned char)p[-1]);
			bool end = !isalnum((unsigned char)p[n]);
			if (start && end)
				return vkg_gpu_drivers[i];
		}
	}
	return NULL;
}

/* One line: its per-CPU counts summed (ncpu columns after "NN:"); the rest in *rest. */
static uint64_t vkg_irq_line(char *line, int ncpu, char **rest)
{
	char *p = strchr(line, ':');
	uint64_t sum = 0;
	if (!p)
		return 0;
	p++;
	for (int c = 0; c < ncpu; c++) {
		char *end;
		unsigned long long v = strtoull(p, &end, 10);
		if (end == p)
			break;
		sum += v;
		p = end;
	}
	*rest = p;
	return sum;
}

bool vkg_irq_read(const char *path, uint64_t *count, char *names, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[4096];
	int ncpu = 0;
	if (fgets(line, sizeof(line), f))
		for (char *t = strtok(line, " \t\n"); t; t = strtok(NULL, " \t\n"))
			ncpu++;                 /* the header: CPU0 CPU1 ... */
	bool found = false;
	size_t at = 0;
	*count = 0;
	if (names && len)
		names[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *rest = NULL;
		uint64_t sum = vkg_irq_line(line, ncpu, &rest);
		const char *drv = rest ? vkg_irq_driver(rest) : NULL;
		if (!drv)
			continue;
		found = true;
		*count += sum;
		char *colon = strchr(line, ':');
		if (names && colon && at < len) {
			*colon = '\0';
			const char *irq = line;
			while (*irq == ' ')
				irq++;
			at += (size_t)snprintf(names + at, len - at, "%sirq %s (%s)", at ? ", " : "", irq, drv);
		}
	}
	fclose(f);
	return found;
}
