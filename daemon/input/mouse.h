/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The mouse dispatcher: pointer events (input.h) become reports for the
 * program in the session, wheel scrolling, or local selection and paste
 * (consoled(8), MOUSE).
 *
 * A pointer position (screen pixels) is the cell under it in the grid that
 * mouse_set_geometry() gave (the grid starts at the screen's top left
 * corner; pixels right of or below it are the last column or row).
 *
 * Mouse reporting is on while the program set a tracking mode
 * (stream_mouse_modes(): DECSET 9, 1000, 1002 or 1003):
 *  - 9 (X10): button presses only, without modifiers;
 *  - 1000: presses and releases; 1002: also motion while a button is down;
 *    1003: also motion without a button; motion is reported only when the
 *    pointer enters another cell;
 *  - the wheel is buttons 4 (up) and 5 (down), one press a notch;
 *  - button codes as xterm's: 0 left, 1 middle, 2 right, 3 a release (not in
 *    SGR), 64/65 the wheel, + 32 for motion, + 4 Shift, + 8 Meta (Alt), + 16
 *    Control (not in X10 mode);
 *  - encodings: the default (CSI M Cb Cx Cy, each + 32 as one byte:
 *    coordinates above 223 cannot be told and such a report is dropped, as
 *    xterm does), 1005 (the same, as UTF-8 characters: up to 2015), 1006
 *    (SGR: CSI < Cb ; Cx ; Cy M, and m for a release with the released
 *    button's code) and 1015 (urxvt: CSI Cb+32 ; Cx ; Cy M).
 * Shift held when a button goes down makes it a local action all the same
 * (also the wheel: it scrolls as without reporting); the release and the
 * motion of a button go where its press went.
 *
 * Without reporting (or with Shift):
 *  - left button: press starts a selection (select_start, the clicks
 *    counted: a press in the same cell less than 400 ms after the last one
 *    is a double, then a triple click, then a single one again), motion
 *    moves its end (select_move: while dragging, the topmost pixel row is row
 *    -1 and the last pixel row of the grid or below it is row `rows`: past
 *    the edge, the selection scrolls the view), release ends it
 *    (select_end). Shift+left without reporting extends the selection
 *    (select_start with extend), as the right button does;
 *  - right button: extends the selection to the cell (select_start with
 *    extend, as xterm's start-extend), dragging moves the end, release ends
 *    it;
 *  - middle button: pastes (paste) when it is released, as xterm does.
 * The wheel: on the normal screen it walks the scrollback, 3 lines a notch
 * (scroll_view); on the alternate screen (less, vim without mouse mode) it
 * sends 3 cursor Up or Down keys a notch, as the cursor keys send them
 * (CSI A / CSI B, or SS3 A / SS3 B with DECCKM).
 *
 * Focus events (1004): mouse_focus() sends CSI I when consoled's VT is
 * shown (acquired) and CSI O when another VT or a compositor takes it: on a
 * console that is what focus means (there are no windows).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stream;
struct input_pointer_event;
struct mouse;

#define MOUSE_CLICK_MS 400  /* double and triple clicks: same cell, closer than this */
#define MOUSE_WHEEL_LINES 3 /* lines (or cursor keys) a wheel notch */

struct mouse_callbacks {
	/* local selection in view cells; row may be -1 or rows while dragging
	 * past the top/bottom edge */
	void (*select_start)(unsigned col, int row, unsigned clicks /* 1,2,3 */, bool extend,
			     void *ud);
	void (*select_move)(unsigned col, int row, void *ud);
	void (*select_end)(void *ud);
	void (*paste)(void *ud);		  /* middle button (no reporting, or Shift) */
	void (*scroll_view)(int lines, void *ud); /* wheel on the normal screen; > 0 = up */
	/* reports, wheel keys, focus events -> pty */
	void (*send)(const char *bytes, size_t len, void *ud);
};

/* The modes come from s (stream_mouse_modes(), the screen's flags, DECCKM);
 * callbacks may be NULL. */
int mouse_new(struct stream *s, const struct mouse_callbacks *cb, void *ud, struct mouse **ret);
void mouse_free(struct mouse *m);
/* A new session: no button the last one saw pressed is followed any more
 * (its release and motion go nowhere), no click counts on. */
void mouse_reset(struct mouse *m);

/* On every layout (zoom, a new mode): the cell size in pixels and the grid.
 * Until then (or with a 0) events are dropped. */
void mouse_set_geometry(struct mouse *m, unsigned cell_w, unsigned cell_h, unsigned cols,
			unsigned rows);

void mouse_handle(struct mouse *m, const struct input_pointer_event *ev);

/* VT acquired (in) or released: CSI I / CSI O when 1004 is on. */
void mouse_focus(struct mouse *m, bool in);

/* Tests: the clock click counting reads, in ms (NULL: CLOCK_MONOTONIC). */
void mouse_set_clock(struct mouse *m, uint64_t (*now_ms)(void *ud), void *ud);

/* A report as mouse.c encodes it, for tests and the man page's examples:
 * code is the button code (modifiers and + 32 for motion included), col and
 * row 0-based, release whether it is a release; returns its length in buf
 * (at least 32 bytes), 0 if the encoding cannot hold the coordinates. */
size_t mouse_encode(unsigned modes, unsigned code, bool release, unsigned col, unsigned row,
		    char *buf);
