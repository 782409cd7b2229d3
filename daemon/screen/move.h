/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Carrying a frame's plan (plan.h) out: the display window through
 * FBIOPAN_DISPLAY (fbdev.h), copies through the blitter (backend.h), moves in
 * the RAM copy. What fails is reported back as data (struct move_report):
 * the caller falls back with frame_plan_fall_back() and tells the scroller.
 */
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "../devices/backend.h"
#include "../devices/fbdev.h"

/* Where a plan's moves happen. */
struct move_target {
	struct fbdev *fb;
	struct backend *backend; /* the scroller's blitter (NULL: none), maybe broken */
	uint8_t *shadow;	 /* the RAM copy of the visible screen, or NULL */
	size_t shadow_stride;
	bool *dirty;	 /* its text rows that differ from VRAM */
	unsigned cell_h; /* pixels of a text row */
};

/* Moves the display window (scroll.h window_move): the return copy first,
 * then the pan. Counts blits and pans into c. */
void move_window(const struct move_target *t, const struct window_move *m,
		 struct scroll_counters *c, struct move_report *rep);
/* Carries out p's move, counting into c; rep says what failed. */
void move_run(const struct move_target *t, const struct frame_plan *p, struct scroll_counters *c,
	      struct move_report *rep);
