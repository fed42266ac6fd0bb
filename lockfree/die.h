/* lockfree/die.h — the one way out for the unrecoverable.
 *
 *   lf_die(fmt, ...)  print "file:line: <message>\n" to stderr (the caller's
 *                     file and line) and abort().  Never returns.
 *
 * For what no caller can handle: out of memory, a command the hardware model
 * cannot decode, misuse found where an assert would say too little, a library
 * call that "cannot fail" failing.  Not for user input: a bad option or file
 * is one clear line and an error return (CONTRIBUTING.md, "Conventions": one error convention).
 * Any thread, any layer; async-signal-unsafe (stdio).  The message is written
 * under stderr's lock, so two threads dying at once do not interleave.
 * abort() leaves a core and lets ASan/TSan print their reports.
 */
#ifndef LF_DIE_H
#define LF_DIE_H

#define lf_die(...) lf_die_at(__FILE__, __LINE__, __VA_ARGS__)

_Noreturn void lf_die_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), cold));

#endif
