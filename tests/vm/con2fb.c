/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * con2fb: which framebuffer the kernel's fbcon draws a VT on, read and set
 * with the framebuffer driver's FBIOGET_CON2FBMAP and FBIOPUT_CON2FBMAP (what
 * fbset -con2fb / con2fbmap do), so that a VT can be put on a second card,
 * for the VM checks seat-oracle (seatcheck.py): fbcon's own drawing of the
 * oracle text on the card of a seat without VTs, and screens-mirror
 * (screenstest.py): fbcon's own drawing of it on the cirrus guest's fb1.
 *
 *     con2fb DEVICE CONSOLE
 *         Prints the number of the framebuffer VT CONSOLE (1-63) is drawn
 *         on.
 *     con2fb DEVICE CONSOLE FB
 *         Maps VT CONSOLE to framebuffer FB and prints the mapping read
 *         back. fbcon takes FB when the VT is shown (it sets the VT's grid
 *         to FB's mode then) and lets it go when no VT is mapped to it.
 *
 * DEVICE is any framebuffer device (the ioctl names the framebuffer by
 * number); the set needs CAP_SYS_TTY_CONFIG.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int parse(const char *s, unsigned max, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max)
		return -1;
	*ret = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	struct fb_con2fbmap map = {0};
	unsigned console, fb;
	int fd;

	if ((argc != 3 && argc != 4) || parse(argv[2], 63, &console) < 0 || console < 1 ||
	    (argc == 4 && parse(argv[3], FB_MAX - 1, &fb) < 0)) {
		fprintf(stderr, "usage: con2fb DEVICE CONSOLE [FB]\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "con2fb: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	map.console = console;
	if (argc == 4) {
		map.framebuffer = fb;
		if (ioctl(fd, FBIOPUT_CON2FBMAP, &map) < 0) {
			fprintf(stderr, "con2fb: FBIOPUT_CON2FBMAP %u -> fb%u: %s\n", console, fb,
				strerror(errno));
			return 1;
		}
	}
	map.framebuffer = 0;
	if (ioctl(fd, FBIOGET_CON2FBMAP, &map) < 0) {
		fprintf(stderr, "con2fb: FBIOGET_CON2FBMAP %u: %s\n", console, strerror(errno));
		return 1;
	}
	printf("%u\n", map.framebuffer);
	close(fd);
	return 0;
}
