/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>

#include "plan.h"

/* Where the pixels of text rows [top, bottom) moved by shift rows come from
 * and go to, on the glass. */
static void plan_move_rects(const struct frame_facts *f, struct frame_plan *p)
{
	unsigned fh = f->cell_h, k = (unsigned)abs(p->shift);
	unsigned src = p->shift > 0 ? p->top + k : p->top, dst = p->shift > 0 ? p->top : p->top + k;
	unsigned h = (p->bottom - p->top - k) * fh;

	p->src = rotate_rect_to_physical(f->rotation, f->xres, f->yres,
					 (struct rotate_rect){0, src * fh, f->lw, h});
	p->dst = rotate_rect_to_physical(f->rotation, f->xres, f->yres,
					 (struct rotate_rect){0, dst * fh, f->lw, h});
}

static void plan_region(const struct frame_facts *f, struct frame_plan *p, enum frame_move move)
{
	p->move = move;
	p->top = f->region.top;
	p->bottom = f->region.bottom;
	p->shift = f->region.shift;
	plan_move_rects(f, p);
}

void frame_plan_build(const struct frame_facts *f, struct frame_plan *ret)
{
	const struct scroller *s = f->scroller;
	enum scroll_mode fm = s ? scroller_full_mode(s) : f->base;
	enum scroll_mode rm = s ? scroller_region_mode(s) : f->base;
	struct frame_plan p = {.mode = f->base, .move = FRAME_MOVE_NONE};

	*ret = p;
	if (!f->changed)
		return;
	/* Panning is nearly free: take the full-screen move unless a region
	 * move keeps far more rows (a status line alone does not count). */
	if ((fm == SCROLL_MODE_PAN || fm == SCROLL_MODE_WRAP) && f->full.shift &&
	    f->full.gain * 2 >= f->region.gain &&
	    scroller_plan_window(s, f->full.shift, &p.window)) {
		unsigned k = (unsigned)abs(f->full.shift);

		p.mode = fm;
		p.move = FRAME_MOVE_WINDOW;
		p.top = 0;
		p.bottom = f->rows;
		p.shift = f->full.shift;
		p.rows_scrolled = k;
		if (p.window.ret && !p.window.ret_copy) {
			/* the window jumps to the other end with nothing there */
			p.redraw_all = true;
		} else {
			p.follow_shadow = f->follow_shadow;
			p.exposed_top = p.shift > 0 ? f->rows - k : 0;
			p.exposed_bottom = p.shift > 0 ? f->rows : k;
		}
		*ret = p;
		return;
	}
	p.rows_scrolled = (unsigned)abs(f->region.shift);
	if ((fm == SCROLL_MODE_COPY || rm == SCROLL_MODE_COPY) && f->region.shift && f->blitter) {
		p.mode = SCROLL_MODE_COPY;
		plan_region(f, &p, FRAME_MOVE_COPY);
	} else if (f->base == SCROLL_MODE_SHADOW && f->region.shift)
		plan_region(f, &p, FRAME_MOVE_SHADOW);
	/* else redrawing: the move is only counted, so that figures per
	 * scrolled row compare across strategies */
	*ret = p;
}

void frame_plan_fall_back(struct frame_plan *p, const struct move_report *rep,
			  enum scroll_mode base)
{
	if (p->move == FRAME_MOVE_WINDOW && rep->pan_err) {
		p->mode = base;
		p->move = FRAME_MOVE_NONE;
		p->follow_shadow = false;
		p->exposed_top = p->exposed_bottom = 0;
	} else if (p->move == FRAME_MOVE_WINDOW && rep->copy_failed) {
		p->move = FRAME_MOVE_NONE;
		p->follow_shadow = false;
		p->redraw_all = true;
		p->exposed_top = p->exposed_bottom = 0;
	} else if (p->move == FRAME_MOVE_COPY && rep->copy_failed) {
		p->mode = base;
		p->move = FRAME_MOVE_NONE;
		p->redraw_all = true;
	}
}
