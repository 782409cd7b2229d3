/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One screen (screen.h): the framebuffer's life, the layout, blanking, the
 * pointer's sprite and what a frame does.
 */
#define LOG_MODULE "consoled"
#include "screen.h"

#include <errno.h>
#include <stdlib.h>
#include <systemd/sd-daemon.h>

#include "rotate.h"
#include "../terminal/selection.h"
#include "../terminal/vcs.h"
#include "../devices/bootmode.h"
#include "../devices/fbwait.h"
#include "../util/crash.h"
#include "../util/log.h"
#include "../util/util.h"

/* The pointer hides this long after the last pointer event (and at any key). */
#define POINTER_HIDE_USEC (3 * USEC_PER_SEC)

/* A blinking cursor: xterm's cursorOnTime and cursorOffTime (600 and 300
 * ms), the times programs that ask for one (DECSCUSR) are made with; shown
 * twice as long as hidden, it is seen more than not and found at a glance,
 * with 2.2 frames a second (fbcon's 200 ms each way would be 5). */
#define CURSOR_ON_USEC (600 * USEC_PER_MSEC)
#define CURSOR_OFF_USEC (300 * USEC_PER_MSEC)

static int screen_follow_mode(struct screen *s, const struct fb_var_screeninfo *cur);

static void screen_fail(struct screen *s)
{
	s->cb.failed(s, s->userdata);
}

void screen_schedule_frame(struct screen *s)
{
	frame_schedule(&s->frame, s->terminal ? s->terminal->term : NULL);
}

void screen_draw_due(struct screen *s)
{
	(void)frame_draw_due(&s->frame);
}

/* After a drawn frame: a blinking cursor it showed keeps (or gets) its
 * timer; anything else stops it, and the next blinking cursor starts shown.
 * Frames that draw nothing (another VT, blanked, a held frame) leave it to
 * run out once: it then schedules a frame that is not drawn either. */
static void screen_blink_follow(struct screen *s, bool blinking)
{
	int on = SD_EVENT_OFF;

	if (!s->blink_source)
		return; /* (not started) */
	sd_event_source_get_enabled(s->blink_source, &on);
	if (!blinking) {
		sd_event_source_set_enabled(s->blink_source, SD_EVENT_OFF);
		s->cursor_off = false;
	} else if (on == SD_EVENT_OFF) {
		sd_event_source_set_time(s->blink_source,
					 now_usec() +
					     (s->cursor_off ? CURSOR_OFF_USEC : CURSOR_ON_USEC));
		sd_event_source_set_enabled(s->blink_source, SD_EVENT_ONESHOT);
	}
}

static int screen_on_blink(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct screen *s = userdata;

	(void)src;
	(void)usec;
	s->cursor_off = !s->cursor_off;
	screen_schedule_frame(s);
	return 0;
}

/* --stats: the Key: lines are written once no key was drawn for
 * KEY_LINES_QUIET, or when KEY_LINES_MAX wait (and at the screen's stop),
 * not at each echo: formatting and writing one took 0.27 ms of the guest's
 * one CPU per key under TCG (cirrus), which the next key's echo, or the
 * benchmark's poller watching for this one, waited for. */
#define KEY_LINES_MAX 256
#define KEY_LINES_QUIET_USEC (250 * USEC_PER_MSEC)

/* One Key: line's figures, microseconds (screen_log_key()). */
struct screen_key_line {
	uint64_t input, handled, to_pty, echo_read, parse, wait, cells, detect, draw, flush, total;
	int64_t due;
};

static void screen_write_key_line(const struct screen_key_line *l)
{
	log_info("Key: read %llu us after its event, handled %llu us after the read, "
		 "%llu us to the pty, echo read %llu us later, parsed in %llu us; frame "
		 "%llu us after the parse (due at %lld us): cells %llu, detect %llu, "
		 "draw %llu, flush %llu us; %llu us from the key to the glass",
		 (unsigned long long)l->input, (unsigned long long)l->handled,
		 (unsigned long long)l->to_pty, (unsigned long long)l->echo_read,
		 (unsigned long long)l->parse, (unsigned long long)l->wait, (long long)l->due,
		 (unsigned long long)l->cells, (unsigned long long)l->detect,
		 (unsigned long long)l->draw, (unsigned long long)l->flush,
		 (unsigned long long)l->total);
}

static void screen_write_key_lines(struct screen *s)
{
	for (unsigned i = 0; i < s->n_key_lines; i++)
		screen_write_key_line(&s->key_lines[i]);
	s->n_key_lines = 0;
}

static int screen_on_key_lines(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct screen *s = userdata;

	(void)usec;
	/* still typing: once it pauses */
	if (now_usec() < s->last_key_line_usec + KEY_LINES_QUIET_USEC) {
		sd_event_source_set_time(src, s->last_key_line_usec + KEY_LINES_QUIET_USEC);
		sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
		return 0;
	}
	screen_write_key_lines(s);
	return 0;
}

