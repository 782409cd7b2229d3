/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mouse modes as the real stream stage follows them (with libtsm 4.0.2
 * behind it), their DECRQM answers, resets and snapshot round trip, and the
 * dispatcher (mouse.c): every report encoding, X10's limits, 1002 against
 * 1003 motion, the Shift override, click counting, the wheel per screen and
 * DECCKM, focus events.
 */
#include <errno.h>
#include <libtsm.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../../daemon/terminal/cluster.h"
#include "../../daemon/input/input.h"
#include "../../daemon/util/log.h"
#include "../../daemon/input/mouse.h"
#include "../../daemon/terminal/snapshot.h"
#include "../../daemon/terminal/stream.h"
#include "../../daemon/util/util.h"
#include "tests.h"

#define CW 8  /* cell width in pixels */
#define CH 16 /* cell height */
#define COLS 80
#define ROWS 25

struct term {
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *table;
	struct stream *stream;
	struct mouse *mouse;
	char replies[4096]; /* what the stream stage and libtsm answered */
	size_t n_replies;
	char sent[8192]; /* what the dispatcher sent to the pty */
	size_t n_sent;
	char log[4096]; /* the local actions, as text */
	uint64_t now;	/* the dispatcher's clock, ms */
};

static void term_reply(const char *bytes, size_t len, void *data)
{
	struct term *t = data;

	len = MIN(len, sizeof(t->replies) - 1 - t->n_replies);
	memcpy(t->replies + t->n_replies, bytes, len);
	t->n_replies += len;
	t->replies[t->n_replies] = '\0';
}

static void vte_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	term_reply(u8, len, data);
}

__attribute__((format(printf, 2, 3))) static void logf_(struct term *t, const char *fmt, ...)
{
	size_t n = strlen(t->log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->log + n, sizeof(t->log) - n, fmt, ap);
	va_end(ap);
}

static void cb_select_start(unsigned col, int row, unsigned clicks, bool extend, void *ud)
{
	logf_(ud, "start %u,%d x%u%s;", col, row, clicks, extend ? " extend" : "");
}

static void cb_select_move(unsigned col, int row, void *ud)
{
	logf_(ud, "move %u,%d;", col, row);
}

static void cb_select_end(void *ud)
{
	logf_(ud, "end;");
}

static void cb_paste(void *ud)
{
	logf_(ud, "paste;");
}

static void cb_scroll_view(int lines, void *ud)
{
	logf_(ud, "scroll %d;", lines);
}

static void cb_send(const char *bytes, size_t len, void *ud)
{
	struct term *t = ud;

	len = MIN(len, sizeof(t->sent) - 1 - t->n_sent);
	memcpy(t->sent + t->n_sent, bytes, len);
	t->n_sent += len;
	t->sent[t->n_sent] = '\0';
}

static uint64_t test_clock(void *ud)
{
	return ((struct term *)ud)->now;
}

static const struct mouse_callbacks callbacks = {
    .select_start = cb_select_start,
    .select_move = cb_select_move,
    .select_end = cb_select_end,
    .paste = cb_paste,
    .scroll_view = cb_scroll_view,
    .send = cb_send,
};

static void term_init(struct term *t, unsigned cols, unsigned rows)
{
	memset(t, 0, sizeof(*t));
	if (tsm_screen_new(&t->screen, NULL, NULL) < 0 ||
	    tsm_screen_resize(t->screen, cols, rows) < 0 ||
	    tsm_vte_new(&t->vte, t->screen, vte_write, t, NULL, NULL) < 0)
		abort();
	tsm_screen_set_max_sb(t->screen, 100);
	t->table = cluster_table_new();
	t->stream = stream_new(&(struct stream_config){.vte = t->vte,
						       .screen = t->screen,
						       .table = t->table,
						       .reply = term_reply,
						       .userdata = t});
	if (mouse_new(t->stream, &callbacks, t, &t->mouse) < 0)
		abort();
	mouse_set_clock(t->mouse, test_clock, t);
	mouse_set_geometry(t->mouse, CW, CH, cols, rows);
	t->now = 100000;
}

static void term_fini(struct term *t)
{
	mouse_free(t->mouse);
	stream_free(t->stream);
	tsm_vte_unref(t->vte);
	tsm_screen_clear_sb(t->screen);
	tsm_screen_unref(t->screen);
	cluster_table_free(t->table);
}

static void feeds(struct term *t, const char *s)
{
	stream_feed(t->stream, s, strlen(s));
}

static void clear(struct term *t)
{
	t->n_replies = t->n_sent = 0;
	t->replies[0] = t->sent[0] = t->log[0] = '\0';
}

