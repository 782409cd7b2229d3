/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fbcmap: the colours a framebuffer shows at given pixels, for the VM check
 * palette (palettetest.py), read the way the hardware sees them: the pixel
 * value from the device's memory (pread at the visible page's offset), then
 * at 8 bpp pseudocolour the colour map entry it indexes (FBIOGETCMAP, the
 * driver's copy of what was loaded into the DAC), at 15 bpp and deeper the
 * visual's bitfields.
 *
 *     fbcmap DEVICE X,Y ...
 *         Prints one line per point: "X,Y pixel=N #rrggbb". At 8 bpp a
 *         colour map entry whose 16-bit channels are not an 8-bit value
 *         written as v * 0x101 (what fbcon and consoled load) is printed as
 *         "rgb16:rrrr/gggg/bbbb" in place of #rrggbb, so that an inexact
 *         colour map cannot pass for an exact one.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static unsigned widen(uint32_t v, const struct fb_bitfield *f)
{
	unsigned x = (v >> f->offset) & ((1u << f->length) - 1);

	/* exact for 8-bit fields; narrower ones scaled to 0-255 */
	return f->length >= 8 ? x >> (f->length - 8) : x * 255 / ((1u << f->length) - 1);
}

int main(int argc, char **argv)
{
	struct fb_fix_screeninfo fix;
	struct fb_var_screeninfo var;
	uint16_t red[256], green[256], blue[256];
	struct fb_cmap cmap = {.start = 0, .len = 256, .red = red, .green = green, .blue = blue};
	unsigned bytes;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: fbcmap DEVICE X,Y ...\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, FBIOGET_FSCREENINFO, &fix) < 0 ||
	    ioctl(fd, FBIOGET_VSCREENINFO, &var) < 0) {
		fprintf(stderr, "fbcmap: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	bytes = (var.bits_per_pixel + 7) / 8;
	if (fix.visual == FB_VISUAL_PSEUDOCOLOR && ioctl(fd, FBIOGETCMAP, &cmap) < 0) {
		fprintf(stderr, "fbcmap: FBIOGETCMAP: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		unsigned x, y;
		uint8_t px[4] = {0};
		uint32_t v = 0;
		off_t off;

		if (sscanf(argv[i], "%u,%u", &x, &y) != 2 || x >= var.xres || y >= var.yres) {
			fprintf(stderr, "fbcmap: bad point %s\n", argv[i]);
			return 2;
		}
		off = (off_t)(y + var.yoffset) * fix.line_length + (off_t)(x + var.xoffset) * bytes;
		if (pread(fd, px, bytes, off) != (ssize_t)bytes) {
			fprintf(stderr, "fbcmap: read at %lld: %s\n", (long long)off,
				strerror(errno));
			return 1;
		}
		for (unsigned b = 0; b < bytes; b++)
			v |= (uint32_t)px[b] << (8 * b);
		printf("%u,%u pixel=%u ", x, y, v);
		if (fix.visual == FB_VISUAL_PSEUDOCOLOR) {
			uint16_t r = red[v & 0xff], g = green[v & 0xff], bl = blue[v & 0xff];

			if (r % 0x101 || g % 0x101 || bl % 0x101)
				printf("rgb16:%04x/%04x/%04x\n", r, g, bl);
			else
				printf("#%02x%02x%02x\n", r >> 8, g >> 8, bl >> 8);
		} else
			printf("#%02x%02x%02x\n", widen(v, &var.red), widen(v, &var.green),
			       widen(v, &var.blue));
	}
	return 0;
}
