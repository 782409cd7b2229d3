/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest tool: a burst of kernel messages, written to /dev/kmsg as fast as
 * the kernel takes them (the kmsg-flood check, tests/vm/kmsgtest.py, and the
 * benchmark's kmsg row, bench.py --kmsg).
 *
 *   kmsgflood [--level=N] [--text=PREFIX] [--size=BYTES] COUNT
 *
 * Record i (1 to COUNT) is "<N>PREFIX i", padded with a space and dots to
 * BYTES characters of text if it is shorter (at most 1000; default: no
 * padding), one write() each, which the kernel
 * takes as one record (level N, default 6; facility user). The kernel limits
 * a writer of /dev/kmsg to 10 records per 5 s per open file by default
 * (kernel.printk_devkmsg = ratelimit) and drops the rest without an error, so
 * kmsgflood sets /proc/sys/kernel/printk_devkmsg to "on" for its writes and
 * puts the value it found back. It prints
 *   kmsgflood: COUNT records in USEC us, FAILED failed
 * and exits 1 when a write failed or the setting could not be made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEVKMSG "/proc/sys/kernel/printk_devkmsg"

static long long now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Writes value to DEVKMSG; 0 or -errno. The kernel takes the value only
 * with its newline (devkmsg_sysctl_set_loglvl(): EINVAL otherwise). */
static int set_devkmsg(const char *value)
{
	int fd = open(DEVKMSG, O_WRONLY | O_CLOEXEC), r = 0;
	char buf[40];
	int len = snprintf(buf, sizeof(buf), "%s\n", value);

	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)len) < 0)
		r = -errno;
	close(fd);
	return r;
}

int main(int argc, char **argv)
{
	const char *text = "kmsgflood";
	char old[32] = "", rec[1024];
	long level = 6, count, failed = 0, size = 0;
	long long t0, t1;
	int fd, r, i;
	ssize_t n;

	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strncmp(argv[i], "--level=", 8) == 0)
			level = strtol(argv[i] + 8, NULL, 10);
		else if (strncmp(argv[i], "--text=", 7) == 0)
			text = argv[i] + 7;
		else if (strncmp(argv[i], "--size=", 7) == 0)
			size = strtol(argv[i] + 7, NULL, 10);
		else
			break;
	}
	if (i != argc - 1 || (count = strtol(argv[i], NULL, 10)) <= 0 || level < 0 || level > 7 ||
	    size < 0 || size > 1000 || strlen(text) > 900) {
		fprintf(stderr,
			"usage: kmsgflood [--level=0-7] [--text=PREFIX] [--size=0-1000] COUNT\n");
		return 2;
	}
	fd = open(DEVKMSG, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, old, sizeof(old) - 1)) <= 0) {
		fprintf(stderr, "kmsgflood: cannot read %s: %s\n", DEVKMSG, strerror(errno));
		return 1;
	}
	close(fd);
	old[n] = '\0';
	old[strcspn(old, "\n")] = '\0';
	r = set_devkmsg("on");
	if (r < 0) {
		fprintf(stderr, "kmsgflood: cannot set %s to on: %s\n", DEVKMSG, strerror(-r));
		return 1;
	}
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kmsgflood: cannot open /dev/kmsg: %s\n", strerror(errno));
		set_devkmsg(old);
		return 1;
	}
	t0 = now_usec();
	for (long k = 1; k <= count; k++) {
		int head = snprintf(rec, sizeof(rec), "<%ld>", level);
		int len =
		    head + snprintf(rec + head, sizeof(rec) - (size_t)head, "%s %ld", text, k);

		if (len - head < size) {
			rec[len++] = ' ';
			while (len - head < size)
				rec[len++] = '.';
		}
		rec[len++] = '\n';

		if (write(fd, rec, (size_t)len) != len)
			failed++;
	}
	t1 = now_usec();
	close(fd);
	r = set_devkmsg(old);
	if (r < 0)
		fprintf(stderr, "kmsgflood: cannot set %s back to %s: %s\n", DEVKMSG, old,
			strerror(-r));
	printf("kmsgflood: %ld records in %lld us, %ld failed\n", count, t1 - t0, failed);
	return failed || r < 0 ? 1 : 0;
}
