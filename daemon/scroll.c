/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "scroll"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "scroll.h"
#include "util/util.h"

static const char *const scroll_mode_names[_SCROLL_MODE_MAX] = {
    [SCROLL_MODE_AUTO] = "auto", [SCROLL_MODE_PAN] = "pan",	  [SCROLL_MODE_WRAP] = "wrap",
    [SCROLL_MODE_COPY] = "copy", [SCROLL_MODE_REDRAW] = "redraw", [SCROLL_MODE_SHADOW] = "shadow",
};

const char *scroll_mode_to_string(enum scroll_mode m)
{
	return m < _SCROLL_MODE_MAX ? scroll_mode_names[m] : "?";
}

int scroll_mode_from_string(const char *s)
{
	for (int m = 0; m < _SCROLL_MODE_MAX; m++)
		if (strcmp(s, scroll_mode_names[m]) == 0)
			return m;
	return -EINVAL;
}

struct scroller {
	struct fbdev *fb;
	struct scroller_config cfg;
	enum scroll_mode full, region;
	unsigned pan_max; /* the highest yoffset of a text-aligned window (pan) */
};

enum scroll_mode scroller_requested(const struct scroller *s)
{
	return s->cfg.mode;
}

enum scroll_mode scroller_full_mode(const struct scroller *s)
{
	return s->full;
}

enum scroll_mode scroller_region_mode(const struct scroller *s)
{
	return s->region;
}

/* Why the device cannot wrap, or NULL after setting FB_VMODE_YWRAP up. */
static const char *scroller_setup_wrap(struct scroller *s)
{
	struct fbdev *fb = s->fb;
	unsigned fh = s->cfg.font_height, lines;

	if (fbdev_pan_quirk(fb))
		return fbdev_pan_quirk(fb);
	if (fb->fix.ywrapstep == 0)
		return "the driver cannot wrap (ywrapstep is 0)";
	if (fh % fb->fix.ywrapstep != 0)
		return "the font height is not a multiple of ywrapstep";
	if (fb->var.yres % fh != 0)
		return "the font height does not divide the screen height";
	lines = (unsigned)(fb->fix.smem_len / fb->line_length) / fh * fh;
	if (lines < fb->var.yres + fh)
		return "too little video memory for a virtual screen";
	if (fbdev_set_virtual(fb, lines, fb->var.vmode | FB_VMODE_YWRAP) < 0)
		return "the driver refused FB_VMODE_YWRAP with a taller virtual screen";
	return NULL;
}

/* Why the device cannot pan, or NULL after growing the virtual screen. */
static const char *scroller_setup_pan(struct scroller *s)
{
	struct fbdev *fb = s->fb;
	unsigned fh = s->cfg.font_height, max, want;

	if (fbdev_pan_quirk(fb))
		return fbdev_pan_quirk(fb);
	if (fb->fix.ypanstep == 0)
		return "the driver cannot pan (ypanstep is 0)";
	if (fh % fb->fix.ypanstep != 0)
		return "the font height is not a multiple of ypanstep";
	max = (unsigned)(fb->fix.smem_len / fb->line_length);
	if (max < fb->var.yres + fh)
		return "too little video memory for a virtual screen";

	/* As tall as VRAM and the driver allow: drivers refuse what they
	 * cannot scan out, so halve the extra height until one is taken. */
	if (fb->var.yres_virtual < max || (fb->var.vmode & FB_VMODE_YWRAP))
		for (want = max; want >= fb->var.yres + fh;
		     want = fb->var.yres + (want - fb->var.yres) / 2)
			if (fbdev_set_virtual(fb, want, fb->var.vmode & ~FB_VMODE_YWRAP) == 0)
				break;
	if (fb->var.yres_virtual < fb->var.yres + fh || (fb->var.vmode & FB_VMODE_YWRAP))
		return "the driver refused every taller virtual screen";
	return NULL;
}

/* Measures a pan against drawing text rows; true if panning is worth it.
 * Runs a few ioctls and writes off-screen only: nothing visible changes. */
static bool scroller_calibrate(struct scroller *s, const char *what)
{
	struct fbdev *fb = s->fb;
	unsigned fh = s->cfg.font_height, reps = 8;
	uint64_t t0, pan_usec, row_usec;
	unsigned offscreen;

	t0 = now_usec();
	for (unsigned i = 0; i < reps; i++)
		if (fbdev_pan(fb, fb->var.yoffset) < 0)
			return false;
	pan_usec = (now_usec() - t0) / reps;

	/* The text row just below the window is not visible. */
	offscreen = fb->var.yres;
	t0 = now_usec();
	for (unsigned i = 0; i < reps; i++)
		for (unsigned y = 0; y < fh; y++)
			memset(fbdev_line(fb, offscreen + y), 0,
			       (size_t)fb->var.xres * fb->format.bytes_per_pixel);
	row_usec = (now_usec() - t0) / reps;

	/* A scroll by pan draws the new row and pans; redraw draws the screen. */
	bool keep = pan_usec <= row_usec * (s->cfg.text_rows - 1);
	log_info("Calibration: %s %llu us, one text row %llu us: %s", what,
		 (unsigned long long)pan_usec, (unsigned long long)row_usec,
		 keep ? "kept" : "slower than redrawing, not used");
	return keep;
}

