/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ptyfloor: the floor of the scrolling benchmark's `cat` (README.md, The pty
 * floor): a "terminal" that does nothing but drain a pty master, answer the
 * cursor position request (ESC [ 6 n, with ESC [ 1 ; 1 R) and sleep a while
 * after each read, so that the kernel hands over full batches as it does to
 * a terminal busy drawing (a reader that never waits is slower under TCG: a
 * wake-up per small chunk).
 *
 *     ptyfloor COLS ROWS SLEEP_US DONE -- COMMAND [ARG...]
 *
 * Runs COMMAND as the session on the pty's slave (its own session, the slave
 * as its controlling tty and fds 0-2, the window COLS x ROWS), drains the
 * master until the session ends (EIO once every slave fd is closed) or the
 * file DONE exists (then SIGTERM to the session: session.sh ends in a
 * sleep), and prints "ptyfloor: N bytes in R reads, Q queries". The session
 * (the benchmark's session.sh) times itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ptysession.h"

static const char query[] = "\033[6n";

int main(int argc, char **argv)
{
	struct winsize ws = {0};
	unsigned long long bytes = 0, reads = 0, queries = 0;
	char buf[4096 + sizeof(query)];
	size_t keep = 0;
	long sleep_us;
	int master;
	pid_t child;

	if (argc < 7 || strcmp(argv[5], "--") != 0) {
		fprintf(stderr, "usage: ptyfloor COLS ROWS SLEEP_US DONE -- COMMAND [ARG...]\n");
		return 2;
	}
	ws.ws_col = (unsigned short)atoi(argv[1]);
	ws.ws_row = (unsigned short)atoi(argv[2]);
	sleep_us = atol(argv[3]);
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) {
		perror("ptyfloor: posix_openpt");
		return 1;
	}
	if (ioctl(master, TIOCSWINSZ, &ws) < 0)
		perror("ptyfloor: TIOCSWINSZ");
	child = pty_session(master, argv + 6, "ptyfloor");
	if (child < 0)
		return 1;
	for (;;) {
		struct pollfd p = {master, POLLIN, 0};
		ssize_t n;

		if (access(argv[4], F_OK) == 0)
			break;
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(master, buf + keep, sizeof(buf) - sizeof(query));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break; /* EIO: the session closed its last slave fd */
		reads++;
		bytes += (unsigned long long)n;
		/* the request may be cut by reads: the last bytes are kept */
		size_t len = keep + (size_t)n;
		for (char *q = buf;
		     (q = memmem(q, len - (size_t)(q - buf), query, sizeof(query) - 1)) != NULL;
		     q += sizeof(query) - 1) {
			static const char reply[] = "\033[1;1R";

			queries++;
			if (write(master, reply, sizeof(reply) - 1) < 0)
				perror("ptyfloor: write");
			/* not seen again in the kept tail */
			memset(q, 0, sizeof(query) - 1);
		}
		keep = len < sizeof(query) - 1 ? len : sizeof(query) - 1;
		memmove(buf, buf + len - keep, keep);
		if (sleep_us > 0) {
			struct timespec ts = {sleep_us / 1000000, (sleep_us % 1000000) * 1000};

			nanosleep(&ts, NULL);
		}
	}
	kill(-child, SIGTERM);
	waitpid(child, NULL, 0);
	printf("ptyfloor: %llu bytes in %llu reads, %llu queries\n", bytes, reads, queries);
	return 0;
}
