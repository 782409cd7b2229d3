/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay.h"
#include "../terminal/cluster.h"
#include "../util/util.h"

#define REPLACEMENT 0xfffdu

void overlay_init(struct overlay *o)
{
	*o = (struct overlay){};
}

void overlay_fini(struct overlay *o)
{
	free(o->cells);
	*o = (struct overlay){};
}

void overlay_clear(struct overlay *o)
{
	o->n = 0;
	o->top = 0;
}

size_t overlay_format_time(uint64_t usec, char *buf, size_t size)
{
	int n =
	    snprintf(buf, size, "[%5" PRIu64 ".%06" PRIu64 "] ", usec / 1000000, usec % 1000000);

	return n < 0 ? 0 : MIN((size_t)n, size - 1);
}

/* The next code point of s (advanced): a byte that starts no well-formed
 * UTF-8 character is one U+FFFD (util.h utf8_get()). */
static uint32_t utf8_next(const char **s)
{
	uint32_t cp = REPLACEMENT;
	size_t n = utf8_get((const unsigned char *)*s, strnlen(*s, 4), &cp);

	*s += n > 0 ? n : 1;
	return n > 0 ? cp : REPLACEMENT;
}

/* What a code point is shown as, and its width (0: left out). */
static uint32_t shown_cp(uint32_t cp, unsigned *ret_width)
{
	unsigned w;

	if (cp == '\t')
		cp = ' ';
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp >= CLUSTER_FIRST)
		cp = REPLACEMENT;
	w = tsm_ucs4_get_width(cp);
	if ((int)w < 0 || w > 2) {
		cp = REPLACEMENT;
		w = 1;
	}
	*ret_width = w;
	return cp;
}

/* Colours: fg on bg as given, or with `band` as reverse video of the two
 * swapped (the same colours, but fbcon's two swapped at 1 bpp). */
static struct tsm_screen_attr colours(int fg, int bg, bool band)
{
	struct tsm_screen_attr a = {};

	a.fccode = (int8_t)(band ? bg : fg);
	a.bccode = (int8_t)(band ? fg : bg);
	a.inverse = band;
	return a;
}

/* Puts cells into rows of the overlay's cells (rows outside [lo, hi) are
 * counted, not stored); with `wrap` a character that does not fit goes to
 * the next row at `indent`, else the row ends there. */
struct writer {
	struct overlay *o;
	long row, lo, hi;
	unsigned col, indent;
	bool wrap;
};

static void put(struct writer *w, uint32_t cp, unsigned width, struct tsm_screen_attr attr)
{
	unsigned cols = w->o->cols;

	if (width == 0)
		return;
	if (w->col + width > cols) {
		/* a wide character at the edge ends a cut row: nothing
		 * after it shows in its place */
		if (!w->wrap) {
			w->col = cols;
			return;
		}
		if (w->indent + width > cols)
			return;
		w->row++;
		w->col = w->indent;
	}
	if (w->row >= w->lo && w->row < w->hi) {
		struct overlay_cell *c = w->o->cells + (size_t)w->row * cols + w->col;

		c[0] = (struct overlay_cell){cp, (uint8_t)width, attr};
		if (width == 2)
			c[1] = (struct overlay_cell){0, 0, attr};
	}
	w->col += width;
}

static void put_utf8(struct writer *w, const char *s, struct tsm_screen_attr attr)
{
	while (*s) {
		unsigned width;
		uint32_t cp = shown_cp(utf8_next(&s), &width);

		/* a cut row takes nothing more: a long message costs its
		 * width, not its length */
		if (!w->wrap && w->col >= w->o->cols)
			return;
		put(w, cp, width, attr);
	}
}

/* Row `row` of the overlay's cells: blank in attr. */
static void blank_row(struct overlay *o, unsigned row, struct tsm_screen_attr attr)
{
	for (unsigned x = 0; x < o->cols; x++)
		o->cells[(size_t)row * o->cols + x] = (struct overlay_cell){' ', 1, attr};
}

static void reserve(struct overlay *o, unsigned cols, unsigned rows, unsigned n)
{
	size_t need = (size_t)cols * n;

	if (need > o->cap) {
		o->cells = xrealloc(o->cells, need * sizeof(*o->cells));
		o->cap = need;
	}
	o->cols = cols;
	o->rows = rows;
	o->n = n;
}

/* A message: its time, then its text, from the writer's row and column. */
static void put_msg(struct writer *w, const struct overlay_msg *m, struct tsm_screen_attr time,
		    struct tsm_screen_attr text)
{
	char prefix[32] = "";
	unsigned len = m->usec == OVERLAY_UNTIMED
			   ? 0
			   : (unsigned)overlay_format_time(m->usec, prefix, sizeof(prefix));