static bool sent_is(struct term *t, const char *want, size_t len)
{
	if (t->n_sent == len && memcmp(t->sent, want, len) == 0)
		return true;
	fprintf(stderr, "  sent (%zu bytes):", t->n_sent);
	for (size_t i = 0; i < t->n_sent; i++)
		fprintf(stderr, " %02x", (uint8_t)t->sent[i]);
	fprintf(stderr, "\n  want (%zu bytes):", len);
	for (size_t i = 0; i < len; i++)
		fprintf(stderr, " %02x", (uint8_t)want[i]);
	fprintf(stderr, "\n");
	return false;
}

#define SENT(t, lit) sent_is((t), (lit), sizeof(lit) - 1)

static bool log_is(struct term *t, const char *want)
{
	if (strcmp(t->log, want) == 0)
		return true;
	fprintf(stderr, "  log '%s'\n  want '%s'\n", t->log, want);
	return false;
}

/* the pointer at the middle of cell col, row */
static void ev_at(struct term *t, enum input_pointer_kind kind, unsigned col, unsigned row,
		  unsigned button, bool pressed, int wheel, unsigned mods)
{
	struct input_pointer_event ev = {
	    .kind = kind,
	    .x = (int)(col * CW + CW / 2),
	    .y = (int)(row * CH + CH / 2),
	    .button = button,
	    .pressed = pressed,
	    .wheel = wheel,
	    .mods = mods,
	};

	mouse_handle(t->mouse, &ev);
}

static void move(struct term *t, unsigned col, unsigned row, unsigned mods)
{
	ev_at(t, INPUT_POINTER_MOTION, col, row, 0, false, 0, mods);
}

static void press(struct term *t, unsigned col, unsigned row, unsigned button, unsigned mods)
{
	ev_at(t, INPUT_POINTER_BUTTON, col, row, button, true, 0, mods);
}

static void release(struct term *t, unsigned col, unsigned row, unsigned button, unsigned mods)
{
	ev_at(t, INPUT_POINTER_BUTTON, col, row, button, false, 0, mods);
}

static void wheel(struct term *t, unsigned col, unsigned row, int notches, unsigned mods)
{
	ev_at(t, INPUT_POINTER_WHEEL, col, row, 0, false, notches, mods);
}

/* ---- the stream stage ------------------------------------------------------ */

static void test_modes(void)
{
	struct term t;
	unsigned flags;

	term_init(&t, COLS, ROWS);
	CHECK_EQ_U(stream_mouse_modes(t.stream), 0);
	flags = tsm_screen_get_flags(t.screen);

	feeds(&t, "\033[?1000h");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_NORMAL);
	/* one tracking mode at a time: 1002 replaces 1000 */
	feeds(&t, "\033[?1002h");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_BUTTON);
	feeds(&t, "\033[?1003h");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_ANY);
	feeds(&t, "\033[?9h");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_X10);
	/* resetting any tracking mode turns tracking off (xterm) */
	feeds(&t, "\033[?1002h\033[?1000l");
	CHECK_EQ_U(stream_mouse_modes(t.stream), 0);

	/* encodings: one at a time, a reset undoes only its own */
	feeds(&t, "\033[?1015h\033[?1006h");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_SGR);
	feeds(&t, "\033[?1015l");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_SGR);
	feeds(&t, "\033[?1005h");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_UTF8);
	feeds(&t, "\033[?1005l");
	CHECK_EQ_U(stream_mouse_modes(t.stream), 0);

	/* several in one sequence, with other modes, split over reads */
	feeds(&t, "\033[?1;100");
	feeds(&t, "0;1006;1004;2004h");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_NORMAL | STREAM_MOUSE_SGR |
						     STREAM_MOUSE_FOCUS |
						     STREAM_MOUSE_BRACKETED_PASTE);
	CHECK(stream_cursor_keys_app(t.stream));
	feeds(&t, "\033[?1004;2004l");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_NORMAL | STREAM_MOUSE_SGR);
	/* not a DEC private mode: ANSI mode 1000 is nothing */
	feeds(&t, "\033[1000l\033[?1;1000;1006l");
	CHECK_EQ_U(stream_mouse_modes(t.stream), 0);

	/* libtsm 4.0.2 ignores them: no screen flag changed, the cursor did
	 * not move, text still prints where it should */
	feeds(&t, "\033[?9;1000;1002;1003;1004;1005;1006;1015;2004h");
	CHECK_EQ_U(tsm_screen_get_flags(t.screen), flags);
	CHECK_EQ_U(tsm_screen_get_cursor_x(t.screen), 0);
	CHECK_EQ_U(tsm_screen_get_cursor_y(t.screen), 0);
	feeds(&t, "ab\033[?9;1000;1002;1003;1004;1005;1006;1015;2004lc");
	CHECK_EQ_U(tsm_screen_get_flags(t.screen), flags);
	CHECK_EQ_U(tsm_screen_get_cursor_x(t.screen), 3);
	CHECK(t.n_replies == 0);
	term_fini(&t);
}