/* Keeps a Key: line's figures for later (KEY_LINES_QUIET); written at once
 * if they cannot be kept. The timer is set for the first line after a
 * pause only, then moved when it fires: no timerfd_settime() per key. */
static void screen_keep_key_line(struct screen *s, const struct screen_key_line *l)
{
	int enabled = SD_EVENT_OFF;

	if (!s->key_lines)
		s->key_lines = calloc(KEY_LINES_MAX, sizeof(*s->key_lines));
	if (!s->key_lines_source && s->event &&
	    sd_event_add_time(s->event, &s->key_lines_source, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
			      screen_on_key_lines, s) >= 0)
		sd_event_source_set_enabled(s->key_lines_source, SD_EVENT_OFF);
	if (!s->key_lines || !s->key_lines_source) {
		screen_write_key_line(l);
		return;
	}
	s->key_lines[s->n_key_lines++] = *l;
	s->last_key_line_usec = now_usec();
	if (s->n_key_lines == KEY_LINES_MAX) {
		screen_write_key_lines(s);
		return;
	}
	sd_event_source_get_enabled(s->key_lines_source, &enabled);
	if (enabled == SD_EVENT_OFF) {
		sd_event_source_set_time(s->key_lines_source,
					 s->last_key_line_usec + KEY_LINES_QUIET_USEC);
		sd_event_source_set_enabled(s->key_lines_source, SD_EVENT_ONESHOT);
	}
}

/* The key's echo is on the glass: where its time went (--stats). The
 * frame's wait runs from the parse to the frame's start; "due" is how long
 * after the parse the frame timer was set to fire. */
static void screen_log_key(struct screen *s, struct term *term, uint64_t due, uint64_t start)
{
	const struct term_key_trace *k = term_key_trace(term);
	const struct render_frame_times *f = &render_get_stats(s->render)->last;

	if (!k->pending || !k->parsed_usec || k->parsed_usec > start)
		return;
	term_key_trace_done(term);
	if (!s->cfg.stats)
		return;
	screen_keep_key_line(
	    s, &(struct screen_key_line){.input = k->event_usec && k->input_usec &&
							  k->event_usec < k->input_usec
						      ? k->input_usec - k->event_usec
						      : 0,
					 .handled = k->input_usec && k->input_usec < k->key_usec
							? k->key_usec - k->input_usec
							: 0,
					 .to_pty = k->write_usec - k->key_usec,
					 .echo_read = k->read_usec - k->write_usec,
					 .parse = k->parsed_usec - k->read_usec,
					 .wait = start - k->parsed_usec,
					 .due = (int64_t)due - (int64_t)k->parsed_usec,
					 .cells = f->cells_usec,
					 .detect = f->detect_usec,
					 .draw = f->draw_usec,
					 .flush = f->flush_usec,
					 .total = start + f->cells_usec + f->detect_usec +
						  f->draw_usec + f->flush_usec - k->key_usec});
}

