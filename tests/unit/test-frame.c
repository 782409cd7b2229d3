/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Flood pacing (frame.c) on a real terminal whose session writes a known
 * number of lines, under a clock the test sets: frame.c's calls of
 * now_usec() reach fake_now (-Wl,--wrap=now_usec, meson.build), so a frame
 * takes exactly the time the test says and the timer's due time can be
 * compared to the microsecond. Two rules that were seen only in a 4K boot
 * (3840x2160 at 8x16: 480x135 cells):
 *
 * - a flood counts from FLOOD_LINES (50) lines on a screen taller than
 *   that: a `cat` gets one or two reads of 4 KiB (65-135 lines) between two
 *   frames, so a screenful of 135 rows was seldom reached;
 * - a flood's frame comes after its bytes stop for FLOOD_QUIET (one frame
 *   interval) or twice a whole frame's time if that is more, at most the
 *   flood's gap.
 */
#include <stdio.h>
#include <systemd/sd-event.h>

#include "../../daemon/screen/frame.h"
#include "../../daemon/terminal/term.h"
#include "../../daemon/util/log.h"
#include "../../daemon/util/util.h"
#include "tests.h"

/* The clock frame.c reads: fake_now, or the real one while it is 0 (the
 * terminal's reads of the pty and the test's own deadlines). */
uint64_t __real_now_usec(void);
uint64_t __wrap_now_usec(void);
static uint64_t fake_now;

uint64_t __wrap_now_usec(void)
{
	return fake_now ? fake_now : __real_now_usec();
}

struct paced;
static void echo_damage(struct paced *p);

/* The terminal's damage callback: test_echo_drawn_at_once() sets echo_of */
static struct paced *echo_of;

static void on_damage(void *userdata)
{
	(void)userdata;
	if (echo_of)
		echo_damage(echo_of);
}

static void on_exited(int status, void *userdata)
{
	(void)status;
	(void)userdata;
}

static unsigned frames_drawn;

static int on_frame(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	(void)userdata;
	frames_drawn++;
	return 0;
}

struct paced {
	sd_event *event;
	struct term *term;
	struct frame frame;
	uint64_t t0; /* the fake clock's start */
};

/* A cols x rows terminal whose session writes `lines` lines ("1" to
 * "lines", a few bytes each: never a screenful of bytes) and sleeps, and
 * its frame pacing; nothing of the session's output is read yet. */
static int paced_new(struct paced *p, unsigned cols, unsigned rows, unsigned lines)
{
	char script[64];
	char *argv[] = {"sh", "-c", script, NULL};
	int r;

	snprintf(script, sizeof(script), "seq %u; exec sleep 30", lines);
	*p = (struct paced){.t0 = __real_now_usec()};
	r = sd_event_new(&p->event);
	if (r < 0)
		return r;
	r = term_new(p->event,
		     &(struct term_config){.cols = cols,
					   .rows = rows,
					   .width_px = cols * 8,
					   .height_px = rows * 16,
					   .argv = argv,
					   .term = "xterm"},
		     &(struct term_callbacks){on_damage, on_exited}, NULL, &p->term);
	if (r < 0)
		return r;
	return frame_init(&p->frame, p->event, on_frame, NULL);
}

static void paced_free(struct paced *p)
{
	fake_now = 0;
	frame_fini(&p->frame);
	if (p->term)
		term_free(p->term);
	sd_event_unref(p->event);
}

/* The session's lines read by the terminal (the real clock runs meanwhile:
 * the frame's time stands still between frame_drawn() and
 * frame_schedule()). */
static bool paced_read(struct paced *p, unsigned lines)
{
	uint64_t deadline;

	fake_now = 0;
	deadline = now_usec() + 10 * USEC_PER_SEC;
	while (term_lines_in(p->term) < lines && now_usec() < deadline)
		sd_event_run(p->event, 100 * USEC_PER_MSEC);
	return term_lines_in(p->term) == lines;
}

/* A frame drawn at t0 that took render_usec and drew `cells`; then the
 * session's `lines` lines come; 1 ms after the frame ended, the terminal
 * calls for the next frame (frame_schedule(), as screen.c does on damage). */
