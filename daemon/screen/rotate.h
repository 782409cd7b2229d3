/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Screen rotation as fbcon does it (fbcon/rotate_all, fbcon=rotate:N): the
 * renderer, damage tracking, scroll detection, the pointer and the session
 * all live in the logical (turned) screen; only the write to the glass maps
 * a logical rectangle to the physical one and turns its pixels.
 *
 * fbcon's numbers: 0 upright, 1 turned 90 degrees clockwise (the top of the
 * text towards the right edge of the glass), 2 upside down, 3 turned 90
 * degrees counter-clockwise. Placement is fbcon's (fbcon_cw.c, fbcon_ud.c,
 * fbcon_ccw.c): a logical point (x, y) of a screen xres x yres is shown at
 *
 *   0  (x, y)                 logical screen xres x yres
 *   1  (xres - 1 - y, x)      logical screen yres x xres
 *   2  (xres - 1 - x, yres - 1 - y)
 *   3  (y, yres - 1 - x)      logical screen yres x xres
 *
 * so text row 0 is at the right edge (1), the bottom (2) or the left edge
 * (3), and the margins the grid leaves (right of and below it, logically)
 * are on the left and bottom (1), the left and top (2) or the right and top
 * (3) of the glass, where fbcon clears them. A glyph is turned exactly (fbcon_rotate.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rotation {
	ROTATE_UPRIGHT,
	ROTATE_CW,
	ROTATE_UD,
	ROTATE_CCW,
	_ROTATE_MAX,
};

/* "0" to "3" (fbcon's numbers) or "90", "180", "270" degrees; -EINVAL
 * otherwise. */
int rotate_from_string(const char *s);
unsigned rotate_degrees(enum rotation rot);

/* rot turned by `step` quarter turns clockwise (negative: counter-clockwise). */
enum rotation rotate_turn(enum rotation rot, int step);

/* Whether text rows run across the glass's columns (1 and 3): a scroll
 * moves pixels sideways, which panning cannot do. */
static inline bool rotate_sideways(enum rotation rot)
{
	return rot == ROTATE_CW || rot == ROTATE_CCW;
}

struct rotate_rect {
	unsigned x, y, w, h;
};

/* The logical screen of a physical xres x yres. */
void rotate_logical_size(enum rotation rot, unsigned xres, unsigned yres, unsigned *ret_w,
			 unsigned *ret_h);

/* Where the logical rectangle lr is shown on a physical xres x yres screen. */
struct rotate_rect rotate_rect_to_physical(enum rotation rot, unsigned xres, unsigned yres,
					   struct rotate_rect lr);

/* The logical point a physical pixel (px, py) of xres x yres shows. */
void rotate_point_to_logical(enum rotation rot, unsigned xres, unsigned yres, unsigned px,
			     unsigned py, unsigned *ret_x, unsigned *ret_y);

/* Turns a block of w x h logical pixels of bpp bytes (src, lines src_stride
 * bytes apart) into the physical block that shows it (dst, its lines
 * dst_stride apart; h x w pixels for the sideways rotations), as
 * rotate_rect_to_physical() places it. */
void rotate_pixels(enum rotation rot, const uint8_t *src, size_t src_stride, unsigned w, unsigned h,
		   unsigned bpp, uint8_t *dst, size_t dst_stride);
