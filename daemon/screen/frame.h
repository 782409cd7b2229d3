/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frame scheduling and pacing: when a screen draws its terminal. Output is
 * coalesced into frames: the first byte after a quiet period is drawn at
 * once, then at most one frame per FRAME_INTERVAL while output keeps coming,
 * so `cat` of a big file does not draw every line; during a flood (more than
 * a screenful since the last frame) frames wait longer (frame.c). What a
 * frame draws is the screen's (screen.c).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "../terminal/term.h"
#include "../util/util.h"

#define FRAME_INTERVAL_USEC (16 * USEC_PER_MSEC)

struct frame {
	sd_event_source *source; /* the frame's timer; its handler draws */
	/* ... and a frame due at once: a defer source calling the same
	 * handler (draw, draw_data) with its due time, now_due */
	sd_event_source *now_source;
	sd_event_time_handler_t draw;
	void *draw_data;
	uint64_t now_due;
	uint64_t last_frame_usec;
	uint64_t last_start_usec; /* when the last frame (not a quick one) began */
	/* The least time from one frame to the next: FRAME_INTERVAL, longer
	 * during a flood (FLOOD_RENDER_FACTOR); and the session's byte count
	 * at the last frame, which tells a flood. */
	uint64_t frame_gap_usec;
	uint64_t frame_bytes_in, frame_lines_in;
	/* the session's byte and line counts at the last frame_schedule():
	 * what the read that calls it brought (frame.c, an interrupting key) */
	uint64_t sched_bytes_in, sched_lines_in;
	uint64_t last_render_usec; /* what the last frame that drew took */
	/* What drawing the whole screen takes, from the last frame that drew
	 * at least half of it: a flood's frames redraw all of it. */
	uint64_t full_render_usec;
	uint64_t gap_from_usec; /* the frame gap counts from here */
	/* A key's quick frames (frame.c, QUICK_INTERVAL_USEC):
	 * whether the last frame moved or left a region smaller than the
	 * screen (frame_region_seen()), whether the frame due is a quick one,
	 * and the last quick frame's time and the session's byte count then */
	bool region_moving;
	bool quick;
	uint64_t last_quick_usec, quick_bytes_in;
	uint64_t quick_key_done; /* the key whose quick frames drew beside the region */
};

/* The timer (off), to the millisecond; draw is called when a frame is due. */
int frame_init(struct frame *f, sd_event *event, sd_event_time_handler_t draw, void *userdata);
void frame_fini(struct frame *f);
/* A frame is due: when, by the pacing; term is the one drawn (NULL: none). */
void frame_schedule(struct frame *f, struct term *term);
bool frame_pending(const struct frame *f);
void frame_cancel(struct frame *f);
/* A frame due at once (the pacing found none to wait for: frame_schedule()
 * put it on the defer source) is drawn now, from the caller, not at the
 * loop's next turn; true if one was. A frame due later stays due. */
bool frame_draw_due(struct frame *f);
/* Whether the pacing is in a flood's gap. */
bool frame_flood(const struct frame *f);
/* A frame of term drew cells (started at start, due at due, during a flood
 * if flood): the time it took sets the next gap, and a flood's frame logs
 * it. */
void frame_drawn(struct frame *f, struct term *term, uint64_t start, uint64_t due, bool flood,
		 uint64_t cells);
/* Whether the last frame drawn moved a region smaller than the screen, or
 * left one to the next frame (render.h stats.last.region_move). */
void frame_region_seen(struct frame *f, bool region);
/* Whether the frame now due is a key's quick frame: the screen asks the
 * renderer to leave a scrolling region to the output's own frame
 * (render_defer_region()). */
bool frame_quick(const struct frame *f);
/* A quick frame left the region (stats.last.deferred): it does not count
 * as the output's frame, whose time stays; call frame_schedule() after. */
void frame_quick_drawn(struct frame *f, struct term *term);
/* A frame drew rows beside a moving region (stats.rows_before_move): the
 * last key's quick frames are over. */
void frame_beside_drawn(struct frame *f, struct term *term);