static void paced_run(struct paced *p, uint64_t render_usec, uint64_t cells, unsigned lines)
{
	fake_now = p->t0 + render_usec;
	frame_drawn(&p->frame, p->term, p->t0, p->t0, false, cells);
	CHECK(paced_read(p, lines));
	fake_now = p->t0 + render_usec + USEC_PER_MSEC;
	frame_schedule(&p->frame, p->term);
}

/* Whether `lines` lines that come between two frames on a cols x rows
 * screen are a flood. */
static bool flood_after(unsigned cols, unsigned rows, unsigned lines)
{
	struct paced p;
	bool flood = false;

	if (paced_new(&p, cols, rows, lines) >= 0) {
		/* a frame of an echo: 1 ms, a few cells */
		paced_run(&p, USEC_PER_MSEC, 10, lines);
		flood = frame_flood(&p.frame);
	} else
		CHECK(!"a terminal with a session");
	paced_free(&p);
	return flood;
}

static void test_flood_lines(void)
{
	/* 3840x2160 at 8x16: 135 rows; 60 lines (one 4 KiB read of a `cat`)
	 * are a flood, as are 50 (FLOOD_LINES); 49 are not */
	CHECK(flood_after(480, 135, 60));
	CHECK(flood_after(480, 135, 50));
	CHECK(!flood_after(480, 135, 49));
	/* a screen shorter than FLOOD_LINES: a screenful of lines */
	CHECK(flood_after(80, 30, 30));
	CHECK(!flood_after(80, 30, 29));
}

/* After a frame of the whole 80x30 screen that took render_usec and a
 * flood of 60 lines (two screenfuls: a flood by any count of FLOOD_LINES),
 * how long the next frame waits from the moment it is called for. */
static uint64_t flood_wait(uint64_t render_usec)
{
	struct paced p;
	uint64_t due = 0, now;

	if (paced_new(&p, 80, 30, 60) < 0) {
		CHECK(!"a terminal with a session");
		paced_free(&p);
		return 0;
	}
	paced_run(&p, render_usec, 80 * 30, 60);
	now = fake_now;
	CHECK(frame_flood(&p.frame));
	CHECK(frame_pending(&p.frame));
	CHECK(sd_event_source_get_time(p.frame.source, &due) >= 0);
	paced_free(&p);
	fprintf(stderr, "a frame of %" PRIu64 " us: the flood's frame %" PRIu64 " us later\n",
		render_usec, due - now);
	return due - now;
}

static void test_flood_quiet(void)
{
	/* a frame of 40 ms (a whole 3840x2160x32 screen under TCG): the flood's
	 * frame comes 80 ms after the last byte, not FLOOD_QUIET (16 ms) */
	CHECK_EQ_U(flood_wait(40 * USEC_PER_MSEC), 80 * USEC_PER_MSEC);
	/* a frame of 5 ms: twice that is less than FLOOD_QUIET, which is the
	 * frame interval */
	CHECK_EQ_U(flood_wait(5 * USEC_PER_MSEC), FRAME_INTERVAL_USEC);
	/* a frame of 200 ms: twice that is more than the flood's gap
	 * (FLOOD_GAP_MAX, 250 ms from the frame's end): the gap's end comes
	 * first */
	CHECK_EQ_U(flood_wait(200 * USEC_PER_MSEC), 249 * USEC_PER_MSEC);
}

/* The frame's due time and whether it is a quick one. */
static uint64_t due_of(struct paced *p, bool *quick)
{
	uint64_t due = 0;
	int enabled = SD_EVENT_OFF;

	sd_event_source_get_enabled(p->frame.source, &enabled);
	if (enabled == SD_EVENT_OFF)
		due = p->frame.now_due; /* due at once: the defer source */
	else
		CHECK(sd_event_source_get_time(p->frame.source, &due) >= 0);
	*quick = frame_quick(&p->frame);
	return due;
}

