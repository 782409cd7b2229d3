/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blitcheck: exercises a backend plugin on the real device, in the test
 * guest. It loads the plugin through consoled's own loader, draws a known
 * pattern with the CPU, then runs fills and copies (overlapping in every
 * direction, at odd sizes and positions, in the visible screen and beyond
 * it) and compares the framebuffer, read back, with the same operations done
 * on a copy in RAM. A test tool may read VRAM; consoled never does.
 *
 *     blitcheck [--backend=NAME] [--hang] [/dev/fbN]
 *
 * The VT is put in KD_GRAPHICS meanwhile, as consoled does: fbcon's blinking
 * cursor would otherwise draw into the area under test.
 *
 * Prints one line per operation and "blitcheck: N passed, M failed"; exits
 * 0 only if everything matched. With --hang the plugin's test switch makes
 * the engine hang: sync() must time out.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kd.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/devices/backend.h"
#include "../../daemon/devices/fbdev.h"
#include "../../daemon/util/log.h"
#include "../../daemon/color/pixel.h"

#include <consoled/backend.h>

struct check {
	struct fbdev *fb;
	struct backend *be;
	uint8_t *model; /* RAM copy of the lines under test */
	unsigned lines, bpp;
	unsigned passed, failed;
};

static uint8_t *fbline(struct check *c, unsigned y)
{
	return c->fb->map + (size_t)y * c->fb->line_length;
}

static uint8_t *mline(struct check *c, unsigned y)
{
	return c->model + (size_t)y * c->fb->line_length;
}

static void pattern(struct check *c)
{
	for (unsigned y = 0; y < c->lines; y++)
		for (unsigned x = 0; x < c->fb->line_length; x++)
			mline(c, y)[x] = (uint8_t)(x * 7 + y * 13 + (x * y) / 5);
	for (unsigned y = 0; y < c->lines; y++)
		memcpy(fbline(c, y), mline(c, y), c->fb->line_length);
}

static void verify(struct check *c, const char *what)
{
	unsigned bad = 0, fx = 0, fy = 0;

	if (backend_sync(c->be) < 0) {
		printf("FAIL %s: sync failed\n", what);
		c->failed++;
		return;
	}
	for (unsigned y = 0; y < c->lines; y++) {
		unsigned w = c->fb->var.xres_virtual * c->bpp;
		if (memcmp(fbline(c, y), mline(c, y), w) == 0)
			continue;
		for (unsigned x = 0; x < w; x++)
			if (fbline(c, y)[x] != mline(c, y)[x]) {
				if (!bad) {
					fx = x / c->bpp;
					fy = y;
				}
				bad++;
			}
	}
	if (bad) {
		printf("FAIL %s: %u bytes differ, first at pixel %u,%u\n", what, bad, fx, fy);
		c->failed++;
	} else {
		printf("ok   %s\n", what);
		c->passed++;
	}
}

static void copy(struct check *c, unsigned sx, unsigned sy, unsigned dx, unsigned dy, unsigned w,
		 unsigned h)
{
	char what[128];
	size_t rowb = (size_t)w * c->bpp;
	uint8_t *tmp = malloc(rowb * h);

	for (unsigned y = 0; y < h; y++)
		memcpy(tmp + y * rowb, mline(c, sy + y) + (size_t)sx * c->bpp, rowb);
	for (unsigned y = 0; y < h; y++)
		memcpy(mline(c, dy + y) + (size_t)dx * c->bpp, tmp + y * rowb, rowb);
	free(tmp);
	snprintf(what, sizeof(what), "copy %ux%u from %u,%u to %u,%u", w, h, sx, sy, dx, dy);
	if (backend_copy(c->be, sx, sy, dx, dy, w, h) < 0) {
		printf("FAIL %s: the backend refused\n", what);
		c->failed++;
		return;
	}
	verify(c, what);
}

static void fill(struct check *c, unsigned x, unsigned y, unsigned w, unsigned h, uint32_t px)
{
	char what[128];

	for (unsigned j = 0; j < h; j++)
		for (unsigned i = 0; i < w; i++)
			pixel_store(mline(c, y + j) + (size_t)(x + i) * c->bpp, c->bpp, px);
	snprintf(what, sizeof(what), "fill %ux%u at %u,%u with %#x", w, h, x, y, px);
	if (backend_fill(c->be, x, y, w, h, px) < 0) {
		printf("FAIL %s: the backend refused\n", what);
		c->failed++;
		return;
	}
	verify(c, what);
}

