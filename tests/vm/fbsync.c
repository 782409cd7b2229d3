/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest tool for the deferred-lines check (deferredtest.py): flushes a
 * framebuffer's deferred I/O with fsync() every USEC microseconds for
 * SECONDS, at real-time priority, so that the kernel's flushes fall at any
 * point of consoled's frames (as a slow machine's 50 ms flush does, only
 * often enough for a test).
 *
 *   fbsync /dev/fb0 SECONDS USEC
 *
 * Prints how many flushes it made (also when stopped by SIGTERM).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sched_param sp = {.sched_priority = 10};
	unsigned long flushes = 0;
	double end;
	long usec;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: fbsync DEVICE SECONDS USEC\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "fbsync: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	/* Real-time: a flush preempts consoled wherever it is. */
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
		fprintf(stderr, "fbsync: SCHED_FIFO: %s (flushing at normal priority)\n",
			strerror(errno));
	signal(SIGTERM, on_term);
	end = now() + atof(argv[2]);
	usec = atol(argv[3]);
	while (!stop && now() < end) {
		if (fsync(fd) < 0) {
			fprintf(stderr, "fbsync: fsync: %s\n", strerror(errno));
			return 1;
		}
		flushes++;
		usleep((useconds_t)usec);
	}
	printf("%lu flushes\n", flushes);
	return 0;
}