static int screen_on_frame(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct screen *s = userdata;
	struct terminal *t = s->terminal;

	(void)src;
	if (!t || !t->term)
		return 0;
	/* the session is between its DECSET 2026 and its reset: the glass
	 * keeps the last frame (the hold's end or the reset's read schedules
	 * the next) */
	if (term_frame_held(t->term))
		return 0;
	/* a compositor may have taken the VT since the last poll */
	if (s->vt)
		vt_poll(s->vt);
	if (!s->vt || !vt_is_active(s->vt) || !s->fb) {
		/* Nothing is drawn while another VT is shown (or no
		 * framebuffer is there); the snapshot follows the output at the
		 * pace of frames all the same. */
		s->frame.last_frame_usec = now_usec();
		terminal_frame_done(t);
		return 0;
	}
	/* Still there? A driver that unregistered it leaves a mapping that
	 * may alias its successor's memory. And another program may have set
	 * a mode on it (fbset in the session): followed before anything is
	 * drawn. */
	struct fb_var_screeninfo cur;
	int r = fbdev_poll(s->fb, &cur);
	if (r == -ENODEV) {
		fbwatch_lost(s->fbwatch);
		return 0;
	}
	if (r < 0)
		log_debug_errno(r, "Failed to read the mode of %s, drawing all the same: %m",
				s->fb->path);
	else if (r > 0 && screen_follow_mode(s, &cur) < 0)
		return 0;
	if (blank_is_blanked(s->blank)) {
		/* Blanked: the terminal follows the output, nothing is drawn
		 * until input wakes the screen (then all of it). */
		s->frame.last_frame_usec = now_usec();
		terminal_frame_done(t);
		return 0;
	}
	if (t->selection)
		selection_check(t->selection); /* output may have changed selected cells */
	uint64_t start = now_usec();
	uint64_t drawn = render_get_stats(s->render)->cells_drawn;
	/* when pacing wanted it (the debug line says how late it came; only
	 * a flood's frames get one, not every key's): a flood's frame at the
	 * end of its gap, another when it was set for */
	bool flood = frame_flood(&s->frame);
	uint64_t due = flood ? s->frame.gap_from_usec + s->frame.frame_gap_usec : usec;
	struct stream_cursor cursor = stream_cursor(term_stream(t->term));

	render_set_cursor(s->render, cursor.shape, !(cursor.blink && s->cursor_off));
	if (frame_quick(&s->frame))
		render_defer_region(s->render);
	uint64_t beside = render_get_stats(s->render)->rows_before_move;
	bool again = render_frame(s->render, term_screen(t->term));
	const struct render_frame_times *last = &render_get_stats(s->render)->last;
	screen_blink_follow(s, cursor.blink && render_cursor_visible(s->render));
	frame_region_seen(&s->frame, last->region_move);
	if (render_get_stats(s->render)->rows_before_move != beside)
		frame_beside_drawn(&s->frame, t->term);
	if (last->deferred) {
		/* a key's quick frame: the region is the output's frame's */
		log_debug("Frame: quick, %llu us, the region left to the next",
			  (unsigned long long)(now_usec() - start));
		frame_quick_drawn(&s->frame, t->term);
		screen_log_key(s, t->term, usec, start);
		terminal_frame_done(t);
		screen_schedule_frame(s);
		return 0;
	}
	/* A frame that drew nothing (a key that brought the view back from
	 * the scrollback to where it was drawn, a blink) starts no frame
	 * interval, so a key's echo right after it is drawn at once, not
	 * 16 ms later */
	if (again || render_get_stats(s->render)->cells_drawn != drawn) {
		frame_drawn(&s->frame, t->term, start, due, flood,
			    render_get_stats(s->render)->cells_drawn - drawn);
		screen_log_key(s, t->term, usec, start);
	}
	if (s->unblank_pending) {
		/* the screen is drawn: the driver shows it again (the kernel
		 * may use the VGA ports the blitter uses) */
		s->unblank_pending = false;
		if (s->backend && backend_ok(s->backend))
			backend_sync(s->backend);
		(void)fbdev_blank(s->fb, false);
		/* and drawn once more: DRM fbdev emulation (bochs-drm, Linux
		 * 6.1) shows black after FBIOBLANK unblank for what pwrite()
		 * sent while the display was off (the pointer-blank check) */
		render_invalidate(s->render);
		again = true;
	}
	/* the snapshot holds what was just drawn, now or soon */
	terminal_frame_done(t);
	if (again)
		screen_schedule_frame(s);
	return 0;
}

bool screen_visible(struct screen *s)
{
	return s->vt && vt_is_active(s->vt) && s->fb && !blank_is_blanked(s->blank);
}

/* The scroller fits the cell height: set up once the VT is ours, and again
 * after a zoom. */
static int screen_setup_scroller(struct screen *s)
{
	struct scroller_config sc = {
	    .mode = s->cfg.scroll_mode,
	    .backend = s->backend && backend_ok(s->backend) ? s->backend : NULL,
	    .calibrate = s->cfg.calibrate,
	    .font_height = fontset_cell_height(s->fonts),
	    .text_rows = render_rows(s->render),
	    .rotation = render_rotation(s->render),
	    .flush = s->cfg.fb_flush,
	};

	render_set_scroller(s->render, NULL);
	scroller_free(s->scroller);
	s->scroller = NULL;
	if (scroller_new(s->fb, &sc, &s->scroller) < 0)
		return -ENOMEM;
	return render_set_scroller(s->render, s->scroller);
}

/* The pointer on the cell under its pixel, or hidden; drawn at the next
 * frame. Only with a framebuffer, after a layout. */
static void screen_update_pointer(struct screen *s)
{
	int col = -1, row = -1;

	if (!s->render || !s->fb)
		return;
	if (s->pointer_shown && render_cols(s->render) && render_rows(s->render)) {
		/* a pixel in the margins right of or below the grid: its
		 * last cell */
		col = (int)MIN((unsigned)s->pointer_x / fontset_cell_width(s->fonts),
			       render_cols(s->render) - 1);
		row = (int)MIN((unsigned)s->pointer_y / fontset_cell_height(s->fonts),
			       render_rows(s->render) - 1);
	}
	render_set_pointer(s->render, col, row);
	screen_schedule_frame(s);
}

void screen_hide_pointer(struct screen *s)
{
	if (!s->pointer_shown)
		return;
	s->pointer_shown = false;
	sd_event_source_set_enabled(s->pointer_source, SD_EVENT_OFF);
	screen_update_pointer(s);
}

