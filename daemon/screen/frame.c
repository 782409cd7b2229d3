/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frame scheduling and flood pacing (frame.h).
 */
#define LOG_MODULE "consoled"
#include "frame.h"

#include "../util/log.h"

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
/* A key typed into a flood (a shell's output scrolling while its user
 * types, Ctrl+C): for FLOOD_KEY_USEC after it, frames come at the pace of
 * quiet output (FRAME_INTERVAL), not at the end of the flood's gap, so the
 * key's echo, parsed behind what the pty held, shows within a frame or two
 * of its arrival, not 100-250 ms later (the latency benchmark's echo while
 * the same terminal scrolls: tests/bench/README.md). A window, not one
 * frame: the echo's arrival is not known (it comes among the flood's
 * bytes), and under TCG the session took longer than one frame interval
 * to write it for a tenth of the keys (bochs, 100 keys: one frame 16 ms
 * after the key gave 33.9/687.5 ms median/p99, the gap alone 253/634).
 * At most FLOOD_KEY_USEC / FRAME_INTERVAL whole frames per key, and a
 * frame waits at least what the last one of the whole screen took: where
 * that is long (3840x2160 under TCG: 145 ms) frames back to back left one
 * read of the pty between them, and with keys typed 20-30 ms apart the
 * echo, behind what the pty held, took 546/631 ms median/p99 (fbcon
 * 9.0/21.5). */
#define FLOOD_KEY_USEC (100 * USEC_PER_MSEC)
/* Where the output, a flood or not, scrolls a region smaller than the
 * screen (a status line, an editor's or a chat client's input line below
 * it: the echo while the terminal scrolls in the latency benchmark), a
 * key's frames are quick ones, QUICK_INTERVAL apart whenever output came,
 * until one draws a row beside the region (the echo, most likely): they
 * draw those rows and leave the region, a whole screen of pixels, to the
 * next frame at the pace of the output, which they do not move
 * (render_defer_region()). The echo then waits for no frame interval and
 * no whole frame, only, by chance, for one in progress: with frames
 * FRAME_INTERVAL after the last one's end, an echo read right after a
 * frame waited 16 ms and the frame (bochs 1280x800 under TCG: 23.8/34.1
 * ms median/p99 where fbcon took 2.1/4.6). */
#define QUICK_INTERVAL_USEC (4 * USEC_PER_MSEC)

/* A frame due at once: drawn from the defer source, as the timer would. */
static int frame_on_now(sd_event_source *src, void *userdata)
{
	struct frame *f = userdata;

	(void)src;
	return f->draw(f->source, f->now_due, f->draw_data);
}

/* A frame's source (r: its creation's result), off, before whatever else is
 * due at the same time: the vcs mirror and the snapshot follow the same
 * output (both due at once after a quiet time) and took 3 ms at 160x50
 * under TCG before an echo's frame when sd-event happened to dispatch them
 * first. */
static int frame_source_ready(sd_event_source *src, int r, const char *what)
{
	if (r < 0)
		return log_error_errno(r, "Failed to create the frame's %s: %m", what);
	r = sd_event_source_set_priority(src, SD_EVENT_PRIORITY_IMPORTANT);
	if (r < 0)
		return log_error_errno(r, "Failed to set the frame %s's priority: %m", what);
	sd_event_source_set_enabled(src, SD_EVENT_OFF);
	return 0;
}

int frame_init(struct frame *f, sd_event *event, sd_event_time_handler_t draw, void *userdata)
{
	int r;

	f->draw = draw;
	f->draw_data = userdata;
	/* to the microsecond: with sd-event's default accuracy (250 ms) a
	 * frame due at the end of a flood could wait that long, and with 1 ms
	 * sd-event arms the timer anywhere in [due, due + 1 ms], so the frame
	 * of an echo after a quiet time, due at once, slept 0.5 ms on average
	 * and woke by a timer interrupt (bochs under TCG: 1.7 ms median from
	 * the parse to the frame) */
	r = sd_event_add_time(event, &f->source, CLOCK_MONOTONIC, 0, 1, draw, userdata);
	r = frame_source_ready(f->source, r, "timer");
	if (r < 0)
		return r;
	/* A frame due at once (the first output after a quiet time: an
	 * echo) runs from a defer source at the loop's next turn, which
	 * sd-event dispatches without arming a timerfd, waiting in epoll and
	 * reading the timerfd back: three system calls of an echo's frame
	 * wait (0.3-1.3 ms from the parse to the frame under TCG). */
	r = sd_event_add_defer(event, &f->now_source, frame_on_now, f);
	return frame_source_ready(f->now_source, r, "defer source");
}

