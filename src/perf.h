/* src/perf.h — the Linux perf layer of the harness: counters per role thread,
 * `perf stat --control` hand-shake, RAPL package energy.
 *
 * Shape taken from libpfm4's perf_examples (perf_util.c, self_count.c): event
 * names are encoded by libpfm4 (pfm_get_os_event_encoding, PFM_OS_PERF_EVENT_EXT),
 * each thread gets one group whose leader is opened disabled, and every read
 * carries TOTAL_TIME_ENABLED/TOTAL_TIME_RUNNING so multiplexed counts are
 * scaled — and said to be scaled.
 *
 * Privilege.  Nothing here forces exclude_kernel: context switches are counted
 * in the kernel and would read 0.  When the kernel refuses kernel-side counting
 * (kernel.perf_event_paranoid >= 2 without CAP_PERFMON) the spec falls back to
 * user-only counting the way `perf stat` does, renames the event "name:u" and
 * says so in its note.  RAPL counts system-wide: it needs CAP_PERFMON (root has
 * it) or kernel.perf_event_paranoid <= 0.
 *
 * Threads.  A spec is immutable once built: any thread may read it and open
 * groups from it concurrently.  A group is a set of file descriptors: enable,
 * disable and read are syscalls on them, safe from any thread and with each
 * other; reset also records the reading that later reads subtract, so it
 * must not race a read or another reset of the same group; close must not
 * race with anything else on the same group.
 * A perf ctl and a rapl handle belong to one thread at a time.
 * Nothing here is on a hot path: everything may block briefly in syscalls,
 * fb_perf_ctl_enable/disable block up to their timeout.
 *
 * One contract, four rooms, one per section below:
 *   src/perf_spec.c   event specs (libpfm4 encoding, probing, fallbacks)
 *   src/perf_group.c  counter groups and the scaling rule
 *   src/perf_ctl.c    the perf stat --control hand-shake
 *   src/perf_rapl.c   RAPL package energy
 * src/perf_internal.h holds the spec layout the first two share.
 */
#ifndef FB_PERF_H
#define FB_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Most events one spec (and so one group) may hold. */
#define FB_PERF_MAX_EVENTS 16

/* ---- event specs ---------------------------------------------------------------- */

/* A parsed, validated, immutable event list. */
struct fb_perf_spec;

/* Parse a comma-separated list of event names as `perf list` shows them
 * ("task-clock,context-switches", "cycles:u", "instructions:uk", "r003c",
 * libpfm4 names like "perf::PERF_COUNT_SW_CPU_CLOCK:u").  Each name is encoded
 * by libpfm4 with the user's modifiers kept (perf-style modifier groups such as
 * ":uk" or ":upp" are spelled out for libpfm4), then opened once on the calling
 * thread to check this machine can count it.
 * Returns 0 and *out (free with fb_perf_spec_free), or, with a one-line message
 * naming the bad event in err (when errlen > 0):
 *   -EINVAL      unknown event, bad modifier, empty name, more than FB_PERF_MAX_EVENTS;
 *   -EOPNOTSUPP  a known event this machine cannot count (e.g. cycles in a VM);
 *   -EACCES      perf_event_open refused even user-only counting;
 *   -ENODEV      libpfm4 could not initialize.
 * Any thread; blocks briefly (syscalls, a process-wide libpfm4 lock). */
int fb_perf_spec_parse(const char *list, struct fb_perf_spec **out, char *err, size_t errlen);

/* The default spec: "cycles,instructions" when this machine counts hardware
 * events, else "task-clock,context-switches,cpu-migrations,page-faults" with a
 * note saying why.  Never NULL (out of memory aborts; if even software events
 * cannot be opened the spec is the software list and its groups fail to open). */
struct fb_perf_spec *fb_perf_spec_default(void);

/* NULL, or one line to print once per run (hardware fallback, user-only fallback). */
const char *fb_perf_spec_note(const struct fb_perf_spec *s);

size_t fb_perf_spec_count(const struct fb_perf_spec *s);
/* Event i's name as the user wrote it (plus ":u" if the user-only fallback applied). */
const char *fb_perf_spec_name(const struct fb_perf_spec *s, size_t i);
/* Event i's fully qualified libpfm4 encoding, for result files (e.g.
 * "perf::PERF_COUNT_SW_TASK_CLOCK:u=1:k=1:excl=0:mg=0:mh=1"). */
const char *fb_perf_spec_encoding(const struct fb_perf_spec *s, size_t i);
/* NULL is ignored.  Groups opened from s stay valid after it is freed (they copy what they need). */
void fb_perf_spec_free(struct fb_perf_spec *s);

/* ---- counter groups, one per thread ------------------------------------------------ */

/* The spec's events as one perf group on one thread. */
struct fb_perf_group;

/* Open the spec's events on thread `tid` (0 = the calling thread), leader first,
 * leader disabled, members enabled (they count while the leader does); a
 * member the PMU refuses with EINVAL (the group no longer fits its counters)
 * starts a further group, led the same way (fb_perf_group_kernel_groups);
 * read_format TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|GROUP; O_CLOEXEC; not inherited.
 * Counts survive the thread's exit until close.  0 and *out, or -errno of the
 * failing perf_event_open (-ESRCH: no such thread). Any thread. */