static void test_decrqm(void)
{
	static const struct {
		int mode;
		const char *set;
	} modes[] = {
	    {9, "\033[?9h"},	   {1000, "\033[?1000h"}, {1002, "\033[?1002h"},
	    {1003, "\033[?1003h"}, {1004, "\033[?1004h"}, {1005, "\033[?1005h"},
	    {1006, "\033[?1006h"}, {1015, "\033[?1015h"}, {2004, "\033[?2004h"},
	};
	struct term t;
	char q[32], want[32];

	term_init(&t, COLS, ROWS);
	for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
		snprintf(q, sizeof(q), "\033[?%d$p", modes[i].mode);
		clear(&t);
		feeds(&t, q);
		snprintf(want, sizeof(want), "\033[?%d;2$y", modes[i].mode);
		CHECK(strcmp(t.replies, want) == 0);
		clear(&t);
		feeds(&t, modes[i].set);
		feeds(&t, q);
		snprintf(want, sizeof(want), "\033[?%d;1$y", modes[i].mode);
		CHECK(strcmp(t.replies, want) == 0);
	}
	/* 1002 replaced 1000: reset now */
	clear(&t);
	feeds(&t, "\033[?1000h\033[?1002h\033[?1000$p\033[?1002$p");
	CHECK(strcmp(t.replies, "\033[?1000;2$y\033[?1002;1$y") == 0);
	term_fini(&t);
}

static void test_resets(void)
{
	static const char *const resets[] = {
	    "\033c",	  /* RIS */
	    "\033[!p",	  /* DECSTR */
	    "\033[62\"p", /* DECSCL: a soft reset here */
	};
	const unsigned all = STREAM_MOUSE_ANY | STREAM_MOUSE_FOCUS | STREAM_MOUSE_URXVT |
			     STREAM_MOUSE_BRACKETED_PASTE;
	struct term t;

	term_init(&t, COLS, ROWS);
	for (size_t i = 0; i < ELEMENTSOF(resets); i++) {
		feeds(&t, "\033[?1003;1004;1015;2004h");
		CHECK_EQ_U(stream_mouse_modes(t.stream), all);
		feeds(&t, resets[i]);
		CHECK_EQ_U(stream_mouse_modes(t.stream), 0);
	}
	/* a new session */
	feeds(&t, "\033[?1003;1004;1015;2004h");
	stream_reset(t.stream);
	CHECK_EQ_U(stream_mouse_modes(t.stream), 0);
	/* DECSC/DECRC and the alternate screen keep them */
	feeds(&t, "\033[?1000;1006h\0337\033[?1049h\033[?1049l\0338");
	CHECK_EQ_U(stream_mouse_modes(t.stream), STREAM_MOUSE_NORMAL | STREAM_MOUSE_SGR);
	term_fini(&t);
}

/* ---- encodings ------------------------------------------------------------- */

