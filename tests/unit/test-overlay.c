/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel messages' overlay laid out (overlay.c, pure): the band at the
 * logical grid of every rotation, its look, a flood kept to its rows, what
 * a message's text is shown as, and the view's pages and both its ends.
 * The pixels are test-render's (test_overlay_band).
 */
#include <stdlib.h>

#include "../../daemon/screen/overlay.h"
#include "../../daemon/terminal/cluster.h"
#include "../../daemon/util/util.h"
#include "tests.h"

/* Row `row` of the grid as UTF-8, trailing blanks cut ("" when the overlay
 * does not cover it: then *covered is false). */
static const char *row_text(const struct overlay *o, unsigned row, bool *covered)
{
	static char buf[1024];
	uint32_t cps[256];
	size_t len = 0;

	*covered = overlay_row_text(o, row, o->cols, cps);
	if (!*covered) {
		buf[0] = '\0';
		return buf;
	}
	for (unsigned x = 0; x < o->cols; x++)
		if (cps[x] != 0) /* a wide character's right half */
			len += utf8_put(cps[x], buf + len);
	while (len > 0 && buf[len - 1] == ' ')
		len--;
	buf[len] = '\0';
	return buf;
}

#define CHECK_ROW(o, y, text)                                                                      \
	do {                                                                                       \
		bool c_;                                                                           \
		const char *r_ = row_text((o), (y), &c_);                                          \
		if (!c_ || strcmp(r_, (text)) != 0) {                                              \
			fprintf(stderr, "%s:%d: row %u is '%s'%s, expected '%s'\n", __FILE__,      \
				__LINE__, (unsigned)(y), r_, c_ ? "" : " (not covered)", (text));  \
			tests_failed = 1;                                                          \
		}                                                                                  \
	} while (0)

static const struct overlay_msg msgs[] = {
    {1234567, 6, "usb 1-1: new high-speed USB device number 2 using xhci_hcd"},
    {2000001, 3, "EXT4-fs error (device sda1): ext4_lookup: deleted inode referenced: 12"},
    {98765432101, 2, "Out of memory: Killed process 4242 (stress)"},
};

static void test_time(void)
{
	char buf[32];

	CHECK_EQ_U(overlay_format_time(1234567, buf, sizeof(buf)), 15);
	CHECK(strcmp(buf, "[    1.234567] ") == 0);
	overlay_format_time(0, buf, sizeof(buf));
	CHECK(strcmp(buf, "[    0.000000] ") == 0);
	overlay_format_time(98765432101, buf, sizeof(buf));
	CHECK(strcmp(buf, "[98765.432101] ") == 0);
	/* printk's %5lu grows past five digits */
	overlay_format_time(123456000001, buf, sizeof(buf));
	CHECK(strcmp(buf, "[123456.000001] ") == 0);
}

/* A 640x480 screen with an 8x16 cell: 80x30 upright and upside down,
 * 60x40 turned sideways. The band follows the grid it is given. */
static void test_band_rotations(void)
{
	static const unsigned grid[4][2] = {{80, 30}, {60, 40}, {80, 30}, {60, 40}};

	for (unsigned rot = 0; rot < 4; rot++) {
		unsigned cols = grid[rot][0], rows = grid[rot][1];
		struct overlay o;
		bool covered;
		char want[128];

		overlay_init(&o);
		overlay_band(&o, cols, rows, 3, OVERLAY_BOTTOM, msgs, 3, 0);
		CHECK_EQ_U(o.cols, cols);
		CHECK_EQ_U(o.n, 3);
		CHECK_EQ_U(o.top, rows - 3);
		/* the newest last, each cut at the width */
		snprintf(
		    want, sizeof(want), "%.*s", (int)cols,
		    "[    1.234567] usb 1-1: new high-speed USB device number 2 using xhci_hcd");
		CHECK_ROW(&o, rows - 3, want);
		snprintf(want, sizeof(want), "%.*s", (int)cols,
			 "[    2.000001] EXT4-fs error (device sda1): ext4_lookup: deleted inode "
			 "referenced: 12");
		CHECK_ROW(&o, rows - 2, want);
		CHECK_ROW(&o, rows - 1,
			  "[98765.432101] Out of memory: Killed process 4242 (stress)");
		row_text(&o, rows - 4, &covered);
		CHECK(!covered);
		row_text(&o, 0, &covered);
		CHECK(!covered);

		/* at the top: the same rows from row 0 */
		overlay_band(&o, cols, rows, 3, OVERLAY_TOP, msgs, 2, 0);
		CHECK_EQ_U(o.top, 0);
		CHECK_EQ_U(o.n, 2);
		CHECK_ROW(&o, 1, want);
		row_text(&o, 2, &covered);
		CHECK(!covered);
		overlay_fini(&o);
	}
}