int scroller_new(struct fbdev *fb, const struct scroller_config *cfg, struct scroller **ret)
{
	struct scroller *s = xcalloc(1, sizeof(*s));
	enum scroll_mode mode = cfg->mode, auto_full = SCROLL_MODE_REDRAW;
	const char *no_wrap = NULL, *no_pan = NULL;
	const char *no_copy = "no blitter backend is loaded";
	bool want_wrap = mode == SCROLL_MODE_AUTO || mode == SCROLL_MODE_WRAP;
	bool want_pan =
	    mode == SCROLL_MODE_AUTO || mode == SCROLL_MODE_PAN || mode == SCROLL_MODE_WRAP;

	s->fb = fb;
	s->cfg = *cfg;

	/* Probe only what the mode may use: a redraw console leaves the
	 * device's mode alone. */
	if (want_wrap) {
		no_wrap = scroller_setup_wrap(s);
		if (!no_wrap && cfg->calibrate && !scroller_calibrate(s, "wrap"))
			no_wrap = "calibration measured it slower than redrawing";
		if (!no_wrap)
			auto_full = SCROLL_MODE_WRAP;
		else if (fb->var.vmode & FB_VMODE_YWRAP)
			fbdev_set_virtual(fb, fb->saved_var.yres_virtual, fb->saved_var.vmode);
	}
	if (want_pan && auto_full != SCROLL_MODE_WRAP) {
		no_pan = scroller_setup_pan(s);
		if (!no_pan && cfg->calibrate && !scroller_calibrate(s, "pan"))
			no_pan = "calibration measured it slower than redrawing";
		if (!no_pan)
			auto_full = SCROLL_MODE_PAN;
	}
	if (auto_full == SCROLL_MODE_PAN)
		s->pan_max =
		    (fb->var.yres_virtual - fb->var.yres) / cfg->font_height * cfg->font_height;

	s->full = auto_full;
	s->region = SCROLL_MODE_REDRAW;
	switch (mode) {
	case SCROLL_MODE_AUTO:
		break;
	case SCROLL_MODE_WRAP:
		if (no_wrap)
			log_warning("--scroll-mode=wrap: %s; using %s instead", no_wrap,
				    scroll_mode_to_string(auto_full));
		break;
	case SCROLL_MODE_PAN:
		if (no_pan)
			log_warning("--scroll-mode=pan: %s; using %s instead", no_pan,
				    scroll_mode_to_string(auto_full));
		break;
	case SCROLL_MODE_COPY:
		log_warning("--scroll-mode=copy: %s; using %s instead", no_copy,
			    scroll_mode_to_string(auto_full));
		break;
	case SCROLL_MODE_REDRAW:
	case SCROLL_MODE_SHADOW:
		s->full = s->region = mode;
		break;
	default:
		break;
	}

	log_info("Scrolling: mode %s, full-screen scrolls by %s, region scrolls by %s",
		 scroll_mode_to_string(mode), scroll_mode_to_string(s->full),
		 scroll_mode_to_string(s->region));
	if (no_wrap && mode == SCROLL_MODE_AUTO)
		log_info("No wrap: %s", no_wrap);
	if (no_pan && (mode == SCROLL_MODE_AUTO || mode == SCROLL_MODE_WRAP))
		log_info("No pan: %s", no_pan);
	log_info("Virtual screen %ux%u, display window at +%u", fb->var.xres_virtual,
		 fb->var.yres_virtual, fb->var.yoffset);
	*ret = s;
	return 0;
}

void scroller_free(struct scroller *s)
{
	free(s);
}

enum scroll_result scroller_move_screen(struct scroller *s, int shift, struct scroll_counters *c)
{
	struct fbdev *fb = s->fb;
	unsigned fh = s->cfg.font_height, step = (unsigned)abs(shift) * fh, y;
	enum scroll_result res = SCROLL_DONE;
	int r;

	if (s->full == SCROLL_MODE_WRAP) {
		unsigned v = fb->var.yres_virtual;

		step %= v;
		y = shift > 0 ? (fb->var.yoffset + step) % v : (fb->var.yoffset + v - step) % v;
	} else if (s->full == SCROLL_MODE_PAN) {
		/* The window is text-aligned; when it would leave the virtual
		 * screen it jumps to the other end and everything is drawn. */
		if (shift > 0) {
			y = fb->var.yoffset + step;
			if (y > s->pan_max) {
				y = 0;
				res = SCROLL_REDRAW_ALL;
			}
		} else if (fb->var.yoffset >= step)
			y = fb->var.yoffset - step;
		else {
			y = s->pan_max;
			res = SCROLL_REDRAW_ALL;
		}
	} else
		return SCROLL_FAILED;

	r = fbdev_pan(fb, y);
	if (r < 0) {
		log_warning_errno(r,
				  "FBIOPAN_DISPLAY failed, scrolling by redrawing from now on: %m");
		s->full = SCROLL_MODE_REDRAW;
		return SCROLL_FAILED;
	}
	c->pans++;
	return res;
}