static void test_encode(void)
{
	char b[32];
	size_t n;

	/* the default: CSI M, then code, x, y each + 32 (1-based) */
	n = mouse_encode(0, 0, false, 0, 0, b);
	CHECK(n == 6 && memcmp(b, "\033[M !!", 6) == 0);
	n = mouse_encode(0, 2, true, 9, 4, b); /* a release is 3 */
	CHECK(n == 6 && memcmp(b, "\033[M#*%", 6) == 0);
	n = mouse_encode(0, 0, false, 222, 0, b); /* x 223: the last one */
	CHECK(n == 6 && (uint8_t)b[4] == 255);
	CHECK(mouse_encode(0, 0, false, 223, 0, b) == 0); /* x 224: dropped */
	CHECK(mouse_encode(0, 0, false, 0, 223, b) == 0);
	n = mouse_encode(STREAM_MOUSE_X10, 0, false, 222, 222, b);
	CHECK(n == 6 && (uint8_t)b[4] == 255 && (uint8_t)b[5] == 255);
	CHECK(mouse_encode(STREAM_MOUSE_X10, 0, false, 223, 5, b) == 0);

	/* 1005: coordinates above 95 as two-byte UTF-8 */
	n = mouse_encode(STREAM_MOUSE_UTF8, 0, false, 0, 0, b);
	CHECK(n == 6 && memcmp(b, "\033[M !!", 6) == 0);
	n = mouse_encode(STREAM_MOUSE_UTF8, 0, false, 299, 1, b); /* x 300 + 32 = U+014C */
	CHECK(n == 7 && memcmp(b, "\033[M \xc5\x8c\"", 7) == 0);
	n = mouse_encode(STREAM_MOUSE_UTF8, 0, false, 2014, 0, b); /* 2015 + 32 = U+07FF */
	CHECK(n == 7 && memcmp(b, "\033[M \xdf\xbf!", 7) == 0);
	CHECK(mouse_encode(STREAM_MOUSE_UTF8, 0, false, 2015, 0, b) == 0);

	/* 1006: decimal, M for a press, m for a release with its button */
	n = mouse_encode(STREAM_MOUSE_SGR, 0, false, 0, 0, b);
	CHECK(n == 9 && memcmp(b, "\033[<0;1;1M", 9) == 0);
	n = mouse_encode(STREAM_MOUSE_SGR, 2, true, 299, 1999, b);
	CHECK(n == 14 && memcmp(b, "\033[<2;300;2000m", 14) == 0);
	n = mouse_encode(STREAM_MOUSE_SGR, 64 + 16, false, 4, 5, b);
	CHECK(n == 10 && memcmp(b, "\033[<80;5;6M", 10) == 0);

	/* 1015: decimal, code + 32, a release is 3 */
	n = mouse_encode(STREAM_MOUSE_URXVT, 1, false, 0, 0, b);
	CHECK(n == 9 && memcmp(b, "\033[33;1;1M", 9) == 0);
	n = mouse_encode(STREAM_MOUSE_URXVT, 1 + 4, true, 299, 9, b);
	CHECK(n == 12 && memcmp(b, "\033[39;300;10M", 12) == 0);
}

/* ---- the dispatcher -------------------------------------------------------- */

static void test_reports(void)
{
	struct term t;

	term_init(&t, COLS, ROWS);
	/* 1000 with the default encoding: press and release */
	feeds(&t, "\033[?1000h");
	clear(&t);
	press(&t, 5, 2, 1, 0);
	CHECK(SENT(&t, "\033[M &#"));
	release(&t, 5, 2, 1, 0);
	CHECK(SENT(&t, "\033[M &#\033[M#&#"));
	/* middle and right, with Control (16) and Alt (8) */
	clear(&t);
	press(&t, 0, 0, 2, TSM_CONTROL_MASK);
	press(&t, 79, 24, 3, TSM_ALT_MASK);
	CHECK(SENT(&t, "\033[M1!!\033[M*p9"));
	CHECK(log_is(&t, ""));
	release(&t, 0, 0, 2, 0);
	release(&t, 0, 0, 3, 0);
	/* no motion in 1000 */
	clear(&t);
	press(&t, 1, 1, 1, 0);
	move(&t, 2, 1, 0);
	release(&t, 2, 1, 1, 0);
	CHECK(SENT(&t, "\033[M \"\"\033[M##\""));

	/* 1006: SGR */
	feeds(&t, "\033[?1006h");
	clear(&t);
	press(&t, 10, 20, 1, 0);
	release(&t, 10, 20, 1, 0);
	CHECK(SENT(&t, "\033[<0;11;21M\033[<0;11;21m"));
	/* 1015: urxvt */
	feeds(&t, "\033[?1015h");
	clear(&t);
	press(&t, 10, 20, 3, TSM_CONTROL_MASK);
	release(&t, 10, 20, 3, 0);
	CHECK(SENT(&t, "\033[50;11;21M\033[35;11;21M"));
	/* 1005: UTF-8 */
	feeds(&t, "\033[?1005h");
	clear(&t);
	press(&t, 70, 3, 1, 0);
	CHECK(SENT(&t, "\033[M g$"));
	release(&t, 70, 3, 1, 0);

	/* X10 (9): presses only, no modifiers */
	feeds(&t, "\033[?1005l\033[?9h");
	clear(&t);
	press(&t, 3, 4, 1, TSM_CONTROL_MASK);
	release(&t, 3, 4, 1, 0);
	press(&t, 3, 4, 2, 0);
	move(&t, 7, 7, 0);
	release(&t, 7, 7, 2, 0);
	CHECK(SENT(&t, "\033[M $%\033[M!$%"));
	CHECK(log_is(&t, ""));

	/* reporting turned off between press and release: no release, and
	 * nothing local either */
	feeds(&t, "\033[?1000h");
	clear(&t);
	press(&t, 1, 1, 1, 0);
	feeds(&t, "\033[?1000l");
	release(&t, 1, 1, 1, 0);
	CHECK(SENT(&t, "\033[M \"\""));
	CHECK(log_is(&t, ""));
	term_fini(&t);
}