	/* wrapped rows go on under the text, when that leaves it room */
	w->indent = w->o->cols >= 2 * len ? len : 0;
	put_utf8(w, prefix, time);
	put_utf8(w, m->text ? m->text : "", text);
}

void overlay_band(struct overlay *o, unsigned cols, unsigned rows, unsigned lines,
		  enum overlay_place place, const struct overlay_msg *msgs, size_t n,
		  uint64_t skipped)
{
	struct tsm_screen_attr bg = colours(OVERLAY_BAND_COLOR_TEXT, OVERLAY_BAND_COLOR_BG, true);
	struct tsm_screen_attr time = colours(OVERLAY_BAND_COLOR_TIME, OVERLAY_BAND_COLOR_BG, true);
	struct tsm_screen_attr err = colours(OVERLAY_BAND_COLOR_ERR, OVERLAY_BAND_COLOR_BG, true);
	size_t shown;
	uint64_t hidden;
	unsigned used, row = 0;

	lines = MIN(lines, rows);
	if (cols == 0 || lines == 0 || (n == 0 && skipped == 0)) {
		reserve(o, cols, rows, 0);
		return;
	}
	shown = MIN(n, (size_t)lines);
	hidden = skipped + (n - shown);
	/* the notice needs a row of its own; a band of one row shows the
	 * newest message rather than only the notice */
	if (hidden > 0 && lines > 1 && shown == lines) {
		shown--;
		hidden++;
	}
	used = (unsigned)shown + (hidden > 0 && lines > 1 ? 1 : 0);
	reserve(o, cols, rows, used);
	o->top = place == OVERLAY_TOP ? 0 : rows - used;
	if (used > shown) {
		char notice[80];

		blank_row(o, row, bg);
		snprintf(notice, sizeof(notice), "-- %" PRIu64 " kernel message%s not shown --",
			 hidden, hidden == 1 ? "" : "s");
		put_utf8(&(struct writer){o, row, 0, used, 0, 0, false}, notice, bg);
		row++;
	}
	for (size_t i = n - shown; i < n; i++, row++) {
		blank_row(o, row, bg);
		put_msg(&(struct writer){o, row, 0, used, 0, 0, false}, &msgs[i], time,
			msgs[i].level <= 3 ? err : bg);
	}
}

/* The view's colours for a message's text, as dmesg --color. */
static struct tsm_screen_attr view_text(unsigned level)
{
	if (level <= 3)
		return colours(OVERLAY_VIEW_COLOR_ERR, TSM_COLOR_BACKGROUND, false);
	if (level == 4)
		return colours(OVERLAY_VIEW_COLOR_WARN, TSM_COLOR_BACKGROUND, false);
	return colours(TSM_COLOR_FOREGROUND, TSM_COLOR_BACKGROUND, false);
}

/* The rows a message takes in the view (laid out, nothing stored). */
static size_t view_msg_rows(struct overlay *o, const struct overlay_msg *m)
{
	struct tsm_screen_attr a = {};
	struct writer w = {o, 0, 0, 0, 0, 0, true};

	put_msg(&w, m, a, a);
	return (size_t)w.row + 1;
}

/* The rows of the message at pos and after it, up to `need` (a page: the
 * layout costs what it shows, not the store). */
static size_t view_rows_from(struct overlay *o, const struct overlay_msg *msgs, size_t n,
			     const struct overlay_view_pos *pos, size_t need)
{
	size_t avail = view_msg_rows(o, &msgs[pos->msg]) - pos->row;

	for (size_t i = pos->msg + 1; i < n && avail < need; i++)
		avail += view_msg_rows(o, &msgs[i]);
	return avail;
}

/* pos clamped: inside msgs, and at the end when less than a page follows
 * it; at the end, the message and row on top that put the newest row on
 * the last. */
static void view_clamp(struct overlay *o, const struct overlay_msg *msgs, size_t n, size_t page,
		       struct overlay_view_pos *pos)
{
	size_t need = page, i = n;

	if (!pos->end && pos->msg < n) {
		pos->row = MIN(pos->row, view_msg_rows(o, &msgs[pos->msg]) - 1);
		if (view_rows_from(o, msgs, n, pos, page) >= page)
			return;
	}
	*pos = (struct overlay_view_pos){true, 0, 0};
	while (i > 0) {
		size_t h = view_msg_rows(o, &msgs[i - 1]);

		if (h >= need) {
			pos->msg = i - 1;
			pos->row = h - need;
			return;
		}
		need -= h;
		i--;
	}
	/* all of it fits: from the oldest */
}

