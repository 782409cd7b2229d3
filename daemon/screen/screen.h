/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One screen: a framebuffer and what draws on it: the device and its life
 * (fbwatch.h), the fonts, the renderer, the scroller and the blitter, the
 * rotation and zoom (one relayout path), following a mode set by another
 * program, blanking, the pointer's sprite and the frames (frame.h). It
 * shows one terminal (terminal.h), whose cells it draws.
 *
 * A blinking cursor blinks here: CURSOR_ON_USEC shown, CURSOR_OFF_USEC not,
 * with a timer that runs only while a frame has just shown such a cursor
 * (its VT in front, not blanked, the cursor not hidden, in the view): an
 * idle screen with a steady cursor has no timer at all. Input shows the
 * cursor at once and starts its on phase again.
 *
 * A screen knows no keyboard or pointer device: what the input side must
 * know of a new layout, a screen's acquire and a fatal error go to the seat
 * (seat.h) through its callbacks.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "blank.h"
#include "frame.h"
#include "overlay.h"
#include "render.h"
#include "scroll.h"
#include "../terminal/terminal.h"
#include "../devices/backend.h"
#include "../devices/fbdev.h"
#include "../devices/fbwatch.h"
#include "../devices/vt.h"
#include "../color/palette.h"

struct screen;

struct screen_config {
	const char *fbdev; /* NULL = the first framebuffer found */
	/* The framebuffer and a successor only on this seat (udevseat.h);
	 * NULL: any */
	const char *seat;
	unsigned fb_wait; /* seconds (fbwait.h) */
	const char *font_file, *font_name;
	unsigned font_size, font_dpi; /* points; dpi 0 = from the device */
	int scroll_mode;	      /* enum scroll_mode */
	bool calibrate;
	bool stats;	     /* --stats: a Key: line per echoed key */
	int fb_flush;	     /* enum fb_flush */
	const char *backend; /* NULL = auto */
	int rotate;	     /* enum rotation at start */
};

struct screen_callbacks {
	/* A new layout: the pointer's area and the grid's cells follow. */
	void (*laid_out)(struct screen *s, void *userdata);
	/* A successor framebuffer while the VT is in front: acquired as
	 * after a VT switch. */
	void (*acquire)(struct screen *s, void *userdata);
	/* Its framebuffer went (fbwatch.h): the other screens may lay out
	 * again (a mirror's grid). May be NULL. */
	void (*gone)(struct screen *s, void *userdata);
	/* The screen cannot be used any more: consoled exits. */
	void (*failed)(struct screen *s, void *userdata);
};

struct screen {
	sd_event *event;
	struct screen_config cfg;
	const struct palette *palette;
	struct vt *vt;		   /* its seat's VT; NULL: a seat without one */
	struct terminal *terminal; /* the terminal it shows */
	struct fbdev *fb;	   /* NULL after a removal until a successor (fbwatch.h) */
	struct fbwatch *fbwatch;
	struct fontset *fonts;
	double fonts_dpi; /* what the fontset was made for */
	bool fonts_mono;
	struct render *render;
	struct scroller *scroller;
	struct backend *backend;
	struct blank *blank;	/* the idle timer */
	bool blanked_by_driver; /* FBIOBLANK powerdown is on */
	bool unblank_pending;	/* FBIOBLANK unblank after the next frame */
	/* Video memory is wiped at the next acquire: at the first (of
	 * whatever a predecessor killed with SIGKILL left), and after a
	 * session ended while another VT was shown. */
	bool wipe_pending;
	struct frame frame;
	/* The pointer: where it is (pixels of the screen), whether it is
	 * shown, and the timer that hides it. */
	int pointer_x, pointer_y;
	bool pointer_shown;
	sd_event_source *pointer_source;
	/* A blinking cursor (stream.h, render_set_cursor()): its timer, on
	 * only while the last frame showed such a cursor, and whether it is in
	 * its off phase. */
	sd_event_source *blink_source;
	bool cursor_off;
	/* --stats: the Key: lines' figures not written yet, the timer that
	 * writes them once typing pauses, the last one's time (screen.c) */
	struct screen_key_line *key_lines;
	unsigned n_key_lines;
	sd_event_source *key_lines_source;
	uint64_t last_key_line_usec;
	/* The kernel messages' band or view over the session's cells
	 * (overlay.h; n 0: none), laid out by screen_show_band() and
	 * screen_show_view() for the grid of the moment. */
	struct overlay overlay;
	struct screen_callbacks cb;
	void *userdata;
};