void frame_fini(struct frame *f)
{
	f->source = sd_event_source_unref(f->source);
	f->now_source = sd_event_source_unref(f->now_source);
}

static bool frame_now_pending(const struct frame *f)
{
	int enabled = SD_EVENT_OFF;

	sd_event_source_get_enabled(f->now_source, &enabled);
	return enabled != SD_EVENT_OFF;
}

bool frame_pending(const struct frame *f)
{
	int enabled = SD_EVENT_OFF;

	sd_event_source_get_enabled(f->source, &enabled);
	return enabled != SD_EVENT_OFF || frame_now_pending(f);
}

bool frame_draw_due(struct frame *f)
{
	if (!frame_now_pending(f))
		return false;
	sd_event_source_set_enabled(f->now_source, SD_EVENT_OFF);
	f->draw(f->source, f->now_due, f->draw_data);
	return true;
}

void frame_cancel(struct frame *f)
{
	sd_event_source_set_enabled(f->source, SD_EVENT_OFF);
	sd_event_source_set_enabled(f->now_source, SD_EVENT_OFF);
}

bool frame_flood(const struct frame *f)
{
	return f->frame_gap_usec > FRAME_INTERVAL_USEC;
}

static uint64_t frame_screen_cells(struct term *term)
{
	struct tsm_screen *screen = term_screen(term);

	return (uint64_t)tsm_screen_get_width(screen) * tsm_screen_get_height(screen);
}

/* More than a screenful of bytes or of lines since the last frame drawn: a
 * flood (FLOOD_RENDER_FACTOR). Lines tell it first on a wide screen, where
 * a pty's read of 4 KiB scrolls all of it but fills less than half. On a
 * tall screen FLOOD_LINES is enough: between two frames a `cat` gets no
 * more than the pty holds through to consoled, one or two reads of 4 KiB
 * (65-135 lines of 60 bytes), so 135 rows (3840x2160 at 8x16) were seldom
 * reached and a flood went on drawing a frame every interval, each a
 * whole screen (50-140 ms under TCG): 15-30 frames took 1.4-4.2 s of a
 * 20000-line cat of 2.2-5.6 s there, against 3-5 frames at 1280x800. */
#define FLOOD_LINES 50

static bool frame_flooding(struct frame *f, struct term *term)
{
	uint64_t bytes = term_bytes_in(term), lines = term_lines_in(term);
	uint64_t rows = MIN(tsm_screen_get_height(term_screen(term)), FLOOD_LINES);
	uint64_t screenful = frame_screen_cells(term);

	return (bytes >= f->frame_bytes_in && bytes - f->frame_bytes_in > screenful) ||
	       (lines >= f->frame_lines_in && lines - f->frame_lines_in >= rows);
}

static uint64_t frame_flood_gap(const struct frame *f)
{
	uint64_t cost = MAX(f->last_render_usec, f->full_render_usec);

	return MIN(MAX(FLOOD_RENDER_FACTOR * cost, FLOOD_GAP_MIN_USEC), FLOOD_GAP_MAX_USEC);
}

/* A flood has stopped once no byte came for FLOOD_QUIET, or for twice what
 * a frame of the whole screen takes if that is more (at most the gap): the
 * screen's pixels reach the glass after the frame (DRM fbdev emulation's
 * worker copies them to video memory, a whole 3840x2160x32 screen after a
 * flood's frame), and while that takes the guest's CPU no byte comes. With
 * FLOOD_QUIET alone a flood's frame at 4K came after one or two 4 KiB reads
 * of the pty, not at the end of its 250 ms gap (bochs under TCG: 20-40
 * frames of 50-300 ms in a 20000-line cat). */
static uint64_t frame_flood_quiet(const struct frame *f)
{
	return MIN(MAX(FLOOD_QUIET_USEC, 2 * f->full_render_usec), f->frame_gap_usec);
}

/* After a frame that took render_usec: the gap before the next one. A frame
 * that followed a flood was drawn during it: the next waits the flood's gap.
 * Otherwise FRAME_INTERVAL, unless a flood starts before the next frame
 * (frame_schedule()). */
static void frame_pace(struct frame *f, struct term *term, uint64_t render_usec)
{
	f->last_render_usec = render_usec;
	f->frame_gap_usec = frame_flooding(f, term) ? frame_flood_gap(f) : FRAME_INTERVAL_USEC;
	f->gap_from_usec = f->last_frame_usec;
	f->frame_bytes_in = term_bytes_in(term);
	f->frame_lines_in = term_lines_in(term);
}