static void test_x10_limit(void)
{
	struct term t;

	/* a wide grid: columns past 223 are not reported in the default
	 * encoding, SGR has no limit */
	term_init(&t, 300, 10);
	feeds(&t, "\033[?1000h");
	clear(&t);
	press(&t, 222, 0, 1, 0);
	release(&t, 222, 0, 1, 0);
	CHECK(t.n_sent == 12);
	clear(&t);
	press(&t, 223, 0, 1, 0);
	release(&t, 223, 0, 1, 0);
	CHECK(t.n_sent == 0);
	CHECK(log_is(&t, ""));
	feeds(&t, "\033[?1006h");
	clear(&t);
	press(&t, 299, 9, 1, 0);
	CHECK(SENT(&t, "\033[<0;300;10M"));
	release(&t, 299, 9, 1, 0);
	/* 1005 neither: column 224 is U+0100 */
	feeds(&t, "\033[?1005h");
	clear(&t);
	press(&t, 223, 0, 1, 0);
	CHECK(SENT(&t, "\033[M \xc4\x80!"));
	term_fini(&t);
}

static void test_motion(void)
{
	struct term t;

	term_init(&t, COLS, ROWS);
	/* 1002: motion only with a button down, once per cell */
	feeds(&t, "\033[?1002;1006h");
	clear(&t);
	move(&t, 1, 1, 0);
	move(&t, 2, 1, 0);
	CHECK(t.n_sent == 0);
	press(&t, 2, 1, 1, 0);
	move(&t, 3, 1, 0);
	/* within the same cell: nothing */
	ev_at(&t, INPUT_POINTER_MOTION, 3, 1, 0, false, 0, 0);
	{
		struct input_pointer_event ev = {
		    .kind = INPUT_POINTER_MOTION, .x = 3 * CW + 1, .y = 1 * CH + 1};
		mouse_handle(t.mouse, &ev);
	}
	move(&t, 3, 2, TSM_SHIFT_MASK);
	release(&t, 3, 2, 1, 0);
	move(&t, 4, 2, 0);
	CHECK(SENT(&t, "\033[<0;3;2M\033[<32;4;2M\033[<36;4;3M\033[<0;4;3m"));
	/* the right button's motion is 34 */
	clear(&t);
	press(&t, 4, 2, 3, 0);
	move(&t, 5, 2, 0);
	release(&t, 5, 2, 3, 0);
	CHECK(SENT(&t, "\033[<2;5;3M\033[<34;6;3M\033[<2;6;3m"));

	/* 1003: any motion, 35 without a button, once per cell */
	feeds(&t, "\033[?1003h");
	clear(&t);
	move(&t, 6, 2, 0);
	move(&t, 6, 2, 0);
	move(&t, 7, 3, TSM_CONTROL_MASK);
	press(&t, 7, 3, 2, 0);
	move(&t, 8, 3, 0);
	release(&t, 8, 3, 2, 0);
	CHECK(SENT(&t, "\033[<35;7;3M\033[<51;8;4M\033[<1;8;4M\033[<33;9;4M\033[<1;9;4m"));
	/* the default encoding: 35 + 32 */
	feeds(&t, "\033[?1006l");
	clear(&t);
	move(&t, 0, 0, 0);
	CHECK(SENT(&t, "\033[MC!!"));
	/* X10 and 1000: no motion at all */
	feeds(&t, "\033[?9h");
	clear(&t);
	move(&t, 1, 0, 0);
	feeds(&t, "\033[?1000h");
	move(&t, 2, 0, 0);
	CHECK(t.n_sent == 0);
	term_fini(&t);
}

static void test_shift(void)
{
	struct term t;

	term_init(&t, COLS, ROWS);
	feeds(&t, "\033[?1003;1006h");
	clear(&t);
	/* Shift+left: a local selection, its drag and release too */
	press(&t, 2, 3, 1, TSM_SHIFT_MASK);
	move(&t, 5, 4, 0);
	release(&t, 5, 4, 1, 0);
	CHECK(t.n_sent == 0);
	CHECK(log_is(&t, "start 2,3 x1;move 5,4;end;"));
	/* Shift+middle pastes, Shift+right extends */
	clear(&t);
	press(&t, 1, 1, 2, TSM_SHIFT_MASK);
	release(&t, 1, 1, 2, 0);
	press(&t, 9, 9, 3, TSM_SHIFT_MASK);
	release(&t, 9, 9, 3, TSM_SHIFT_MASK);
	CHECK(t.n_sent == 0);
	CHECK(log_is(&t, "paste;start 9,9 x1 extend;end;"));
	/* Shift+wheel scrolls the view */
	clear(&t);
	wheel(&t, 0, 0, 1, TSM_SHIFT_MASK);
	CHECK(t.n_sent == 0);
	CHECK(log_is(&t, "scroll 3;"));
	/* without Shift it is reported again */
	clear(&t);
	press(&t, 2, 3, 1, 0);
	CHECK(SENT(&t, "\033[<0;3;4M"));
	CHECK(log_is(&t, ""));
	term_fini(&t);
}