struct screen *screen_new(const struct screen_config *cfg, const struct palette *palette,
			  const struct screen_callbacks *cb, void *userdata);
/* Start-up, in this order: the framebuffer (waited for, --fb-wait), the
 * fonts, the renderer (-ERANGE: the font's cell is larger than the screen;
 * then the start rotation), and with the event loop the device watch, the
 * timers and the idle timer (blank_sec: blank.h). */
int screen_open(struct screen *s);
int screen_load_fonts(struct screen *s);
int screen_new_render(struct screen *s);
int screen_start(struct screen *s, sd_event *event, unsigned blank_sec);
/* At exit, the VT still in front: video memory wiped, the blitter let go,
 * the mode and colour map put back. */
void screen_stop(struct screen *s);
/* The device watch ends (first at exit: no successor is taken any more). */
void screen_unwatch(struct screen *s);
void screen_free(struct screen *s);

/* Whether its terminal can be seen: its VT in front, a framebuffer, not
 * blanked. */
bool screen_visible(struct screen *s);
void screen_schedule_frame(struct screen *s);
/* A frame due at once is drawn now (frame_draw_due()): the caller is where
 * the loop's next turn would have drawn it, with nothing of its own left
 * to do. */
void screen_draw_due(struct screen *s);
/* The device side of a VT acquire: 0, -ENODEV (no framebuffer: the caller
 * lets fbwatch_lost() look for one), < 0 (exiting). */
int screen_acquire(struct screen *s);
/* Its grid at most cols x rows (0: as many as fit; render_set_grid_max()):
 * laid out again now where that is allowed (before the first acquire: the
 * grid alone; the VT in front: the whole layout, the terminal resized),
 * else at the next acquire. */
void screen_set_grid_max(struct screen *s, unsigned cols, unsigned rows);
/* Drawn whole at the next frame. */
void screen_redraw(struct screen *s);
/* The VT was released: the blitter idle, the pointer hidden, the idle
 * timer stopped, unblanked (the frame timer: frame_cancel()). */
void screen_release(struct screen *s);
/* A new session: nothing of the last user stays in video memory. */
void screen_wipe(struct screen *s);
/* Input (a key, a pointer event), or an oops (seat.c: the kernel's
 * console_unblank()): the idle timer again; a blanked screen wakes. */
void screen_activity(struct screen *s);
/* Ctrl+Plus/Minus/0, Ctrl+Logo+arrows: input.h's zoom and rotate. */
bool screen_zoom(struct screen *s, int step);
void screen_rotate(struct screen *s, int step);
/* The pointer's sprite shown at (x, y) (pixels, logical), hidden after a
 * while or at hide. */
void screen_show_pointer(struct screen *s, int x, int y);
void screen_hide_pointer(struct screen *s);

/* The kernel messages over the session, never in it (overlay.h): the band
 * of msgs[0..n) (`skipped` before them never given, `lines` rows at most)
 * or the view of all of them from *pos (overlay_view()), laid out for the
 * grid now and drawn at the next frame (while another VT is shown or the
 * screen is blanked: when it is seen again). Neither unblanks the screen.
 * The caller lays them out again after every new layout (the laid_out
 * callback). */
void screen_show_band(struct screen *s, const struct overlay_msg *msgs, size_t n, uint64_t skipped,
		      unsigned lines);
void screen_show_view(struct screen *s, const struct overlay_msg *msgs, size_t n,
		      struct overlay_view_pos *pos, const char *note, const char *close_keys);
/* The session's cells back where the band or the view was. */
void screen_hide_overlay(struct screen *s);
/* The vcs mirror's rows (vcs.h vcs_row_fn; userdata: the screen): the
 * band's or the view's text where they cover the screen. */
bool screen_vcs_row(void *userdata, unsigned row, unsigned cols, uint32_t *cps);
