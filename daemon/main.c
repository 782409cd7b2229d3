/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * consoled: options, start-up order, the event loop and frame pacing.
 *
 * Start-up touches the framebuffer before the VT, so an unusable device is
 * refused before anything changes on the console. Output from the session is
 * coalesced into frames: the first byte after a quiet period is drawn at once,
 * then at most one frame per FRAME_INTERVAL while output keeps coming, so
 * `cat` of a big file does not draw every line. Exit undoes start-up in
 * reverse, the framebuffer's mode and colour map before the VT's text mode.
 */
#define LOG_MODULE "consoled"
#include <errno.h>
#include <libudev.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <xkbcommon/xkbcommon-keysyms.h>

#include <consoled/backend.h>

#include "devices/backend.h"
#include "devices/bootmode.h"
#include "devices/fbdev.h"
#include "devices/fbwait.h"
#include "devices/fbwatch.h"
#include "devices/vt.h"
#include "input/input.h"
#include "input/mouse.h"
#include "options.h"
#include "screen/blank.h"
#include "color/palette.h"
#include "color/pixel.h"
#include "screen/render.h"
#include "screen/scroll.h"
#include "terminal/bell.h"
#include "terminal/restore.h"
#include "terminal/selection.h"
#include "terminal/share.h"
#include "terminal/stream.h"
#include "terminal/term.h"
#include "terminal/vcs.h"
#include "util/crash.h"
#include "util/log.h"
#include "util/util.h"

#define FRAME_INTERVAL_USEC (16 * USEC_PER_MSEC)
/* During a flood (more than a screenful of bytes or of lines came in since
 * the last frame: the frames in between would show text that scrolls away
 * before anyone can read it) the next frame waits FLOOD_RENDER_FACTOR times
 * what a frame of the whole screen takes (a flood's frames redraw all of
 * it: measured on the last frame that drew at least half of the screen, or
 * the last frame's time if that is more), at least FLOOD_GAP_MIN and at
 * most FLOOD_GAP_MAX, counted from the last frame or from the moment the
 * flood was seen, whichever is later: drawing then takes at most about a
 * twentieth of the time where frames are dear (1280x800x32 through DRM
 * fbdev emulation: 10-15 ms a frame under TCG), the rest goes to reading
 * and parsing, and the screen still moves 4 to 10 times a second. A flood
 * that stops is drawn FLOOD_QUIET after its last byte, not at the end of
 * the long gap: a flood shorter than the gap (a cat of a few thousand
 * lines) is drawn once, at its end. */
#define FLOOD_RENDER_FACTOR 20
#define FLOOD_GAP_MIN_USEC (100 * USEC_PER_MSEC)
#define FLOOD_GAP_MAX_USEC (250 * USEC_PER_MSEC)
#define FLOOD_QUIET_USEC FRAME_INTERVAL_USEC
/* Session restore: while output keeps coming, the snapshot is brought up to
 * date at most once per SNAPSHOT_INTERVAL (at a frame, with at most a
 * screenful of new scrollback), the first time SNAPSHOT_INTERVAL after the
 * first frame it lacks, and once more (whole) when no new output follows a
 * frame for SNAPSHOT_QUIET: it lags the screen by at most about
 * SNAPSHOT_INTERVAL during a flood, and holds the screen last drawn and the
 * whole scrollback SNAPSHOT_QUIET after the output stops (restore.h). Not
 * at the first frame of new output: an echo's update waits for the quiet
 * (not before the next key), and a burst of output is parsed first. */
#define SNAPSHOT_INTERVAL_USEC (100 * USEC_PER_MSEC)
#define SNAPSHOT_QUIET_USEC (2 * FRAME_INTERVAL_USEC)
/* A copy made by OSC 52 sets this VT's buffer at once, but is shared with
 * the user's other VTs (share_copied(): logind's files read, the store's
 * file written and renamed: ~80 us natively, some milliseconds under TCG)
 * at most once per SHARE_INTERVAL: the first one after a quiet time at once,
 * the last of a burst SHARE_INTERVAL after the one before (a timer to the
 * millisecond). A paste on this VT shares what is pending first; one on
 * another VT comes later than 100 ms after the copy anyway (a VT switch,
 * then a key). A program can send 372 OSC 52 in one read of the pty (4 KiB:
 * the master's line discipline hands out no more), thousands a second:
 * sharing each held the loop ~30 ms per read natively (81 us each), seconds
 * under TCG; once per FRAME_INTERVAL the stores under TCG still delayed
 * an echo by 40-50 ms (tests/vm/selecttest.py osc52-flood). */
#define SHARE_INTERVAL_USEC (100 * USEC_PER_MSEC)
/* The pointer hides this long after the last pointer event (and at any key). */
#define POINTER_HIDE_USEC (3 * USEC_PER_SEC)

struct manager {
	sd_event *event;
	struct options opts;
	struct palette palette;
	struct fontset *fonts;
	struct fbdev *fb; /* NULL after a removal until a successor (fbwatch.h) */
	struct fbwatch *fbwatch;
	double fonts_dpi; /* what the fontset was made for */
	bool fonts_mono;
	struct vt *vt;
	struct input *input;
	struct term *term;
	struct selection *selection; /* NULL if it could not be made */
	struct share *share;	     /* the buffer shared between one user's VTs */
	/* OSC 52 copies not shared yet (SHARE_INTERVAL): the timer, how many
	 * since the last time the buffer was shared, and when that was. */
	sd_event_source *share_source;
	unsigned share_osc52s;
	uint64_t last_share_usec;
	struct render *render;
	struct scroller *scroller;
	struct backend *backend;
	struct restore *restore; /* session restore: the snapshot, the fd store */
	struct blank *blank;	 /* the idle timer */
	bool blanked_by_driver;	 /* FBIOBLANK powerdown is on */
	bool unblank_pending;	 /* FBIOBLANK unblank after the next frame */
	sd_event_source *frame_source;
	sd_event_source *snapshot_source; /* the update after the last frame */
	sd_event_source *respawn_source;
	uint64_t exits[5]; /* times of the last RESPAWN_BURST session exits */
	unsigned n_exits;
	uint64_t last_frame_usec;
	/* The least time from one frame to the next: FRAME_INTERVAL, longer
	 * during a flood (FLOOD_RENDER_FACTOR); and the session's byte count
	 * at the last frame, which tells a flood. */
	uint64_t frame_gap_usec;
	uint64_t frame_bytes_in, frame_lines_in;
	uint64_t last_render_usec; /* what the last frame that drew took */
	/* What drawing the whole screen takes, from the last frame that drew
	 * at least half of it: a flood's frames redraw all of it. */
	uint64_t full_render_usec;
	uint64_t gap_from_usec; /* the frame gap counts from here */
	uint64_t last_snapshot_usec;
	uint64_t snapshot_behind_usec; /* the first frame the snapshot lacks, or 0 */
	uint64_t snapshot_usec;	       /* time spent updating the snapshot (--stats) */
	bool wipe_pending;	       /* a session ended while another VT was shown */
	int exit_status;
	/* The pointer: where it is (pixels of the screen), whether it is
	 * shown, and the timer that hides it. */
	int pointer_x, pointer_y;
	bool pointer_shown;
	sd_event_source *pointer_source;
	/* The mouse dispatcher: reports, wheel, selection (mouse.h). */
	struct mouse *mouse;
	/* The mirror into the VT's screen buffer (vcs.h); NULL with --vcs=no. */
	struct vcs *vcs;
	struct bell *bell; /* what BEL does (--bell=) */
};

static void manager_schedule_frame(struct manager *m);
static int manager_follow_mode(struct manager *m, const struct fb_var_screeninfo *cur);
static void manager_hide_pointer(struct manager *m);
static void manager_share_flush(struct manager *m);

/* A frame was drawn (or is due while another VT is shown): the snapshot
 * follows now if the last update and the first frame it lacks are
 * SNAPSHOT_INTERVAL old (with at most a screenful of new scrollback: output
 * may be flooding in), and once more when the output has stopped
 * (manager_on_snapshot()) unless that one was complete. */
