/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The terminal: a libtsm screen and vte, fed by the master side of a pty whose
 * slave is the controlling tty of the session (login). Bytes from the pty go
 * into the vte, which updates the screen and calls `damage` so the renderer
 * schedules a frame; keys from input go through the vte's keyboard encoder
 * back to the pty. When the session's process exits, `exited` is called.
 *
 * The child is started in its own session with the pty as controlling tty,
 * the window size set from the grid, TERM, COLORTERM (at 15 bpp and deeper),
 * XDG_SEAT and XDG_VTNR set, default signal dispositions and no daemon fd
 * open other than 0-2.
 */
#include <libtsm.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct term;
struct cluster_table;

struct term_callbacks {
	void (*damage)(void *userdata);
	void (*exited)(int status, void *userdata);
};

struct term_config {
	unsigned cols, rows;
	unsigned width_px, height_px; /* for TIOCSWINSZ */
	char **argv;
	const char *term;
	unsigned sb_size;
	unsigned vt;	/* XDG_VTNR for the session; 0 = not set */
	bool truecolor; /* COLORTERM=truecolor (15 bpp and deeper) */
};

int term_new(sd_event *event, const struct term_config *cfg, const struct term_callbacks *cb,
	     void *userdata, struct term **ret);
void term_free(struct term *t);

/* After the session exited: clears the screen and the scrollback, resets the
 * terminal and starts the session command again on a new pty. */
int term_restart(struct term *t);

/* A new grid (zoom): the screen keeps its content as libtsm resizes it and
 * the session gets SIGWINCH. */
int term_resize(struct term *t, unsigned cols, unsigned rows, unsigned width_px,
		unsigned height_px);

struct tsm_screen *term_screen(struct term *t);

/* What the stand-ins for combining sequences on the screen mean. */
const struct cluster_table *term_clusters(struct term *t);

/* A key press (or repeat): keysym and unicode from xkbcommon, TSM_*_MASK mods. */
void term_handle_key(struct term *t, uint32_t keysym, uint32_t ascii, unsigned mods,
		     uint32_t unicode);

/* Shift+PageUp / Shift+PageDown: walk the scrollback by pages (dir < 0 = up). */
void term_scroll_page(struct term *t, int dir);
