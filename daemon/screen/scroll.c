/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "scroll"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rotate.h"
#include "scroll.h"
#include "../devices/backend.h"
#include "../util/log.h"
#include "../util/util.h"

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
	return string_table_lookup(scroll_mode_names, _SCROLL_MODE_MAX, s);
}

struct scroller {
	struct fbdev *fb;
	struct scroller_config cfg;
	enum scroll_mode full, region;
	enum fb_flush flush;
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

enum fb_flush scroller_flush(const struct scroller *s)
{
	return s->flush;
}

/* fbdev_set_virtual(), and the blitter told: it bound-checks against the
 * virtual height, which a new one makes stale (see backend_mode_changed()). */
static int scroller_set_virtual(struct scroller *s, unsigned yres_virtual, unsigned vmode)
{
	int r = fbdev_set_virtual(s->fb, yres_virtual, vmode);

	if (r < 0)
		return r;
	if (s->cfg.backend && backend_ok(s->cfg.backend) &&
	    backend_mode_changed(s->cfg.backend, s->fb) < 0)
		scroller_drop_backend(s);
	return 0;
}

/* Why the device cannot wrap, or NULL after setting FB_VMODE_YWRAP up. */
static const char *scroller_setup_wrap(struct scroller *s)
{
	struct fbdev *fb = s->fb;
	unsigned fh = s->cfg.font_height, lines;

	if (rotate_sideways(s->cfg.rotation))
		return "the screen is turned sideways: text moves across the lines, which wrapping "
		       "cannot do";
	if (fbdev_pan_quirk(fb))
		return fbdev_pan_quirk(fb);
	if (fb->fix.ywrapstep == 0)
		return "the driver cannot wrap (ywrapstep is 0)";
	if (fh % fb->fix.ywrapstep != 0)
		return "the font height is not a multiple of ywrapstep";
	if (fb->var.yres % fh != 0)
		return "the font height does not divide the screen height";
	lines = fbdev_max_virtual_lines(fb) / fh * fh;
	if (lines < fb->var.yres + fh)
		return "too little video memory for a virtual screen";
	if (scroller_set_virtual(s, lines, fb->var.vmode | FB_VMODE_YWRAP) < 0)
		return "the driver refused FB_VMODE_YWRAP with a taller virtual screen";
	return NULL;
}

/* Why the device cannot pan, or NULL after growing the virtual screen. */
static const char *scroller_setup_pan(struct scroller *s)
{
	struct fbdev *fb = s->fb;
	unsigned fh = s->cfg.font_height, max, want;

	if (rotate_sideways(s->cfg.rotation))
		return "the screen is turned sideways: text moves across the lines, which panning "
		       "cannot do";
	if (fbdev_pan_quirk(fb))
		return fbdev_pan_quirk(fb);
	if (fb->fix.ypanstep == 0)
		return "the driver cannot pan (ypanstep is 0)";
	if (fh % fb->fix.ypanstep != 0)
		return "the font height is not a multiple of ypanstep";
	max = fbdev_max_virtual_lines(fb);
	if (max < fb->var.yres + fh)
		return "too little video memory for a virtual screen";

	/* As tall as VRAM and the driver allow: drivers refuse what they
	 * cannot scan out, so halve the extra height until one is taken. */
	if (fb->var.yres_virtual < max || (fb->var.vmode & FB_VMODE_YWRAP))
		for (want = max; want >= fb->var.yres + fh;
		     want = fb->var.yres + (want - fb->var.yres) / 2)
			if (scroller_set_virtual(s, want, fb->var.vmode & ~FB_VMODE_YWRAP) == 0)
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
			       pixel_line_bytes(&fb->format, fb->var.xres));
	row_usec = (now_usec() - t0) / reps;

	/* A scroll by pan draws the new row and pans; redraw draws the screen. */
	bool keep = pan_usec <= row_usec * (s->cfg.text_rows - 1);
	log_info("Calibration: %s %llu us, one text row %llu us: %s", what,
		 (unsigned long long)pan_usec, (unsigned long long)row_usec,
		 keep ? "kept" : "slower than redrawing, not used");
	return keep;
}

