/* benchmarks/calibrate.c — `fencebench calibrate` (calibrate.h).
 *
 * Why here: calibrate knows a GPU vendor's API and writes this project's
 * profile format, so it is benchmark-side code, registered with the
 * harness as a command of the program (fb_program_commands in main.c); the
 * harness (src/) stays generic and the model never sees CUDA.
 *
 * The driver API is declared here from its documentation, only what the
 * probe uses; the versioned entry points (_v2) are looked up first, as the
 * CUDA headers map the plain names to them.  The probe, `rounds` rounds of
 * each after a tenth as many unrecorded, p50 reported:
 *
 *   enqueue          the cuStreamWriteValue32 call
 *   write_seen       t0, cuStreamWriteValue32 to pinned host memory mapped for the device, spin until seen
 *   event_spin       t0, cuEventRecord + cuEventSynchronize (spinning context and event)
 *   event_block      the same with CU_EVENT_BLOCKING_SYNC (woken through the interrupt)
 *   cpu_gpu_cpu      stream [WaitValue32(a >= i), WriteValue32(b = i)] queued; t0, the CPU writes a; spin on b
 *   gpu_wait_sys     stream B the same; t0, stream A WriteValue32(a = i); spin on b (a in host memory)
 *   gpu_wait_local   the same with a in device memory
 *   cpu_held         t0, stream A records a blocking event, the CPU waits on it, then B WriteValue32(b = i); spin on b
 *
 * The adapter's latencies are then derived from them by the rules in
 * bm_cal_derive (written into the profile's "derivation"); the kernel-mode
 * costs are not measured by a CUDA probe (CUDA submits from user mode) and
 * are written as the shipped estimates, said so in "origin".
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <jansson.h>

#include "benchmarks/calibrate.h"
#include "benchmarks/profile.h"
#include "lockfree/arch.h"

/* ---- the driver API, as documented (cuda.h) ---- */
typedef int CUresult;                  /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;
#define CU_CTX_SCHED_SPIN 0x01u
#define CU_CTX_MAP_HOST 0x08u
#define CU_STREAM_NON_BLOCKING 0x1u
#define CU_EVENT_BLOCKING_SYNC 0x1u
#define CU_EVENT_DISABLE_TIMING 0x2u
#define CU_MEMHOSTALLOC_PORTABLE 0x01u
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02u
#define CU_STREAM_WAIT_VALUE_GEQ 0x0u
#define CU_STREAM_WRITE_VALUE_DEFAULT 0x0u

struct bm_cu {
	void *lib;
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*CtxCreate)(CUcontext *, unsigned, CUdevice);
	CUresult (*CtxDestroy)(CUcontext);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*StreamWriteValue32)(CUstream, CUdeviceptr, uint32_t, unsigned);
	CUresult (*StreamWaitValue32)(CUstream, CUdeviceptr, uint32_t, unsigned);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*MemHostAlloc)(void **, size_t, unsigned);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemsetD32)(CUdeviceptr, unsigned, size_t);
};

/* name_v2 first (what cuda.h maps name to), then name. */
static void *bm_cu_sym(void *lib, const char *name)
{
	char v2[96];
	snprintf(v2, sizeof(v2), "%s_v2", name);
	void *p = dlsym(lib, v2);
	return p ? p : dlsym(lib, name);
}

