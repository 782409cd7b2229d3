/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mouse dispatcher (mouse.h).
 */
#define LOG_MODULE "mouse"
#include <errno.h>
#include <libtsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "input.h"
#include "mouse.h"
#include "../terminal/stream.h"
#include "../util/log.h"
#include "../util/util.h"

#define BUTTONS 3 /* left, middle, right */

/* xterm's button codes */
#define CODE_RELEASE 3u
#define CODE_SHIFT 4u
#define CODE_META 8u
#define CODE_CONTROL 16u
#define CODE_MOTION 32u
#define CODE_WHEEL 64u

/* The default encoding's limit: a coordinate + 32 in one byte. */
#define X10_MAX 223u
/* 1005's: + 32 as a UTF-8 character of at most two bytes. */
#define UTF8_MAX 2015u

struct mouse {
	struct stream *stream;
	struct mouse_callbacks cb;
	void *ud;
	uint64_t (*now_ms)(void *ud);
	void *now_ud;

	unsigned cell_w, cell_h, cols, rows;

	/* the cell the pointer is in (after the last event) */
	unsigned col, row;
	bool in_grid; /* col, row hold a cell */

	/* per button (bit button - 1): its press was reported, or handled
	 * here; its release and its motion go the same way */
	unsigned reported, local;

	/* click counting (left button, local) */
	uint64_t click_ms;
	unsigned click_col, click_row, clicks;
};