static void manager_frame_done(struct manager *m)
{
	uint64_t now = now_usec();

	if (!restore_active(m->restore))
		return;
	if (!m->snapshot_behind_usec)
		m->snapshot_behind_usec = now;
	if (now >= m->last_snapshot_usec + SNAPSHOT_INTERVAL_USEC &&
	    now >= m->snapshot_behind_usec + SNAPSHOT_INTERVAL_USEC) {
		bool more;

		m->last_snapshot_usec = now;
		more = restore_update_flood(m->restore, m->term);
		m->snapshot_usec += now_usec() - now;
		if (!more) {
			m->snapshot_behind_usec = 0;
			sd_event_source_set_enabled(m->snapshot_source, SD_EVENT_OFF);
			return;
		}
	}
	sd_event_source_set_time(m->snapshot_source, now + SNAPSHOT_QUIET_USEC);
	sd_event_source_set_enabled(m->snapshot_source, SD_EVENT_ONESHOT);
}

static int manager_on_snapshot(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	int enabled = SD_EVENT_OFF;

	(void)s;
	(void)usec;
	/* A frame is pending: output goes on, that frame updates the
	 * snapshot or waits again. */
	sd_event_source_get_enabled(m->frame_source, &enabled);
	if (enabled != SD_EVENT_OFF || !m->term)
		return 0;
	uint64_t start = now_usec();

	restore_update(m->restore, m->term);
	m->snapshot_behind_usec = 0;
	m->last_snapshot_usec = now_usec();
	m->snapshot_usec += m->last_snapshot_usec - start;
	return 0;
}

static uint64_t manager_screen_cells(struct manager *m)
{
	struct tsm_screen *screen = term_screen(m->term);

	return (uint64_t)tsm_screen_get_width(screen) * tsm_screen_get_height(screen);
}

/* More than a screenful of bytes or of lines since the last frame drawn: a
 * flood (FLOOD_RENDER_FACTOR). Lines tell it first on a wide screen, where
 * a pty's read of 4 KiB scrolls all of it but fills less than half. */
static bool manager_flooding(struct manager *m)
{
	uint64_t bytes = term_bytes_in(m->term), lines = term_lines_in(m->term);
	uint64_t rows = tsm_screen_get_height(term_screen(m->term));
	uint64_t screenful = manager_screen_cells(m);

	return (bytes >= m->frame_bytes_in && bytes - m->frame_bytes_in > screenful) ||
	       (lines >= m->frame_lines_in && lines - m->frame_lines_in >= rows);
}

static uint64_t manager_flood_gap(const struct manager *m)
{
	uint64_t cost = MAX(m->last_render_usec, m->full_render_usec);

	return MIN(MAX(FLOOD_RENDER_FACTOR * cost, FLOOD_GAP_MIN_USEC), FLOOD_GAP_MAX_USEC);
}

/* After a frame that took render_usec: the gap before the next one. A frame
 * that followed a flood was drawn during it: the next waits the flood's gap.
 * Otherwise FRAME_INTERVAL, unless a flood starts before the next frame
 * (manager_schedule_frame()). */
static void manager_pace_frames(struct manager *m, uint64_t render_usec)
{
	m->last_render_usec = render_usec;
	m->frame_gap_usec = manager_flooding(m) ? manager_flood_gap(m) : FRAME_INTERVAL_USEC;
	m->gap_from_usec = m->last_frame_usec;
	m->frame_bytes_in = term_bytes_in(m->term);
	m->frame_lines_in = term_lines_in(m->term);
}

static int manager_on_frame(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	if (!m->term)
		return 0;
	/* a compositor may have taken the VT since the last poll */
	if (m->vt)
		vt_poll(m->vt);
	if (!m->vt || !vt_is_active(m->vt) || !m->fb) {
		/* Nothing is drawn while another VT is shown (or no
		 * framebuffer is there); the snapshot follows the output at the
		 * pace of frames all the same. */
		m->last_frame_usec = now_usec();
		manager_frame_done(m);
		return 0;
	}
	/* Still there? A driver that unregistered it leaves a mapping that
	 * may alias its successor's memory. And another program may have set
	 * a mode on it (fbset in the session): followed before anything is
	 * drawn. */
	struct fb_var_screeninfo cur;
	int r = fbdev_poll(m->fb, &cur);
	if (r == -ENODEV) {
		fbwatch_lost(m->fbwatch);
		return 0;
	}
	if (r < 0)
		log_debug_errno(r, "Failed to read the mode of %s, drawing all the same: %m",
				m->fb->path);
	else if (r > 0 && manager_follow_mode(m, &cur) < 0)
		return 0;
	if (blank_is_blanked(m->blank)) {
		/* Blanked: the terminal follows the output, nothing is drawn
		 * until input wakes the screen (then all of it). */
		m->last_frame_usec = now_usec();
		manager_frame_done(m);
		return 0;
	}
	if (m->selection)
		selection_check(m->selection); /* output may have changed selected cells */
	uint64_t start = now_usec();
	uint64_t drawn = render_get_stats(m->render)->cells_drawn;
	/* when pacing wanted it (the debug line says how late it came; only
	 * a flood's frames get one, not every key's): a flood's frame at the
	 * end of its gap, another when it was set for */
	bool flood = m->frame_gap_usec > FRAME_INTERVAL_USEC;
	uint64_t due = flood ? m->gap_from_usec + m->frame_gap_usec : usec;
	bool again = render_frame(m->render, term_screen(m->term));
	/* A frame that drew nothing (each key calls for one: typing brings
	 * the view back from the scrollback) starts no frame interval, so the
	 * key's echo right after it is drawn at once, not 16 ms later */
	if (again || render_get_stats(m->render)->cells_drawn != drawn) {
		uint64_t bytes = term_bytes_in(m->term) - m->frame_bytes_in;
		uint64_t lines = term_lines_in(m->term) - m->frame_lines_in;
		uint64_t cells = render_get_stats(m->render)->cells_drawn - drawn;
		uint64_t screen_cells = manager_screen_cells(m);

		m->last_frame_usec = now_usec();
		if (cells * 2 >= screen_cells)
			m->full_render_usec = (m->last_frame_usec - start) * screen_cells / cells;
		manager_pace_frames(m, m->last_frame_usec - start);
		if (flood || m->frame_gap_usec > FRAME_INTERVAL_USEC)
			log_debug(
			    "Frame: %llu us to draw, %llu ms after it was due, after %llu bytes "
			    "and %llu lines; next in %llu ms or more",
			    (unsigned long long)(m->last_frame_usec - start),
			    (unsigned long long)((start - MIN(start, due)) / USEC_PER_MSEC),
			    (unsigned long long)bytes, (unsigned long long)lines,
			    (unsigned long long)(m->frame_gap_usec / USEC_PER_MSEC));
	}
	if (m->unblank_pending) {
		/* the screen is drawn: the driver shows it again (the kernel
		 * may use the VGA ports the blitter uses) */
		m->unblank_pending = false;
		if (m->backend && backend_ok(m->backend))
			backend_sync(m->backend);
		(void)fbdev_blank(m->fb, false);
		/* and drawn once more: DRM fbdev emulation (bochs-drm, Linux
		 * 6.1) shows black after FBIOBLANK unblank for what pwrite()
		 * sent while the display was off (the pointer-blank check) */
		render_invalidate(m->render);
		again = true;
	}
	/* the snapshot holds what was just drawn, now or soon */
	manager_frame_done(m);
	if (again)
		manager_schedule_frame(m);
	return 0;
}