/* Sets wrap up if the device can (and calibration agrees); why not, or NULL. */
static const char *scroller_try_wrap(struct scroller *s)
{
	const char *why = scroller_setup_wrap(s);

	if (!why && s->cfg.calibrate && !scroller_calibrate(s, "wrap"))
		why = "calibration measured it slower than redrawing";
	if (why && (s->fb->var.vmode & FB_VMODE_YWRAP))
		scroller_set_virtual(s, s->fb->saved_var.yres_virtual, s->fb->saved_var.vmode);
	return why;
}

static const char *scroller_try_pan(struct scroller *s)
{
	const char *why = scroller_setup_pan(s);

	if (!why && s->cfg.calibrate && !scroller_calibrate(s, "pan"))
		why = "calibration measured it slower than redrawing";
	if (!why)
		s->pan_max = (s->fb->var.yres_virtual - s->fb->var.yres) / s->cfg.font_height *
			     s->cfg.font_height;
	return why;
}

/* auto's choice for full-screen scrolls: wrap > pan > copy > redraw. */
static enum scroll_mode scroller_auto_full(struct scroller *s)
{
	const char *no_wrap, *no_pan;

	no_wrap = scroller_try_wrap(s);
	if (!no_wrap)
		return SCROLL_MODE_WRAP;
	no_pan = scroller_try_pan(s);
	if (!no_pan)
		return SCROLL_MODE_PAN;
	log_info("No wrap: %s", no_wrap);
	log_info("No pan: %s", no_pan);
	return s->cfg.backend ? SCROLL_MODE_COPY : SCROLL_MODE_REDRAW;
}

int scroller_new(struct fbdev *fb, const struct scroller_config *cfg, struct scroller **ret)
{
	struct scroller *s = xcalloc(1, sizeof(*s));
	enum scroll_mode mode = cfg->mode;
	const char *why;

	s->fb = fb;
	s->cfg = *cfg;
	s->flush = fb_flush_resolve(fb, cfg->flush);
	/* Region scrolls cannot pan: a blitter moves them, or they are drawn. */
	s->region = cfg->backend ? SCROLL_MODE_COPY : SCROLL_MODE_REDRAW;

	/* With write every mode draws in a RAM copy of the visible screen:
	 * a pan or a blitter would move pixels the copy does not follow. */
	if (s->flush == FB_FLUSH_WRITE && mode != SCROLL_MODE_AUTO && mode != SCROLL_MODE_REDRAW &&
	    mode != SCROLL_MODE_SHADOW) {
		log_warning(
		    "--scroll-mode=%s: drawing goes through a copy in RAM (fb-flush write); "
		    "using shadow instead",
		    scroll_mode_to_string(mode));
		mode = SCROLL_MODE_SHADOW;
	}
	/* Only what the mode may use is probed: a redraw console leaves the
	 * device's mode alone. */
	switch (mode) {
	case SCROLL_MODE_PAN:
	case SCROLL_MODE_WRAP:
		why = mode == SCROLL_MODE_PAN ? scroller_try_pan(s) : scroller_try_wrap(s);
		if (!why) {
			s->full = mode;
			break;
		}
		s->full = scroller_auto_full(s);
		log_warning("--scroll-mode=%s: %s; using %s instead", scroll_mode_to_string(mode),
			    why, scroll_mode_to_string(s->full));
		break;
	case SCROLL_MODE_COPY:
		if (cfg->backend) {
			s->full = SCROLL_MODE_COPY;
			break;
		}
		s->full = scroller_auto_full(s);
		log_warning("--scroll-mode=copy: no blitter backend is loaded; using %s instead",
			    scroll_mode_to_string(s->full));
		break;
	case SCROLL_MODE_REDRAW:
	case SCROLL_MODE_SHADOW:
		s->full = s->region = mode;
		break;
	case SCROLL_MODE_AUTO:
	default:
		if (s->flush == FB_FLUSH_WRITE) {
			/* Pixels go through a copy in RAM anyway: moving its
			 * rows costs no drawing (bochs-drm: consoled(8),
			 * DEFERRED I/O, has the figures). */
			log_info(
			    "Deferred I/O: full-screen and region scrolls move rows in the RAM "
			    "copy (shadow)");
			s->full = s->region = SCROLL_MODE_SHADOW;
			break;
		}
		s->full = scroller_auto_full(s);
		break;
	}
	/* A wrapping window may cut a region in two: regions are drawn there. */
	if (s->full == SCROLL_MODE_WRAP)
		s->region = SCROLL_MODE_REDRAW;

	log_info("Scrolling: mode %s, full-screen scrolls by %s, region scrolls by %s",
		 scroll_mode_to_string(mode), scroll_mode_to_string(s->full),
		 scroll_mode_to_string(s->region));
	log_info("Virtual screen %ux%u, display window at +%u", fb->var.xres_virtual,
		 fb->var.yres_virtual, fb->var.yoffset);
	*ret = s;
	return 0;
}

