/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest tool for the benchmark's footprint section (footprint.py): how
 * long a terminal takes from its start to the first prompt on the glass,
 * read off the framebuffer's pixels, not from the terminal's own word.
 *
 *   firstdraw FB X0 Y0 X1 Y1 TIMEOUT_S -- COMMAND [ARGS...]
 *
 * Clears the framebuffer's memory to 0, starts COMMAND (fork, exec)
 * and polls the mapping every millisecond until some pixel of the rectangle
 * [X0, X1) x [Y0, Y1) of the visible screen (at the current pan offset) is
 * not 0. The rectangle is where the session writes its prompt, away from
 * the cursor's first cell, so a terminal's first frame (a cleared screen,
 * its cursor in the top left corner) does not count. The screen's format is
 * read again at each poll: a terminal may change the depth (kmscon sets 24
 * bpp on cirrus) or pan. Prints "firstdraw PID MICROSECONDS" (or "firstdraw
 * PID timeout") and exits, leaving COMMAND running.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct rect {
	unsigned x0, y0, x1, y1;
};

/* Whether any pixel of the rectangle is not 0, at the screen's current
 * format and pan offset; false when the rectangle is off the mapping. */
static bool rect_drawn(int fd, const uint8_t *map, size_t len, const struct rect *r)
{
	struct fb_var_screeninfo var;
	struct fb_fix_screeninfo fix;
	size_t bpp;

	if (ioctl(fd, FBIOGET_VSCREENINFO, &var) < 0 || ioctl(fd, FBIOGET_FSCREENINFO, &fix) < 0)
		return false;
	bpp = (var.bits_per_pixel + 7) / 8;
	for (unsigned y = r->y0; y < r->y1 && y < var.yres; y++) {
		size_t off = (size_t)(y + var.yoffset) * fix.line_length + r->x0 * bpp;
		size_t n = (size_t)(r->x1 - r->x0) * bpp;

		if (off + n > len)
			return false;
		for (size_t i = 0; i < n; i++)
			if (map[off + i])
				return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct fb_var_screeninfo var;
	struct fb_fix_screeninfo fix;
	struct timespec pause = {0, 1000000};
	struct rect r;
	int64_t t0, limit;
	uint8_t *map;
	size_t len;
	pid_t pid;
	int fd;

	if (argc < 9 || strcmp(argv[7], "--") != 0) {
		fprintf(stderr, "usage: firstdraw FB X0 Y0 X1 Y1 TIMEOUT_S -- COMMAND [ARGS...]\n");
		return 2;
	}
	r.x0 = (unsigned)atoi(argv[2]);
	r.y0 = (unsigned)atoi(argv[3]);
	r.x1 = (unsigned)atoi(argv[4]);
	r.y1 = (unsigned)atoi(argv[5]);
	limit = (int64_t)atoi(argv[6]) * 1000000;
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, FBIOGET_VSCREENINFO, &var) < 0 ||
	    ioctl(fd, FBIOGET_FSCREENINFO, &fix) < 0) {
		fprintf(stderr, "firstdraw: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	len = fix.smem_len;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "firstdraw: mmap %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	/* All of video memory: the terminal may pan anywhere in it. */
	memset(map, 0, len);
	/* Deferred I/O (DRM fbdev emulation) shows the cleared screen now. */
	fsync(fd);
	fflush(NULL);
	t0 = now_usec();
	pid = fork();
	if (pid < 0) {
		perror("firstdraw: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[8], argv + 8);
		fprintf(stderr, "firstdraw: %s: %s\n", argv[8], strerror(errno));
		_exit(127);
	}
	while (now_usec() - t0 < limit) {
		if (rect_drawn(fd, map, len, &r)) {
			printf("firstdraw %d %lld\n", (int)pid, (long long)(now_usec() - t0));
			return 0;
		}
		nanosleep(&pause, NULL);
	}
	printf("firstdraw %d timeout\n", (int)pid);
	return 1;
}
