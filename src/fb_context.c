/* src/fb_context.c — the machine context.  Contract in fb_context.h. */
#include "src/fb_context.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "src/fb_cli.h"

#ifndef FB_BUILD_TYPE
#define FB_BUILD_TYPE "unknown"
#endif
#ifndef FB_BUILD_CFLAGS
#define FB_BUILD_CFLAGS "unknown"
#endif
#ifndef FB_GIT_REV
#define FB_GIT_REV "unknown"
#endif

/* The first line of path, without its newline; "" when unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* The value of the first "key<tabs>: value" line of /proc/cpuinfo. */
static void cpuinfo(const char *key, char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (!colon || strncmp(line, key, strlen(key)))
			continue;
		const char *v = colon + 1 + (colon[1] == ' ');
		snprintf(buf, len, "%s", v);
		buf[strcspn(buf, "\n")] = '\0';
		break;
	}
	fclose(f);
}

static long size_bytes(const char *text)
{
	char *end;
	long v = strtol(text, &end, 10);
	if (*end == 'K')
		v *= 1024;
	else if (*end == 'M')
		v *= 1024 * 1024;
	return v;
}

/* Google Benchmark's "caches": type, level, size, num_sharing. */
static json_t *caches(void)
{
	json_t *a = json_array();
	for (int i = 0; i < 16; i++) {
		char path[128], type[64], level[16], size[32], shared[128];
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		read_line(path, type, sizeof(type));
		if (!type[0])
			break;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		read_line(path, level, sizeof(level));
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		read_line(path, size, sizeof(size));
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
		read_line(path, shared, sizeof(shared));
		int sharing = 1;
		for (const char *p = shared; *p; p++)
			sharing += *p == ',';
		char *dash = strchr(shared, '-');
		if (dash && !strchr(shared, ','))
			sharing = atoi(dash + 1) - atoi(shared) + 1;
		json_array_append_new(a, json_pack("{s:s, s:i, s:I, s:i}", "type", type, "level", atoi(level),
						   "size", (json_int_t)size_bytes(size), "num_sharing", sharing));
	}
	return a;
}

static json_t *load_avg(void)
{
	double l[3] = { 0, 0, 0 };
	json_t *a = json_array();
	int n = getloadavg(l, 3);
	for (int i = 0; i < 3; i++)
		json_array_append_new(a, json_real(i < n ? l[i] : 0.0));
	return a;
}

/* Google Benchmark says scaling is enabled unless the governor is "performance". */
static int cpu_scaling_enabled(void)
{
	char gov[64];
	read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", gov, sizeof(gov));
	return gov[0] && strcmp(gov, "performance") != 0;
}

static void iso_date(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	char z[8];
	localtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(z, sizeof(z), "%z", &tm);   /* +0100 -> +01:00, as Google Benchmark writes it */
	size_t n = strlen(buf);
	if (strlen(z) == 5)
		snprintf(buf + n, len - n, "%.3s:%s", z, z + 3);
}

json_t *fb_context_machine(void)
{
	char date[64], host[256] = "", exe[PATH_MAX] = "", model[256], mhz[64];
	struct utsname u;
	iso_date(date, sizeof(date));
	gethostname(host, sizeof(host) - 1);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	cpuinfo("model name", model, sizeof(model));
	if (!model[0])
		cpuinfo("Model", model, sizeof(model));
	cpuinfo("cpu MHz", mhz, sizeof(mhz));
	char ktext[512] = "unknown";
	if (!uname(&u))
		snprintf(ktext, sizeof(ktext), "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:b, s:o, s:o, s:s, "
			 "s:s, s:s, s:s, s:s, s:s, s:s}",
			 "date", date,
			 "host_name", host,
			 "executable", exe,
			 "num_cpus", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN),
			 "mhz_per_cpu", (json_int_t)atof(mhz),
			 "cpu_scaling_enabled", cpu_scaling_enabled(),
			 "caches", caches(),
			 "load_avg", load_avg(),
			 "library_build_type", strncmp(FB_BUILD_TYPE, "release", 7) ? "debug" : "release",
			 "fencebench_version", FB_VERSION,
			 "git_rev", FB_GIT_REV,
			 "build_type", FB_BUILD_TYPE,
			 "build_flags", FB_BUILD_CFLAGS,
			 "cpu_model", model[0] ? model : "unknown",
			 "kernel", ktext);
}
