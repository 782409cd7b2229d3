/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "rotate.h"

int rotate_from_string(const char *s)
{
	static const char *const names[_ROTATE_MAX][2] = {
	    {"0", "0"}, {"1", "90"}, {"2", "180"}, {"3", "270"}};

	for (int r = 0; r < _ROTATE_MAX; r++)
		if (strcmp(s, names[r][0]) == 0 || strcmp(s, names[r][1]) == 0)
			return r;
	return -EINVAL;
}

unsigned rotate_degrees(enum rotation rot)
{
	return (unsigned)rot * 90;
}

enum rotation rotate_turn(enum rotation rot, int step)
{
	int r = ((int)rot + step) % _ROTATE_MAX;

	return (enum rotation)(r < 0 ? r + _ROTATE_MAX : r);
}

void rotate_logical_size(enum rotation rot, unsigned xres, unsigned yres, unsigned *ret_w,
			 unsigned *ret_h)
{
	*ret_w = rotate_sideways(rot) ? yres : xres;
	*ret_h = rotate_sideways(rot) ? xres : yres;
}

struct rotate_rect rotate_rect_to_physical(enum rotation rot, unsigned xres, unsigned yres,
					   struct rotate_rect lr)
{
	switch (rot) {
	case ROTATE_CW:
		return (struct rotate_rect){xres - lr.y - lr.h, lr.x, lr.h, lr.w};
	case ROTATE_UD:
		return (struct rotate_rect){xres - lr.x - lr.w, yres - lr.y - lr.h, lr.w, lr.h};
	case ROTATE_CCW:
		return (struct rotate_rect){lr.y, yres - lr.x - lr.w, lr.h, lr.w};
	default:
		return lr;
	}
}

void rotate_point_to_logical(enum rotation rot, unsigned xres, unsigned yres, unsigned px,
			     unsigned py, unsigned *ret_x, unsigned *ret_y)
{
	switch (rot) {
	case ROTATE_CW:
		*ret_x = py;
		*ret_y = xres - 1 - px;
		break;
	case ROTATE_UD:
		*ret_x = xres - 1 - px;
		*ret_y = yres - 1 - py;
		break;
	case ROTATE_CCW:
		*ret_x = yres - 1 - py;
		*ret_y = px;
		break;
	default:
		*ret_x = px;
		*ret_y = py;
		break;
	}
}

/*
 * Physical pixel (px, py) of the block shows logical pixel (x, y) with
 *   1: x = py, y = h - 1 - px     2: x = w - 1 - px, y = h - 1 - py
 *   3: x = w - 1 - py, y = px
 * Written one physical line at a time: the source is walked by a step
 * (in bytes) along the line and one from line to line.
 */
#define ROTATE_LOOP(type)                                                                          \
	for (unsigned py = 0; py < ph; py++) {                                                     \
		const uint8_t *s = src + start + (ptrdiff_t)py * line_step;                        \
		type *d = (type *)(void *)(dst + (size_t)py * dst_stride);                         \
		for (unsigned px = 0; px < pw; px++, s += step)                                    \
			memcpy(&d[px], s, sizeof(type));                                           \
	}

void rotate_pixels(enum rotation rot, const uint8_t *src, size_t src_stride, unsigned w, unsigned h,
		   unsigned bpp, uint8_t *dst, size_t dst_stride)
{
	ptrdiff_t stride = (ptrdiff_t)src_stride, b = (ptrdiff_t)bpp;
	unsigned pw = rotate_sideways(rot) ? h : w, ph = rotate_sideways(rot) ? w : h;
	ptrdiff_t start, step, line_step;

	if (w == 0 || h == 0)
		return;
	switch (rot) {
	case ROTATE_CW: /* along a line y falls, from line to line x grows */
		start = (ptrdiff_t)(h - 1) * stride;
		step = -stride;
		line_step = b;
		break;
	case ROTATE_UD:
		start = (ptrdiff_t)(h - 1) * stride + (ptrdiff_t)(w - 1) * b;
		step = -b;
		line_step = -stride;
		break;
	case ROTATE_CCW: /* along a line y grows, from line to line x falls */
		start = (ptrdiff_t)(w - 1) * b;
		step = stride;
		line_step = -b;
		break;
	default:
		for (unsigned y = 0; y < h; y++)
			memcpy(dst + (size_t)y * dst_stride, src + (size_t)y * src_stride,
			       (size_t)w * bpp);
		return;
	}
	switch (bpp) {
	case 1:
		ROTATE_LOOP(uint8_t);
		break;
	case 2:
		ROTATE_LOOP(uint16_t);
		break;
	case 4:
		ROTATE_LOOP(uint32_t);
		break;
	default:
		for (unsigned py = 0; py < ph; py++) {
			const uint8_t *s = src + start + (ptrdiff_t)py * line_step;
			uint8_t *d = dst + (size_t)py * dst_stride;

			for (unsigned px = 0; px < pw; px++, s += step)
				memcpy(d + (size_t)px * bpp, s, bpp);
		}
		break;
	}
}
