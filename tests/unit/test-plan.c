/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A frame's plan (plan.c) from detection results: which rows move by which
 * means, what is drawn after, and the fallback when a move fails. The plan
 * changes nothing, so a scroller on a framebuffer that is only a struct
 * (no ioctl is made: the virtual screen is already tall) serves.
 */
#include <errno.h>
#include <string.h>

#include "../../daemon/screen/plan.h"
#include "tests.h"

#define XRES 640
#define YRES 480
#define FH 16
#define ROWS (YRES / FH)
#define VLINES (YRES * 4)

static void fake_fb(struct fbdev *fb)
{
	memset(fb, 0, sizeof(*fb));
	fb->fd = -1;
	fb->path = (char *)"fake";
	strcpy(fb->fix.id, "fake");
	fb->fix.ypanstep = 1;
	fb->var.xres = fb->var.xres_virtual = XRES;
	fb->var.yres = YRES;
	fb->var.yres_virtual = VLINES;
	fb->var.bits_per_pixel = 32;
	fb->line_length = XRES * 4;
	fb->fix.smem_len = fb->line_length * VLINES;
}

static struct frame_facts facts(const struct scroller *s, enum scroll_mode base)
{
	return (struct frame_facts){
	    .changed = true,
	    .scroller = s,
	    .base = base,
	    .rotation = ROTATE_UPRIGHT,
	    .xres = XRES,
	    .yres = YRES,
	    .lw = XRES,
	    .rows = ROWS,
	    .cell_h = FH,
	};
}

static struct scroller *scroller(struct fbdev *fb, enum scroll_mode mode, struct backend *b)
{
	struct scroller_config cfg = {.mode = mode,
				      .backend = b,
				      .font_height = FH,
				      .text_rows = ROWS,
				      .flush = FB_FLUSH_MAP};
	struct scroller *s = NULL;

	CHECK(scroller_new(fb, &cfg, &s) == 0);
	return s;
}

static void test_unchanged(void)
{
	struct frame_facts f = facts(NULL, SCROLL_MODE_SHADOW);
	struct frame_plan p;

	f.changed = false;
	frame_plan_build(&f, &p);
	CHECK(p.mode == SCROLL_MODE_SHADOW);
	CHECK(p.move == FRAME_MOVE_NONE);
	CHECK_EQ_U(p.rows_scrolled, 0);
	CHECK(!p.redraw_all);
}

static void test_pan(void)
{
	struct fbdev fb;
	struct scroller *s;
	struct frame_facts f;
	struct frame_plan p;

	fake_fb(&fb);
	s = scroller(&fb, SCROLL_MODE_PAN, NULL);
	CHECK(scroller_full_mode(s) == SCROLL_MODE_PAN);
	f = facts(s, SCROLL_MODE_REDRAW);
	f.full = (struct scroll_guess){0, ROWS, 2, ROWS - 2};
	f.region = (struct scroll_guess){0, ROWS - 1, 2, ROWS - 3};
	f.follow_shadow = true;
	frame_plan_build(&f, &p);
	CHECK(p.mode == SCROLL_MODE_PAN);
	CHECK(p.move == FRAME_MOVE_WINDOW);
	CHECK_EQ_U(p.window.yoffset, 2 * FH);
	CHECK(!p.window.ret);
	CHECK(p.follow_shadow);
	CHECK_EQ_U(p.rows_scrolled, 2);
	CHECK_EQ_U(p.exposed_top, ROWS - 2);
	CHECK_EQ_U(p.exposed_bottom, ROWS);
	CHECK(fb.var.yoffset == 0); /* planned, not moved */

	/* the pan failed: nothing moved, the frame counts as the base's */
	frame_plan_fall_back(&p, &(struct move_report){.pan_err = -EIO}, SCROLL_MODE_REDRAW);
	CHECK(p.mode == SCROLL_MODE_REDRAW);
	CHECK(p.move == FRAME_MOVE_NONE);
	CHECK(!p.follow_shadow);
	CHECK_EQ_U(p.exposed_bottom, 0);
	CHECK_EQ_U(p.rows_scrolled, 2);

	/* A region move keeping far more rows wins over a pan. */
	f.full.gain = 3;
	f.region.gain = 7;
	frame_plan_build(&f, &p);
	CHECK(p.move == FRAME_MOVE_NONE);
	CHECK(p.mode == SCROLL_MODE_REDRAW);

	/* At the end of the virtual screen without a blitter the window
	 * returns to the top and everything is drawn. */
	fb.var.yoffset = (VLINES - YRES) / FH * FH;
	f.full.gain = ROWS - 1;
	frame_plan_build(&f, &p);
	CHECK(p.move == FRAME_MOVE_WINDOW);
	CHECK(p.window.ret && !p.window.ret_copy);
	CHECK_EQ_U(p.window.yoffset, 0);
	CHECK(p.redraw_all);
	CHECK(!p.follow_shadow);
	scroller_free(s);
}