int main(int argc, char **argv)
{
	const char *path = "/dev/fb0", *name = NULL;
	struct palette palette;
	struct backend_config cfg = {0};
	struct check c = {0};
	int r;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--backend=", 10) == 0)
			name = argv[i] + 10;
		else if (strcmp(argv[i], "--hang") == 0)
			cfg.test_flags |= CONSOLED_BACKEND_TEST_HANG;
		else
			path = argv[i];
	}
	cfg.name = name;
	log_set_max_level(LOG_DEBUG);
	int tty = open("/dev/tty0", O_RDWR | O_CLOEXEC);
	if (tty >= 0 && ioctl(tty, KDSETMODE, KD_GRAPHICS) < 0) {
		close(tty);
		tty = -1;
	}
	palette_init(&palette, PALETTE_LINUX, NULL);
	r = fbdev_open(path, &palette, &c.fb);
	if (r < 0)
		return 2;
	r = backend_load(c.fb, &cfg, &c.be);
	if (r < 0 || !c.be) {
		printf("blitcheck: no backend for %s\n", path);
		return 2;
	}
	c.bpp = c.fb->format.bytes_per_pixel;
	/* The visible screen and, where there is memory, 64 lines beyond it. */
	c.lines = c.fb->var.yres_virtual;
	c.model = malloc((size_t)c.lines * c.fb->line_length);

	if (cfg.test_flags & CONSOLED_BACKEND_TEST_HANG) {
		backend_fill(c.be, 0, 0, 8, 8, 1);
		r = backend_sync(c.be);
		if (tty >= 0)
			ioctl(tty, KDSETMODE, KD_TEXT);
		printf("%s hang: sync returned %d (%s), backend %s\n",
		       r == -ETIMEDOUT ? "ok  " : "FAIL", r, strerror(-r),
		       backend_ok(c.be) ? "still in use" : "dropped");
		return r == -ETIMEDOUT && !backend_ok(c.be) ? 0 : 1;
	}

	unsigned W = c.fb->var.xres, H = c.fb->var.yres;
	uint32_t full = c.bpp == 1   ? 0xa5
			: c.bpp == 2 ? 0xbeef
				     : 0x89abcdef & (c.bpp == 3 ? 0xffffff : ~0u);
	pattern(&c);
	verify(&c, "pattern written by the CPU");
	fill(&c, 0, 0, 1, 1, 0x5);
	fill(&c, 3, 5, 37, 11, 0x2);
	fill(&c, 0, 16, W, 32, 0x7);
	fill(&c, W - 13, H - 9, 13, 9, 0xc);
	fill(&c, 17, 33, 100, 40, full); /* every byte of the pixel value */
	if (c.lines > 2100)
		fill(&c, 0, 10, W, c.lines - 20, full ^ 0x5a5a5a); /* taller than 2048 lines */
	pattern(&c);
	/* scrolling: the whole screen up and down by text rows */
	copy(&c, 0, 16, 0, 0, W, H - 16);
	copy(&c, 0, 0, 0, 16, W, H - 16);
	copy(&c, 0, 48, 0, 0, W, H - 48);
	/* regions, overlapping, in both directions */
	copy(&c, 0, 80, 0, 64, W, 160);
	copy(&c, 0, 64, 0, 80, W, 160);
	copy(&c, 8, 1, 0, 0, W - 8, 50);
	copy(&c, 0, 0, 8, 1, W - 8, 50);
	copy(&c, 5, 7, 11, 3, 123, 45);
	copy(&c, 11, 3, 5, 7, 123, 45);
	copy(&c, 1, 1, 2, 1, 77, 1);
	copy(&c, 200, 100, 10, 300, 64, 32);
	if (c.lines > H + 64)
		copy(&c, 0, H + 16, 0, 0, W, 64); /* from beyond the visible screen */
	if (c.lines > 2100) {
		pattern(&c);
		copy(&c, 0, 16, 0, 0, W, c.lines - 32); /* taller than 2048 lines, both ways */
		copy(&c, 0, 0, 0, 16, W, c.lines - 32);
	}
	printf("blitcheck: %u passed, %u failed\n", c.passed, c.failed);
	if (tty >= 0) {
		ioctl(tty, KDSETMODE, KD_TEXT);
		close(tty);
	}
	backend_free(c.be);
	fbdev_free(c.fb);
	free(c.model);
	return c.failed ? 1 : 0;
}