/* A key typed while a region scrolls (FLOOD_KEY_USEC): where the last
 * frame moved a region smaller than the screen, the next frame is a quick
 * one 4 ms (QUICK_INTERVAL) after the last frame's end, sooner than the
 * output's own frame; after it (no output since) the output's frame keeps
 * its time; output again brings another quick frame 4 ms after that one;
 * once a frame drew a row beside the region (frame_beside_drawn()), no
 * more for that key. Both during a flood (a 3840x2160 screen whose whole
 * frame takes 140 ms) and at the quiet pace (16 ms after the last frame).
 * Where the whole screen scrolled, a flood's whole frames come the last
 * one's time apart, as before. */
static void test_key_quick_frames(void)
{
	for (int run = 0; run < 3; run++) {
		bool region = run != 2, flood = run != 1;
		uint64_t render_usec = flood ? 140 * USEC_PER_MSEC : 5 * USEC_PER_MSEC;
		struct paced p;
		uint64_t due, own_due, end, q;
		bool quick;

		/* 60 lines: a flood after a frame of the whole screen; 20
		 * after a frame of a few cells are not */
		if (paced_new(&p, 480, 135, flood ? 60 : 20) < 0) {
			CHECK(!"a terminal with a session");
			paced_free(&p);
			return;
		}
		paced_run(&p, render_usec, flood ? 480 * 135 : 10, flood ? 60 : 20);
		CHECK(frame_flood(&p.frame) == flood);
		own_due = due_of(&p, &quick);
		CHECK(!quick);
		end = p.t0 + render_usec;
		CHECK_EQ_U(own_due, flood ? end + 250 * USEC_PER_MSEC : end + FRAME_INTERVAL_USEC);
		frame_region_seen(&p.frame, region);
		/* a key, then output (its echo among it) */
		fake_now = end + 2 * USEC_PER_MSEC;
		term_handle_key(p.term, 'a', 'a', 0, 'a', NULL);
		fake_now = end + 3 * USEC_PER_MSEC;
		frame_schedule(&p.frame, p.term);
		due = due_of(&p, &quick);
		if (!region) {
			/* whole frames: the last one's time after it */
			CHECK(!quick);
			CHECK_EQ_U(due, end + 140 * USEC_PER_MSEC);
			paced_free(&p);
			continue;
		}
		CHECK(quick);
		CHECK_EQ_U(due, end + 4 * USEC_PER_MSEC);
		/* the quick frame, 1 ms long, left the region */
		fake_now = due + USEC_PER_MSEC;
		q = fake_now;
		frame_cancel(&p.frame); /* dispatched: the source is off */
		frame_quick_drawn(&p.frame, p.term);
		frame_schedule(&p.frame, p.term);
		due = due_of(&p, &quick);
		CHECK(!quick);
		CHECK_EQ_U(due, own_due);
		/* more output (the session's lines are all it writes: the byte
		 * count at the quick frame is moved back instead) */
		p.frame.quick_bytes_in--;
		frame_schedule(&p.frame, p.term);
		due = due_of(&p, &quick);
		CHECK(quick);
		CHECK_EQ_U(due, q + 4 * USEC_PER_MSEC);
		/* that one drew the echo beside the region: output again
		 * brings none, the output's frame is next */
		fake_now = due + USEC_PER_MSEC;
		frame_cancel(&p.frame);
		frame_quick_drawn(&p.frame, p.term);
		frame_beside_drawn(&p.frame, p.term);
		p.frame.quick_bytes_in--;
		frame_schedule(&p.frame, p.term);
		due = due_of(&p, &quick);
		CHECK(!quick);
		CHECK_EQ_U(due, own_due);
		paced_free(&p);
	}
}

/* A cols x rows terminal after a flood's frame of the whole screen that
 * took render_usec (the session's 60 lines read since); false if there is
 * none (a failed check). */
static bool paced_flood(struct paced *p, unsigned cols, unsigned rows, uint64_t render_usec)
{
	if (paced_new(p, cols, rows, 60) < 0) {
		CHECK(!"a terminal with a session");
		paced_free(p);
		return false;
	}
	paced_run(p, render_usec, (uint64_t)cols * rows, 60);
	CHECK(frame_flood(&p->frame));
	return true;
}