static void test_region(void)
{
	struct fbdev fb;
	struct backend *fake = (struct backend *)&fb; /* never called */
	struct scroller *s;
	struct frame_facts f;
	struct frame_plan p;

	fake_fb(&fb);
	s = scroller(&fb, SCROLL_MODE_COPY, fake);
	f = facts(s, SCROLL_MODE_REDRAW);
	f.full = (struct scroll_guess){0, ROWS, 0, 0};
	f.region = (struct scroll_guess){2, 10, -3, 5};
	f.blitter = true;
	frame_plan_build(&f, &p);
	CHECK(p.mode == SCROLL_MODE_COPY);
	CHECK(p.move == FRAME_MOVE_COPY);
	CHECK_EQ_U(p.top, 2);
	CHECK_EQ_U(p.bottom, 10);
	CHECK(p.shift == -3);
	CHECK_EQ_U(p.rows_scrolled, 3);
	/* rows [2, 7) go to [5, 10) */
	CHECK_EQ_U(p.src.y, 2 * FH);
	CHECK_EQ_U(p.dst.y, 5 * FH);
	CHECK_EQ_U(p.src.h, 5 * FH);
	CHECK_EQ_U(p.src.w, XRES);

	/* the copy failed: the frame is drawn in software, counted as redraw */
	frame_plan_fall_back(&p, &(struct move_report){.copy_failed = true}, SCROLL_MODE_REDRAW);
	CHECK(p.mode == SCROLL_MODE_REDRAW);
	CHECK(p.move == FRAME_MOVE_NONE);
	CHECK(p.redraw_all);

	/* A blitter known broken is not planned with. */
	f.blitter = false;
	frame_plan_build(&f, &p);
	CHECK(p.move == FRAME_MOVE_NONE);
	CHECK(p.mode == SCROLL_MODE_REDRAW);
	CHECK_EQ_U(p.rows_scrolled, 3);

	/* Turned sideways, a row move is a move across the glass. */
	f.blitter = true;
	f.rotation = ROTATE_CW;
	f.lw = YRES;
	frame_plan_build(&f, &p);
	CHECK(p.move == FRAME_MOVE_COPY);
	CHECK(p.src.x != p.dst.x);
	CHECK_EQ_U(p.src.y, p.dst.y);
	scroller_free(s);

	/* shadow: the region moves in the RAM copy */
	f = facts(NULL, SCROLL_MODE_SHADOW);
	f.region = (struct scroll_guess){0, ROWS, 1, ROWS - 1};
	frame_plan_build(&f, &p);
	CHECK(p.mode == SCROLL_MODE_SHADOW);
	CHECK(p.move == FRAME_MOVE_SHADOW);
	CHECK_EQ_U(p.src.y, FH);
	CHECK_EQ_U(p.dst.y, 0);
}

/* The session scrolls one row under a band of two rows (render.h,
 * render_set_overlay()): detected over every row, a pan would carry the
 * band along; detected within the session's rows
 * (damage_detect_within()), the frame moves those rows only, by the
 * blitter or not at all, never the window, the band at the top or the
 * bottom. */
#define BAND_COLS 4

static void band_screen(struct cell *prev, struct cell *cur, unsigned band_top)
{
	for (unsigned y = 0; y < ROWS; y++)
		for (unsigned x = 0; x < BAND_COLS; x++) {
			bool band = y >= band_top && y < band_top + 2;
			/* the session's line y, scrolled by one in cur */
			unsigned line = band_top == 0 ? y - 2 : y;

			prev[y * BAND_COLS + x] =
			    (struct cell){band ? 1 + y : 100 + line, 0, 7, band ? 4 : 0};
			cur[y * BAND_COLS + x] =
			    (struct cell){band ? 1 + y : 101 + line, 0, 7, band ? 4 : 0};
		}
}

static void test_band(void)
{
	struct cell prev[ROWS * BAND_COLS], cur[ROWS * BAND_COLS];
	uint64_t ph[ROWS], ch[ROWS];
	struct fbdev fb;
	struct backend *fake = (struct backend *)&fb; /* never called */
	struct scroller *pan, *copy;
	struct frame_facts f;
	struct frame_plan p;

	fake_fb(&fb);
	pan = scroller(&fb, SCROLL_MODE_PAN, NULL);
	copy = scroller(&fb, SCROLL_MODE_COPY, fake);

	/* a bottom band: over every row the pan wins */
	band_screen(prev, cur, ROWS - 2);
	f = facts(pan, SCROLL_MODE_REDRAW);
	CHECK(damage_detect(prev, cur, BAND_COLS, ROWS, ph, ch, &f.full, &f.region));
	frame_plan_build(&f, &p);
	CHECK(p.move == FRAME_MOVE_WINDOW);

	/* within the session's rows: no window move, a region of them */
	CHECK(damage_detect_within(prev, cur, BAND_COLS, ROWS, 0, ROWS - 2, ph, ch, &f.full,
				   &f.region));
	CHECK(f.full.shift == 0);
	CHECK(f.region.shift == 1);
	CHECK_EQ_U(f.region.top, 0);
	CHECK_EQ_U(f.region.bottom, ROWS - 2);
	frame_plan_build(&f, &p);
	CHECK(p.move == FRAME_MOVE_NONE);
	f = facts(copy, SCROLL_MODE_REDRAW);
	f.blitter = true;
	CHECK(damage_detect_within(prev, cur, BAND_COLS, ROWS, 0, ROWS - 2, ph, ch, &f.full,
				   &f.region));
	frame_plan_build(&f, &p);
	CHECK(p.move == FRAME_MOVE_COPY);
	CHECK_EQ_U(p.top, 0);
	CHECK_EQ_U(p.bottom, ROWS - 2);

	/* a top band: the rows below it */
	band_screen(prev, cur, 0);
	CHECK(
	    damage_detect_within(prev, cur, BAND_COLS, ROWS, 2, ROWS, ph, ch, &f.full, &f.region));
	frame_plan_build(&f, &p);
	CHECK(p.move == FRAME_MOVE_COPY);
	CHECK_EQ_U(p.top, 2);
	CHECK_EQ_U(p.bottom, ROWS);
	CHECK(p.shift == 1);

	/* nothing changed: nothing detected */
	CHECK(
	    !damage_detect_within(cur, cur, BAND_COLS, ROWS, 2, ROWS, ph, ch, &f.full, &f.region));
	scroller_free(pan);
	scroller_free(copy);
}

int main(void)
{
	test_unchanged();
	test_pan();
	test_region();
	test_band();
	return TESTS_RESULT();
}
