/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Kernel messages over the session, never in it: rows of cells that the
 * renderer draws in place of the session's rows (render_set_overlay(),
 * render.h) without touching the terminal, so that when they go the
 * session's cells come back exactly, as any damage does. This file only
 * lays the rows out (pure: no device, no clock); who holds the messages,
 * when the band shows and goes, and which key opens the view are the
 * caller's.
 *
 * Two layouts, each for the logical grid (cols x rows: the turned screen's
 * at 90 and 270 degrees), laid out again whenever that grid changes:
 *
 * - The band: `lines` rows at the bottom (or the top) of the screen, the
 *   newest message last, each as the kernel's console prints it (printk's
 *   `[%5lu.%06lu] ` time, then the text), cut at the width: a band has a
 *   fixed height, and a wrapped line would push the messages before it
 *   out; the whole text is in the view. When messages were left out (a
 *   flood, or more than the band holds) its first row says how many. Its
 *   look is not a program's: white text on blue (the colour of a crash
 *   screen, systemd-bsod's too), the time in bright green as drm_log and
 *   dmesg --color give it, messages of KERN_ERR and worse in yellow (red on
 *   blue is hard to read). Every cell is reverse video with its colours
 *   given swapped, which shows these colours at every depth but 1 bpp,
 *   where fbcon's two colours swapped are the only distinction there is.
 *
 * - The view: every message given, oldest first, over the whole screen,
 *   long lines wrapped (indented under the text: the view is for reading
 *   whole messages), a status line at the top saying what it is, where it
 *   is and how to close it, in the band's look; the text in the session's
 *   default colours, the time green, errors red and warnings yellow as
 *   dmesg --color. Its place is a message and a row of it on the first
 *   text row, or the end (the newest message's last row on the last
 *   row), which new messages keep it at; a place less than a page from
 *   the end is the end. A place is a message, not a count of rows from
 *   the end: new messages do not move what is shown above them, and a
 *   layout costs the rows it shows, not every stored message. A search
 *   goes back to the previous message holding a string.
 *
 * Every code point is shown as the kernel's console would: control
 * characters (C0, DEL, C1) and malformed UTF-8 become U+FFFD, a tab a
 * space, zero-width characters (combining marks) are left out; code points
 * from cluster.h's CLUSTER_FIRST up (the renderer's stand-ins) become
 * U+FFFD, so a message cannot show another cluster. A wide character takes
 * two cells (tsm_ucs4_get_width(), the session's widths).
 */
#include <libtsm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A message's usec for a line with no time: one of consoled's own (a
 * heading), shown from the first column. */
#define OVERLAY_UNTIMED UINT64_MAX

/* One kernel message as read from /dev/kmsg (unescaped). */
struct overlay_msg {
	uint64_t usec;	  /* since boot, as its TS_USEC; OVERLAY_UNTIMED: none */
	unsigned level;	  /* 0 (KERN_EMERG) .. 7 (KERN_DEBUG) */
	const char *text; /* UTF-8, NUL-terminated, no newline */
};

/* One cell of an overlay row, as tsm_screen_draw() gives the session's:
 * the renderer resolves it through the same path (render.c). */
struct overlay_cell {
	uint32_t ch;   /* code point (0 for the right half of a wide one) */
	uint8_t width; /* 1, 2 (a wide character), 0 (its right half) */
	struct tsm_screen_attr attr;
};

struct overlay {
	unsigned cols, rows;	    /* the grid laid out for */
	unsigned top, n;	    /* the rows [top, top + n) it covers; n 0: none */
	struct overlay_cell *cells; /* n rows of cols */
	size_t cap;		    /* cells allocated */
	/* the view: the messages shown, [view_first, view_last] of
	 * view_count */
	size_t view_first, view_last, view_count;
};

/* A place in the view (see above). */
struct overlay_view_pos {
	bool end;   /* at the newest; msg and row then say where the top is */
	size_t msg; /* the message on the first text row (an index of msgs) */
	size_t row; /* its row there (0: its first) */
};

enum overlay_place {
	OVERLAY_BOTTOM,
	OVERLAY_TOP,
};

#define OVERLAY_BAND_COLOR_BG 4	   /* blue */
#define OVERLAY_BAND_COLOR_TEXT 15 /* bright white */
#define OVERLAY_BAND_COLOR_TIME 10 /* bright green */
#define OVERLAY_BAND_COLOR_ERR 11  /* bright yellow */
#define OVERLAY_VIEW_COLOR_TIME 2  /* green */
#define OVERLAY_VIEW_COLOR_ERR 9   /* bright red */
#define OVERLAY_VIEW_COLOR_WARN 11 /* bright yellow */

void overlay_init(struct overlay *o);
void overlay_fini(struct overlay *o);
/* Covers nothing (the band went, the view closed). */
void overlay_clear(struct overlay *o);

/* The band: the last `lines` (at most rows) of msgs[0..n) at place, newest
 * last; `skipped` messages before them were never given (a flood). When
 * skipped + the messages that do not fit is not 0, the band's first row
 * says so and one message fewer is shown. Costs O(lines * cols), however
 * many messages there are. */
void overlay_band(struct overlay *o, unsigned cols, unsigned rows, unsigned lines,
		  enum overlay_place place, const struct overlay_msg *msgs, size_t n,
		  uint64_t skipped);

/* The view: msgs[0..n) over the whole grid from *pos (clamped, and at the
 * end set to the top's message and row). The status line names the
 * messages shown and how to scroll, find and close (`close_keys`, NULL:
 * "Esc"), or, with `note`, that instead (a search being typed, one not
 * found). Costs the rows of the messages it shows (and at the end, those
 * of the newest page), however many there are. */
void overlay_view(struct overlay *o, unsigned cols, unsigned rows, const struct overlay_msg *msgs,
		  size_t n, struct overlay_view_pos *pos, const char *note, const char *close_keys);

/* *pos a page up (dir < 0) or down (Shift+PageUp/PageDown), o laid out by
 * overlay_view() with the same msgs and *pos: a page is the rows below the
 * status line, less one kept for context; up stops at the oldest, down
 * past the end is the end. */
void overlay_view_page(const struct overlay *o, const struct overlay_msg *msgs, size_t n, int dir,
		       struct overlay_view_pos *pos);
/* *pos at the oldest message. */
void overlay_view_home(struct overlay_view_pos *pos);

/* Search in the view (msgs as overlay_view() was given, *pos as it set it): the newest message
 * before the one on the first text row whose text holds `needle` (ASCII
 * letters in either case). True with *pos on its first row; false when
 * there is none (*pos untouched). O(n), only when asked. */
bool overlay_view_find(const struct overlay_msg *msgs, size_t n, const char *needle,
		       struct overlay_view_pos *pos);

/* The vcs mirror (vcs.h): whether `row` is one of the overlay's and then
 * its text in cps[0..cols) (a wide character's right half 0), so the
 * mirror shows what the glass shows. */
bool overlay_row_text(const struct overlay *o, unsigned row, unsigned cols, uint32_t *cps);

/* printk's time prefix, "[%5lu.%06lu] ", into buf (at least 32 bytes);
 * returns its length. */
size_t overlay_format_time(uint64_t usec, char *buf, size_t size);