/* Ctrl+C typed into a flood (FLOOD_KEY_USEC): the flood's frame after the
 * key is a whole one, the last one's time after it; then what comes is
 * the prompt (28 bytes, a line): the flood has stopped, and its frame is
 * drawn at once (frame_flood_stopped()), not a whole frame's time after
 * the flood's, though the key's window (100 ms) ended during that frame.
 * More than that after the flood's frame (the flood going on: 4 KiB) waits
 * for the flood's gap, as before. A 3840x2160 screen whose whole frame
 * takes 140 ms. */
static void test_key_flood_stopped(void)
{
	for (int run = 0; run < 2; run++) {
		bool stopped = run == 0;
		uint64_t render_usec = 140 * USEC_PER_MSEC, end, now, due;
		struct paced p;
		bool quick;

		if (!paced_flood(&p, 480, 135, render_usec))
			return;
		fake_now = p.t0 + render_usec + 2 * USEC_PER_MSEC;
		term_handle_key(p.term, 0x03, 'c', 0, 'c', NULL);
		/* the flood's frame, its 60 lines: the flood's gap after it */
		frame_cancel(&p.frame);
		end = fake_now + render_usec;
		fake_now = end;
		frame_drawn(&p.frame, p.term, end - render_usec, end - render_usec, true,
			    480 * 135);
		CHECK(frame_flood(&p.frame));
		/* then the prompt, or 4 KiB more of the flood (the session's
		 * lines are all it writes: the counts at the frame are moved
		 * back instead) */
		p.frame.frame_bytes_in -= stopped ? 28 : 4096;
		p.frame.frame_lines_in -= stopped ? 1 : 60;
		now = fake_now = end + USEC_PER_MSEC;
		frame_schedule(&p.frame, p.term);
		CHECK(frame_pending(&p.frame));
		due = due_of(&p, &quick);
		CHECK(!quick);
		if (stopped)
			CHECK_EQ_U(due, now);
		else /* the key's window is over: the flood's gap */
			CHECK_EQ_U(due, end + 250 * USEC_PER_MSEC);
		paced_free(&p);
	}
}

/* Ctrl+C typed into a flood (a key that signals the session's foreground,
 * term_key_trace's interrupt): the flood's screen at the key is not drawn
 * at once, whole, only to be drawn over by the prompt a frame later; the
 * frame waits for the flood's quiet time, and is drawn at once when a small
 * read (the prompt: less than a row, a line) says the flood stopped. A
 * letter typed into the flood gets its frame at once as before; a Ctrl+C
 * that does not stop the flood gets one at the key's window's end at the
 * latest. A 160x50 screen whose whole frame takes 20 ms (quiet: 40 ms). */
static void test_interrupt_key(void)
{
	for (int run = 0; run < 3; run++) {
		bool interrupt = run != 1, stops = run == 0;
		uint64_t render_usec = 20 * USEC_PER_MSEC, key, now, due;
		struct paced p;
		bool quick;

		if (!paced_flood(&p, 160, 50, render_usec))
			return;
		/* in the flood's gap after its frame */
		key = fake_now = p.t0 + render_usec + 2 * USEC_PER_MSEC;
		term_handle_key(p.term, 'c', 'c', interrupt ? TSM_CONTROL_MASK : 0, 'c', NULL);
		CHECK(term_key_trace(p.term)->interrupt == interrupt);
		/* what the pty held at the key (the session's lines are all it
		 * writes: the counts at the last schedule are moved back) */
		now = fake_now = key + USEC_PER_MSEC;
		p.frame.sched_bytes_in -= 4096;
		p.frame.sched_lines_in -= 60;
		p.frame.frame_bytes_in -= 4096;
		p.frame.frame_lines_in -= 60;
		frame_schedule(&p.frame, p.term);
		due = due_of(&p, &quick);
		if (!interrupt) {
			/* the key's window: the last whole frame's time after it */
			CHECK_EQ_U(due, p.t0 + 2 * render_usec);
			paced_free(&p);
			continue;
		}
		CHECK_EQ_U(due, now + 40 * USEC_PER_MSEC);
		if (stops) {
			/* the prompt */
			now = fake_now = key + 8 * USEC_PER_MSEC;
			p.frame.sched_bytes_in -= 28;
			p.frame.sched_lines_in -= 1;
			frame_schedule(&p.frame, p.term);
			CHECK_EQ_U(due_of(&p, &quick), now);
		} else {
			/* the flood goes on: 4 KiB every 30 ms, each moving the
			 * quiet time, up to the window's end */
			for (unsigned ms = 30; ms <= 90; ms += 30) {
				now = fake_now = key + ms * USEC_PER_MSEC;
				p.frame.sched_bytes_in -= 4096;
				p.frame.sched_lines_in -= 60;
				p.frame.frame_bytes_in -= 4096;
				p.frame.frame_lines_in -= 60;
				frame_schedule(&p.frame, p.term);
				CHECK_EQ_U(due_of(&p, &quick), MIN(now + 40 * USEC_PER_MSEC,
								   key + 100 * USEC_PER_MSEC));
			}
		}
		paced_free(&p);
	}
}