static void manager_schedule_frame(struct manager *m)
{
	int enabled = SD_EVENT_OFF;
	uint64_t now = now_usec(), when;

	sd_event_source_get_enabled(m->frame_source, &enabled);
	/* The last flood's gap is over and no frame is due: output after a
	 * quiet time starts afresh (drawn at once, or a new flood's gap) */
	if (enabled == SD_EVENT_OFF && m->frame_gap_usec > FRAME_INTERVAL_USEC &&
	    now >= m->gap_from_usec + m->frame_gap_usec)
		m->frame_gap_usec = FRAME_INTERVAL_USEC;
	/* A flood that starts after a frame (or after a quiet time) is seen
	 * here, before the next frame: that one waits the flood's gap
	 * already, counted from now if the last frame is older (it would
	 * otherwise be drawn at the flood's first read, or one interval
	 * later, with a screenful to draw, and only then start the gap) */
	if (m->frame_gap_usec <= FRAME_INTERVAL_USEC && m->term && manager_flooding(m)) {
		m->frame_gap_usec = manager_flood_gap(m);
		m->gap_from_usec = MAX(m->last_frame_usec, now - MIN(now, FRAME_INTERVAL_USEC));
	}
	when = MAX(now, m->last_frame_usec + FRAME_INTERVAL_USEC);
	if (m->frame_gap_usec > FRAME_INTERVAL_USEC)
		/* a flood's long gap ends early when the bytes stop */
		when = MAX(
		    MIN(MAX(when, m->gap_from_usec + m->frame_gap_usec), now + FLOOD_QUIET_USEC),
		    m->last_frame_usec + FRAME_INTERVAL_USEC);
	else if (enabled != SD_EVENT_OFF)
		return;
	if (enabled != SD_EVENT_OFF) {
		uint64_t due = 0;

		/* A frame already due stays due: setting a time source's time
		 * takes it off sd-event's pending list, and with the pty's
		 * reads dispatched first (each one moving it here) a flood's
		 * frame never came until the flood ended. */
		if (sd_event_source_get_time(m->frame_source, &due) >= 0 &&
		    (due <= now || due == when))
			return;
	}
	sd_event_source_set_time(m->frame_source, when);
	if (enabled == SD_EVENT_OFF)
		sd_event_source_set_enabled(m->frame_source, SD_EVENT_ONESHOT);
}

static bool manager_vcs_source(void *userdata, struct vcs_source *ret)
{
	struct manager *m = userdata;

	if (!m->term)
		return false;
	*ret = (struct vcs_source){term_screen(m->term), term_clusters(m->term)};
	return true;
}

static void manager_on_damage(void *userdata)
{
	struct manager *m = userdata;

	manager_schedule_frame(m);
	vcs_damage(m->vcs);
}

/* ---- selection and paste (selection.h) ---- */

/* Whether the session asked for bracketed paste (DECSET 2004, followed by
 * the stream stage). */
static bool manager_bracketed_paste(struct manager *m)
{
	return stream_mouse_modes(term_stream(m->term)) & STREAM_MOUSE_BRACKETED_PASTE;
}

static void manager_paste(struct manager *m)
{
	char *shared;
	size_t len;

	if (!m->selection || !m->term)
		return;
	manager_share_flush(m);
	/* the last copy on any VT of the session's user (share.h) */
	if (share_get(m->share, term_master_fd(m->term), &shared, &len) > 0) {
		selection_set_buffer(m->selection, shared, len);
		if (shared)
			explicit_bzero(shared, len);
		free(shared);
	}
	selection_paste(m->selection, manager_bracketed_paste(m));
}

/* The buffer was set on this VT: shared with the user's other VTs. */
static void manager_copied(struct manager *m)
{
	size_t len;
	const char *buf = selection_buffer(m->selection, &len);

	if (m->share_osc52s)
		log_debug("OSC 52 set the buffer (%zu bytes; %u OSC 52 since it was last shared)",
			  len, m->share_osc52s);
	m->share_osc52s = 0;
	m->last_share_usec = now_usec();
	sd_event_source_set_enabled(m->share_source, SD_EVENT_OFF);
	if (m->term)
		share_copied(m->share, term_master_fd(m->term), buf, len);
}

/* What OSC 52 copied and is not shared yet is shared now: before a paste
 * reads the shared buffer, and before the session's buffer goes. */
static void manager_share_flush(struct manager *m)
{
	if (m->share_osc52s && m->selection)
		manager_copied(m);
}

static int manager_on_share(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	manager_share_flush(userdata);
	return 0;
}

static void manager_on_osc52(const char *args, size_t len, void *userdata)
{
	struct manager *m = userdata;
	uint64_t now;

	if (!m->selection || !selection_osc52(m->selection, args, len))
		return;
	if (m->share_osc52s++ > 0)
		return; /* the timer runs */
	now = now_usec();
	if (now >= m->last_share_usec + SHARE_INTERVAL_USEC) {
		manager_copied(m);
		return;
	}
	sd_event_source_set_time(m->share_source, m->last_share_usec + SHARE_INTERVAL_USEC);
	sd_event_source_set_enabled(m->share_source, SD_EVENT_ONESHOT);
}

/* ---- end of selection and paste ---- */

static int manager_on_respawn(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	(void)usec;
	/* A new session starts from nothing of the last one: the terminal
	 * (both screens, the scrollback, saved cursors, modes, the stream
	 * stage's state and stand-ins: stream_wipe()), and what was selected
	 * or copied on the old screen while no session ran (the pause of a
	 * throttled respawn) is gone before the new one can paste it. */
	if (m->selection)
		selection_wipe(m->selection);
	mouse_reset(m->mouse);
	if (term_restart(m->term) < 0) {
		m->exit_status = m->opts.session_socket ? EXIT_NO_SESSION_HELPER : EXIT_FAILURE;
		sd_event_exit(m->event, 0);
		return 0;
	}
	/* the cluster table starts empty: stand-ins are handed out again */
	render_set_clusters(m->render, term_clusters(m->term));
	/* the snapshot, written again from the empty terminal */
	restore_session_started(m->restore, m->term);
	/* Nothing of the last user stays in video memory, the text the pan
	 * window left behind off the screen included; if another VT is shown,
	 * when ours comes back. */
	if (vt_is_active(m->vt) && m->fb)
		render_wipe_vram(m->render);
	else
		m->wipe_pending = true;
	sd_notify(0, "STATUS=Session running");
	return 0;
}

/* The session ended (a logout): a new login comes at once, unless sessions
 * keep dying (RESPAWN_BURST within RESPAWN_INTERVAL), then after a pause, so a
 * broken login command does not spin. */
#define RESPAWN_BURST 5
#define RESPAWN_INTERVAL_USEC (10 * USEC_PER_SEC)

static void manager_on_exited(int status, void *userdata)
{
	struct manager *m = userdata;
	uint64_t now = now_usec(), oldest = m->exits[m->n_exits % RESPAWN_BURST];
	uint64_t when = now;
	int r;

	/* Nothing of the session stays in the fd store or the snapshot. */
	restore_session_ended(m->restore);
	/* nor what its user selected or copied (after the user's other VTs
	 * got the last copy, as they would have without SHARE_INTERVAL) */
	manager_share_flush(m);
	if (m->selection)
		selection_wipe(m->selection);
	share_sweep(m->share); /* the user's last session? */
	/* nor what the VT's buffer mirrored of its screen */
	vcs_clear(m->vcs);
	sd_event_source_set_enabled(m->snapshot_source, SD_EVENT_OFF);
	m->snapshot_behind_usec = 0;
	m->exits[m->n_exits++ % RESPAWN_BURST] = now;
	if (m->n_exits >= RESPAWN_BURST && now - oldest < RESPAWN_INTERVAL_USEC) {
		when = oldest + RESPAWN_INTERVAL_USEC;
		log_warning("The session exited %d times within %llu s (last status %d); waiting "
			    "%llu ms before starting it again",
			    RESPAWN_BURST,
			    (unsigned long long)(RESPAWN_INTERVAL_USEC / USEC_PER_SEC), status,
			    (unsigned long long)((when - now) / USEC_PER_MSEC));
		sd_notify(0, "STATUS=Session keeps exiting, waiting before a new login");
	}
	if (!m->respawn_source) {
		r = sd_event_add_time(m->event, &m->respawn_source, CLOCK_MONOTONIC, when, 0,
				      manager_on_respawn, m);
		if (r < 0) {
			log_error_errno(r, "Failed to schedule a new session: %m");
			m->exit_status = EXIT_FAILURE;
			sd_event_exit(m->event, 0);
			return;
		}
	} else
		sd_event_source_set_time(m->respawn_source, when);
	sd_event_source_set_enabled(m->respawn_source, SD_EVENT_ONESHOT);
}

/* Another VT is shown, or another program (a compositor's logind) took ours:
 * no drawing, no blitter, and every input event is dropped from here until
 * manager_on_acquire() (input_set_active(): keys and pointer events). */
