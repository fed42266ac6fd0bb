/* src/fb_signal.h — SIGINT and SIGTERM: finish what can be finished, leave no temporary file.
 *
 * fb_signal_start blocks both signals in the calling thread, so in every
 * thread started after it (scenario threads, the model's threads), and starts
 * one thread that waits for them with sigwait.  When one arrives, that thread
 *   1. calls the stop hook, if one is set (a sweep writes the points that
 *      finished: the journal is the durable record, the output its rendering),
 *   2. waits until no temporary output file exists (fb_signal_hold/release
 *      bracket a temporary's life, from creation to rename or removal),
 *   3. dies of the signal (default action), so the exit status says so
 *      (128 + signal in a shell).
 * A second signal meanwhile changes nothing: the first one's steps finish.
 *
 * Threads: fb_signal_start once, from main, before any other thread exists.
 * The rest from any thread.  The stop hook runs on the signal thread; whoever
 * sets it makes what it reads safe to read there (a lock of its own), and
 * clearing the hook waits for a call under way to return.  Nothing here
 * polls: the signal thread sleeps in sigwait.
 */
#ifndef FB_SIGNAL_H
#define FB_SIGNAL_H

#include <stdbool.h>

/* Block SIGINT and SIGTERM and start the thread that takes them.  0 or -errno
 * (then the signals keep their default action: the process dies at once). */
int fb_signal_start(void);

/* Set (fn != NULL) or clear the stop hook: fn(arg, sig) runs on the signal
 * thread before the process dies.  Clearing waits for a call under way. */
void fb_signal_on_stop(void (*fn)(void *arg, int sig), void *arg);

/* A SIGINT or SIGTERM has arrived (the process is finishing).  For a wait
 * that polls (a FIFO without a reader), so that it ends.  Any thread. */
bool fb_signal_stopping(void);

/* A temporary file exists from fb_signal_hold until fb_signal_release: the
 * process does not die of a signal in between.  Not recursive; blocks while
 * the signal thread is finishing (it never releases: the process dies). */
void fb_signal_hold(void);
void fb_signal_release(void);

#endif