/* What the damage callbacks of test_echo_drawn_at_once() saw, as seat.c
 * does it: a frame called for, and drawn at once in the callback for the
 * first read after a key if it is due at once. */
static unsigned damages, echo_reads, drawn_in_echo;

static void echo_damage(struct paced *p)
{
	damages++;
	frame_schedule(&p->frame, p->term);
	if (!term_take_echo_read(p->term))
		return;
	/* once per read: a damage callback of the frame drawn here finds no
	 * echo */
	CHECK(!term_take_echo_read(p->term));
	echo_reads++;
	if (frame_draw_due(&p->frame))
		drawn_in_echo++;
}

/* Runs the loop until the key's echo was read (the trace's parse time). */
static bool echo_read(struct paced *p)
{
	for (unsigned i = 0; i < 100 && !term_key_trace(p->term)->parsed_usec; i++)
		sd_event_run(p->event, 100 * USEC_PER_MSEC);
	return term_key_trace(p->term)->parsed_usec != 0;
}

/* A key's echo (the pty's line discipline echoes it: the session only
 * sleeps) is drawn in the damage callback of its read when its frame is due
 * at once (term_take_echo_read(), frame_draw_due()), not at the loop's next
 * turn; output without a key is not, and an echo whose frame the pacing
 * puts later (16 ms after the last frame) is not drawn early. */
static void test_echo_drawn_at_once(void)
{
	struct paced p;
	uint64_t now;
	bool quick;

	if (paced_new(&p, 80, 30, 1) < 0) {
		CHECK(!"a terminal with a session");
		paced_free(&p);
		return;
	}
	echo_of = &p;
	/* the session's own line: no key, no early frame */
	CHECK(paced_read(&p, 1));
	CHECK(damages >= 1);
	CHECK_EQ_U(echo_reads, 0);
	frame_cancel(&p.frame);
	/* a key after a quiet time: the echo's frame is due at once */
	frames_drawn = 0;
	term_handle_key(p.term, 'a', 'a', 0, 'a', NULL);
	CHECK(echo_read(&p));
	CHECK_EQ_U(echo_reads, 1);
	CHECK_EQ_U(drawn_in_echo, 1);
	CHECK_EQ_U(frames_drawn, 1);
	CHECK(!frame_pending(&p.frame));
	term_key_trace_done(p.term);
	/* a frame just drawn: the next key's echo waits for the interval */
	now = fake_now = __real_now_usec();
	frame_drawn(&p.frame, p.term, now, now, false, 1);
	term_handle_key(p.term, 'b', 'b', 0, 'b', NULL);
	CHECK(echo_read(&p));
	CHECK_EQ_U(echo_reads, 2);
	CHECK_EQ_U(drawn_in_echo, 1);
	CHECK_EQ_U(frames_drawn, 1);
	CHECK(frame_pending(&p.frame));
	CHECK_EQ_U(due_of(&p, &quick), now + FRAME_INTERVAL_USEC);
	echo_of = NULL;
	paced_free(&p);
}

int main(void)
{
	tests_session_signals();
	log_set_max_level(LOG_INFO);
	RUN(test_flood_lines);
	RUN(test_flood_quiet);
	RUN(test_key_quick_frames);
	RUN(test_key_flood_stopped);
	RUN(test_echo_drawn_at_once);
	RUN(test_interrupt_key);
	return TESTS_RESULT();
}