static int screen_on_pointer_idle(sd_event_source *src, uint64_t usec, void *userdata)
{
	(void)src;
	(void)usec;
	screen_hide_pointer(userdata);
	return 0;
}

/* The pointer display part of a pointer event (input.h; only while the VT
 * is ours): the pointer shows on the cell under it, and hides again
 * POINTER_HIDE_USEC after the last event. */
void screen_show_pointer(struct screen *s, int x, int y)
{
	s->pointer_x = x;
	s->pointer_y = y;
	s->pointer_shown = true;
	sd_event_source_set_time(s->pointer_source, now_usec() + POINTER_HIDE_USEC);
	sd_event_source_set_enabled(s->pointer_source, SD_EVENT_ONESHOT);
	screen_update_pointer(s);
}

/* Every change of geometry, pixel format or cell size comes here (zoom, a
 * mode the driver adjusted when the VT came back, a handover, a rotation):
 * the renderer's buffers, the scroller (and with it the virtual
 * screen) and the pty's size all follow the device and the font. */
static int screen_relayout(struct screen *s)
{
	int r;

	r = render_relayout(s->render);
	if (r < 0)
		return r;
	r = screen_setup_scroller(s);
	if (r < 0)
		return r;
	if (s->terminal && s->terminal->term) {
		unsigned w, h;

		rotate_logical_size(render_rotation(s->render), s->fb->var.xres, s->fb->var.yres,
				    &w, &h);
		term_resize(s->terminal->term, render_cols(s->render), render_rows(s->render), w,
			    h);
	}
	/* the pointer lives on the visible screen (input's pixels are the
	 * glass's, turned in seat_on_pointer_event()), on the new grid */
	s->cb.laid_out(s, s->userdata);
	screen_update_pointer(s);
	return 0;
}

void screen_set_grid_max(struct screen *s, unsigned cols, unsigned rows)
{
	if (!s->render)
		return;
	render_set_grid_max(s->render, cols, rows);
	if (!s->fb || !render_layout_stale(s->render))
		return;
	if (!s->scroller) {
		/* before the first acquire: the grid alone, the scroller
		 * comes with the acquire's layout */
		if (render_relayout(s->render) < 0)
			screen_fail(s);
		return;
	}
	/* a relayout may set the device's mode: with another VT in front,
	 * the acquire lays the screen out (render_layout_stale()) */
	if (!vt_is_active(s->vt))
		return;
	if (screen_relayout(s) < 0) {
		log_error("Cannot lay %s out for a grid of %ux%u, exiting", s->fb->path, cols,
			  rows);
		screen_fail(s);
		return;
	}
	screen_redraw(s);
}

/* For the next user: the mapped memory becomes the background
 * (render_wipe_vram()), the rest of smem_len zeros (fbdev_wipe_unmapped()),
 * whatever virtual screen consoled or a killed predecessor used. */
static void screen_wipe_vram_all(struct screen *s)
{
	render_wipe_vram(s->render);
	(void)fbdev_wipe_unmapped(s->fb);
}

int screen_acquire(struct screen *s)
{
	int r;

	r = s->fb ? fbdev_reacquire(s->fb) : -ENODEV;
	if (r == -ENODEV)
		return r;
	if (r < 0) {
		log_error("The framebuffer cannot be used any more, exiting");
		screen_fail(s);
		return r;
	}
	crash_set_active(1);
	/* Unblanked, whoever blanked it (a consoled killed while blanked). */
	(void)fbdev_blank(s->fb, false);
	s->blanked_by_driver = s->unblank_pending = false;
	blank_set_active(s->blank, true);
	if (s->backend && backend_ok(s->backend) && backend_mode_changed(s->backend, s->fb) < 0)
		scroller_drop_backend(s->scroller);
	/* The scroller may change the device's mode (a taller virtual screen,
	 * FB_VMODE_YWRAP): only once the VT is ours, and from then on
	 * fbdev_reacquire() puts that mode back after every switch. */
	if (!s->scroller) {
		struct backend_config bc = {
		    .name = s->cfg.backend,
		};
		if (backend_load(s->fb, &bc, &s->backend) < 0)
			log_warning("Going on without a blitter");
	}
	/* The first time, and whenever the device came back in another mode
	 * than the one everything was laid out for. */
	if (!s->scroller || render_layout_stale(s->render)) {
		if (s->scroller)
			log_info("%s came back as %ux%u at %u bpp: laying the screen out again",
				 s->fb->path, s->fb->var.xres, s->fb->var.yres,
				 s->fb->var.bits_per_pixel);
		if (screen_relayout(s) < 0) {
			log_error("Cannot lay the screen out for the mode of %s, exiting",
				  s->fb->path);
			screen_fail(s);
			return -EIO;
		}
	}
	if (s->wipe_pending) {
		screen_wipe_vram_all(s);
		s->wipe_pending = false;
	}
	return 0;
}