static void test_local(void)
{
	struct term t;

	term_init(&t, COLS, ROWS);
	/* left: press, drag, release */
	press(&t, 4, 5, 1, 0);
	move(&t, 6, 5, 0);
	move(&t, 6, 5, 0); /* the same cell: nothing */
	move(&t, 10, 7, 0);
	release(&t, 10, 7, 1, 0);
	CHECK(log_is(&t, "start 4,5 x1;move 6,5;move 10,7;end;"));
	/* past the edges while dragging: row -1 at the top pixel row, rows at
	 * the bottom one (every event: the view keeps scrolling) */
	clear(&t);
	t.now += 1000;
	press(&t, 4, 5, 1, 0);
	{
		struct input_pointer_event ev = {.kind = INPUT_POINTER_MOTION, .x = 3 * CW, .y = 0};

		mouse_handle(t.mouse, &ev);
		mouse_handle(t.mouse, &ev);
		ev.y = ROWS * CH - 1;
		mouse_handle(t.mouse, &ev);
		ev.y = ROWS * CH + 40; /* below the grid (a margin) */
		ev.x = 10000;
		mouse_handle(t.mouse, &ev);
		ev.kind = INPUT_POINTER_BUTTON;
		ev.button = 1;
		ev.pressed = false;
		mouse_handle(t.mouse, &ev);
	}
	CHECK(log_is(&t, "start 4,5 x1;move 3,-1;move 3,-1;move 3,25;move 79,25;end;"));
	/* Shift+left without reporting and the right button extend */
	clear(&t);
	press(&t, 7, 7, 1, TSM_SHIFT_MASK);
	release(&t, 7, 7, 1, TSM_SHIFT_MASK);
	press(&t, 8, 8, 3, 0);
	move(&t, 9, 8, 0);
	release(&t, 9, 8, 3, 0);
	CHECK(log_is(&t, "start 7,7 x1 extend;end;start 8,8 x1 extend;move 9,8;end;"));
	/* middle: pastes on release */
	clear(&t);
	press(&t, 1, 1, 2, 0);
	CHECK(log_is(&t, ""));
	release(&t, 1, 1, 2, 0);
	CHECK(log_is(&t, "paste;"));
	/* a release without a press (the press went before a VT switch) */
	clear(&t);
	release(&t, 1, 1, 1, 0);
	CHECK(log_is(&t, ""));
	/* buttons past 3 and motion without a button do nothing */
	press(&t, 1, 1, 4, 0);
	move(&t, 30, 10, 0);
	CHECK(log_is(&t, ""));
	CHECK(t.n_sent == 0);
	/* no geometry: dropped */
	mouse_set_geometry(t.mouse, 0, 0, 0, 0);
	press(&t, 1, 1, 1, 0);
	CHECK(log_is(&t, ""));
	term_fini(&t);
}

static void test_clicks(void)
{
	struct term t;

	term_init(&t, COLS, ROWS);
	for (unsigned i = 0; i < 4; i++) {
		press(&t, 3, 3, 1, 0);
		release(&t, 3, 3, 1, 0);
		t.now += 150;
	}
	CHECK(log_is(&t, "start 3,3 x1;end;start 3,3 x2;end;start 3,3 x3;end;start 3,3 x1;end;"));
	/* 400 ms apart: a new click */
	clear(&t);
	t.now += 1000;
	press(&t, 3, 3, 1, 0);
	release(&t, 3, 3, 1, 0);
	t.now += 399;
	press(&t, 3, 3, 1, 0);
	release(&t, 3, 3, 1, 0);
	t.now += 400;
	press(&t, 3, 3, 1, 0);
	release(&t, 3, 3, 1, 0);
	CHECK(log_is(&t, "start 3,3 x1;end;start 3,3 x2;end;start 3,3 x1;end;"));
	/* another cell: a new click */
	clear(&t);
	t.now += 1000;
	press(&t, 3, 3, 1, 0);
	release(&t, 3, 3, 1, 0);
	t.now += 50;
	press(&t, 4, 3, 1, 0);
	release(&t, 4, 3, 1, 0);
	t.now += 50;
	press(&t, 4, 3, 1, 0);
	release(&t, 4, 3, 1, 0);
	CHECK(log_is(&t, "start 3,3 x1;end;start 4,3 x1;end;start 4,3 x2;end;"));
	/* a reported click between two local ones is not counted */
	clear(&t);
	t.now += 1000;
	press(&t, 5, 5, 1, 0);
	release(&t, 5, 5, 1, 0);
	feeds(&t, "\033[?1000h");
	t.now += 50;
	press(&t, 5, 5, 1, 0);
	release(&t, 5, 5, 1, 0);
	feeds(&t, "\033[?1000l");
	t.now += 50;
	press(&t, 5, 5, 1, 0);
	release(&t, 5, 5, 1, 0);
	CHECK(log_is(&t, "start 5,5 x1;end;start 5,5 x2;end;"));
	CHECK(t.n_sent == 12);
	term_fini(&t);
}