static void manager_on_release(void *userdata)
{
	struct manager *m = userdata;

	crash_set_active(0);
	/* fbcon (or another VT's owner) may use the engine from now on */
	if (m->backend && backend_ok(m->backend))
		backend_sync(m->backend);
	if (m->input)
		input_set_active(m->input, false);
	/* not shown at a stale place when the VT comes back */
	manager_hide_pointer(m);
	/* focus out (1004), and a drag in progress ends */
	if (m->mouse)
		mouse_focus(m->mouse, false);
	/* the next VT's console shows, not a blanked screen */
	blank_set_active(m->blank, false);
	if (m->fb && (m->blanked_by_driver || m->unblank_pending))
		(void)fbdev_blank(m->fb, false);
	m->blanked_by_driver = m->unblank_pending = false;
	/* no flash left for the return, no tone going on */
	bell_stop(m->bell);
	sd_event_source_set_enabled(m->frame_source, SD_EVENT_OFF);
	vcs_set_active(m->vcs, false);
}

/* The scroller fits the cell height: set up once the VT is ours, and again
 * after a zoom. */
static int manager_setup_scroller(struct manager *m)
{
	struct scroller_config sc = {
	    .mode = m->opts.scroll_mode,
	    .backend = m->backend && backend_ok(m->backend) ? m->backend : NULL,
	    .calibrate = m->opts.calibrate,
	    .font_height = fontset_cell_height(m->fonts),
	    .text_rows = render_rows(m->render),
	    .rotation = render_rotation(m->render),
	    .flush = m->opts.fb_flush,
	};

	render_set_scroller(m->render, NULL);
	scroller_free(m->scroller);
	m->scroller = NULL;
	if (scroller_new(m->fb, &sc, &m->scroller) < 0)
		return -ENOMEM;
	return render_set_scroller(m->render, m->scroller);
}

/* The pointer on the cell under its pixel, or hidden; drawn at the next
 * frame. Only with a framebuffer, after a layout. */
static void manager_update_pointer(struct manager *m)
{
	int col = -1, row = -1;

	if (!m->render || !m->fb)
		return;
	if (m->pointer_shown && render_cols(m->render) && render_rows(m->render)) {
		/* a pixel in the margins right of or below the grid: its
		 * last cell */
		col = (int)MIN((unsigned)m->pointer_x / fontset_cell_width(m->fonts),
			       render_cols(m->render) - 1);
		row = (int)MIN((unsigned)m->pointer_y / fontset_cell_height(m->fonts),
			       render_rows(m->render) - 1);
	}
	render_set_pointer(m->render, col, row);
	manager_schedule_frame(m);
}

static void manager_hide_pointer(struct manager *m)
{
	if (!m->pointer_shown)
		return;
	m->pointer_shown = false;
	sd_event_source_set_enabled(m->pointer_source, SD_EVENT_OFF);
	manager_update_pointer(m);
}

static int manager_on_pointer_idle(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	manager_hide_pointer(userdata);
	return 0;
}

/* The pointer display part of a pointer event (input.h; only while the VT
 * is ours): the pointer shows on the cell under it, and hides again
 * POINTER_HIDE_USEC after the last event. */
static void manager_on_pointer(struct manager *m, const struct input_pointer_event *ev)
{
	m->pointer_x = ev->x;
	m->pointer_y = ev->y;
	m->pointer_shown = true;
	sd_event_source_set_time(m->pointer_source, now_usec() + POINTER_HIDE_USEC);
	sd_event_source_set_enabled(m->pointer_source, SD_EVENT_ONESHOT);
	manager_update_pointer(m);
}

/* input's pointer callback: the pointer is shown, then the event goes on
 * (selection, paste, wheel, reports: the mouse dispatcher, later). */
static void manager_on_pointer_event(const struct input_pointer_event *glass, void *userdata)
{
	struct manager *m = userdata;
	struct input_pointer_event turned = *glass, *ev = &turned;
	unsigned x, y;

	/* as for keys: not one click, paste or report for the shell after a
	 * compositor took the VT (input drops events only once we know) */
	vt_poll(m->vt);
	if (!vt_is_active(m->vt))
		return;
	/* input moves the pointer over the glass (a mouse moved right goes
	 * right, a tablet's corner is the glass's); the grid is turned */
	if (m->fb && m->render && glass->x >= 0 && glass->y >= 0) {
		rotate_point_to_logical(render_rotation(m->render), m->fb->var.xres,
					m->fb->var.yres, (unsigned)glass->x, (unsigned)glass->y, &x,
					&y);
		turned.x = (int)x;
		turned.y = (int)y;
	}
	manager_on_pointer(m, ev);
	if (m->mouse)
		mouse_handle(m->mouse, ev);
}

/* ---- the mouse dispatcher's callbacks (mouse.h) ---- */

/* Reports, wheel keys and focus events go to the session as typed keys. */
static void manager_mouse_send(const char *bytes, size_t len, void *userdata)
{
	struct manager *m = userdata;

	if (m->term)
		term_send(m->term, bytes, len);
}

/* The wheel on the normal screen: libtsm's scrollback, lines > 0 up. */
static void manager_mouse_scroll_view(int lines, void *userdata)
{
	struct manager *m = userdata;

	if (!m->term)
		return;
	if (lines > 0)
		tsm_screen_sb_up(term_screen(m->term), (unsigned)lines);
	else
		tsm_screen_sb_down(term_screen(m->term), (unsigned)-lines);
	manager_schedule_frame(m);
}

/* Selection and paste: selection.h. */
static void manager_mouse_select_start(unsigned col, int row, unsigned clicks, bool extend,
				       void *userdata)
{
	struct manager *m = userdata;

	if (m->selection)
		selection_start(m->selection, col, row, clicks, extend);
}

static void manager_mouse_select_move(unsigned col, int row, void *userdata)
{
	struct manager *m = userdata;

	if (m->selection)
		selection_move(m->selection, col, row);
}

static void manager_mouse_select_end(void *userdata)
{
	struct manager *m = userdata;

	if (m->selection && selection_end(m->selection))
		manager_copied(m);
}

static void manager_mouse_paste(void *userdata)
{
	manager_paste(userdata);
}

static const struct mouse_callbacks manager_mouse_callbacks = {
    .select_start = manager_mouse_select_start,
    .select_move = manager_mouse_select_move,
    .select_end = manager_mouse_select_end,
    .paste = manager_mouse_paste,
    .scroll_view = manager_mouse_scroll_view,
    .send = manager_mouse_send,
};

/* ---- */

/* Every change of geometry, pixel format or cell size comes here (zoom, a
 * mode the driver adjusted when the VT came back, a handover, a rotation):
 * the renderer's buffers, the scroller (and with it the virtual
 * screen) and the pty's size all follow the device and the font. */
static int manager_relayout(struct manager *m)
{
	int r;

	r = render_relayout(m->render);
	if (r < 0)
		return r;
	r = manager_setup_scroller(m);
	if (r < 0)
		return r;
	if (m->term) {
		unsigned w, h;

		rotate_logical_size(render_rotation(m->render), m->fb->var.xres, m->fb->var.yres,
				    &w, &h);
		term_resize(m->term, render_cols(m->render), render_rows(m->render), w, h);
	}
	/* the pointer lives on the visible screen (input's pixels are the
	 * glass's, turned in manager_on_pointer_event()), on the new grid */
	if (m->input)
		input_set_pointer_area(m->input, m->fb->var.xres, m->fb->var.yres);
	if (m->mouse)
		mouse_set_geometry(m->mouse, fontset_cell_width(m->fonts),
				   fontset_cell_height(m->fonts), render_cols(m->render),
				   render_rows(m->render));
	manager_update_pointer(m);
	return 0;
}