void screen_redraw(struct screen *s)
{
	render_invalidate(s->render);
	screen_schedule_frame(s);
}

void screen_release(struct screen *s)
{
	/* fbcon (or another VT's owner) may use the engine from now on */
	if (s->backend && backend_ok(s->backend))
		backend_sync(s->backend);
	/* not shown at a stale place when the VT comes back */
	screen_hide_pointer(s);
	/* no blinking for another VT's console */
	screen_blink_follow(s, false);
	/* the next VT's console shows, not a blanked screen */
	blank_set_active(s->blank, false);
	if (s->fb && (s->blanked_by_driver || s->unblank_pending))
		(void)fbdev_blank(s->fb, false);
	s->blanked_by_driver = s->unblank_pending = false;
}

void screen_wipe(struct screen *s)
{
	/* Nothing of the last user stays in video memory, the text the pan
	 * window left behind off the screen included; if another VT is shown,
	 * when ours comes back. */
	if (vt_is_active(s->vt) && s->fb)
		screen_wipe_vram_all(s);
	else
		s->wipe_pending = true;
}

/* Another program set a mode on the framebuffer while the VT is ours (fbset
 * run in the session): consoled follows it as fbcon does, through the one
 * rebuild path (the grid, the session's size and SIGWINCH, the scroller,
 * which may set its virtual screen again) and a full redraw. A mode it cannot
 * draw in, or one its cells do not fit, is replaced by consoled's previous
 * mode. Returns < 0 if the device cannot be used any more (exiting). */
static int screen_follow_mode(struct screen *s, const struct fb_var_screeninfo *cur)
{
	struct fb_var_screeninfo prev = s->fb->var;
	int r;

	log_info("%s: another program set %ux%u (virtual %ux%u) at %u bpp, following it",
		 s->fb->path, cur->xres, cur->yres, cur->xres_virtual, cur->yres_virtual,
		 cur->bits_per_pixel);
	r = fbdev_adopt(s->fb, cur);
	if (r > 0)
		log_warning("%s: consoled cannot draw in %ux%u at %u bpp; its mode %ux%u at %u bpp "
			    "is back",
			    s->fb->path, cur->xres, cur->yres, cur->bits_per_pixel, prev.xres,
			    prev.yres, prev.bits_per_pixel);
	if (r >= 0 && (r == 0 || render_layout_stale(s->render))) {
		if (s->backend && backend_ok(s->backend) &&
		    backend_mode_changed(s->backend, s->fb) < 0)
			scroller_drop_backend(s->scroller);
		r = screen_relayout(s);
		if (r < 0) {
			log_warning(
			    "%s: the text cells do not fit %ux%u; consoled's mode %ux%u at %u "
			    "bpp is back",
			    s->fb->path, cur->xres, cur->yres, prev.xres, prev.yres,
			    prev.bits_per_pixel);
			r = fbdev_set_mode(s->fb, &prev);
			if (r >= 0 && s->backend && backend_ok(s->backend) &&
			    backend_mode_changed(s->backend, s->fb) < 0)
				scroller_drop_backend(s->scroller);
			if (r >= 0)
				r = screen_relayout(s);
		}
	}
	if (r < 0) {
		log_error("The framebuffer cannot be used any more, exiting");
		screen_fail(s);
		return r;
	}
	if (blank_is_blanked(s->blank))
		render_wipe_vram(s->render); /* still black */
	render_invalidate(s->render);
	return 0;
}

/* The idle timer ran out (blank.h): black is drawn (a driver may take
 * FBIOBLANK and go on showing the picture: QEMU's Cirrus does), then
 * FBIOBLANK powerdown where the driver does it; no frame is drawn until input
 * wakes the screen. */
static void screen_on_blank(void *userdata)
{
	struct screen *s = userdata;
	int r;

	/* not over a compositor that took the VT within the last second (its
	 * release stops the timer) */
	vt_poll(s->vt);
	if (!vt_is_active(s->vt) || !s->fb)
		return; /* (no framebuffer: the next one's acquire starts again) */
	s->unblank_pending = false;
	screen_blink_follow(s, false);
	if (s->scroller)
		render_wipe_vram(s->render); /* the blitter idle first */
	r = fbdev_blank(s->fb, true);
	s->blanked_by_driver = r >= 0;
	log_info("No input for a while: screen blanked (%s)",
		 r >= 0 ? "drawn black, FBIOBLANK powerdown"
			: "drawn black; the driver does not blank");
}

/* Every key event and pointer report: the idle timer starts again,
 * and a blanked screen wakes, drawn whole. The key goes on to the session,
 * as on the kernel's console. */