static void test_wheel(void)
{
	struct term t;

	term_init(&t, COLS, ROWS);
	/* the normal screen: the scrollback, 3 lines a notch */
	wheel(&t, 0, 0, 1, 0);
	wheel(&t, 0, 0, -2, 0);
	CHECK(log_is(&t, "scroll 3;scroll -6;"));
	CHECK(t.n_sent == 0);
	/* the alternate screen: cursor keys */
	feeds(&t, "\033[?1049h");
	clear(&t);
	wheel(&t, 0, 0, 1, 0);
	CHECK(SENT(&t, "\033[A\033[A\033[A"));
	clear(&t);
	wheel(&t, 0, 0, -1, 0);
	CHECK(SENT(&t, "\033[B\033[B\033[B"));
	/* with DECCKM: SS3 */
	feeds(&t, "\033[?1h");
	clear(&t);
	wheel(&t, 0, 0, -1, 0);
	CHECK(SENT(&t, "\033OB\033OB\033OB"));
	CHECK(log_is(&t, ""));
	/* reporting: buttons 4 and 5 (64, 65), a press a notch */
	feeds(&t, "\033[?1000;1006h");
	clear(&t);
	wheel(&t, 2, 3, 2, 0);
	wheel(&t, 2, 3, -1, TSM_CONTROL_MASK);
	CHECK(SENT(&t, "\033[<64;3;4M\033[<64;3;4M\033[<81;3;4M"));
	feeds(&t, "\033[?1006l");
	clear(&t);
	wheel(&t, 0, 0, 1, 0);
	CHECK(SENT(&t, "\033[M`!!"));
	/* back to the normal screen, reporting off */
	feeds(&t, "\033[?1000l\033[?1049l");
	clear(&t);
	wheel(&t, 0, 0, -1, 0);
	CHECK(log_is(&t, "scroll -3;"));
	CHECK(t.n_sent == 0);
	term_fini(&t);
}

static void test_focus(void)
{
	struct term t;

	term_init(&t, COLS, ROWS);
	mouse_focus(t.mouse, false);
	mouse_focus(t.mouse, true);
	CHECK(t.n_sent == 0);
	feeds(&t, "\033[?1004h");
	mouse_focus(t.mouse, false);
	mouse_focus(t.mouse, true);
	CHECK(SENT(&t, "\033[O\033[I"));
	/* a selection being dragged ends when the VT goes */
	feeds(&t, "\033[?1004l");
	clear(&t);
	press(&t, 1, 1, 1, 0);
	mouse_focus(t.mouse, false);
	release(&t, 1, 1, 1, 0);
	CHECK(log_is(&t, "start 1,1 x1;end;"));
	CHECK(t.n_sent == 0);
	term_fini(&t);
}

/* ---- the snapshot ------------------------------------------------------------ */

/* An older consoled's snapshot: the MOUSE record (tag 9) taken out of every
 * header, each header's length and CRC made again. */
static void strip_mouse_record(int fd)
{
	struct stat st;
	uint8_t *map;

	CHECK(fstat(fd, &st) == 0);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(map != MAP_FAILED);
	for (unsigned slot = 0; slot < 2; slot++) {
		uint8_t *h = map + slot * 4096;
		uint32_t len, off = 32, crc;
		bool found = false;

		if (memcmp(h, "CONSNAP\n", 8) != 0)
			continue;
		len = get_le(h + 12, 4);
		while (off + 4 <= len) {
			uint16_t tag, rlen;
			uint32_t size;

			tag = (uint16_t)get_le(h + off, 2);
			rlen = (uint16_t)get_le(h + off + 2, 2);
			size = 4 + ((rlen + 3u) & ~3u);
			if (tag == 9) {
				memmove(h + off, h + off + size, len - off - size);
				len -= size;
				found = true;
				continue;
			}
			off += size;
		}
		CHECK(found);
		put_le(h + 12, len, 4);
		crc = (uint32_t)crc32(crc32(0, h, 24), h + 28, len - 28);
		put_le(h + 24, crc, 4);
	}
	munmap(map, (size_t)st.st_size);
}

