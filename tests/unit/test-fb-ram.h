/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * A framebuffer in RAM, as fbdev_open() leaves a real one for the renderer:
 * packed pixels at 8 bpp (pseudocolour), 16 bpp (RGB565) or 32 bpp
 * (XRGB8888), a mapping of exactly one screen, no pan area. The unit tests
 * and the host benchmark (tests/bench/floor.c) draw into it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/devices/fbdev.h"
#include "../../daemon/color/pixel.h"

/* The mode bpp x xres x yres with `pad` bytes after each pixel line (an odd
 * line length), the memory filled with `fill`. fb's map (NULL or from an
 * earlier call) is replaced. Returns 0, -ENOTSUP for a bpp the renderer
 * cannot draw, -ENOMEM. */
static inline int fb_ram_set_mode(struct fbdev *fb, unsigned bpp, unsigned xres, unsigned yres,
				  unsigned pad, uint8_t fill)
{
	int r;

	free(fb->map);
	fb->map = NULL;
	fb->map_size = 0;
	memset(&fb->var, 0, sizeof(fb->var));
	fb->fix.type = FB_TYPE_PACKED_PIXELS;
	fb->fix.visual = bpp == 8 ? FB_VISUAL_PSEUDOCOLOR : FB_VISUAL_TRUECOLOR;
	fb->var.xres = fb->var.xres_virtual = xres;
	fb->var.yres = fb->var.yres_virtual = yres;
	fb->var.bits_per_pixel = bpp;
	if (bpp == 32) {
		fb->var.red = (struct fb_bitfield){16, 8, 0};
		fb->var.green = (struct fb_bitfield){8, 8, 0};
		fb->var.blue = (struct fb_bitfield){0, 8, 0};
	} else if (bpp == 16) {
		fb->var.red = (struct fb_bitfield){11, 5, 0};
		fb->var.green = (struct fb_bitfield){5, 6, 0};
		fb->var.blue = (struct fb_bitfield){0, 5, 0};
	}
	r = pixel_format_from_fb(&fb->fix, &fb->var, &fb->format);
	if (r < 0)
		return r;
	fb->line_length = xres * fb->format.bytes_per_pixel + pad;
	fb->map_size = (size_t)fb->line_length * yres;
	fb->map = malloc(fb->map_size);
	if (!fb->map)
		return -ENOMEM;
	memset(fb->map, fill, fb->map_size);
	return 0;
}