static void manager_on_acquire(void *userdata)
{
	struct manager *m = userdata;
	int r;

	r = m->fb ? fbdev_reacquire(m->fb) : -ENODEV;
	if (r == -ENODEV) {
		/* No screen, or it was unregistered while another VT was
		 * shown (fbwatch.h): keys still go to the session. */
		if (m->input)
			input_set_active(m->input, true);
		fbwatch_lost(m->fbwatch);
		return;
	}
	if (r < 0) {
		log_error("The framebuffer cannot be used any more, exiting");
		m->exit_status = EXIT_FAILURE;
		sd_event_exit(m->event, 0);
		return;
	}
	crash_set_active(1);
	/* Unblanked, whoever blanked it (a consoled killed while blanked). */
	(void)fbdev_blank(m->fb, false);
	m->blanked_by_driver = m->unblank_pending = false;
	blank_set_active(m->blank, true);
	if (m->backend && backend_ok(m->backend) && backend_mode_changed(m->backend, m->fb) < 0)
		scroller_drop_backend(m->scroller);
	/* The scroller may change the device's mode (a taller virtual screen,
	 * FB_VMODE_YWRAP): only once the VT is ours, and from then on
	 * fbdev_reacquire() puts that mode back after every switch. */
	if (!m->scroller) {
		struct backend_config bc = {
		    .name = m->opts.backend,
		};
		if (backend_load(m->fb, &bc, &m->backend) < 0)
			log_warning("Going on without a blitter");
	}
	/* The first time, and whenever the device came back in another mode
	 * than the one everything was laid out for. */
	if (!m->scroller || render_layout_stale(m->render)) {
		if (m->scroller)
			log_info("%s came back as %ux%u at %u bpp: laying the screen out again",
				 m->fb->path, m->fb->var.xres, m->fb->var.yres,
				 m->fb->var.bits_per_pixel);
		if (manager_relayout(m) < 0) {
			log_error("Cannot lay the screen out for the mode of %s, exiting",
				  m->fb->path);
			m->exit_status = EXIT_FAILURE;
			sd_event_exit(m->event, 0);
			return;
		}
	}
	if (m->wipe_pending) {
		render_wipe_vram(m->render);
		m->wipe_pending = false;
	}
	if (m->input)
		input_set_active(m->input, true);
	/* focus in (1004) */
	if (m->mouse)
		mouse_focus(m->mouse, true);
	render_invalidate(m->render);
	manager_schedule_frame(m);
	vcs_set_active(m->vcs, true);
}

/* Another program set a mode on the framebuffer while the VT is ours (fbset
 * run in the session): consoled follows it as fbcon does, through the one
 * rebuild path (the grid, the session's size and SIGWINCH, the scroller,
 * which may set its virtual screen again) and a full redraw. A mode it cannot
 * draw in, or one its cells do not fit, is replaced by consoled's previous
 * mode. Returns < 0 if the device cannot be used any more (exiting). */
static int manager_follow_mode(struct manager *m, const struct fb_var_screeninfo *cur)
{
	struct fb_var_screeninfo prev = m->fb->var;
	int r;

	log_info("%s: another program set %ux%u (virtual %ux%u) at %u bpp, following it",
		 m->fb->path, cur->xres, cur->yres, cur->xres_virtual, cur->yres_virtual,
		 cur->bits_per_pixel);
	r = fbdev_adopt(m->fb, cur);
	if (r > 0)
		log_warning("%s: consoled cannot draw in %ux%u at %u bpp; its mode %ux%u at %u bpp "
			    "is back",
			    m->fb->path, cur->xres, cur->yres, cur->bits_per_pixel, prev.xres,
			    prev.yres, prev.bits_per_pixel);
	if (r >= 0 && (r == 0 || render_layout_stale(m->render))) {
		if (m->backend && backend_ok(m->backend) &&
		    backend_mode_changed(m->backend, m->fb) < 0)
			scroller_drop_backend(m->scroller);
		r = manager_relayout(m);
		if (r < 0) {
			log_warning(
			    "%s: the text cells do not fit %ux%u; consoled's mode %ux%u at %u "
			    "bpp is back",
			    m->fb->path, cur->xres, cur->yres, prev.xres, prev.yres,
			    prev.bits_per_pixel);
			r = fbdev_set_mode(m->fb, &prev);
			if (r >= 0 && m->backend && backend_ok(m->backend) &&
			    backend_mode_changed(m->backend, m->fb) < 0)
				scroller_drop_backend(m->scroller);
			if (r >= 0)
				r = manager_relayout(m);
		}
	}
	if (r < 0) {
		log_error("The framebuffer cannot be used any more, exiting");
		m->exit_status = EXIT_FAILURE;
		sd_event_exit(m->event, 0);
		return r;
	}
	if (blank_is_blanked(m->blank))
		render_wipe_vram(m->render); /* still black */
	render_invalidate(m->render);
	return 0;
}

/* The idle timer ran out (blank.h): black is drawn (a driver may take
 * FBIOBLANK and go on showing the picture: QEMU's Cirrus does), then
 * FBIOBLANK powerdown where the driver does it; no frame is drawn until input
 * wakes the screen. */
static void manager_on_blank(void *userdata)
{
	struct manager *m = userdata;
	int r;

	/* not over a compositor that took the VT within the last second (its
	 * release stops the timer) */
	vt_poll(m->vt);
	if (!vt_is_active(m->vt) || !m->fb)
		return; /* (no framebuffer: the next one's acquire starts again) */
	m->unblank_pending = false;
	if (m->scroller)
		render_wipe_vram(m->render); /* the blitter idle first */
	r = fbdev_blank(m->fb, true);
	m->blanked_by_driver = r >= 0;
	log_info("No input for a while: screen blanked (%s)",
		 r >= 0 ? "drawn black, FBIOBLANK powerdown"
			: "drawn black; the driver does not blank");
}

/* Every key event and pointer report: the idle timer starts again,
 * and a blanked screen wakes, drawn whole. The key goes on to the session,
 * as on the kernel's console. */
static void manager_on_activity(void *userdata)
{
	struct manager *m = userdata;

	if (!blank_poke(m->blank))
		return;
	log_info("Input: waking the screen");
	m->unblank_pending = m->blanked_by_driver;
	m->blanked_by_driver = false;
	render_invalidate(m->render);
	manager_schedule_frame(m);
}

static bool manager_key_is_modifier(uint32_t keysym)
{
	return (keysym >= XKB_KEY_Shift_L && keysym <= XKB_KEY_Hyper_R) ||
	       (keysym >= XKB_KEY_ISO_Lock && keysym <= XKB_KEY_ISO_Last_Group_Lock) ||
	       keysym == XKB_KEY_Mode_switch || keysym == XKB_KEY_Num_Lock;
}

static void manager_on_key(uint32_t keysym, uint32_t ascii, unsigned mods, uint32_t unicode,
			   void *userdata)
{
	struct manager *m = userdata;

	/* typing hides the pointer; a modifier alone does not (Shift+click,
	 * Ctrl+Plus) */
	if (!manager_key_is_modifier(keysym))
		manager_hide_pointer(m);
	/* not one key for the shell after a compositor took the VT */
	vt_poll(m->vt);
	if (!m->term || !vt_is_active(m->vt))
		return;
	/* Shift+Insert pastes (xterm) */
	if (keysym == XKB_KEY_Insert &&
	    (mods & (TSM_SHIFT_MASK | TSM_CONTROL_MASK | TSM_ALT_MASK | TSM_LOGO_MASK)) ==
		TSM_SHIFT_MASK &&
	    m->selection) {
		manager_paste(m);
		return;
	}
	term_handle_key(m->term, keysym, ascii, mods, unicode);
}

static void manager_on_switch_vt(unsigned target, void *userdata)
{
	struct manager *m = userdata;

	vt_activate(m->vt, target);
}

/* Ctrl+Plus/Minus/0: a point bigger, smaller, or the configured size. The
 * grid follows the cell, libtsm keeps what fits and the session gets
 * SIGWINCH. */