/* White on blue, the time bright green, errors yellow: every cell reverse
 * video with its colours swapped (1 bpp shows the reverse). */
static void test_band_look(void)
{
	struct overlay o;
	const struct overlay_cell *c;

	overlay_init(&o);
	overlay_band(&o, 40, 10, 2, OVERLAY_BOTTOM, msgs, 2, 0);
	for (unsigned i = 0; i < 2 * 40; i++) {
		c = &o.cells[i];
		CHECK(c->attr.inverse);
		CHECK_EQ_U(c->attr.fccode, OVERLAY_BAND_COLOR_BG);
		CHECK(!c->attr.bold && !c->attr.underline && !c->attr.italic);
	}
	c = o.cells; /* "[    1.234567] usb" */
	CHECK_EQ_U(c[0].attr.bccode, OVERLAY_BAND_COLOR_TIME);
	CHECK_EQ_U(c[13].attr.bccode, OVERLAY_BAND_COLOR_TIME);
	CHECK_EQ_U(c[15].ch, 'u');
	CHECK_EQ_U(c[15].attr.bccode, OVERLAY_BAND_COLOR_TEXT);
	c = o.cells + 40; /* level 3: yellow */
	CHECK_EQ_U(c[0].attr.bccode, OVERLAY_BAND_COLOR_TIME);
	CHECK_EQ_U(c[15].attr.bccode, OVERLAY_BAND_COLOR_ERR);
	CHECK_EQ_U(c[39].attr.bccode, OVERLAY_BAND_COLOR_ERR);
	/* a short message: blank in the band's colours to the end */
	overlay_band(&o, 40, 10, 1, OVERLAY_BOTTOM, &(struct overlay_msg){5, 6, "x"}, 1, 0);
	CHECK_EQ_U(o.cells[39].ch, ' ');
	CHECK_EQ_U(o.cells[39].attr.bccode, OVERLAY_BAND_COLOR_TEXT);
	CHECK(o.cells[39].attr.inverse);
	overlay_fini(&o);
}

/* A flood: the newest messages, one row saying how many are not shown, and
 * nothing grows with the number of messages. */
static void test_band_flood(void)
{
	size_t n = 200000;
	struct overlay_msg *many = calloc(n, sizeof(*many));
	struct overlay o;

	for (size_t i = 0; i < n; i++)
		many[i] = (struct overlay_msg){i, 6, "flood"};
	many[n - 1].text = "newest";
	overlay_init(&o);
	overlay_band(&o, 80, 30, 4, OVERLAY_BOTTOM, many, n, 1000000);
	CHECK_EQ_U(o.n, 4);
	CHECK_EQ_U(o.top, 26);
	CHECK(o.cap <= 4 * 80);
	/* 1000000 skipped + 200000 - 3 shown */
	CHECK_ROW(&o, 26, "-- 1199997 kernel messages not shown --");
	CHECK_ROW(&o, 27, "[    0.199997] flood");
	CHECK_ROW(&o, 29, "[    0.199999] newest");

	/* only skipped ones: the notice and every message given */
	overlay_band(&o, 80, 30, 4, OVERLAY_BOTTOM, many + n - 2, 2, 1);
	CHECK_EQ_U(o.n, 3);
	CHECK_ROW(&o, 27, "-- 1 kernel message not shown --");
	CHECK_ROW(&o, 29, "[    0.199999] newest");

	/* a band of one row: the newest, no notice */
	overlay_band(&o, 80, 30, 1, OVERLAY_BOTTOM, many, n, 7);
	CHECK_EQ_U(o.n, 1);
	CHECK_ROW(&o, 29, "[    0.199999] newest");

	/* more lines than the screen has: the screen */
	overlay_band(&o, 20, 3, 50, OVERLAY_TOP, many, n, 0);
	CHECK_EQ_U(o.n, 3);
	CHECK_ROW(&o, 0, "-- 199998 kernel mes");
	CHECK(o.cap <= 4 * 80); /* the earlier, larger band's cells reused */

	/* nothing to show: nothing covered */
	overlay_band(&o, 80, 30, 4, OVERLAY_BOTTOM, many, 0, 0);
	CHECK_EQ_U(o.n, 0);
	overlay_fini(&o);
	free(many);
}

/* What the kernel's text is shown as: controls and malformed UTF-8 as
 * U+FFFD, tab as a space, combining marks left out, stand-in code points
 * as U+FFFD, wide characters in two cells and never cut in half. */
