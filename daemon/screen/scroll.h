/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Scrolling strategies: how a move of text rows found by scroll detection
 * (damage.h) reaches the glass.
 *
 *   pan     moves the display window over a tall virtual screen with
 *           FBIOPAN_DISPLAY: a scroll costs only the new rows. When the
 *           window reaches the end of the virtual screen it goes back to the
 *           top and the screen is redrawn once (fbcon's ypan_up, without its
 *           VRAM copy: consoled never reads VRAM).
 *   wrap    the same with FB_VMODE_YWRAP: the window wraps around the end of
 *           the virtual screen, so it never needs to go back.
 *   copy    a blitter copy through a backend plugin (backend.h); the pan
 *           window's return uses it too.
 *   redraw  draws the damaged cells: after a scroll, all of them.
 *   shadow  draws into a RAM copy of the screen, moves rows there, and
 *           writes only changed rows to VRAM.
 *
 * pan and wrap handle full-screen scrolls only; region scrolls (vim, less)
 * use copy where present, else redraw. The scroller decides once, at start,
 * which strategy serves full-screen and region scrolls: `auto` takes wrap >
 * pan > copy > redraw for full-screen scrolls and copy > redraw for regions,
 * after device quirks and a short calibration that may veto (never promote)
 * a capability measured slower than redrawing. On a deferred-I/O device
 * (DRM fbdev emulation, flush write) `auto` takes shadow for both: every
 * mode draws in RAM there, and moving rows in RAM beats drawing them again.
 * A forced mode the device cannot do logs why and runs auto's choice.
 *
 * A turned screen (rotate.h): upside down, pan and wrap move the window the
 * other way; turned sideways, a scroll moves pixels across the lines, so
 * only copy (a blitter copies any rectangle), shadow and redraw remain.
 */
#include <stdbool.h>
#include <stdint.h>

#include "../devices/fbdev.h"
#include "../devices/fbflush.h"

enum scroll_mode {
	SCROLL_MODE_AUTO,
	SCROLL_MODE_PAN,
	SCROLL_MODE_WRAP,
	SCROLL_MODE_COPY,
	SCROLL_MODE_REDRAW,
	SCROLL_MODE_SHADOW,
	_SCROLL_MODE_MAX,
};

const char *scroll_mode_to_string(enum scroll_mode m);
/* Returns the mode or -EINVAL. */
int scroll_mode_from_string(const char *s);

/* What each strategy did; the renderer keeps one per strategy. */
struct scroll_counters {
	uint64_t frames;
	uint64_t rows_scrolled;
	uint64_t vram_bytes_written;
	uint64_t vram_bytes_read;
	uint64_t blits;
	uint64_t fills;
	uint64_t pans;
	uint64_t render_usec;
};

struct scroller;

struct backend;

struct scroller_config {
	enum scroll_mode mode;
	struct backend *backend; /* NULL: no blitter */
	bool calibrate;
	unsigned font_height;
	unsigned text_rows;
	/* rotate.h: upside down, a scroll up moves the text down the glass (the
	 * window pans the other way); sideways, text moves across the lines,
	 * which pan and wrap cannot do. */
	int rotation;
	enum fb_flush flush; /* auto: write on deferred I/O (fbflush.h) */
};

/* Probes the device, sets up the virtual screen the chosen strategy needs
 * and logs the choice and why. Never fails for lack of a capability. */
int scroller_new(struct fbdev *fb, const struct scroller_config *cfg, struct scroller **ret);
void scroller_free(struct scroller *s);

enum scroll_mode scroller_requested(const struct scroller *s);
enum scroll_mode scroller_full_mode(const struct scroller *s);
enum scroll_mode scroller_region_mode(const struct scroller *s);
/* How drawn pixels reach the device (never auto): with write, the renderer
 * draws in RAM in every mode and writes changed rows (fbflush.h). */
enum fb_flush scroller_flush(const struct scroller *s);

/* The blitter failed and was dropped: strategies that needed it fall back. */
void scroller_drop_backend(struct scroller *s);
struct backend *scroller_backend(const struct scroller *s);

/* A move of the display window (pan or wrap) by a full-screen scroll, as
 * scroller_plan_window() works it out; move.c carries it out. */
struct window_move {
	unsigned yoffset; /* where the window goes */
	int glass_shift;  /* text rows the picture moves up the glass (< 0: down) */
	/* The pan window leaves an end of the virtual screen for the other:
	 * with a working blitter the rows that stay visible are copied there
	 * first (fbcon's ypan_up), else the whole screen must be drawn. */
	bool ret, ret_copy;
	unsigned sy, dy, w, h; /* that copy (x is 0 on both sides) */
};

/* Works out how the full-screen strategy (pan or wrap) moves the whole
 * screen's content by `shift` text rows (> 0 up); false when it is neither.
 * Changes nothing. */
bool scroller_plan_window(const struct scroller *s, int shift, struct window_move *ret);
/* FBIOPAN_DISPLAY failed with r: full-screen scrolls are redrawn from now on
 * (logged). */
void scroller_pan_failed(struct scroller *s, int r);
