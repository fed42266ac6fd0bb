/* tests/test_lf_die.c — lf_die (lockfree/die.h): the message, with the
 * caller's file:line, on stderr, and death by SIGABRT.  Run in a child. */
#include "tests/fb_test.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lockfree/die.h"

static const int die_line = __LINE__ + 3;   /* the lf_die call below */
static _Noreturn void die_now(void)
{
	lf_die("bad %s %d", "thing", 7);
}

static void lf_die_prints_file_line_and_message_then_aborts(void **state)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], 2) < 0)
			_exit(126);
		die_now();
	}
	close(fds[1]);
	char buf[256] = "";
	size_t len = 0;
	ssize_t got;
	while (len + 1 < sizeof(buf) && (got = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)got;
	buf[len] = '\0';
	close(fds[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);

	char want[128];
	snprintf(want, sizeof(want), "%s:%d: bad thing 7\n", __FILE__, die_line);
	assert_string_equal(buf, want);
}

FB_TEST_MAIN(cmocka_unit_test(lf_die_prints_file_line_and_message_then_aborts))