/* Changes the MOUSE record's value in every header (CRC made again). */
static void patch_mouse_record(int fd, uint32_t value)
{
	struct stat st;
	uint8_t *map;

	CHECK(fstat(fd, &st) == 0);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(map != MAP_FAILED);
	for (unsigned slot = 0; slot < 2; slot++) {
		uint8_t *h = map + slot * 4096;
		uint32_t len, off = 32, crc;

		if (memcmp(h, "CONSNAP\n", 8) != 0)
			continue;
		len = get_le(h + 12, 4);
		while (off + 4 <= len) {
			uint16_t tag, rlen;

			tag = (uint16_t)get_le(h + off, 2);
			rlen = (uint16_t)get_le(h + off + 2, 2);
			if (tag == 9)
				put_le(h + off + 4, value, 4);
			off += 4 + ((rlen + 3u) & ~3u);
		}
		crc = (uint32_t)crc32(crc32(0, h, 24), h + 28, len - 28);
		put_le(h + 24, crc, 4);
	}
	munmap(map, (size_t)st.st_size);
}

static int restore(struct term *b, int fd)
{
	return snapshot_restore(fd, b->screen, b->vte, b->stream, b->table, NULL, NULL);
}

static void test_snapshot(void)
{
	const unsigned want = STREAM_MOUSE_BUTTON | STREAM_MOUSE_SGR | STREAM_MOUSE_FOCUS |
			      STREAM_MOUSE_BRACKETED_PASTE;
	struct term a, b;
	struct snapshot *s;

	term_init(&a, 20, 6);
	CHECK(snapshot_new(100, &s) == 0);
	feeds(&a, "hello\r\n\033[?1002;1006;1004;2004h");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);

	/* restored: the same modes, the same DECRQM answers, the same reports */
	term_init(&b, 11, 4);
	feeds(&b, "\033[?9;1005h");
	CHECK(restore(&b, snapshot_fd(s)) == 0);
	CHECK_EQ_U(stream_mouse_modes(b.stream), want);
	clear(&b);
	feeds(&b, "\033[?1002$p\033[?1005$p\033[?9$p");
	CHECK(strcmp(b.replies, "\033[?1002;1$y\033[?1005;2$y\033[?9;2$y") == 0);
	mouse_set_geometry(b.mouse, CW, CH, 20, 6);
	press(&b, 2, 1, 1, 0);
	CHECK(SENT(&b, "\033[<0;3;2M"));
	term_fini(&b);

	/* a change of the modes alone is a new header */
	feeds(&a, "\033[?1002l");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	term_init(&b, 11, 4);
	CHECK(restore(&b, snapshot_fd(s)) == 0);
	CHECK_EQ_U(stream_mouse_modes(b.stream), want & ~STREAM_MOUSE_BUTTON);
	term_fini(&b);

	/* an older consoled's snapshot (no MOUSE record): restored, every
	 * mouse mode off */
	feeds(&a, "\033[?1003h");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	strip_mouse_record(snapshot_fd(s));
	term_init(&b, 11, 4);
	feeds(&b, "\033[?1000h");
	CHECK(restore(&b, snapshot_fd(s)) == 0);
	CHECK_EQ_U(stream_mouse_modes(b.stream), 0);
	term_fini(&b);
	snapshot_free(s);

	/* values a consoled never writes are refused, the snapshot whole */
	static const uint32_t bad[] = {
	    STREAM_MOUSE_NORMAL | STREAM_MOUSE_ANY, /* two tracking modes */
	    STREAM_MOUSE_SGR | STREAM_MOUSE_URXVT,  /* two encodings */
	    1u << 9,				    /* unknown */
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		CHECK(snapshot_new(100, &s) == 0);
		CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
		patch_mouse_record(snapshot_fd(s), bad[i]);
		term_init(&b, 11, 4);
		feeds(&b, "\033[?1000h");
		CHECK(restore(&b, snapshot_fd(s)) == -EBADMSG);
		CHECK_EQ_U(stream_mouse_modes(b.stream), STREAM_MOUSE_NORMAL);
		term_fini(&b);
		snapshot_free(s);
	}
	term_fini(&a);
}

int main(void)
{
	log_set_max_level(LOG_WARNING);
	RUN(test_modes);
	RUN(test_decrqm);
	RUN(test_resets);
	RUN(test_encode);
	RUN(test_reports);
	RUN(test_x10_limit);
	RUN(test_motion);
	RUN(test_shift);
	RUN(test_local);
	RUN(test_clicks);
	RUN(test_wheel);
	RUN(test_focus);
	RUN(test_snapshot);
	return TESTS_RESULT();
}