static bool manager_on_zoom(int step, void *userdata)
{
	struct manager *m = userdata;
	double size = step == 0 ? m->opts.font_size : fontset_size(m->fonts) + step;
	double old = fontset_size(m->fonts);
	int r;

	/* a relayout may set the device's mode: not under a compositor */
	vt_poll(m->vt);
	if (!vt_is_active(m->vt))
		return true;
	if (!m->fb)
		return true; /* nothing to zoom on */
	if (!fontset_scalable(m->fonts))
		return false;
	if (size == old)
		return true;
	r = fontset_set_size(m->fonts, size);
	if (r < 0) {
		log_info("Font size %.0f points is out of range, staying at %.0f", size, old);
		return true;
	}
	r = manager_relayout(m);
	if (r < 0) {
		/* the cell does not fit the screen: back to the old size */
		fontset_set_size(m->fonts, old);
		r = manager_relayout(m);
	}
	if (r < 0) {
		m->exit_status = EXIT_FAILURE;
		sd_event_exit(m->event, 0);
		return true;
	}
	log_info("Font size %.0f points: %ux%u cells of %ux%u", fontset_size(m->fonts),
		 render_cols(m->render), render_rows(m->render), fontset_cell_width(m->fonts),
		 fontset_cell_height(m->fonts));
	manager_schedule_frame(m);
	return true;
}

/* Ctrl+Logo+Right/Left: a quarter turn clockwise or back; Ctrl+Logo+Up:
 * upright. The grid is laid out again for the turned screen (the one
 * rebuild path), libtsm keeps what fits and the session gets SIGWINCH. */
static void manager_on_rotate(int step, void *userdata)
{
	struct manager *m = userdata;
	enum rotation old = render_rotation(m->render), rot;
	int r;

	rot = step == 0 ? ROTATE_UPRIGHT : rotate_turn(old, step);
	/* a relayout may set the device's mode: not under a compositor */
	vt_poll(m->vt);
	if (!vt_is_active(m->vt) || !m->fb || rot == old)
		return;
	render_set_rotation(m->render, rot);
	r = manager_relayout(m);
	if (r < 0) {
		/* the cell does not fit the turned screen */
		log_info("Cannot turn the screen to %u degrees, staying at %u", rotate_degrees(rot),
			 rotate_degrees(old));
		render_set_rotation(m->render, old);
		r = manager_relayout(m);
	}
	if (r < 0) {
		m->exit_status = EXIT_FAILURE;
		sd_event_exit(m->event, 0);
		return;
	}
	log_info("Screen turned %u degrees: %ux%u cells",
		 rotate_degrees(render_rotation(m->render)), render_cols(m->render),
		 render_rows(m->render));
	manager_schedule_frame(m);
}

static void manager_on_scroll_page(int dir, void *userdata)
{
	struct manager *m = userdata;

	if (m->term)
		term_scroll_page(m->term, dir);
}

static int manager_on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	log_info("Received %s, exiting", strsignal((int)si->ssi_signo));
	sd_event_exit(m->event, 0);
	return 0;
}

static void manager_log_stats(struct manager *m)
{
	if (m->bell) {
		const struct bell_stats *b = bell_get_stats(m->bell);

		log_info("stats: bell=%s bells=%llu flashes=%llu tones=%llu",
			 bell_mode_to_string(bell_get_mode(m->bell)), (unsigned long long)b->bells,
			 (unsigned long long)b->flashes, (unsigned long long)b->tones);
	}
	if (!m->render || !m->scroller)
		return;
	log_info("stats: mode=%s full-screen=%s region=%s",
		 scroll_mode_to_string(scroller_requested(m->scroller)),
		 scroll_mode_to_string(scroller_full_mode(m->scroller)),
		 scroll_mode_to_string(scroller_region_mode(m->scroller)));
	for (int i = 0; i < _SCROLL_MODE_MAX; i++) {
		const struct scroll_counters *c = render_get_counters(m->render, i);

		if (!c->frames && !c->rows_scrolled && !c->pans)
			continue;
		log_info(
		    "stats: strategy=%s frames=%llu rows_scrolled=%llu vram_bytes_written=%llu "
		    "vram_bytes_read=%llu blits=%llu fills=%llu pans=%llu render_usec=%llu",
		    scroll_mode_to_string(i), (unsigned long long)c->frames,
		    (unsigned long long)c->rows_scrolled, (unsigned long long)c->vram_bytes_written,
		    (unsigned long long)c->vram_bytes_read, (unsigned long long)c->blits,
		    (unsigned long long)c->fills, (unsigned long long)c->pans,
		    (unsigned long long)c->render_usec);
	}
	/* where the process's time went: parsing, snapshots (and above:
	 * drawing, below: the mirror); the rest is the event loop, input,
	 * the pty's writes */
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		log_info("stats: cpu user_usec=%llu sys_usec=%llu parse_usec=%llu "
			 "snapshot_usec=%llu",
			 (unsigned long long)ru.ru_utime.tv_sec * USEC_PER_SEC +
			     (unsigned long long)ru.ru_utime.tv_usec,
			 (unsigned long long)ru.ru_stime.tv_sec * USEC_PER_SEC +
			     (unsigned long long)ru.ru_stime.tv_usec,
			 m->term ? (unsigned long long)term_parse_usec(m->term) : 0ULL,
			 (unsigned long long)m->snapshot_usec);
	if (m->vcs) {
		const struct vcs_stats *vs = vcs_get_stats(m->vcs);

		log_info("stats: vcs writes=%llu bytes=%llu failed=%llu usec=%llu",
			 (unsigned long long)vs->writes, (unsigned long long)vs->bytes,
			 (unsigned long long)vs->failed, (unsigned long long)vs->usec);
	}
}

static int manager_on_sigusr1(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)s;
	(void)si;
	manager_log_stats(userdata);
	return 0;
}

/* The screen's resolution in dpi from its size in millimetres, when the
 * driver reports one (most fbdev drivers do not: 0 or -1). */
static double manager_screen_dpi(const struct fbdev *fb)
{
	unsigned mm = fb->var.height;

	if (mm == 0 || mm == UINT32_MAX || mm > 10000)
		return 96;
	return fb->var.yres * 25.4 / mm;
}

static int manager_load_fonts(struct manager *m)
{
	struct fontset_config fc = {
	    .file = m->opts.font_file,
	    .name = m->opts.font_name,
	    .size = m->opts.font_size,
	    .dpi = m->opts.font_dpi ? m->opts.font_dpi : manager_screen_dpi(m->fb),
	    /* 8 bpp has no colours between two palette entries: no
	     * anti-aliasing, monochrome hinting. */
	    .mono = m->fb->format.indexed,
	};
	int r;

	r = fontset_new(&fc, &m->fonts);
	if (r < 0)
		return log_error_errno(r, "Failed to set up fonts: %m");
	m->fonts_dpi = fc.dpi;
	m->fonts_mono = fc.mono;
	return 0;
}

/* A successor may have another depth (8 bpp: monochrome glyphs) or size in
 * millimetres: the font is opened again for it, at the size it has now (a
 * zoom stays). On failure the old fontset stays. */
static void manager_refit_fonts(struct manager *m)
{
	double dpi = m->opts.font_dpi ? m->opts.font_dpi : manager_screen_dpi(m->fb);
	struct fontset_config fc = {
	    .file = m->opts.font_file,
	    .name = m->opts.font_name,
	    .size = fontset_scalable(m->fonts) ? fontset_size(m->fonts) : m->opts.font_size,
	    .dpi = dpi,
	    .mono = m->fb->format.indexed,
	};
	struct fontset *fonts;

	if (fc.dpi == m->fonts_dpi && fc.mono == m->fonts_mono)
		return;
	if (fontset_new(&fc, &fonts) < 0) {
		log_warning("Keeping the font made for the old framebuffer");
		return;
	}
	fontset_free(m->fonts);
	m->fonts = fonts;
	m->fonts_dpi = fc.dpi;
	m->fonts_mono = fc.mono;
}

/* The framebuffer was unregistered (fbwatch.h): nothing more is drawn (a
 * frame in flight was the last), and nothing touches the hardware: the
 * blitter is abandoned without a sync, the mapping and the fd go, and so does
 * the saved boot mode. The terminal, the session and the keyboard go on. */
static void manager_on_fb_gone(void *userdata)
{
	struct manager *m = userdata;

	fbdev_drop_boot_mode(m->fb, BOOTMODE_DIR);
	render_set_device(m->render, NULL, m->fonts);
	scroller_free(m->scroller);
	m->scroller = NULL;
	backend_abandon(m->backend);
	m->backend = NULL;
	fbdev_free(m->fb);
	m->fb = NULL;
	crash_set_active(0);
	sd_notifyf(0, "STATUS=Running on tty%u, no framebuffer (waiting for one)",
		   vt_number(m->vt));
}

