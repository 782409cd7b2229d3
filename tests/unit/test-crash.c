/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fatal-signal handler, in child processes that register /dev/null as
 * their VT and framebuffer (the restoring ioctls fail harmlessly), install
 * the handlers and then crash: the handler must write its message and the
 * child must die of the very signal. A stack overflow is the case that needs
 * the alternate signal stack: without it the kernel has nowhere to put the
 * handler's frame and kills the process silently.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/kd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../daemon/util/crash.h"
#include "tests.h"

/* AddressSanitizer installs a SIGSEGV handler and an alternate stack of its
 * own, and its runtime options decide whether ours replaces them and where
 * frames live (fake stacks): the overflow runs for real in builds without
 * it (it passed with gcc 12's, but that is not promised). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static const char message[] = "consoled: fatal signal, restoring the console\n";

/* Never reached; volatile so that the compiler sees an exit from the
 * recursion and cannot turn it into a loop. */
static volatile unsigned stop_depth = UINT_MAX;

static __attribute__((noinline)) unsigned recurse(unsigned depth)
{
	volatile char frame[1024];

	frame[0] = (char)depth;
	frame[sizeof(frame) - 1] = (char)depth;
	if (depth == stop_depth)
		return frame[0];
	/* Work after the call: no tail call. */
	return recurse(depth + 1) + (unsigned)frame[sizeof(frame) - 1];
}

static __attribute__((unused)) void crash_overflow(void)
{
	recurse(0);
}

/* A real fault, on a page that allows no access. */
static void crash_fault(void)
{
	volatile char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		*p = 1;
}

static void crash_abort(void)
{
	abort();
}

/* Not a crash: exits with status 0 if crash_install_handlers() has set up an
 * alternate stack of at least 64 KiB, once (a second call keeps it), and
 * the handlers use it; 3 if not. */
static void check_altstack(void)
{
	struct sigaction sa;
	stack_t ss, again;

	if (sigaltstack(NULL, &ss) < 0 || (ss.ss_flags & SS_DISABLE) || ss.ss_size < 64 * 1024)
		_exit(3);
	crash_install_handlers();
	if (sigaltstack(NULL, &again) < 0 || again.ss_sp != ss.ss_sp)
		_exit(3);
	if (sigaction(SIGSEGV, NULL, &sa) < 0 || !(sa.sa_flags & SA_ONSTACK))
		_exit(3);
	_exit(0);
}

/* What the daemon does at start, with /dev/null for its devices. */
static void child_setup(void)
{
	struct fb_var_screeninfo var = {.xres = 640, .yres = 480};
	struct rlimit lim;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	/* No core file; a small stack, so the overflow comes quickly (the
	 * limit is read when the stack grows). */
	lim = (struct rlimit){0, 0};
	setrlimit(RLIMIT_CORE, &lim);
	if (getrlimit(RLIMIT_STACK, &lim) == 0 && lim.rlim_cur > 1024 * 1024) {
		lim.rlim_cur = 1024 * 1024;
		setrlimit(RLIMIT_STACK, &lim);
	}

	crash_register_vt(fd, K_XLATE);
	crash_register_fb(fd, &var, NULL);
	crash_install_handlers();
	crash_set_active(1);
}

/* Runs fn in a child set up as the daemon, with stderr on a pipe; returns
 * its wait status and what it wrote. */
static int run_child(void (*fn)(void), char *out, size_t size)
{
	int pipefd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	fflush(stderr);
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		if (dup2(pipefd[1], STDERR_FILENO) < 0)
			_exit(2);
		child_setup();
		fn();
		_exit(0);
	}
	close(pipefd[1]);
	while (len < size - 1 && (n = read(pipefd[0], out + len, size - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		abort();
	fputs(out, stderr);
	return status;
}

static void check_crash(void (*crash)(void), int sig)
{
	char out[4096];
	int status = run_child(crash, out, sizeof(out));

	if (WIFEXITED(status))
		fprintf(stderr, "child exited with status %d\n", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "child died of signal %d (%s)\n", WTERMSIG(status),
			strsignal(WTERMSIG(status)));
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sig);
	CHECK(strstr(out, message) != NULL);
}

static void test_altstack(void)
{
	char out[4096];
	int status = run_child(check_altstack, out, sizeof(out));

	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_abort(void)
{
	check_crash(crash_abort, SIGABRT);
}

static void test_fault(void)
{
	check_crash(crash_fault, SIGSEGV);
}

static void test_stack_overflow(void)
{
#ifdef UNDER_ASAN
	printf("ok - test_stack_overflow # SKIP AddressSanitizer handles SIGSEGV on its own "
	       "alternate stack; the overflow runs in builds without it\n");
	fflush(stdout);
#else
	check_crash(crash_overflow, SIGSEGV);
#endif
}

int main(void)
{
	RUN(test_altstack);
	RUN(test_abort);
	RUN(test_fault);
	RUN(test_stack_overflow);
	return TESTS_RESULT();
}