static void test_text(void)
{
	struct overlay o;
	struct overlay_msg m = {0, 6,
				"a\tb\x1b[31m\x7f\xc2\x9b"
				"c\xff\xc3"
				"d\xe0\x80\xafx\xcc\x81y\xf4\x80\x80\x80z\xe6\x97\xa5"};
	const struct overlay_cell *c;

	overlay_init(&o);
	overlay_band(&o, 40, 5, 1, OVERLAY_BOTTOM, &m, 1, 0);
	CHECK_ROW(&o, 4,
		  "[    0.000000] a b\xef\xbf\xbd[31m\xef\xbf\xbd\xef\xbf\xbd"
		  "c\xef\xbf\xbd\xef\xbf\xbd"
		  "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdxy\xef\xbf\xbdz\xe6\x97\xa5");
	c = o.cells;
	/* the wide character: its cell of width 2, then its right half */
	for (unsigned x = 0; x < 39; x++)
		if (c[x].ch == 0x65e5) {
			CHECK_EQ_U(c[x].width, 2);
			CHECK_EQ_U(c[x + 1].width, 0);
			CHECK_EQ_U(c[x + 1].ch, 0);
		}
	for (unsigned x = 0; x < 40; x++)
		CHECK(c[x].ch < CLUSTER_FIRST);

	/* a wide character that would straddle the edge ends the row: what
	 * follows it does not show in its place */
	overlay_band(&o, 16, 5, 1, OVERLAY_BOTTOM,
		     &(struct overlay_msg){0, 6, "\xe6\x97\xa5x\xe6\x97\xa5"}, 1, 0);
	CHECK_ROW(&o, 4, "[    0.000000]");
	CHECK_EQ_U(o.cells[15].width, 1);
	CHECK_EQ_U(o.cells[15].ch, ' ');
	overlay_fini(&o);
}

/* The view: every message, wrapped under the text, the status line on
 * top, a place by message clamped to both ends, a page at a time, a search,
 * and new messages that do not move it. */
