/* lockfree/die.c — print file:line and abort.  Contract in die.h. */
#include "lockfree/die.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void lf_die_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	flockfile(stderr);
	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	funlockfile(stderr);
	abort();
}