/* 0, or -ENOENT with one line in err: no driver, or an entry point missing. */
static int bm_cu_open(struct bm_cu *cu, char *err, size_t errlen)
{
	memset(cu, 0, sizeof(*cu));
	cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu->lib) {
		snprintf(err, errlen, "no NVIDIA driver on this machine (%s)", dlerror());
		return -ENOENT;
	}
	struct { void **fn; const char *name; } t[] = {
#define BM_CU(f) { (void **)&cu->f, "cu" #f }
		BM_CU(Init), BM_CU(DriverGetVersion), BM_CU(DeviceGetCount), BM_CU(DeviceGet), BM_CU(DeviceGetName),
		BM_CU(DeviceGetPCIBusId), BM_CU(CtxCreate), BM_CU(CtxDestroy), BM_CU(StreamCreate),
		BM_CU(StreamSynchronize), BM_CU(StreamWriteValue32), BM_CU(StreamWaitValue32), BM_CU(EventCreate),
		BM_CU(EventRecord), BM_CU(EventSynchronize), BM_CU(MemHostAlloc), BM_CU(MemHostGetDevicePointer),
		BM_CU(MemAlloc), BM_CU(MemsetD32),
#undef BM_CU
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!(*t[i].fn = bm_cu_sym(cu->lib, t[i].name))) {
			snprintf(err, errlen, "the NVIDIA driver's libcuda.so.1 lacks %s (too old a driver?)", t[i].name);
			dlclose(cu->lib);
			return -ENOENT;
		}
	return 0;
}

/* ---- the probe ---- */

struct bm_cal {
	struct bm_cu cu;
	CUdevice dev;
	CUcontext ctx;
	CUstream a, b;
	CUevent ev_spin, ev_block;
	volatile uint32_t *host;       /* [0]: a (host), [16]: b: a line apart */
	CUdeviceptr dhost_a, dhost_b, dlocal;
	uint32_t v;
	uint64_t rounds;
	char name[256], bus[64];
	int driver;
};

