/* benchmarks/calibrate_cuda.c — calibrate's CUDA probe (bm_probe_cuda,
 * calibrate.h): the CUDA driver API opened at run time.
 *
 * Why here: it knows a GPU vendor's API, so it is benchmark-side code
 * beside the command (calibrate.c), which it plugs into; the harness and
 * the model never see CUDA.
 *
 * The driver API is declared here from its documentation, only what the
 * probe uses; the versioned entry points (_v2) are looked up first, as the
 * CUDA headers map the plain names to them.  One round of each op:
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
 * The kernel-mode costs are not measured by a CUDA probe (CUDA submits
 * from user mode); km_submit is written as the shipped estimate, as before.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/calibrate.h"
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
			cu->lib = NULL;
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

static int bm_cuda_open(const struct bm_cal_opts *o, void **self, char *err, size_t errlen)
{
	struct bm_cal *c = calloc(1, sizeof(*c));
	*self = c;
	if (!c)
		return -ENOMEM;
	int rc = bm_cu_open(&c->cu, err, errlen);
	return rc ? rc : bm_cal_up(c, o->device < 0 ? 0 : o->device, err, errlen);
}

static uint64_t bm_cuda_close(void *self, char *first, size_t len)
{
	struct bm_cal *c = self;
	if (c && c->ctx)
		c->cu.CtxDestroy(c->ctx);
	free(c);   /* the driver stays loaded: CUDA's own threads may still run in it */
	return 0;  /* no validation layer */
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

/* One round of op: its latency in s->ns.  0 or -EIO with err. */
static int bm_cuda_round(void *self, enum bm_op op, struct bm_cal_sample *s, char *err, size_t errlen)
{
	struct bm_cal *c = self;
	struct bm_cu *cu = &c->cu;
	volatile uint32_t *a = &c->host[0], *b = &c->host[16];
	uint32_t i = ++c->v;
	uint64_t t0, t1;
	bool ok = true;
	*s = (struct bm_cal_sample){ .gpu_ns = BM_CAL_NONE, .call_ns = BM_CAL_NONE };
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
			s->ns = t1 - t0;
			goto out;
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
	s->ns = lf_now_ns() - t0;
out:
	if (!ok) {
		snprintf(err, errlen, "%s: the GPU's write was not seen within 2 s", bm_op_key(op));
		return -ETIMEDOUT;
	}
	return 0;
}

static const char *bm_cuda_no_analog(void *self, enum bm_op op)
{
	return op == BM_OP_KM_SUBMIT ? "CUDA submits from user mode: no kernel-mode submission to time" : NULL;
}

/* PCIe link of the bus id (sysfs), "unknown" when it cannot be read. */
static void bm_cuda_link(const char *busid, char *link, size_t len)
{
	char path[256], speed[64] = "", width[16] = "", bus[64];
	snprintf(link, len, "unknown");
	if (!*busid)
		return;
	snprintf(bus, sizeof(bus), "%s", busid);
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
		snprintf(link, len, "%s x%s", speed, width);
}

/* The machine: GPU, driver, PCIe link (sysfs). */
static void bm_cuda_describe(void *self, const struct bm_cal_result *r, json_t *o)
{
	const struct bm_cal *c = self;
	char buf[512], link[128];
	snprintf(buf, sizeof(buf), "%s, PCI %s", c->name, *c->bus ? c->bus : "unknown");
	json_object_set_new(o, "machine", json_string(buf));
	snprintf(buf, sizeof(buf), "CUDA driver API %d.%d", c->driver / 1000, c->driver % 1000 / 10);
	json_object_set_new(o, "driver", json_string(buf));
	bm_cuda_link(c->bus, link, sizeof(link));
	json_object_set_new(o, "pcie_link", json_string(link));
	snprintf(buf, sizeof(buf), "fencebench calibrate: CUDA stream memory operations and events, p50 of %llu "
		 "rounds each", (unsigned long long)r->rounds);
	json_object_set_new(o, "probe", json_string(buf));
}

const struct bm_probe bm_probe_cuda = {
	.api = "cuda", .title = "CUDA driver API", .cpu_signal = NULL, .km_submit_estimate_ns = 20000.0,
	.open = bm_cuda_open, .no_analog = bm_cuda_no_analog, .round = bm_cuda_round,
	.describe = bm_cuda_describe, .close = bm_cuda_close,
};