int fb_perf_group_open(const struct fb_perf_spec *s, pid_t tid, struct fb_perf_group **out);
/* Start / stop counting the whole group (one ioctl on each kernel group's leader). */
void fb_perf_group_enable(struct fb_perf_group *g);
void fb_perf_group_disable(struct fb_perf_group *g);
/* Zero the group's counts and read the group once: later reads report the
 * counts and the times since this reset (time_enabled/time_running keep
 * running in the kernel, so they are taken as deltas from this read: a
 * multiplexed count is scaled by how long it ran in the region, not since
 * open, as perf stat scales the deltas between two reads).
 * 0, or -errno of the ioctl or the read (then the times count from open). */
int fb_perf_group_reset(struct fb_perf_group *g);
size_t fb_perf_group_count(const struct fb_perf_group *g);
/* How many kernel groups the events went into: 1, or more when the PMU
 * refused them as one (EINVAL for a member: more events than counters) and
 * the rest was opened as further groups, each counted and multiplexed on
 * its own (perf stat's weak-group fallback). */
size_t fb_perf_group_kernel_groups(const struct fb_perf_group *g);
/* The i-th event moved out of the first group by such a split (spec order),
 * NULL past the last. */
const char *fb_perf_group_moved(const struct fb_perf_group *g, size_t i);

/* One event's reading.  value = raw × time_enabled / time_running.
 * scaled = true when the event was multiplexed (ran less than it was enabled):
 * the value is then an estimate and must be shown as such.  An event that did
 * not run (time_running 0: never scheduled, or never enabled) was not
 * counted: value NAN, counted false, as perf stat's "<not counted>" (never a 0). */
struct fb_perf_value {
	const char *name;        /* the group's copy of the spec name; valid until close */
	double value;
	uint64_t raw, time_enabled, time_running;
	bool scaled, counted;
};

/* Read the group in one read() of the leader into out[0 .. min(n, count) - 1]:
 * counts and times since the last fb_perf_group_reset (since open before one).
 * 0, or -errno (-EIO: the kernel returned a short or inconsistent group). Any thread. */
int fb_perf_group_read(struct fb_perf_group *g, struct fb_perf_value *out, size_t n);
/* NULL is ignored. */
void fb_perf_group_close(struct fb_perf_group *g);

/* The scaling rule of fb_perf_group_read, alone (pure; for tests and other
 * readers): NAN (not counted) when time_running is 0. */
double fb_perf_scale(uint64_t raw, uint64_t time_enabled, uint64_t time_running, bool *scaled);

/* ---- perf stat --delay=-1 --control fd:CTL,ACK ---------------------------------- */

/* fencebench's side of perf stat's control protocol: write "enable\n" /
 * "disable\n" to CTL, then wait for perf's "ack\n" (followed by a NUL) on ACK. */
struct fb_perf_ctl;

/* Validate the descriptors with fcntl: ctl_fd must be open for writing, ack_fd
 * (or -1: do not wait for acks) open for reading, and they must differ.
 * What the ack FIFO already holds is read and dropped (acks an earlier process
 * under the same perf gave up on), without blocking.
 * 0 and *out, -EBADF (not open / wrong direction), -EINVAL (same fd, negative ctl). */
int fb_perf_ctl_open(int ctl_fd, int ack_fd, struct fb_perf_ctl **out);
/* How long enable/disable wait for an ack (default 2000 ms). */
void fb_perf_ctl_set_timeout_ms(struct fb_perf_ctl *c, int timeout_ms);
/* Send the command and wait for its ack.  Blocks up to the timeout, the
 * write included (a FIFO nobody reads never hangs the caller).  Acks are
 * matched to commands in order: after a timeout, the late ack is taken as
 * the timed-out command's when it comes, never as a later command's.
 * 0, -ETIMEDOUT (no room to write, or no ack in time), -EPIPE (perf went
 * away; SIGPIPE is not raised), -EPROTO (something other than "ack" came
 * back), or another -errno. */
int fb_perf_ctl_enable(struct fb_perf_ctl *c);
int fb_perf_ctl_disable(struct fb_perf_ctl *c);
/* Frees the handle; the descriptors stay open (they belong to the caller). NULL ignored. */
void fb_perf_ctl_close(struct fb_perf_ctl *c);

/* ---- RAPL package energy through perf's power PMU -------------------------------- */

/* power/energy-pkg counted system-wide on one CPU of each package (the PMU's cpumask). */
struct fb_rapl;

/* Open /sys/bus/event_source/devices/power, event energy-pkg (its scale and
 * "Joules" unit files).  0 and *out; -ENODEV, silently, when the machine exposes
 * no such event; -EACCES when system-wide counting is not allowed; other -errno. */
int fb_rapl_open(struct fb_rapl **out);
/* Same, with the PMU directory given (tests, unusual sysfs mounts). */
int fb_rapl_open_at(const char *pmu_dir, struct fb_rapl **out);
/* Package energy since open, summed over packages, in joules.  0 or -errno. */
int fb_rapl_read_joules(struct fb_rapl *r, double *joules);
/* NULL is ignored. */
void fb_rapl_close(struct fb_rapl *r);

#endif