static uint64_t mouse_clock(void *ud)
{
	struct timespec ts;

	(void)ud;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int mouse_new(struct stream *s, const struct mouse_callbacks *cb, void *ud, struct mouse **ret)
{
	struct mouse *m;

	if (!s || !cb)
		return -EINVAL;
	m = xcalloc(1, sizeof(*m));
	m->stream = s;
	m->cb = *cb;
	m->ud = ud;
	m->now_ms = mouse_clock;
	*ret = m;
	return 0;
}

void mouse_free(struct mouse *m)
{
	free(m);
}

void mouse_reset(struct mouse *m)
{
	if (!m)
		return;
	m->reported = m->local = 0;
	m->clicks = 0;
	m->click_ms = 0;
}

void mouse_set_clock(struct mouse *m, uint64_t (*now_ms)(void *ud), void *ud)
{
	m->now_ms = now_ms ? now_ms : mouse_clock;
	m->now_ud = ud;
}

void mouse_set_geometry(struct mouse *m, unsigned cell_w, unsigned cell_h, unsigned cols,
			unsigned rows)
{
	m->cell_w = cell_w;
	m->cell_h = cell_h;
	m->cols = cols;
	m->rows = rows;
	m->in_grid = false;
	if (m->col >= cols || m->row >= rows)
		m->col = m->row = 0;
}

static void mouse_send(struct mouse *m, const char *b, size_t n)
{
	if (n && m->cb.send)
		m->cb.send(b, n, m->ud);
}

/* ---- reports -------------------------------------------------------------- */

static size_t put_utf8(char *out, unsigned v)
{
	if (v < 0x80) {
		out[0] = (char)v;
		return 1;
	}
	out[0] = (char)(0xc0 | v >> 6);
	out[1] = (char)(0x80 | (v & 0x3f));
	return 2;
}

size_t mouse_encode(unsigned modes, unsigned code, bool release, unsigned col, unsigned row,
		    char *buf)
{
	unsigned x = col + 1, y = row + 1;
	int n;

	if (modes & STREAM_MOUSE_SGR) {
		n = snprintf(buf, 32, "\033[<%u;%u;%u%c", code, x, y, release ? 'm' : 'M');
		return n > 0 && n < 32 ? (size_t)n : 0;
	}
	if (release)
		code = (code & ~3u) | CODE_RELEASE;
	if (modes & STREAM_MOUSE_URXVT) {
		n = snprintf(buf, 32, "\033[%u;%u;%uM", code + 32, x, y);
		return n > 0 && n < 32 ? (size_t)n : 0;
	}
	if (modes & STREAM_MOUSE_UTF8) {
		size_t len = 3;

		if (x > UTF8_MAX || y > UTF8_MAX || code + 32 > UTF8_MAX + 32)
			return 0;
		memcpy(buf, "\033[M", 3);
		len += put_utf8(buf + len, code + 32);
		len += put_utf8(buf + len, x + 32);
		len += put_utf8(buf + len, y + 32);
		return len;
	}
	if (x > X10_MAX || y > X10_MAX || code + 32 > 255)
		return 0; /* xterm sends nothing either */
	memcpy(buf, "\033[M", 3);
	buf[3] = (char)(code + 32);
	buf[4] = (char)(x + 32);
	buf[5] = (char)(y + 32);
	return 6;
}

static unsigned mod_code(unsigned modes, unsigned mods)
{
	unsigned code = 0;

	if (modes & STREAM_MOUSE_X10)
		return 0; /* X10 compatibility: no modifiers */
	if (mods & TSM_SHIFT_MASK)
		code |= CODE_SHIFT;
	if (mods & TSM_ALT_MASK)
		code |= CODE_META;
	if (mods & TSM_CONTROL_MASK)
		code |= CODE_CONTROL;
	return code;
}

static void mouse_report(struct mouse *m, unsigned modes, unsigned code, bool release)
{
	char buf[32];

	mouse_send(m, buf, mouse_encode(modes, code, release, m->col, m->row, buf));
}

/* ---- events --------------------------------------------------------------- */

/* The cell under (x, y), clamped to the grid; *edge_row is the row for a
 * selection being dragged: -1 on the topmost pixel row, rows on the grid's
 * last pixel row and below it. */
static void mouse_cell(struct mouse *m, int x, int y, unsigned *col, unsigned *row, int *edge_row)
{
	unsigned ux = x < 0 ? 0 : (unsigned)x, uy = y < 0 ? 0 : (unsigned)y;

	*col = MIN(ux / m->cell_w, m->cols - 1);
	*row = MIN(uy / m->cell_h, m->rows - 1);
	if (uy == 0)
		*edge_row = -1;
	else if (uy >= m->rows * m->cell_h - 1)
		*edge_row = (int)m->rows;
	else
		*edge_row = (int)*row;
}

static unsigned mouse_clicks(struct mouse *m)
{
	uint64_t now = m->now_ms(m->now_ud);

	if (m->clicks && m->click_col == m->col && m->click_row == m->row &&
	    now - m->click_ms < MOUSE_CLICK_MS)
		m->clicks = m->clicks % 3 + 1;
	else
		m->clicks = 1;
	m->click_ms = now;
	m->click_col = m->col;
	m->click_row = m->row;
	return m->clicks;
}

static void mouse_button(struct mouse *m, const struct input_pointer_event *ev, unsigned modes)
{
	unsigned b = ev->button - 1, bit = 1u << b;
	unsigned tracking = modes & STREAM_MOUSE_TRACKING;
	bool shift = ev->mods & TSM_SHIFT_MASK;

	if (ev->button < 1 || ev->button > BUTTONS)
		return;
	if (ev->pressed) {
		if ((m->reported | m->local) & bit)
			return; /* a second press without a release */
		if (tracking && !shift) {
			m->reported |= bit;
			mouse_report(m, modes, b | mod_code(modes, ev->mods), false);
			return;
		}
		m->local |= bit;
		if (ev->button == 2)
			return; /* pastes on release */
		/* right button, or Shift+left without reporting: extend */
		if (ev->button == 3 || (shift && !tracking)) {
			if (m->cb.select_start)
				m->cb.select_start(m->col, (int)m->row, 1, true, m->ud);
			return;
		}
		unsigned clicks = mouse_clicks(m);

		if (m->cb.select_start)
			m->cb.select_start(m->col, (int)m->row, clicks, false, m->ud);
		return;
	}
	if (m->reported & bit) {
		m->reported &= ~bit;
		/* X10 has no releases; with reporting turned off since the press
		 * the program does not want it any more */
		if (tracking && tracking != STREAM_MOUSE_X10)
			mouse_report(m, modes, b | mod_code(modes, ev->mods), true);
		return;
	}
	if (!(m->local & bit))
		return;
	m->local &= ~bit;
	if (ev->button == 2) {
		if (m->cb.paste)
			m->cb.paste(m->ud);
		return;
	}
	/* the other of left and right may still hold the selection */
	if (!(m->local & (1u | 4u)) && m->cb.select_end)
		m->cb.select_end(m->ud);
}

static void mouse_motion(struct mouse *m, const struct input_pointer_event *ev, unsigned modes,
			 bool moved, int edge_row)
{
	unsigned tracking = modes & STREAM_MOUSE_TRACKING;

	if (m->local & (1u | 4u)) {
		/* a selection being dragged; at an edge every event scrolls */
		if ((moved || edge_row < 0 || edge_row >= (int)m->rows) && m->cb.select_move)
			m->cb.select_move(m->col, edge_row, m->ud);
		return;
	}
	if (!moved || !tracking)
		return;
	if (m->reported && (tracking == STREAM_MOUSE_BUTTON || tracking == STREAM_MOUSE_ANY)) {
		unsigned b = (unsigned)__builtin_ctz(m->reported);

		mouse_report(m, modes, b | CODE_MOTION | mod_code(modes, ev->mods), false);
	} else if (!m->reported && !m->local && tracking == STREAM_MOUSE_ANY)
		mouse_report(m, modes, CODE_RELEASE | CODE_MOTION | mod_code(modes, ev->mods),
			     false);
}

/* Cursor Up or Down, n times, as the cursor keys send them. */
static void mouse_wheel_keys(struct mouse *m, int notches)
{
	bool app = stream_cursor_keys_app(m->stream);
	char key[3] = {'\033', app ? 'O' : '[', notches > 0 ? 'A' : 'B'};
	unsigned n = (unsigned)(notches > 0 ? notches : -notches) * MOUSE_WHEEL_LINES;

	for (unsigned i = 0; i < n; i++)
		mouse_send(m, key, sizeof(key));
}

static void mouse_wheel(struct mouse *m, const struct input_pointer_event *ev, unsigned modes)
{
	unsigned tracking = modes & STREAM_MOUSE_TRACKING;

	if (ev->wheel == 0)
		return;
	if (tracking && !(ev->mods & TSM_SHIFT_MASK)) {
		unsigned code =
		    (ev->wheel > 0 ? CODE_WHEEL : CODE_WHEEL + 1) | mod_code(modes, ev->mods);
		int n = ev->wheel > 0 ? ev->wheel : -ev->wheel;

		for (int i = 0; i < n; i++)
			mouse_report(m, modes, code, false);
		return;
	}
	if (tsm_screen_get_flags(stream_screen(m->stream)) & TSM_SCREEN_ALTERNATE) {
		mouse_wheel_keys(m, ev->wheel);
		return;
	}
	if (m->cb.scroll_view)
		m->cb.scroll_view(ev->wheel * MOUSE_WHEEL_LINES, m->ud);
}

void mouse_handle(struct mouse *m, const struct input_pointer_event *ev)
{
	unsigned modes = stream_mouse_modes(m->stream), col, row;
	int edge_row;
	bool moved;

	if (!m->cell_w || !m->cell_h || !m->cols || !m->rows)
		return;
	mouse_cell(m, ev->x, ev->y, &col, &row, &edge_row);
	moved = !m->in_grid || col != m->col || row != m->row;
	m->col = col;
	m->row = row;
	m->in_grid = true;
	switch (ev->kind) {
	case INPUT_POINTER_MOTION:
		mouse_motion(m, ev, modes, moved, edge_row);
		return;
	case INPUT_POINTER_BUTTON:
		mouse_button(m, ev, modes);
		return;
	case INPUT_POINTER_WHEEL:
		mouse_wheel(m, ev, modes);
		return;
	}
}

void mouse_focus(struct mouse *m, bool in)
{
	if (stream_mouse_modes(m->stream) & STREAM_MOUSE_FOCUS)
		mouse_send(m, in ? "\033[I" : "\033[O", 3);
	if (!in) {
		/* what is held now is released where consoled cannot see it */
		m->reported = 0;
		if ((m->local & (1u | 4u)) && m->cb.select_end)
			m->cb.select_end(m->ud);
		m->local = 0;
	}
}
