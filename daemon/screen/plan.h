/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * A frame's plan: from what changed (damage_detect(), damage.h), the
 * scroller's strategies and the blitter's health, which text rows move and
 * by which means (the display window by pan or wrap, a blitter copy, a move
 * in the RAM copy, or none), what then must be drawn, and what the frame
 * falls back to when a move fails. Pure: it changes nothing; move.c carries
 * the moves out, render.c draws what is left.
 */
#include <stdbool.h>

#include "damage.h"
#include "rotate.h"
#include "scroll.h"

enum frame_move {
	FRAME_MOVE_NONE,   /* nothing moves: the damaged cells are drawn */
	FRAME_MOVE_WINDOW, /* the display window pans or wraps (scroll.h window_move) */
	FRAME_MOVE_COPY,   /* a region is copied by the blitter */
	FRAME_MOVE_SHADOW, /* a region is moved in the RAM copy */
};

/* What a plan is made from. */
struct frame_facts {
	bool changed; /* a row differs; full and region are its guesses */
	struct scroll_guess full, region;
	const struct scroller *scroller; /* NULL: redraw only */
	enum scroll_mode base;		 /* without a move: redraw, or shadow */
	bool blitter;			 /* a working blitter the frame may use */
	bool follow_shadow;		 /* a RAM copy below 8 bpp follows the window */
	/* the screen: turned (rotate.h), its logical width and text rows */
	enum rotation rotation;
	unsigned xres, yres, lw, rows, cell_h;
};

struct frame_plan {
	enum scroll_mode mode; /* the strategy answering for the frame (its counters) */
	enum frame_move move;
	unsigned top, bottom; /* the text rows [top, bottom) move by shift */
	int shift;
	unsigned rows_scrolled;		      /* counted to mode (a redraw counts the move too) */
	struct window_move window;	      /* FRAME_MOVE_WINDOW */
	bool follow_shadow;		      /* ... and the RAM copy below 8 bpp follows it */
	struct rotate_rect src, dst;	      /* FRAME_MOVE_COPY, FRAME_MOVE_SHADOW: on the glass */
	bool redraw_all;		      /* every cell is drawn (the window jumped) */
	unsigned exposed_top, exposed_bottom; /* rows that came into view, margins and all */
};

/* What carrying a plan out went wrong with (move.c). */
struct move_report {
	bool blitter_failed; /* backend.c logged it and marked the blitter broken */
	bool copy_failed;    /* the plan's copy (the window's return or a region) failed */
	int pan_err;	     /* FBIOPAN_DISPLAY's error, or 0 */
};

void frame_plan_build(const struct frame_facts *f, struct frame_plan *ret);
/* A move failed (rep): p becomes its fallback. The window stays where it was
 * when the pan failed (the frame is counted to base); a failed return copy
 * leaves the window moved with everything to draw; a failed region copy
 * moves nothing. */
void frame_plan_fall_back(struct frame_plan *p, const struct move_report *rep,
			  enum scroll_mode base);