/* Its successor: the boot mode is the new device's, the font fits it, its
 * mode is set (fbdev_activate()) and the first acquire of the VT (now, or
 * when it comes back) loads a backend,
 * lays everything out (manager_relayout(): the session gets SIGWINCH if the
 * grid changed) and draws the whole screen. */
static int manager_on_fb_found(struct fbdev *fb, void *userdata)
{
	struct manager *m = userdata;

	m->fb = fb;
	fbdev_use_boot_mode(fb, BOOTMODE_DIR);
	manager_refit_fonts(m);
	render_set_device(m->render, fb, m->fonts);
	sd_notifyf(0, "STATUS=Running on tty%u, %s (%s)", vt_number(m->vt), fb->path, fb->fix.id);
	/* With another VT in front, fbcon set the device up for it. */
	if (vt_is_active(m->vt)) {
		(void)fbdev_activate(fb);
		manager_on_acquire(m);
	}
	return 0;
}

/* ---- the bell (bell.h) ---- */

static void manager_on_bell_flash(bool on, void *userdata)
{
	struct manager *m = userdata;

	if (m->render)
		render_set_flash(m->render, on);
	manager_schedule_frame(m);
}

/* Every speaker among the input devices, else the VT's KDMKTONE (which
 * the kernel plays on the EV_SND devices its keyboard handler has). */
static int manager_on_bell_tone(unsigned hz, unsigned ms, void *userdata)
{
	struct manager *m = userdata;
	int r = m->input ? input_sound(m->input, hz) : -ENODEV;

	if (r < 0 && m->vt)
		r = vt_tone(m->vt, hz, ms);
	return r < 0 ? r : 0;
}

static void manager_on_bell(unsigned count, void *userdata)
{
	struct manager *m = userdata;
	bool visible = m->vt && vt_is_active(m->vt) && m->fb && !blank_is_blanked(m->blank);

	bell_ring(m->bell, count, visible);
}

static int manager_start(struct manager *m)
{
	static const int exit_signals[] = {SIGTERM, SIGINT, SIGHUP};
	sigset_t mask;
	int r;

	if (palette_init(&m->palette, m->opts.palette, "/sys/module/vt/parameters"))
		log_debug("Console colours from /sys/module/vt/parameters");
	palette_set_colors(&m->palette, m->opts.colors, m->opts.colors_set);

	/* The driver may come after us at boot: wait for it (bounded). */
	r = fbwait_open(m->opts.fbdev, m->opts.fb_wait, &m->palette, &m->fb);
	if (r < 0) {
		m->exit_status = EXIT_NO_FRAMEBUFFER;
		return r;
	}
	/* What the kernel's console gets back on exit: the mode the first
	 * consoled found, not one a killed predecessor left. */
	fbdev_use_boot_mode(m->fb, BOOTMODE_DIR);
	r = manager_load_fonts(m);
	if (r < 0)
		return r;
	r = render_new(m->fb, m->fonts, &m->palette, &m->render);
	if (r == -ERANGE)
		/* the same font on the same screen next time: no restart */
		m->exit_status = EXIT_FONT_TOO_LARGE;
	if (r < 0)
		return r;
	if (m->opts.rotate != ROTATE_UPRIGHT) {
		render_set_rotation(m->render, (enum rotation)m->opts.rotate);
		if (render_relayout(m->render) < 0) {
			log_warning("--rotate=%u: the cell does not fit the turned screen; upright "
				    "instead",
				    rotate_degrees((enum rotation)m->opts.rotate));
			render_set_rotation(m->render, ROTATE_UPRIGHT);
			r = render_relayout(m->render);
			if (r < 0)
				return r;
		}
	}

	r = sd_event_default(&m->event);
	if (r < 0)
		return log_error_errno(r, "Failed to create the event loop: %m");
	/* Under systemd with WatchdogSec=, the loop pings the watchdog. */
	r = sd_event_set_watchdog(m->event, true);
	if (r < 0)
		log_warning_errno(r, "Failed to set up the watchdog, ignoring: %m");

	sigemptyset(&mask);
	for (unsigned i = 0; i < ELEMENTSOF(exit_signals); i++)
		sigaddset(&mask, exit_signals[i]);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = sd_event_add_signal(m->event, NULL, SIGUSR1, manager_on_sigusr1, m);
	if (r < 0)
		return log_error_errno(r, "Failed to watch SIGUSR1: %m");
	for (unsigned i = 0; i < ELEMENTSOF(exit_signals); i++) {
		r = sd_event_add_signal(m->event, NULL, exit_signals[i], manager_on_signal, m);
		if (r < 0)
			return log_error_errno(r, "Failed to watch signals: %m");
	}
	crash_install_handlers();
	/* Session restore under systemd: a crash leaves the last frame for the
	 * consoled started next (consoled-fallback@.service puts the text mode
	 * back if none is). */
	crash_set_keep_display(m->opts.session_restore && m->opts.session_socket &&
			       getenv("NOTIFY_SOCKET"));
	(void)crash_add_test_hooks(m->event);

	r = fbwatch_new(m->event, m->fb, m->opts.fbdev, &m->palette,
			&(struct fbwatch_callbacks){manager_on_fb_gone, manager_on_fb_found}, m,
			&m->fbwatch);
	if (r < 0)
		return r;

	/* to the millisecond: with sd-event's default accuracy (250 ms) a
	 * frame due at the end of a flood could wait that long */
	r = sd_event_add_time(m->event, &m->frame_source, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
			      manager_on_frame, m);
	if (r < 0)
		return log_error_errno(r, "Failed to create the frame timer: %m");
	sd_event_source_set_enabled(m->frame_source, SD_EVENT_OFF);
	/* to the millisecond (sd-event's default accuracy is 250 ms) */
	r = sd_event_add_time(m->event, &m->snapshot_source, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
			      manager_on_snapshot, m);
	if (r < 0)
		return log_error_errno(r, "Failed to create the snapshot timer: %m");
	sd_event_source_set_enabled(m->snapshot_source, SD_EVENT_OFF);
	r = sd_event_add_time(m->event, &m->pointer_source, CLOCK_MONOTONIC, 0, 10 * USEC_PER_MSEC,
			      manager_on_pointer_idle, m);
	if (r < 0)
		return log_error_errno(r, "Failed to create the pointer timer: %m");
	sd_event_source_set_enabled(m->pointer_source, SD_EVENT_OFF);
	/* to the millisecond (SHARE_INTERVAL) */
	r = sd_event_add_time(m->event, &m->share_source, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
			      manager_on_share, m);
	if (r < 0)
		return log_error_errno(r, "Failed to create the share timer: %m");
	sd_event_source_set_enabled(m->share_source, SD_EVENT_OFF);
	r = blank_new(m->event,
		      m->opts.blank_sec == OPTIONS_BLANK_KERNEL
			  ? blank_kernel_timeout(BLANK_KERNEL_SETTING)
			  : m->opts.blank_sec,
		      manager_on_blank, m, &m->blank);
	if (r < 0)
		return r;

	r = bell_new(m->event, m->opts.bell,
		     &(struct bell_callbacks){manager_on_bell_flash, manager_on_bell_tone}, m,
		     &m->bell);
	if (r < 0)
		return r;

	r = vt_open(m->event, m->opts.vt, m->opts.switchvt,
		    &(struct vt_callbacks){manager_on_release, manager_on_acquire}, m, &m->vt);
	if (r < 0) {
		m->exit_status = EXIT_NO_VT;
		return r;
	}
	crash_set_active(vt_is_active(m->vt));

	/* A session that the last consoled left in systemd's fd store is
	 * adopted; without one (or if its snapshot is bad) a new one starts. */
	struct restore_config rc = {
	    .enabled = m->opts.session_restore,
	    .store = m->opts.session_restore && m->opts.session_socket && getenv("NOTIFY_SOCKET"),
	    .sb_size = m->opts.sb_size,
	};
	restore_new(&rc, &m->restore);
	struct term_adopt adopt;
	struct term_config tc = {
	    .cols = render_cols(m->render),
	    .rows = render_rows(m->render),
	    .width_px =
		rotate_sideways(render_rotation(m->render)) ? m->fb->var.yres : m->fb->var.xres,
	    .height_px =
		rotate_sideways(render_rotation(m->render)) ? m->fb->var.xres : m->fb->var.yres,
	    .argv = m->opts.login_argv,
	    .term = m->opts.term,
	    .session_socket = m->opts.session_socket,
	    .sb_size = m->opts.sb_size,
	    .vt = vt_number(m->vt),
	    .truecolor = !m->fb->format.indexed,
	    .palette = &m->palette,
	    .autologin = m->opts.autologin,
	};
	if (restore_handed(m->restore, &adopt)) {
		tc.adopt = &adopt;
		r = term_new(m->event, &tc,
			     &(struct term_callbacks){manager_on_damage, manager_on_exited}, m,
			     &m->term);
		restore_handed_done(m->restore, r >= 0, r);
		tc.adopt = NULL;
	}
	if (!m->term)
		r = term_new(m->event, &tc,
			     &(struct term_callbacks){manager_on_damage, manager_on_exited}, m,
			     &m->term);
	if (r < 0) {
		if (m->opts.session_socket)
			m->exit_status = EXIT_NO_SESSION_HELPER;
		return r;
	}
	render_set_clusters(m->render, term_clusters(m->term));
	term_set_bell(m->term, manager_on_bell, m);
	restore_session_started(m->restore, m->term);
	if (!m->share)
		share_new(m->event, SHARE_DIR, &m->share);
	if (selection_new(m->term, m->opts.word_chars, &m->selection) >= 0)
		term_set_osc52(m->term, manager_on_osc52, m);
	else
		log_warning("No mouse selection");
	/* the mouse follows the term's modes (the stream stage's) */
	r = mouse_new(term_stream(m->term), &manager_mouse_callbacks, m, &m->mouse);
	if (r < 0)
		return log_error_errno(r, "Failed to set up the mouse: %m");
	/* made active by manager_on_acquire(); without it, no mirror */
	if (m->opts.vcs)
		(void)vcs_new(m->event, vt_number(m->vt), manager_vcs_source, m, &m->vcs);

	struct input_config ic = {
	    .model = m->opts.xkb_model,
	    .layout = m->opts.xkb_layout,
	    .variant = m->opts.xkb_variant,
	    .options = m->opts.xkb_options,
	    .repeat_delay_ms = m->opts.repeat_delay_ms,
	    .repeat_rate_hz = m->opts.repeat_rate_hz,
	    .pointer = m->opts.mouse,
	    .pointer_speed = m->opts.mouse_speed,
	    .compose_file = m->opts.compose_file,
	    .sound = m->opts.bell == BELL_SOUND,
	};
	r = input_new(m->event, &ic,
		      &(struct input_callbacks){manager_on_key, manager_on_switch_vt,
						manager_on_scroll_page, manager_on_zoom,
						manager_on_activity, manager_on_pointer_event,
						manager_on_rotate},
		      m, &m->input);
	if (r < 0)
		return r;

	if (vt_is_active(m->vt))
		manager_on_acquire(m);
	return 0;
}