void scroller_drop_backend(struct scroller *s)
{
	if (!s->cfg.backend)
		return;
	s->cfg.backend = NULL;
	if (s->full == SCROLL_MODE_COPY)
		s->full = SCROLL_MODE_REDRAW;
	if (s->region == SCROLL_MODE_COPY)
		s->region = SCROLL_MODE_REDRAW;
	log_info("Scrolling without the blitter: full-screen scrolls by %s, region scrolls by %s",
		 scroll_mode_to_string(s->full), scroll_mode_to_string(s->region));
}

void scroller_free(struct scroller *s)
{
	free(s);
}

bool scroller_plan_window(const struct scroller *s, int shift, struct window_move *ret)
{
	const struct fbdev *fb = s->fb;
	unsigned fh = s->cfg.font_height, step = (unsigned)abs(shift) * fh;
	struct window_move m = {0};

	/* upside down, text scrolled up moves down the glass */
	if (s->cfg.rotation == ROTATE_UD)
		shift = -shift;
	m.glass_shift = shift;
	if (s->full == SCROLL_MODE_WRAP) {
		unsigned v = fb->var.yres_virtual;

		step %= v;
		m.yoffset =
		    shift > 0 ? (fb->var.yoffset + step) % v : (fb->var.yoffset + v - step) % v;
	} else if (s->full == SCROLL_MODE_PAN) {
		/* The window is text-aligned; when it would leave the virtual
		 * screen it goes to the other end (`to`). */
		if (shift > 0 && fb->var.yoffset + step <= s->pan_max)
			m.yoffset = fb->var.yoffset + step;
		else if (shift < 0 && fb->var.yoffset >= step)
			m.yoffset = fb->var.yoffset - step;
		else {
			unsigned to = shift > 0 ? 0 : s->pan_max, from = fb->var.yoffset;

			m.yoffset = to;
			m.ret = true;
			m.ret_copy = s->cfg.backend && backend_ok(s->cfg.backend);
			/* Up: rows [step, yres) of the window become rows
			 * [0, keep) at the top. Down (to the bottom end): rows
			 * [0, keep) become rows [step, yres). */
			m.w = fb->var.xres;
			m.h = fb->var.yres - step;
			m.sy = to == 0 ? from + step : from;
			m.dy = to == 0 ? 0 : to + step;
		}
	} else
		return false;
	*ret = m;
	return true;
}

void scroller_pan_failed(struct scroller *s, int r)
{
	log_warning_errno(r, "FBIOPAN_DISPLAY failed, scrolling by redrawing from now on: %m");
	s->full = SCROLL_MODE_REDRAW;
}

struct backend *scroller_backend(const struct scroller *s)
{
	return s->cfg.backend;
}
