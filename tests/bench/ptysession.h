/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The session of the bench's pty floors (ptyfloor.c, echofloor.c): COMMAND
 * run on the slave of `master`, in its own session with the slave as its
 * controlling tty and fds 0-2, SIGINT and SIGTERM at their defaults.
 */
#ifndef CONSOLED_BENCH_PTYSESSION_H
#define CONSOLED_BENCH_PTYSESSION_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The session's pid, or -1 (fork failed; perror() said why, prefixed with
 * `tool`). */
static inline pid_t pty_session(int master, char **command, const char *tool)
{
	pid_t child = fork();
	int slave;

	if (child != 0) {
		if (child < 0)
			perror(tool);
		return child;
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	setsid();
	slave = open(ptsname(master), O_RDWR);
	if (slave < 0 || ioctl(slave, TIOCSCTTY, 0) < 0) {
		fprintf(stderr, "%s: the pty's slave: ", tool);
		perror(NULL);
		_exit(127);
	}
	dup2(slave, 0);
	dup2(slave, 1);
	dup2(slave, 2);
	if (slave > 2)
		close(slave);
	execvp(command[0], command);
	fprintf(stderr, "%s: exec %s: ", tool, command[0]);
	perror(NULL);
	_exit(127);
}

#endif