void screen_activity(struct screen *s)
{
	int on = SD_EVENT_OFF;

	/* a blinking cursor shows at once, for a whole on phase */
	if (s->blink_source)
		sd_event_source_get_enabled(s->blink_source, &on);
	if (on != SD_EVENT_OFF) {
		sd_event_source_set_time(s->blink_source, now_usec() + CURSOR_ON_USEC);
		if (s->cursor_off) {
			s->cursor_off = false;
			screen_schedule_frame(s);
		}
	}
	if (!blank_poke(s->blank))
		return;
	log_info("Input: waking the screen");
	s->unblank_pending = s->blanked_by_driver;
	s->blanked_by_driver = false;
	render_invalidate(s->render);
	screen_schedule_frame(s);
}

/* The overlay changed: the renderer reads it from the next frame on, the
 * vcs mirror follows within its interval. */
static void screen_overlay_changed(struct screen *s)
{
	render_set_overlay(s->render, s->overlay.n ? &s->overlay : NULL);
	if (s->terminal && s->terminal->vcs)
		vcs_damage(s->terminal->vcs);
	screen_schedule_frame(s);
}

void screen_show_band(struct screen *s, const struct overlay_msg *msgs, size_t n, uint64_t skipped,
		      unsigned lines)
{
	if (!s->render)
		return;
	render_set_overlay(s->render, NULL);
	overlay_band(&s->overlay, render_cols(s->render), render_rows(s->render), lines,
		     OVERLAY_BOTTOM, msgs, n, skipped);
	screen_overlay_changed(s);
}

void screen_show_view(struct screen *s, const struct overlay_msg *msgs, size_t n,
		      struct overlay_view_pos *pos, const char *note, const char *close_keys)
{
	if (!s->render)
		return;
	render_set_overlay(s->render, NULL);
	overlay_view(&s->overlay, render_cols(s->render), render_rows(s->render), msgs, n, pos,
		     note, close_keys);
	screen_overlay_changed(s);
}

void screen_hide_overlay(struct screen *s)
{
	if (!s->render || !s->overlay.n)
		return;
	render_set_overlay(s->render, NULL);
	overlay_clear(&s->overlay);
	screen_overlay_changed(s);
}

bool screen_vcs_row(void *userdata, unsigned row, unsigned cols, uint32_t *cps)
{
	struct screen *s = userdata;

	return s->overlay.n && overlay_row_text(&s->overlay, row, cols, cps);
}

/* Ctrl+Plus/Minus/0: a point bigger, smaller, or the configured size. The
 * grid follows the cell, libtsm keeps what fits and the session gets
 * SIGWINCH. */
bool screen_zoom(struct screen *s, int step)
{
	double size = step == 0 ? s->cfg.font_size : fontset_size(s->fonts) + step;
	double old = fontset_size(s->fonts);
	int r;

	/* a relayout may set the device's mode: not under a compositor */
	vt_poll(s->vt);
	if (!vt_is_active(s->vt))
		return true;
	if (!s->fb)
		return true; /* nothing to zoom on */
	if (!fontset_scalable(s->fonts))
		return false;
	if (size == old)
		return true;
	r = fontset_set_size(s->fonts, size);
	if (r < 0) {
		log_info("Font size %.0f points is out of range, staying at %.0f", size, old);
		return true;
	}
	r = screen_relayout(s);
	if (r < 0) {
		/* the cell does not fit the screen: back to the old size */
		fontset_set_size(s->fonts, old);
		r = screen_relayout(s);
	}
	if (r < 0) {
		screen_fail(s);
		return true;
	}
	log_info("Font size %.0f points: %ux%u cells of %ux%u", fontset_size(s->fonts),
		 render_cols(s->render), render_rows(s->render), fontset_cell_width(s->fonts),
		 fontset_cell_height(s->fonts));
	screen_schedule_frame(s);
	return true;
}

/* Ctrl+Logo+Right/Left: a quarter turn clockwise or back; Ctrl+Logo+Up:
 * upright. The grid is laid out again for the turned screen (the one
 * rebuild path), libtsm keeps what fits and the session gets SIGWINCH. */
void screen_rotate(struct screen *s, int step)
{
	enum rotation old = render_rotation(s->render), rot;
	int r;

	rot = step == 0 ? ROTATE_UPRIGHT : rotate_turn(old, step);
	/* a relayout may set the device's mode: not under a compositor */
	vt_poll(s->vt);
	if (!vt_is_active(s->vt) || !s->fb || rot == old)
		return;
	render_set_rotation(s->render, rot);
	r = screen_relayout(s);
	if (r < 0) {
		/* the cell does not fit the turned screen */
		log_info("Cannot turn the screen to %u degrees, staying at %u", rotate_degrees(rot),
			 rotate_degrees(old));
		render_set_rotation(s->render, old);
		r = screen_relayout(s);
	}
	if (r < 0) {
		screen_fail(s);
		return;
	}
	log_info("Screen turned %u degrees: %ux%u cells",
		 rotate_degrees(render_rotation(s->render)), render_cols(s->render),
		 render_rows(s->render));
	screen_schedule_frame(s);
}