static void test_view(void)
{
	struct overlay_msg v[20];
	char texts[20][128];
	struct overlay o;
	struct overlay_view_pos pos, kept;
	unsigned pages = 0;

	for (unsigned i = 0; i < 20; i++) {
		/* every third message takes two rows at 40 columns */
		snprintf(texts[i], sizeof(texts[i]), "message %u%s", i,
			 i % 3 == 0 ? " with a tail that does not fit in a row" : "");
		v[i] = (struct overlay_msg){(uint64_t)i * 1000000, 6, texts[i]};
	}
	overlay_init(&o);
	/* 40x6: a status line and 5 rows of text; 16 rows of text in all:
	 * at the end, message 8 on top */
	pos = (struct overlay_view_pos){true, 0, 0};
	overlay_view(&o, 40, 6, v, 12, &pos, NULL, "Ctrl+Alt+K");
	CHECK_EQ_U(o.top, 0);
	CHECK_EQ_U(o.n, 6);
	CHECK(pos.end && pos.msg == 8 && pos.row == 0);
	CHECK_EQ_U(o.view_first, 8);
	CHECK_EQ_U(o.view_last, 11);
	CHECK_ROW(&o, 0, " Kernel messages 9-12 of 12   Shift+Page");
	CHECK_ROW(&o, 1, "[    8.000000] message 8");
	CHECK_ROW(&o, 2, "[    9.000000] message 9 with a tail tha");
	CHECK_ROW(&o, 3, "               t does not fit in a row");
	CHECK_ROW(&o, 5, "[   11.000000] message 11");

	/* the oldest end */
	overlay_view_home(&pos);
	overlay_view(&o, 40, 6, v, 12, &pos, NULL, "Ctrl+Alt+K");
	CHECK(!pos.end && pos.msg == 0);
	CHECK_ROW(&o, 0, " Kernel messages 1-4 of 12   Shift+PageU");
	CHECK_ROW(&o, 1, "[    0.000000] message 0 with a tail tha");
	CHECK_ROW(&o, 2, "               t does not fit in a row");
	CHECK_ROW(&o, 5, "[    3.000000] message 3 with a tail tha");
	/* a page further up stays there, a page down moves 4 rows (5 less
	 * one kept): message 3 on top */
	kept = pos;
	overlay_view_page(&o, v, 12, -1, &pos);
	CHECK(!pos.end && pos.msg == 0 && pos.row == 0);
	overlay_view_page(&o, v, 12, 1, &kept);
	CHECK(!kept.end && kept.msg == 3 && kept.row == 0);

	/* paging down from the top reaches the end and stays: 0, 4, 8, end */
	while (!pos.end && pages < 100) {
		overlay_view(&o, 40, 6, v, 12, &pos, NULL, NULL);
		overlay_view_page(&o, v, 12, 1, &pos);
		overlay_view(&o, 40, 6, v, 12, &pos, NULL, NULL);
		pages++;
	}
	CHECK_EQ_U(pages, 3);
	overlay_view_page(&o, v, 12, 1, &pos);
	overlay_view(&o, 40, 6, v, 12, &pos, NULL, NULL);
	CHECK(pos.end);
	CHECK_ROW(&o, 5, "[   11.000000] message 11");
	/* a place inside a wrapped message shows its second row */
	pos = (struct overlay_view_pos){false, 6, 1};
	overlay_view(&o, 40, 6, v, 12, &pos, NULL, NULL);
	CHECK_ROW(&o, 1, "               t does not fit in a row");
	CHECK_ROW(&o, 2, "[    7.000000] message 7");
	/* new messages do not move it; at the end, they are followed */
	overlay_view(&o, 40, 6, v, 20, &pos, NULL, NULL);
	CHECK(!pos.end && pos.msg == 6 && pos.row == 1);
	CHECK_ROW(&o, 2, "[    7.000000] message 7");
	pos = (struct overlay_view_pos){true, 0, 0};
	overlay_view(&o, 40, 6, v, 20, &pos, NULL, NULL);
	CHECK_ROW(&o, 5, "[   19.000000] message 19");

	/* fewer rows than the page: from the top */
	pos = (struct overlay_view_pos){false, 1, 0};
	overlay_view(&o, 40, 6, v + 10, 2, &pos, NULL, NULL);
	CHECK(pos.end && pos.msg == 0);
	CHECK_ROW(&o, 1, "[   10.000000] message 10");
	CHECK_ROW(&o, 2, "[   11.000000] message 11");
	CHECK_ROW(&o, 3, "");
	/* search: back from the message on the first row, in either case */
	pos = (struct overlay_view_pos){true, 0, 0};
	overlay_view(&o, 40, 6, v, 12, &pos, NULL, NULL); /* message 8 on top */
	CHECK(overlay_view_find(v, 12, "MESSAGE 7", &pos));
	CHECK(!pos.end && pos.msg == 7 && pos.row == 0);
	overlay_view(&o, 40, 6, v, 12, &pos, NULL, NULL);
	CHECK_ROW(&o, 1, "[    7.000000] message 7");
	/* the previous match of a string every message holds */
	CHECK(overlay_view_find(v, 12, "message", &pos));
	overlay_view(&o, 40, 6, v, 12, &pos, "find: message_", NULL);
	CHECK_ROW(&o, 0, " Kernel messages 7-10 of 12   find: mess");
	CHECK_ROW(&o, 1, "[    6.000000] message 6 with a tail tha");
	CHECK(overlay_view_find(v, 12, "message 1", &pos));
	CHECK_EQ_U(pos.msg, 1);
	/* the oldest */
	CHECK(overlay_view_find(v, 12, "message 0", &pos));
	CHECK_EQ_U(pos.msg, 0);
	/* none before: nothing moves */
	overlay_view(&o, 40, 6, v, 12, &pos, NULL, NULL);
	CHECK(!overlay_view_find(v, 12, "message 11", &pos));
	CHECK(!overlay_view_find(v, 12, "no such text", &pos));
	CHECK(!overlay_view_find(v, 12, "", &pos));
	CHECK(!pos.end && pos.msg == 0);
	pos = (struct overlay_view_pos){true, 0, 0};
	overlay_view(&o, 60, 3, v, 0, &pos, NULL, NULL);
	CHECK_ROW(&o, 0, " Kernel messages: none yet   Esc: close");
	overlay_clear(&o);
	CHECK_EQ_U(o.n, 0);
	overlay_fini(&o);
}

/* A line with no time (the last boot's crash's heading): from the first
 * column, wrapped there too, beside timed ones. */
static void test_view_untimed(void)
{
	const struct overlay_msg v[] = {
	    {OVERLAY_UNTIMED, 6, "--- the last boot's panic (pstore dmesg-ramoops-0) ---"},
	    {20500000, 0, "Kernel panic"},
	};
	struct overlay o;
	struct overlay_view_pos pos = {true, 0, 0};

	overlay_init(&o);
	overlay_view(&o, 40, 5, v, 2, &pos, NULL, NULL);
	CHECK_EQ_U(o.view_count, 2);
	CHECK_ROW(&o, 1, "--- the last boot's panic (pstore dmesg-");
	CHECK_ROW(&o, 2, "ramoops-0) ---");
	CHECK_ROW(&o, 3, "[   20.500000] Kernel panic");
	overlay_fini(&o);
}

int main(void)
{
	RUN(test_time);
	RUN(test_band_rotations);
	RUN(test_band_look);
	RUN(test_band_flood);
	RUN(test_text);
	RUN(test_view);
	RUN(test_view_untimed);
	return TESTS_RESULT();
}