void overlay_view(struct overlay *o, unsigned cols, unsigned rows, const struct overlay_msg *msgs,
		  size_t n, struct overlay_view_pos *pos, const char *note, const char *close_keys)
{
	struct tsm_screen_attr status =
	    colours(OVERLAY_BAND_COLOR_TEXT, OVERLAY_BAND_COLOR_BG, true);
	struct tsm_screen_attr plain = colours(TSM_COLOR_FOREGROUND, TSM_COLOR_BACKGROUND, false);
	struct tsm_screen_attr time = colours(OVERLAY_VIEW_COLOR_TIME, TSM_COLOR_BACKGROUND, false);
	size_t page, last;
	long at;
	char line[320];

	if (cols == 0 || rows == 0) {
		reserve(o, cols, rows, 0);
		return;
	}
	reserve(o, cols, rows, rows);
	o->top = 0;
	page = rows - 1;
	view_clamp(o, msgs, n, page, pos);

	for (unsigned y = 0; y < rows; y++)
		blank_row(o, y, y == 0 ? status : plain);
	/* rows of text from pos on, on rows 1.. of the screen */
	at = -(long)pos->row;
	last = pos->msg;
	for (size_t i = pos->msg; i < n && at < (long)page; i++) {
		struct writer w = {o, at + 1, 1, (long)rows, 0, 0, true};

		put_msg(&w, &msgs[i], time, view_text(msgs[i].level));
		at += (long)view_msg_rows(o, &msgs[i]);
		last = i;
	}
	o->view_first = pos->msg;
	o->view_last = last;
	o->view_count = n;
	if (!close_keys)
		close_keys = "Esc";
	if (n == 0)
		snprintf(line, sizeof(line), " Kernel messages: none yet   %s: close", close_keys);
	else if (note)
		snprintf(line, sizeof(line), " Kernel messages %zu-%zu of %zu   %s", pos->msg + 1,
			 last + 1, n, note);
	else
		snprintf(line, sizeof(line),
			 " Kernel messages %zu-%zu of %zu   Shift+PageUp/PageDown: scroll   /: find"
			 "   %s: close",
			 pos->msg + 1, last + 1, n, close_keys);
	put_utf8(&(struct writer){o, 0, 0, 1, 0, 0, false}, line, status);
}

bool overlay_view_find(const struct overlay_msg *msgs, size_t n, const char *needle,
		       struct overlay_view_pos *pos)
{
	if (!needle || !*needle)
		return false;
	for (size_t i = MIN(pos->msg, n); i-- > 0;)
		if (msgs[i].text && strcasestr(msgs[i].text, needle)) {
			*pos = (struct overlay_view_pos){false, i, 0};
			return true;
		}
	return false;
}

static size_t view_step(const struct overlay *o)
{
	return o->rows > 2 ? o->rows - 2 : 1;
}

void overlay_view_page(const struct overlay *o, const struct overlay_msg *msgs, size_t n, int dir,
		       struct overlay_view_pos *pos)
{
	struct overlay layout = *o; /* view_msg_rows() stores nothing */
	size_t msg = pos->msg, step = view_step(o);

	if (n == 0 || msg >= n)
		return;
	if (dir < 0) {
		long r = (long)pos->row - (long)step;

		while (r < 0 && msg > 0)
			r += (long)view_msg_rows(&layout, &msgs[--msg]);
		*pos = (struct overlay_view_pos){false, msg, r < 0 ? 0 : (size_t)r};
		return;
	}
	if (pos->end)
		return;
	step += pos->row;
	while (msg < n && step >= view_msg_rows(&layout, &msgs[msg]))
		step -= view_msg_rows(&layout, &msgs[msg++]);
	/* past the end: the next layout clamps it there */
	*pos = msg < n ? (struct overlay_view_pos){false, msg, step}
		       : (struct overlay_view_pos){true, 0, 0};
}

void overlay_view_home(struct overlay_view_pos *pos)
{
	*pos = (struct overlay_view_pos){false, 0, 0};
}

bool overlay_row_text(const struct overlay *o, unsigned row, unsigned cols, uint32_t *cps)
{
	const struct overlay_cell *c;
	unsigned w;

	if (!o || row < o->top || row >= o->top + o->n)
		return false;
	c = o->cells + (size_t)(row - o->top) * o->cols;
	w = MIN(cols, o->cols);
	for (unsigned x = 0; x < w; x++)
		cps[x] = c[x].width == 0 ? 0 : c[x].ch;
	/* a wide character cut by a narrower grid */
	if (w > 0 && c[w - 1].width == 2)
		cps[w - 1] = ' ';
	for (unsigned x = w; x < cols; x++)
		cps[x] = ' ';
	return true;
}