#define BM_CAL_CHECK(call)                                                                \
	do {                                                                              \
		CUresult rc_ = (call);                                                    \
		if (rc_) {                                                                \
			snprintf(err, errlen, "%s failed: CUresult %d", #call, rc_);      \
			return -EIO;                                                      \
		}                                                                         \
	} while (0)

static int bm_cal_up(struct bm_cal *c, int device, char *err, size_t errlen)
{
	struct bm_cu *cu = &c->cu;
	int n = 0;
	CUresult r = cu->Init(0);
	if (r || cu->DeviceGetCount(&n) || n == 0) {
		snprintf(err, errlen, "no NVIDIA GPU usable here (cuInit: CUresult %d, %d devices)", r, n);
		return -ENODEV;
	}
	if (device < 0 || device >= n) {
		snprintf(err, errlen, "--device %d: this machine has devices 0..%d", device, n - 1);
		return -ENODEV;
	}
	BM_CAL_CHECK(cu->DeviceGet(&c->dev, device));
	BM_CAL_CHECK(cu->DeviceGetName(c->name, sizeof(c->name), c->dev));
	if (cu->DeviceGetPCIBusId(c->bus, sizeof(c->bus), c->dev))
		c->bus[0] = '\0';
	cu->DriverGetVersion(&c->driver);
	BM_CAL_CHECK(cu->CtxCreate(&c->ctx, CU_CTX_SCHED_SPIN | CU_CTX_MAP_HOST, c->dev));
	BM_CAL_CHECK(cu->StreamCreate(&c->a, CU_STREAM_NON_BLOCKING));
	BM_CAL_CHECK(cu->StreamCreate(&c->b, CU_STREAM_NON_BLOCKING));
	BM_CAL_CHECK(cu->EventCreate(&c->ev_spin, CU_EVENT_DISABLE_TIMING));
	BM_CAL_CHECK(cu->EventCreate(&c->ev_block, CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC));
	void *h;
	BM_CAL_CHECK(cu->MemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
	c->host = h;
	memset(h, 0, 4096);
	BM_CAL_CHECK(cu->MemHostGetDevicePointer(&c->dhost_a, h, 0));
	c->dhost_b = c->dhost_a + 64;
	BM_CAL_CHECK(cu->MemAlloc(&c->dlocal, 64));
	BM_CAL_CHECK(cu->MemsetD32(c->dlocal, 0, 16));
	return 0;
}

/* Spin until the host word reaches v (2 s at most).  false: never. */
static bool bm_cal_seen(volatile uint32_t *w, uint32_t v)
{
	uint64_t deadline = lf_now_ns() + 2000000000ull;
	for (unsigned i = 0; (int32_t)(*w - v) < 0; i++)
		if ((i & 4095) == 4095 && lf_now_ns() > deadline)
			return false;
	return true;
}

/* One round of op: its latency in *ns.  0 or -EIO with err. */
static int bm_cal_round(struct bm_cal *c, enum bm_op op, uint64_t *ns, char *err, size_t errlen)
{
	struct bm_cu *cu = &c->cu;
	volatile uint32_t *a = &c->host[0], *b = &c->host[16];
	uint32_t i = ++c->v;
	uint64_t t0, t1;
	bool ok = true;
	if (op == BM_OP_CPU_GPU_CPU || op == BM_OP_GPU_WAIT_SYS || op == BM_OP_GPU_WAIT_LOCAL) {
		CUdeviceptr wa = op == BM_OP_GPU_WAIT_LOCAL ? c->dlocal : c->dhost_a;
		BM_CAL_CHECK(cu->StreamWaitValue32(c->b, wa, i, CU_STREAM_WAIT_VALUE_GEQ));
		BM_CAL_CHECK(cu->StreamWriteValue32(c->b, c->dhost_b, i, CU_STREAM_WRITE_VALUE_DEFAULT));
		lf_spin_ns(20000);        /* the GPU has reached the wait */
	}
	t0 = lf_now_ns();
	switch (op) {
	case BM_OP_ENQUEUE:
	case BM_OP_WRITE_SEEN:
		BM_CAL_CHECK(cu->StreamWriteValue32(c->a, c->dhost_a, i, CU_STREAM_WRITE_VALUE_DEFAULT));
		t1 = lf_now_ns();
		ok = bm_cal_seen(a, i);
		if (op == BM_OP_ENQUEUE) {
			*ns = t1 - t0;
			return ok ? 0 : -EIO;
		}
		break;
	case BM_OP_EVENT_SPIN:
	case BM_OP_EVENT_BLOCK: {
		CUevent ev = op == BM_OP_EVENT_SPIN ? c->ev_spin : c->ev_block;
		BM_CAL_CHECK(cu->EventRecord(ev, c->a));
		BM_CAL_CHECK(cu->EventSynchronize(ev));
		break;
	}
	case BM_OP_CPU_GPU_CPU:
		/* seq_cst store: out of the store buffer before the clock runs on
		 * (the GPU reads a over PCIe; TSan refuses a standalone fence) */
		__atomic_store_n(a, i, __ATOMIC_SEQ_CST);
		ok = bm_cal_seen(b, i);
		break;
	case BM_OP_GPU_WAIT_SYS:
		BM_CAL_CHECK(cu->StreamWriteValue32(c->a, c->dhost_a, i, CU_STREAM_WRITE_VALUE_DEFAULT));
		ok = bm_cal_seen(b, i);
		break;
	case BM_OP_GPU_WAIT_LOCAL:
		BM_CAL_CHECK(cu->StreamWriteValue32(c->a, c->dlocal, i, CU_STREAM_WRITE_VALUE_DEFAULT));
		ok = bm_cal_seen(b, i);
		break;
	case BM_OP_CPU_HELD:
		BM_CAL_CHECK(cu->EventRecord(c->ev_block, c->a));
		BM_CAL_CHECK(cu->EventSynchronize(c->ev_block));
		BM_CAL_CHECK(cu->StreamWriteValue32(c->b, c->dhost_b, i, CU_STREAM_WRITE_VALUE_DEFAULT));
		ok = bm_cal_seen(b, i);
		break;
	default:
		return -EINVAL;
	}
	*ns = lf_now_ns() - t0;
	if (!ok)
		snprintf(err, errlen, "%s: the GPU's write was not seen within 2 s", bm_op_key(op));
	return ok ? 0 : -EIO;
}

static int bm_cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* p50 of op over c->rounds rounds. */
static int bm_cal_op(struct bm_cal *c, enum bm_op op, double *p50, char *err, size_t errlen)
{
	uint64_t *s = calloc(c->rounds, sizeof(*s)), ns;
	if (!s)
		return -ENOMEM;
	int rc = 0;
	for (uint64_t i = 0; !rc && i < c->rounds / 10; i++)
		rc = bm_cal_round(c, op, &ns, err, errlen);
	for (uint64_t i = 0; !rc && i < c->rounds; i++)
		rc = bm_cal_round(c, op, &s[i], err, errlen);
	if (!rc) {
		qsort(s, c->rounds, sizeof(*s), bm_cmp_u64);
		*p50 = (double)s[c->rounds / 2];
	}
	free(s);
	return rc;
}

/* ---- the profile ---- */

/* The adapter's latencies from the probe's p50s (ns): the rules written
 * into "derivation".  The probe sees sums; how a sum splits between its
 * parts is not observable here, so the splits are fixed fractions. */
static void bm_cal_derive(const double *m, struct hw_timing *t)
{
	double gpu = m[BM_OP_WRITE_SEEN] - m[BM_OP_ENQUEUE];
	if (gpu < 0)
		gpu = 0;
	t->doorbell_ns = (uint64_t)(gpu * 0.5);
	t->cmd_ns = (uint64_t)(gpu * 0.2);
	t->visible_sys_ns = (uint64_t)gpu - t->doorbell_ns - t->cmd_ns;
	double flush = m[BM_OP_EVENT_SPIN] - m[BM_OP_WRITE_SEEN];
	t->signal_ns = flush > 0 ? (uint64_t)(flush * 2.0 / 3.0) : 0;
	double half = m[BM_OP_CPU_GPU_CPU] - (double)t->cmd_ns - (double)t->visible_sys_ns - 300.0;
	t->wait_poll_sys_ns = half > 0 ? (uint64_t)(2.0 * half) : 0;
	double delta = m[BM_OP_GPU_WAIT_SYS] - m[BM_OP_GPU_WAIT_LOCAL];
	if (delta < 0)
		delta = 0;
	double vl = (double)t->visible_sys_ns - delta / 2.0, pl = (double)t->wait_poll_sys_ns - delta;
	t->visible_local_ns = vl > 0 ? (uint64_t)vl : 0;
	t->wait_poll_local_ns = pl > 0 ? (uint64_t)pl : 0;
	t->irq_ns = 1000;
}

static const char bm_cal_rules[][2][200] = {
	{ "doorbell_ns, cmd_ns, visible_sys_ns", "write_seen - enqueue, split 0.5 / 0.2 / 0.3 (the probe sees only the sum)" },
	{ "signal_ns", "2/3 of event_spin - write_seen (an event record's flush beyond a plain write)" },
	{ "wait_poll_sys_ns", "2 x (cpu_gpu_cpu - cmd_ns - visible_sys_ns - 0.3 us for the CPU write's way)" },
	{ "visible_local_ns, wait_poll_local_ns", "gpu_wait_sys - gpu_wait_local = d: visible_sys_ns - d/2, wait_poll_sys_ns - d" },
	{ "irq_ns", "1 us, an estimate: event_block - event_spin holds the host's interrupt handling and wake-up too" },
	{ "kernel", "not measured (CUDA submits from user mode): Mesa vkoverhead's ~20 us, split 1.5 / 12.5 / 6 us" },
};

/* The machine: GPU, driver, PCIe link (sysfs), CPU, kernel. */
static void bm_cal_origin(const struct bm_cal *c, json_t *o)
{
	char buf[512], link[128] = "unknown", cpu[256] = "unknown", line[512];
	snprintf(buf, sizeof(buf), "%s, PCI %s", c->name, *c->bus ? c->bus : "unknown");
	json_object_set_new(o, "machine", json_string(buf));
	snprintf(buf, sizeof(buf), "CUDA driver API %d.%d", c->driver / 1000, c->driver % 1000 / 10);
	json_object_set_new(o, "driver", json_string(buf));
	if (*c->bus) {
		char path[256], speed[64] = "", width[16] = "", bus[64];
		snprintf(bus, sizeof(bus), "%s", c->bus);
		for (char *p = bus; *p; p++)      /* sysfs names are lower case */
			if (*p >= 'A' && *p <= 'F')
				*p = (char)(*p - 'A' + 'a');
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.16s/current_link_speed", bus);
		FILE *f = fopen(path, "r");
		if (f && fgets(speed, sizeof(speed), f))
			speed[strcspn(speed, "\n")] = 0;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.16s/current_link_width", bus);
		f = fopen(path, "r");
		if (f && fgets(width, sizeof(width), f))
			width[strcspn(width, "\n")] = 0;
		if (f)
			fclose(f);
		if (*speed)
			snprintf(link, sizeof(link), "%s x%s", speed, width);
	}
	json_object_set_new(o, "pcie_link", json_string(link));
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(cpu, sizeof(cpu), "%s", strchr(line, ':') + 2);
			cpu[strcspn(cpu, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	snprintf(buf, sizeof(buf), "%s, %ld CPUs", cpu, sysconf(_SC_NPROCESSORS_ONLN));
	json_object_set_new(o, "host", json_string(buf));
	struct utsname u;
	if (!uname(&u)) {
		snprintf(buf, sizeof(buf), "%s %s (%s)", u.sysname, u.release, u.nodename);
		json_object_set_new(o, "kernel_os", json_string(buf));
	}
	json_object_set_new(o, "kernel", json_string("kernel-mode submission not measured (CUDA submits from user "
						     "mode): Mesa vkoverhead's ~20 us (radv 19.5 us, Intel DG2 28 us)"));
	snprintf(buf, sizeof(buf), "fencebench calibrate: CUDA stream memory operations and events, p50 of %llu "
		 "rounds each", (unsigned long long)c->rounds);
	json_object_set_new(o, "probe", json_string(buf));
}

static json_t *bm_cal_profile(const struct bm_cal *c, const char *name, const double *m)
{
	struct hw_timing t;
	memset(&t, 0, sizeof(t));
	bm_cal_derive(m, &t);
	json_t *root = json_object(), *o = json_object(), *ad = json_object(), *k = json_object(), *me = json_object(),
	       *d = json_object();
	json_object_set_new(root, "name", json_string(name));
	bm_cal_origin(c, o);
	json_object_set_new(root, "origin", o);
	const struct { const char *key; uint64_t v; } f[] = {
		{ "cmd_ns", t.cmd_ns }, { "signal_ns", t.signal_ns }, { "visible_sys_ns", t.visible_sys_ns },
		{ "visible_local_ns", t.visible_local_ns }, { "wait_poll_sys_ns", t.wait_poll_sys_ns },
		{ "wait_poll_local_ns", t.wait_poll_local_ns }, { "doorbell_ns", t.doorbell_ns }, { "irq_ns", t.irq_ns },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		json_object_set_new(ad, f[i].key, json_integer((json_int_t)f[i].v));
	json_object_set_new(root, "adapter", ad);
	json_object_set_new(k, "km_call_ns", json_integer(1500));
	json_object_set_new(k, "km_validate_ns", json_integer(12500));
	json_object_set_new(k, "km_sched_ns", json_integer(6000));
	json_object_set_new(root, "kernel", k);
	for (int op = 0; op < BM_OPS; op++)
		if (op != BM_OP_KM_SUBMIT)
			json_object_set_new(me, bm_op_key(op), json_real(m[op]));
	json_object_set_new(me, bm_op_key(BM_OP_KM_SUBMIT), json_real(20000.0));
	json_object_set_new(root, "measured", me);
	for (size_t i = 0; i < sizeof(bm_cal_rules) / sizeof(bm_cal_rules[0]); i++)
		json_object_set_new(d, bm_cal_rules[i][0], json_string(bm_cal_rules[i][1]));
	json_object_set_new(root, "derivation", d);
	return root;
}

/* ---- the command ---- */

struct bm_cal_opts {
	const char *out, *name;
	uint64_t rounds;
	int device;
};

static int bm_cal_usage(const char *msg)
{
	fprintf(stderr, "fencebench: calibrate: %s (usage: fencebench calibrate [--out FILE] [--name NAME] "
		"[--rounds N] [--device N])\n", msg);
	return 2;
}

static int bm_cal_args(int argc, char **argv, struct bm_cal_opts *o)
{
	*o = (struct bm_cal_opts){ .name = "calibrated", .rounds = 2000 };
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		if (!strcmp(argv[i], "--out") && v)
			o->out = v;
		else if (!strcmp(argv[i], "--name") && v)
			o->name = v;
		else if (!strcmp(argv[i], "--rounds") && v) {
			o->rounds = strtoull(v, &end, 10);
			if (*end || o->rounds < 10 || o->rounds > 10000000)
				return bm_cal_usage("--rounds takes a whole number from 10 to 10000000");
		} else if (!strcmp(argv[i], "--device") && v) {
			o->device = (int)strtol(v, &end, 10);
			if (*end)
				return bm_cal_usage("--device takes a device number");
		} else
			return bm_cal_usage("unknown or incomplete option");
		i++;
	}
	size_t n = strlen(o->name);
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_.-", o->name[i]))
			n = 0;
	if (!n || n >= RT_PROFILE_NAME_MAX || !strcmp(o->name, "ideal"))
		return bm_cal_usage("--name must be [a-z0-9_.-], 1..63 characters, not ideal");
	return 0;
}

int bm_calibrate_main(int argc, char **argv)
{
	struct bm_cal_opts o;
	int rc = bm_cal_args(argc, argv, &o);
	if (rc)
		return rc;
	static struct bm_cal c;
	char err[512];
	if (bm_cu_open(&c.cu, err, sizeof(err)) || bm_cal_up(&c, o.device, err, sizeof(err))) {
		fprintf(stderr, "fencebench: calibrate: %s\n", err);
		return c.ctx ? 1 : 2;
	}
	c.rounds = o.rounds;
	double m[BM_OPS] = { 0 };
	for (int op = 0; op < BM_OPS; op++) {
		if (op == BM_OP_KM_SUBMIT)
			continue;
		if ((rc = bm_cal_op(&c, op, &m[op], err, sizeof(err)))) {
			fprintf(stderr, "fencebench: calibrate: %s\n", err);
			return 1;
		}
		fprintf(stderr, "calibrate: %-16s p50 %.2f us\n", bm_op_key(op), m[op] / 1e3);
	}
	json_t *root = bm_cal_profile(&c, o.name, m);
	rc = o.out ? json_dump_file(root, o.out, JSON_INDENT(2)) : json_dumpf(root, stdout, JSON_INDENT(2));
	json_decref(root);
	c.cu.CtxDestroy(c.ctx);
	if (rc) {
		fprintf(stderr, "fencebench: calibrate: cannot write %s\n", o.out ? o.out : "stdout");
		return 1;
	}
	return 0;
}

const struct fb_command bm_commands[] = {
	{ .name = "calibrate", .main = bm_calibrate_main,
	  .usage = "calibrate [--out FILE]           measure this machine's NVIDIA GPU (CUDA driver, opened at run time)\n"
		   "                                    and write a timing profile (see: --set profile=FILE)" },
	{ .name = NULL },
};