/* The screen's resolution in dpi from its size in millimetres, when the
 * driver reports one (most fbdev drivers do not: 0 or -1). */
static double screen_dpi(const struct fbdev *fb)
{
	unsigned mm = fb->var.height;

	if (mm == 0 || mm == UINT32_MAX || mm > 10000)
		return 96;
	return fb->var.yres * 25.4 / mm;
}

int screen_load_fonts(struct screen *s)
{
	struct fontset_config fc = {
	    .file = s->cfg.font_file,
	    .name = s->cfg.font_name,
	    .size = s->cfg.font_size,
	    .dpi = s->cfg.font_dpi ? s->cfg.font_dpi : screen_dpi(s->fb),
	    /* 8 bpp has no colours between two palette entries: no
	     * anti-aliasing, monochrome hinting. */
	    .mono = s->fb->format.indexed,
	};
	int r;

	r = fontset_new(&fc, &s->fonts);
	if (r < 0)
		return log_error_errno(r, "Failed to set up fonts: %m");
	s->fonts_dpi = fc.dpi;
	s->fonts_mono = fc.mono;
	return 0;
}

/* A successor may have another depth (8 bpp: monochrome glyphs) or size in
 * millimetres: the font is opened again for it, at the size it has now (a
 * zoom stays). On failure the old fontset stays. */
static void screen_refit_fonts(struct screen *s)
{
	double dpi = s->cfg.font_dpi ? s->cfg.font_dpi : screen_dpi(s->fb);
	struct fontset_config fc = {
	    .file = s->cfg.font_file,
	    .name = s->cfg.font_name,
	    .size = fontset_scalable(s->fonts) ? fontset_size(s->fonts) : s->cfg.font_size,
	    .dpi = dpi,
	    .mono = s->fb->format.indexed,
	};
	struct fontset *fonts;

	if (fc.dpi == s->fonts_dpi && fc.mono == s->fonts_mono)
		return;
	if (fontset_new(&fc, &fonts) < 0) {
		log_warning("Keeping the font made for the old framebuffer");
		return;
	}
	fontset_free(s->fonts);
	s->fonts = fonts;
	s->fonts_dpi = fc.dpi;
	s->fonts_mono = fc.mono;
}

/* The framebuffer was unregistered (fbwatch.h): nothing more is drawn (a
 * frame in flight was the last), and nothing touches the hardware: the
 * blitter is abandoned without a sync, the mapping and the fd go, and so does
 * the saved boot mode. The terminal, the session and the keyboard go on.
 * One moved to another seat (usable) is left as at exit first
 * (screen_stop(): video memory wiped while it was ours to draw on, the
 * blitter synced and released, the mode found put back). */
static void screen_on_fb_gone(bool usable, void *userdata)
{
	struct screen *s = userdata;

	/* moved to another seat: wiped and its mode back, as at exit */
	if (usable)
		screen_stop(s);
	fbdev_drop_boot_mode(s->fb, BOOTMODE_DIR);
	render_set_device(s->render, NULL, s->fonts);
	scroller_free(s->scroller);
	s->scroller = NULL;
	backend_abandon(s->backend);
	s->backend = NULL;
	fbdev_free(s->fb);
	s->fb = NULL; /* (fbdev_free() took it off the crash handler's list) */
	sd_notifyf(0, "STATUS=Running on %s, no framebuffer (waiting for one)", vt_name(s->vt));
	if (s->cb.gone)
		s->cb.gone(s, s->userdata);
}

/* Its successor: the boot mode is the new device's, the font fits it, its
 * mode is set (fbdev_activate()) and the first acquire of the VT (now, or
 * when it comes back) loads a backend,
 * lays everything out (screen_relayout(): the session gets SIGWINCH if the
 * grid changed) and draws the whole screen. */
static int screen_on_fb_found(struct fbdev *fb, void *userdata)
{
	struct screen *s = userdata;

	s->fb = fb;
	fbdev_use_boot_mode(fb, BOOTMODE_DIR);
	screen_refit_fonts(s);
	render_set_device(s->render, fb, s->fonts);
	sd_notifyf(0, "STATUS=Running on %s, %s (%s)", vt_name(s->vt), fb->path, fb->fix.id);
	/* With another VT in front, fbcon set the device up for it. */
	if (vt_is_active(s->vt)) {
		(void)fbdev_activate(fb);
		s->cb.acquire(s, s->userdata);
	}
	return 0;
}