void frame_drawn(struct frame *f, struct term *term, uint64_t start, uint64_t due, bool flood,
		 uint64_t cells)
{
	uint64_t bytes = term_bytes_in(term) - f->frame_bytes_in;
	uint64_t lines = term_lines_in(term) - f->frame_lines_in;
	uint64_t screen_cells = frame_screen_cells(term);

	f->last_frame_usec = now_usec();
	f->last_start_usec = start;
	if (cells * 2 >= screen_cells)
		f->full_render_usec = (f->last_frame_usec - start) * screen_cells / cells;
	frame_pace(f, term, f->last_frame_usec - start);
	if (flood || f->frame_gap_usec > FRAME_INTERVAL_USEC)
		log_debug("Frame: %llu us to draw, %llu ms after it was due, after %llu bytes "
			  "and %llu lines; next in %llu ms or more",
			  (unsigned long long)(f->last_frame_usec - start),
			  (unsigned long long)((start - MIN(start, due)) / USEC_PER_MSEC),
			  (unsigned long long)bytes, (unsigned long long)lines,
			  (unsigned long long)(f->frame_gap_usec / USEC_PER_MSEC));
}

/* A key's quick frame (QUICK_INTERVAL): when the last frame moved a region
 * smaller than the screen, output came since the last quick frame, and
 * none has drawn a row beside the region since the key (its echo, most
 * likely). Moves *when earlier and returns true if it is sooner. */
static bool frame_quick_time(const struct frame *f, struct term *term, uint64_t now, uint64_t *when)
{
	const struct term_key_trace *key = term ? term_key_trace(term) : NULL;
	uint64_t q;

	if (!f->region_moving || !key || !key->key_usec || now >= key->key_usec + FLOOD_KEY_USEC ||
	    key->key_usec == f->quick_key_done || term_bytes_in(term) == f->quick_bytes_in)
		return false;
	q = MAX(now, MAX(f->last_frame_usec, f->last_quick_usec) + QUICK_INTERVAL_USEC);
	if (q >= *when)
		return false;
	*when = q;
	return true;
}

void frame_region_seen(struct frame *f, bool region)
{
	f->region_moving = region;
}

bool frame_quick(const struct frame *f)
{
	return f->quick;
}

void frame_quick_drawn(struct frame *f, struct term *term)
{
	f->quick = false;
	f->last_quick_usec = now_usec();
	f->quick_bytes_in = term_bytes_in(term);
}

void frame_beside_drawn(struct frame *f, struct term *term)
{
	const struct term_key_trace *key = term_key_trace(term);

	f->quick_key_done = key->key_usec;
}

/* Output of less than a row of bytes and at most one line: what follows
 * a flood that stopped (the prompt after a Ctrl+C most likely), not more
 * of it. */
static bool output_small(struct term *term, uint64_t bytes, uint64_t lines)
{
	return bytes < tsm_screen_get_width(term_screen(term)) && lines <= 1;
}

/* Since the flood's last frame only small output came: the pty had
 * nothing more when that frame ended (a flood's first read after a frame
 * brings what the pty held meanwhile, 4 KiB), so the flood has stopped.
 * For a key's frames (FLOOD_KEY_USEC) that output is drawn at once, not a
 * whole frame's time after the flood's: the prompt after Ctrl+C waited
 * FRAME_INTERVAL (16 ms) after the flood's last frame, a whole 1280x800
 * screen under TCG (bochs: 53 ms median from the Ctrl+C to a still prompt,
 * fbcon 11-14 ms). Should the flood go on, the next frame finds more than
 * a screenful since this one and is paced as the flood's again. */
static bool frame_flood_stopped(const struct frame *f, struct term *term)
{
	return output_small(term, term_bytes_in(term) - f->frame_bytes_in,
			    term_lines_in(term) - f->frame_lines_in);
}

/* The read that calls frame_schedule() brought small output: after a key
 * that signals the session's foreground (Ctrl+C) in a flood, the flood
 * has stopped and this is what follows it (the shell's prompt). */
static bool frame_read_small(struct term *term, uint64_t bytes, uint64_t lines)
{
	return bytes > 0 && output_small(term, bytes, lines);
}

