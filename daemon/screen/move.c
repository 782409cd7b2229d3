/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "move.h"

void move_window(const struct move_target *t, const struct window_move *m,
		 struct scroll_counters *c, struct move_report *rep)
{
	int r;

	*rep = (struct move_report){0};
	if (m->ret_copy) {
		r = backend_copy(t->backend, 0, m->sy, 0, m->dy, m->w, m->h);
		if (r >= 0)
			r = backend_sync(t->backend);
		if (r < 0)
			rep->copy_failed = true;
		else
			c->blits++;
	}
	r = fbdev_pan(t->fb, m->yoffset);
	if (r < 0)
		rep->pan_err = r;
	else
		c->pans++;
	/* a blitter that failed now or before is dropped */
	rep->blitter_failed = t->backend && !backend_ok(t->backend);
}

/* Below 8 bpp with pan or wrap: the display window moved by `shift` text
 * rows up the glass (< 0: down), so the RAM copy of the visible screen moves
 * with it; the rows that came into view are drawn next. */
static void move_follow_shadow(const struct move_target *t, int shift)
{
	size_t k = (size_t)abs(shift) * t->cell_h * t->shadow_stride;
	size_t all = (size_t)t->fb->var.yres * t->shadow_stride;

	if (!t->shadow || k >= all)
		return;
	if (shift > 0)
		memmove(t->shadow, t->shadow + k, all - k);
	else
		memmove(t->shadow + k, t->shadow, all - k);
}

/* copy: the blitter moves the region's pixels on the glass. */
static void move_copy(const struct move_target *t, const struct frame_plan *p,
		      struct scroll_counters *c, struct move_report *rep)
{
	unsigned y0 = t->fb->var.yoffset;
	const struct rotate_rect *s = &p->src, *d = &p->dst;

	if (backend_copy(t->backend, s->x, y0 + s->y, d->x, y0 + d->y, s->w, s->h) < 0 ||
	    backend_sync(t->backend) < 0) {
		rep->copy_failed = rep->blitter_failed = true;
		return;
	}
	c->blits++;
}

/* shadow: moves the region's pixels in the RAM copy: whole lines upright and
 * upside down, a stretch of every line sideways. */
static void move_shadow(const struct move_target *t, const struct frame_plan *p)
{
	unsigned bpp = t->fb->format.bytes_per_pixel;
	const struct rotate_rect *s = &p->src, *d = &p->dst;
	size_t stride = t->shadow_stride;

	if (s->x == 0 && s->w * bpp == stride)
		memmove(t->shadow + d->y * stride, t->shadow + s->y * stride,
			(size_t)s->h * stride);
	else
		/* line by line (sideways, or lines shorter than the stride: fb-flush
		 * write's copy has the device's padding), in the order that reads
		 * each source line before it is overwritten */
		for (unsigned i = 0; i < s->h; i++) {
			unsigned y = d->y > s->y ? s->h - 1 - i : i;

			memmove(t->shadow + (d->y + y) * stride + (size_t)d->x * bpp,
				t->shadow + (s->y + y) * stride + (size_t)s->x * bpp,
				(size_t)s->w * bpp);
		}
	for (unsigned row = p->top; row < p->bottom; row++)
		t->dirty[row] = true;
}

void move_run(const struct move_target *t, const struct frame_plan *p, struct scroll_counters *c,
	      struct move_report *rep)
{
	*rep = (struct move_report){0};
	switch (p->move) {
	case FRAME_MOVE_WINDOW:
		move_window(t, &p->window, c, rep);
		if (p->follow_shadow && !rep->pan_err && !rep->copy_failed)
			move_follow_shadow(t, p->window.glass_shift);
		break;
	case FRAME_MOVE_COPY:
		move_copy(t, p, c, rep);
		break;
	case FRAME_MOVE_SHADOW:
		move_shadow(t, p);
		break;
	case FRAME_MOVE_NONE:
		break;
	}
}