/* The blitter is idle and let go (the plugin's last register writes and
 * port I/O done) before the device goes back to the kernel: the restored mode
 * re-enables fbcon's own acceleration, and cirrusfb uses the same VGA index
 * and data ports. */
static void manager_release_backend(struct manager *m)
{
	if (!m->backend)
		return;
	if (backend_ok(m->backend))
		backend_sync(m->backend);
	if (m->render)
		render_set_scroller(m->render, NULL);
	scroller_free(m->scroller);
	m->scroller = NULL;
	log_info("Blitter backend %s released", backend_name(m->backend));
	backend_free(m->backend);
	m->backend = NULL;
}

static void manager_stop(struct manager *m)
{
	/* A compositor that took the VT within the last second keeps the
	 * framebuffer as it is: no wipe, no mode restored (vt_free() leaves
	 * the VT's mode alone too). */
	if (m->vt)
		vt_poll(m->vt);
	if (m->opts.stats)
		manager_log_stats(m);
	bell_stop(m->bell); /* a tone going on ends with us */
	fbwatch_free(m->fbwatch);
	input_free(m->input);
	mouse_free(m->mouse);
	/* The last output is in the snapshot that the store keeps. */
	restore_update(m->restore, m->term);
	manager_share_flush(m);
	selection_free(m->selection);
	share_free(m->share);
	term_free(m->term);
	restore_free(m->restore);
	/* the VT's buffer cleared while the VT is still in graphics mode */
	vcs_free(m->vcs);
	/* the next user may get the device through the kernel's console */
	if (m->render && m->scroller && m->vt && vt_is_active(m->vt))
		render_wipe_vram(m->render);
	manager_release_backend(m);
	if (m->fb && m->vt && vt_is_active(m->vt)) {
		/* the kernel's console does not unblank a screen it did not blank */
		if (m->blanked_by_driver || m->unblank_pending)
			(void)fbdev_blank(m->fb, false);
		fbdev_restore(m->fb);
	}
	vt_free(m->vt);
	render_free(m->render);
	scroller_free(m->scroller);
	fbdev_free(m->fb);
	fontset_free(m->fonts);
	sd_event_source_unref(m->frame_source);
	sd_event_source_unref(m->snapshot_source);
	sd_event_source_unref(m->respawn_source);
	sd_event_source_unref(m->pointer_source);
	sd_event_source_unref(m->share_source);
	blank_free(m->blank);
	bell_free(m->bell);
	sd_event_unref(m->event);
}

/* --list-backends: the plugins, and whether each matches the framebuffer.
 * Without --fbdev a machine without a framebuffer (a container, a build
 * host) is no error: the plugins are listed all the same, "(no
 * framebuffer)", and the status is 0. A framebuffer named with --fbdev that
 * cannot be opened is: the answer would not be about it (status 3, as at a
 * start). */
static int manager_list_backends(const char *fbdev)
{
	_cleanup_(freep) char *path = NULL;
	struct palette palette;
	struct fbdev *fb = NULL;
	int r = 0;

	palette_init(&palette, PALETTE_LINUX, NULL);
	if (fbdev) {
		r = fbdev_open(fbdev, &palette, &fb);
	} else {
		struct udev *udev = udev_new();

		path = udev ? fbwait_first_node(udev) : NULL;
		udev_unref(udev);
		if (path)
			r = fbdev_open(path, &palette, &fb);
		else
			log_info("No framebuffer: the plugins are listed without a probe");
	}
	backend_list(r < 0 ? NULL : fb, stdout);
	fbdev_free(fb);
	return r < 0 ? EXIT_NO_FRAMEBUFFER : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	/* The first time the VT is ours, video memory is wiped of whatever a
	 * predecessor (a consoled killed with SIGKILL) left there. */
	struct manager m = {.exit_status = EXIT_SUCCESS, .wipe_pending = true};
	int r;

	if (options_parse(argc, argv, &options_system_files, &m.opts) < 0)
		return EXIT_USAGE;
	switch (m.opts.action) {
	case OPTIONS_HELP:
		options_help(stdout);
		options_fini(&m.opts);
		return 0;
	case OPTIONS_VERSION:
		printf("consoled %s\n", CONSOLED_VERSION);
		options_fini(&m.opts);
		return 0;
	case OPTIONS_LIST_BACKENDS:
		r = manager_list_backends(m.opts.fbdev);
		options_fini(&m.opts);
		return r;
	case OPTIONS_RUN:
		break;
	}
	if (m.opts.verbose)
		log_set_max_level(LOG_DEBUG);

	r = manager_start(&m);
	if (r >= 0) {
		/* Ready whether or not the VT is in front: VT, framebuffer, pty
		 * and session are set up. */
		sd_notifyf(0, "READY=1\nSTATUS=Running on tty%u, %s (%s)", vt_number(m.vt),
			   m.fb->path, m.fb->fix.id);
		r = sd_event_loop(m.event);
		if (r < 0)
			log_error_errno(r, "Event loop failed: %m");
		sd_notify(0, "STOPPING=1");
	}
	manager_stop(&m);
	options_fini(&m.opts);
	if (r < 0)
		return m.exit_status != EXIT_SUCCESS ? m.exit_status : EXIT_FAILURE;
	return m.exit_status;
}