void frame_schedule(struct frame *f, struct term *term)
{
	int enabled = SD_EVENT_OFF;
	uint64_t now = now_usec(), when;
	bool now_pending = frame_now_pending(f), quick = false;
	uint64_t read_bytes = 0, read_lines = 0;

	if (term) {
		read_bytes = term_bytes_in(term) - f->sched_bytes_in;
		read_lines = term_lines_in(term) - f->sched_lines_in;
		f->sched_bytes_in = term_bytes_in(term);
		f->sched_lines_in = term_lines_in(term);
	}

	sd_event_source_get_enabled(f->source, &enabled);
	/* a frame due at once, pending in the defer source, is a frame due */
	if (now_pending)
		enabled = SD_EVENT_ONESHOT;
	/* The last flood's gap is over and no frame is due: output after a
	 * quiet time starts afresh (drawn at once, or a new flood's gap) */
	if (enabled == SD_EVENT_OFF && f->frame_gap_usec > FRAME_INTERVAL_USEC &&
	    now >= f->gap_from_usec + f->frame_gap_usec)
		f->frame_gap_usec = FRAME_INTERVAL_USEC;
	/* A flood that starts after a frame (or after a quiet time) is seen
	 * here, before the next frame: that one waits the flood's gap
	 * already, counted from now if the last frame is older (it would
	 * otherwise be drawn at the flood's first read, or one interval
	 * later, with a screenful to draw, and only then start the gap) */
	if (f->frame_gap_usec <= FRAME_INTERVAL_USEC && term && frame_flooding(f, term)) {
		f->frame_gap_usec = frame_flood_gap(f);
		f->gap_from_usec = MAX(f->last_frame_usec, now - MIN(now, FRAME_INTERVAL_USEC));
	}
	when = MAX(now, f->last_frame_usec + FRAME_INTERVAL_USEC);
	if (f->frame_gap_usec > FRAME_INTERVAL_USEC) {
		const struct term_key_trace *key = term ? term_key_trace(term) : NULL;

		/* a flood's long gap ends early when the bytes stop */
		when = MAX(MIN(MAX(when, f->gap_from_usec + f->frame_gap_usec),
			       now + frame_flood_quiet(f)),
			   f->last_frame_usec + FRAME_INTERVAL_USEC);
		/* and for a key typed into it (FLOOD_KEY_USEC), where no
		 * region scrolls (quick frames below), whole frames, drawing
		 * at most half the time; once the flood has stopped, at once,
		 * also after the window where the key's frame began in it (a
		 * whole 3840x2160 frame took 75-145 ms under TCG: one that
		 * ends after the window would leave the prompt to the flood's
		 * quiet time, twice that) */
		if (key && key->key_usec && !f->region_moving) {
			bool window = now < key->key_usec + FLOOD_KEY_USEC;
			bool key_frame = f->last_start_usec >= key->key_usec &&
					 f->last_start_usec < key->key_usec + FLOOD_KEY_USEC;

			if ((window || key_frame) && frame_flood_stopped(f, term))
				when = now;
			else if (window && key->interrupt)
				/* The flood's screen as it is at the key would
				 * be drawn only to be drawn over by what follows
				 * its end, the prompt (a whole frame more: bochs
				 * under TCG, 16-27 ms, then the prompt's): the
				 * frame waits for the flood to stop, its quiet
				 * time (frame_flood_quiet()) or a small read,
				 * at most until the window's end. */
				when = frame_read_small(term, read_bytes, read_lines)
					   ? now
					   : MIN(now + frame_flood_quiet(f),
						 key->key_usec + FLOOD_KEY_USEC);
			else if (window)
				when = MIN(when, f->last_frame_usec +
						     MAX(FRAME_INTERVAL_USEC, f->full_render_usec));
		}
	}
	quick = frame_quick_time(f, term, now, &when);
	if (f->frame_gap_usec <= FRAME_INTERVAL_USEC && !quick && enabled != SD_EVENT_OFF)
		return;
	if (enabled != SD_EVENT_OFF) {
		uint64_t due = 0;

		/* A frame already due stays due: setting a time source's time
		 * takes it off sd-event's pending list, and with the pty's
		 * reads dispatched first (each one moving it here) a flood's
		 * frame never came until the flood ended. */
		if (now_pending)
			return;
		if (sd_event_source_get_time(f->source, &due) >= 0 && (due <= now || due == when))
			return;
	}
	f->quick = quick;
	if (when <= now) {
		sd_event_source_set_enabled(f->source, SD_EVENT_OFF);
		f->now_due = when;
		sd_event_source_set_enabled(f->now_source, SD_EVENT_ONESHOT);
		return;
	}
	sd_event_source_set_time(f->source, when);
	if (enabled == SD_EVENT_OFF)
		sd_event_source_set_enabled(f->source, SD_EVENT_ONESHOT);
}