struct screen *screen_new(const struct screen_config *cfg, const struct palette *palette,
			  const struct screen_callbacks *cb, void *userdata)
{
	struct screen *s = xcalloc(1, sizeof(*s));

	s->cfg = *cfg;
	s->palette = palette;
	s->cb = *cb;
	s->userdata = userdata;
	/* The first time the VT is ours, video memory is wiped of whatever a
	 * predecessor (a consoled killed with SIGKILL) left there. */
	s->wipe_pending = true;
	overlay_init(&s->overlay);
	return s;
}

int screen_open(struct screen *s)
{
	int r;

	/* The driver may come after us at boot: wait for it (bounded). */
	r = fbwait_open(s->cfg.fbdev, s->cfg.seat, s->cfg.fb_wait, s->palette, &s->fb);
	if (r < 0)
		return r;
	/* What the kernel's console gets back on exit: the mode the first
	 * consoled found, not one a killed predecessor left. */
	fbdev_use_boot_mode(s->fb, BOOTMODE_DIR);
	return 0;
}

int screen_new_render(struct screen *s)
{
	int r;

	r = render_new(s->fb, s->fonts, s->palette, &s->render);
	if (r < 0)
		return r;
	if (s->cfg.rotate != ROTATE_UPRIGHT) {
		render_set_rotation(s->render, (enum rotation)s->cfg.rotate);
		if (render_relayout(s->render) < 0) {
			log_warning("--rotate=%u: the cell does not fit the turned screen; upright "
				    "instead",
				    rotate_degrees((enum rotation)s->cfg.rotate));
			render_set_rotation(s->render, ROTATE_UPRIGHT);
			r = render_relayout(s->render);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int screen_start(struct screen *s, sd_event *event, unsigned blank_sec)
{
	int r;

	s->event = event;
	r = fbwatch_new(event, s->fb, s->cfg.fbdev, s->cfg.seat, s->palette,
			&(struct fbwatch_callbacks){screen_on_fb_gone, screen_on_fb_found}, s,
			&s->fbwatch);
	if (r < 0)
		return r;
	r = frame_init(&s->frame, event, screen_on_frame, s);
	if (r < 0)
		return r;
	r = sd_event_add_time(event, &s->pointer_source, CLOCK_MONOTONIC, 0, 10 * USEC_PER_MSEC,
			      screen_on_pointer_idle, s);
	if (r < 0)
		return log_error_errno(r, "Failed to create the pointer timer: %m");
	sd_event_source_set_enabled(s->pointer_source, SD_EVENT_OFF);
	r = sd_event_add_time(event, &s->blink_source, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
			      screen_on_blink, s);
	if (r < 0)
		return log_error_errno(r, "Failed to create the cursor's blink timer: %m");
	sd_event_source_set_enabled(s->blink_source, SD_EVENT_OFF);
	return blank_new(event, blank_sec, screen_on_blank, s, &s->blank);
}

/* The blitter is idle and let go (the plugin's last register writes and
 * port I/O done) before the device goes back to the kernel: the restored mode
 * re-enables fbcon's own acceleration, and cirrusfb uses the same VGA index
 * and data ports. */
static void screen_release_backend(struct screen *s)
{
	if (!s->backend)
		return;
	if (backend_ok(s->backend))
		backend_sync(s->backend);
	if (s->render)
		render_set_scroller(s->render, NULL);
	scroller_free(s->scroller);
	s->scroller = NULL;
	log_info("Blitter backend %s released", backend_name(s->backend));
	backend_free(s->backend);
	s->backend = NULL;
}

void screen_stop(struct screen *s)
{
	if (!s)
		return;
	if (s->key_lines)
		screen_write_key_lines(s);
	/* the next user may get the device through the kernel's console */
	if (s->render && s->scroller && s->fb && s->vt && vt_is_active(s->vt))
		screen_wipe_vram_all(s);
	screen_release_backend(s);
	if (s->fb && s->vt && vt_is_active(s->vt)) {
		/* the kernel's console does not unblank a screen it did not blank */
		if (s->blanked_by_driver || s->unblank_pending)
			(void)fbdev_blank(s->fb, false);
		fbdev_restore(s->fb);
	}
}

void screen_unwatch(struct screen *s)
{
	if (!s)
		return;
	fbwatch_free(s->fbwatch);
	s->fbwatch = NULL;
}

void screen_free(struct screen *s)
{
	if (!s)
		return;
	render_free(s->render);
	scroller_free(s->scroller);
	fbdev_free(s->fb);
	fontset_free(s->fonts);
	frame_fini(&s->frame);
	sd_event_source_unref(s->pointer_source);
	sd_event_source_unref(s->blink_source);
	if (s->key_lines)
		screen_write_key_lines(s);
	free(s->key_lines);
	sd_event_source_unref(s->key_lines_source);
	blank_free(s->blank);
	overlay_fini(&s->overlay);
	free(s);
}
