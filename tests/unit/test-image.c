/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sixel images: the image store (image.h) on its own, with a real libtsm
 * screen to sweep, then through the pty stream stage: placement at the
 * cursor as xterm places it, DECSET 80 and 8452, scrolling into the
 * scrollback and back, text and erasures over an image, the memory budget,
 * code point recycling, RIS, and the answers to DA1, XTSMGRAPHICS and
 * DECRQM.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "../../daemon/terminal/image.h"
#include "../../daemon/terminal/snapshot.h"
#include "../../daemon/terminal/tsmpeek.h"
#include "test-stream-fake.h"

#define CW 8
#define CH 16

/* The fake terminal with an image store of `budget` bytes and a cell of
 * CW x CH pixels. */
static struct image_store *fake_images(struct fake_term *f, unsigned cols, unsigned rows,
				       size_t budget)
{
	struct image_store *st = image_store_new(budget);

	fake_term_init(f, cols, rows);
	stream_free(f->stream);
	f->stream = stream_new(&(struct stream_config){.vte = f->vte,
						       .screen = f->screen,
						       .table = f->table,
						       .images = st,
						       .palette = &f->palette,
						       .reply = fake_reply,
						       .userdata = f});
	stream_set_cell_size(f->stream, CW, CH);
	return st;
}

static uint32_t *pixels_of(unsigned w, unsigned h, uint32_t v)
{
	uint32_t *p = malloc((size_t)w * h * sizeof(*p));

	for (size_t i = 0; i < (size_t)w * h; i++)
		p[i] = v + (uint32_t)i;
	return p;
}

static void write_cp(struct tsm_screen *screen, unsigned x, unsigned y, uint32_t cp)
{
	struct tsm_screen_attr a = {.fccode = TSM_COLOR_FOREGROUND, .bccode = TSM_COLOR_BACKGROUND};

	tsm_screen_move_to(screen, x, y);
	tsm_screen_write(screen, cp, &a);
}

/* A tile shows its part of the image, scaled to another cell size by
 * nearest neighbour; what is past the image is transparent. */
static void test_store_pixels(void)
{
	struct fake_term f;
	struct image_store *st = fake_images(&f, 20, 5, 1 << 20);
	uint32_t first = 0, out[CW * CH * 4];
	uint64_t gen;

	/* 12 x 20 pixels: 2 x 2 cells, the right and bottom ones partly */
	CHECK(image_store_add(st, pixels_of(12, 20, 0xff000000), 12, 20, CW, CH, 2, 2, f.screen,
			      &first) == 0);
	CHECK(image_is_tile(first));
	CHECK(image_tile_pixels(st, first, CW, CH, out));
	CHECK_EQ_U(out[0], 0xff000000);
	CHECK_EQ_U(out[CW + 3], 0xff000000 + 12 + 3);
	CHECK(image_tile_pixels(st, first + 1, CW, CH, out)); /* tile column 1 */
	CHECK_EQ_U(out[0], 0xff000000 + 8);
	CHECK_EQ_U(out[4], 0);				      /* x 12: past the image */
	CHECK(image_tile_pixels(st, first + 3, CW, CH, out)); /* row 1, column 1 */
	CHECK_EQ_U(out[3 * CW + 1], 0xff000000 + 19 * 12 + 9);
	CHECK_EQ_U(out[4 * CW], 0); /* y 20 */
	/* twice the cell: each pixel twice in both directions */
	CHECK(image_tile_pixels(st, first, 2 * CW, 2 * CH, out));
	CHECK_EQ_U(out[2 * CW * 2 + 2], 0xff000000 + 12 + 1);
	CHECK(!image_tile_pixels(st, first + 4, CW, CH, out));
	CHECK(!image_tile_pixels(st, 'a', CW, CH, out));
	CHECK(!image_tile_pixels(NULL, first, CW, CH, out) && image_store_generation(NULL) == 0);
	CHECK_EQ_U(image_store_memory(st), 12 * 20 * 4);
	/* columns clipped at the right edge keep no pixels */
	gen = image_store_generation(st);
	CHECK(image_store_add(st, pixels_of(24, 16, 0xff000000), 24, 16, CW, CH, 1, 1, f.screen,
			      &first) == 0);
	CHECK_EQ_U(image_store_memory(st), 12 * 20 * 4 + 8 * 16 * 4);
	CHECK(image_tile_pixels(st, first, CW, CH, out));
	CHECK_EQ_U(out[CW + 1], 0xff000000 + 24 + 1);
	CHECK(image_store_add(st, NULL, 1, 1, CW, CH, 1, 1, f.screen, &first) == -EINVAL);
	CHECK(image_store_generation(st) == gen); /* nothing changed what a tile shows */
	image_store_wipe(st);
	CHECK(image_store_generation(st) != gen);
	CHECK(!image_tile_pixels(st, first, CW, CH, out));
	CHECK_EQ_U(image_store_memory(st), 0);
	fake_term_fini(&f);
	image_store_free(st);
}

/* The budget drops the oldest images first; their tiles answer false; an
 * image alone over the budget is refused. */
static void test_store_budget(void)
{
	struct fake_term f;
	size_t one = CW * CH * 4;
	struct image_store *st = fake_images(&f, 20, 5, 2 * one);
	uint32_t a, b, c, out[CW * CH];
	uint64_t gen;

	CHECK(image_store_add(st, pixels_of(CW, CH, 1), CW, CH, CW, CH, 1, 1, f.screen, &a) == 0);
	CHECK(image_store_add(st, pixels_of(CW, CH, 2), CW, CH, CW, CH, 1, 1, f.screen, &b) == 0);
	gen = image_store_generation(st);
	CHECK(image_store_add(st, pixels_of(CW, CH, 3), CW, CH, CW, CH, 1, 1, f.screen, &c) == 0);
	CHECK(image_store_generation(st) != gen);
	CHECK(!image_tile_pixels(st, a, CW, CH, out));
	CHECK(image_tile_pixels(st, b, CW, CH, out) && out[0] == 2);
	CHECK(image_tile_pixels(st, c, CW, CH, out) && out[0] == 3);
	CHECK(a != b && b != c && a != c);
	CHECK_EQ_U(image_store_count(st), 2);
	CHECK(image_store_add(st, pixels_of(CW, 3 * CH, 4), CW, 3 * CH, CW, CH, 1, 3, f.screen,
			      &a) == -E2BIG);
	/* the refused one dropped nothing */
	CHECK(image_tile_pixels(st, b, CW, CH, out));
	CHECK(!image_store_make_room(st, 3 * one));
	CHECK(image_store_make_room(st, one) && image_store_count(st) == 1);
	CHECK(!image_tile_pixels(st, b, CW, CH, out));
	fake_term_fini(&f);
	image_store_free(st);
}

/* When the code points run out, a sweep over both screens and the
 * scrollback finds the held ones: they are never handed out again, an
 * image still held keeps its pixels, one no cell holds is freed. */
static void test_store_recycle(void)
{
	struct fake_term f;
	struct image_store *st = fake_images(&f, 20, 5, 64 << 20);
	unsigned big = IMAGE_TILES - 100;
	uint32_t a, b, c, out[1];
	uint32_t held_main, held_alt, held_sb;

	CHECK(image_store_add(st, pixels_of(big, 1, 0), big, 1, 1, 1, big, 1, f.screen, &a) == 0);
	CHECK_EQ_U(a, IMAGE_FIRST);
	/* cells hold three of its code points: on the main screen, in the
	 * scrollback (scrolled there) and on the alternate screen */
	held_sb = a + 5000;
	held_main = a + 100;
	held_alt = a + 30000;
	write_cp(f.screen, 0, 0, held_sb);
	tsm_screen_move_to(f.screen, 0, 4);
	for (int i = 0; i < 5; i++)
		tsm_screen_newline(f.screen);
	write_cp(f.screen, 3, 2, held_main);
	tsm_screen_set_flags(f.screen, TSM_SCREEN_ALTERNATE);
	write_cp(f.screen, 7, 1, held_alt);
	tsm_screen_reset_flags(f.screen, TSM_SCREEN_ALTERNATE);
	/* a second image of one image's worth of the pool: no room without
	 * a sweep */
	CHECK(image_store_add(st, pixels_of(200, 1, 7), 200, 1, 1, 1, 200, 1, f.screen, &b) == 0);
	CHECK(b + 200 <= held_main || b > held_main);
	CHECK(b + 200 <= held_sb || b > held_sb);
	CHECK(b + 200 <= held_alt || b > held_alt);
	CHECK(image_tile_pixels(st, held_main, 1, 1, out) && out[0] == 100);
	CHECK(image_tile_pixels(st, b, 1, 1, out) && out[0] == 7);
	CHECK_EQ_U(image_store_count(st), 2);
	/* every free run is handed out, never a held code point */
	for (unsigned i = 0; i < 400; i++) {
		if (image_store_add(st, pixels_of(150, 1, 9), 150, 1, 1, 1, 150, 1, f.screen, &c) !=
		    0)
			break;
		CHECK(!(c <= held_main && held_main < c + 150));
		CHECK(!(c <= held_sb && held_sb < c + 150));
		CHECK(!(c <= held_alt && held_alt < c + 150));
	}
	/* the cells erased: every image goes at the next sweep */
	tsm_screen_erase_screen(f.screen, false);
	tsm_screen_clear_sb(f.screen);
	tsm_screen_set_flags(f.screen, TSM_SCREEN_ALTERNATE);
	tsm_screen_erase_screen(f.screen, false);
	tsm_screen_reset_flags(f.screen, TSM_SCREEN_ALTERNATE);
	CHECK(image_store_add(st, pixels_of(30000, 1, 1), 30000, 1, 1, 1, 30000, 1, f.screen, &c) ==
	      0);
	/* all free again: handed out from the start, showing the new one */
	CHECK_EQ_U(c, IMAGE_FIRST);
	CHECK(image_tile_pixels(st, held_main, 1, 1, out) && out[0] == 101);
	CHECK_EQ_U(image_store_count(st), 1);
	CHECK_EQ_U(image_store_reserved(st), 30000);
	fake_term_fini(&f);
	image_store_free(st);
}

/* When cells hold nearly every code point, a sweep that finds fewer than
 * 1/16 free allows the next one only 100 ms later: a flood of small images
 * cannot make every placement read the whole scrollback. */
static void test_store_starved(void)
{
	struct fake_term f;
	struct image_store *st = fake_images(&f, 20, 5, 64 << 20);
	unsigned n = IMAGE_TILES - 10;
	uint32_t a, b;

	tsm_screen_resize(f.screen, 300, 250);
	CHECK(image_store_add(st, pixels_of(n, 1, 0), n, 1, 1, 1, n, 1, f.screen, &a) == 0);
	tsm_screen_move_to(f.screen, 0, 0);
	for (unsigned k = 0; k < n; k++)
		tsm_screen_write(f.screen, a + k, &(struct tsm_screen_attr){0});
	CHECK(image_store_add(st, pixels_of(20, 1, 0), 20, 1, 1, 1, 20, 1, f.screen, &b) ==
	      -ENOSPC);
	/* every cell erased, but no sweep yet */
	tsm_screen_erase_screen(f.screen, false);
	CHECK(image_store_add(st, pixels_of(20, 1, 0), 20, 1, 1, 1, 20, 1, f.screen, &b) ==
	      -ENOSPC);
	usleep(110 * 1000);
	CHECK(image_store_add(st, pixels_of(20, 1, 0), 20, 1, 1, 1, 20, 1, f.screen, &b) == 0);
	CHECK_EQ_U(image_store_count(st), 1);
	fake_term_fini(&f);
	image_store_free(st);
}

/* Free code points in pieces too short for an image (every other one held):
 * the sweep that finds no run makes the next one wait too, so that each
 * placement does not read every line again. */
static void test_store_fragmented(void)
{
	struct fake_term f;
	struct image_store *st = fake_images(&f, 20, 5, 64 << 20);
	unsigned n = IMAGE_TILES;
	uint64_t g;
	uint32_t a, b;

	tsm_screen_resize(f.screen, 300, 250);
	CHECK(image_store_add(st, pixels_of(n, 1, 0), n, 1, 1, 1, n, 1, f.screen, &a) == 0);
	tsm_screen_move_to(f.screen, 0, 0);
	for (unsigned k = 0; k < n; k++)
		tsm_screen_write(f.screen, k % 2 ? ' ' : a + k, &(struct tsm_screen_attr){0});
	CHECK(image_store_add(st, pixels_of(2, 1, 0), 2, 1, 1, 1, 2, 1, f.screen, &b) == -ENOSPC);
	g = image_store_generation(st);
	CHECK(image_store_add(st, pixels_of(2, 1, 0), 2, 1, 1, 1, 2, 1, f.screen, &b) == -ENOSPC);
	CHECK_EQ_U(image_store_generation(st), g); /* no second sweep */
	/* a one-cell image fits a piece */
	CHECK(image_store_add(st, pixels_of(1, 1, 0), 1, 1, 1, 1, 1, 1, f.screen, &b) == 0);
	fake_term_fini(&f);
	image_store_free(st);
}

/* A restored screen (or one a wiped store never saw) holds tile code points
 * the store knows nothing of: they draw as the placeholder, and the first
 * placement sweeps before it hands any out. */
static void test_store_restored(void)
{
	struct fake_term f;
	struct image_store *st;
	uint32_t first, out[CW * CH];

	fake_term_init(&f, 20, 5);
	write_cp(f.screen, 0, 0, IMAGE_FIRST);
	write_cp(f.screen, 1, 0, IMAGE_FIRST + 1);
	write_cp(f.screen, 0, 1, IMAGE_FIRST + 3);
	st = image_store_new(1 << 20);
	CHECK(!image_tile_pixels(st, IMAGE_FIRST, CW, CH, out));
	CHECK(image_store_add(st, pixels_of(2 * CW, CH, 0), 2 * CW, CH, CW, CH, 2, 1, f.screen,
			      &first) == 0);
	CHECK_EQ_U(first, IMAGE_FIRST + 4);
	CHECK(image_store_add(st, pixels_of(CW, CH, 0), CW, CH, CW, CH, 1, 1, f.screen, &first) ==
	      0);
	CHECK_EQ_U(first, IMAGE_FIRST + 6);
	CHECK(!image_tile_pixels(st, IMAGE_FIRST + 1, CW, CH, out));
	/* wiped: swept again before the next */
	image_store_wipe(st);
	CHECK(image_store_add(st, pixels_of(CW, CH, 0), CW, CH, CW, CH, 1, 1, f.screen, &first) ==
	      0);
	CHECK_EQ_U(first, IMAGE_FIRST + 2);
	image_store_free(st);
	fake_term_fini(&f);
}

/* Sixel data: `bands` bands of six rows, each `w` pixels of register 1 set
 * to red, in a DCS with parameters `params`. */
static const char *sixel(char *buf, size_t size, const char *params, unsigned w, unsigned bands)
{
	size_t n = (size_t)snprintf(buf, size, "\033P%sq#1;2;100;0;0#1", params);

	for (unsigned b = 0; b < bands; b++)
		n += (size_t)snprintf(buf + n, size - n, "%s!%u~", b ? "-" : "", w);
	snprintf(buf + n, size - n, "\033\\");
	return buf;
}

/* Feeds `before` (cursor moves, modes), then a sixel image of w x 6 * bands
 * pixels, and reads the screen. */
static void place_at(struct fake_term *f, const char *before, unsigned w, unsigned bands)
{
	char buf[512];

	fake_feed(f, before);
	fake_feed(f, sixel(buf, sizeof(buf), "", w, bands));
	fake_term_read(f);
}

static unsigned cx(struct fake_term *f)
{
	return tsm_screen_get_cursor_x(f->screen);
}

static unsigned cy(struct fake_term *f)
{
	return tsm_screen_get_cursor_y(f->screen);
}

/* Placed at the cursor: consecutive tiles row by row; the cursor on the
 * image's last row at the column it started (xterm), or with 8452 right of
 * it, or past the right edge at the next line's start; clipped at the right
 * edge; in sixel display mode (80) at the top left, the cursor kept. */
static void test_place(void)
{
	struct fake_term f;
	struct image_store *st = fake_images(&f, 20, 6, 1 << 20);
	char buf[256];
	uint32_t first, out[CW * CH];
	unsigned sb;

	/* 16 x 18 pixels: 2 x 2 cells */
	place_at(&f, "ab", 16, 3);
	first = f.cells[0][2].ch;
	CHECK(image_is_tile(first));
	CHECK_EQ_U(f.cells[0][3].ch, first + 1);
	CHECK_EQ_U(f.cells[1][2].ch, first + 2);
	CHECK_EQ_U(f.cells[1][3].ch, first + 3);
	CHECK(f.cells[0][1].ch == 'b' && f.cells[0][4].ch == ' ' && f.cells[2][2].ch == ' ');
	CHECK(cx(&f) == 2 && cy(&f) == 1);
	CHECK(image_tile_pixels(st, first + 2, CW, CH, out));
	CHECK_EQ_U(out[0], 0xffff0000); /* row 16: the third band */
	CHECK_EQ_U(out[2 * CW], 0);	/* row 18: past the image */
	/* P2 = 1: pixels never drawn stay transparent; else register 0 */
	fake_feed(&f, "\033[H");
	fake_feed(&f, "\033Pq#1;2;100;0;0#1!4@-!4@\033\\"); /* rows 0 and 6 */
	fake_term_read(&f);
	CHECK(image_tile_pixels(st, f.cells[0][0].ch, CW, CH, out));
	CHECK(out[0] == 0xffff0000 && out[CW] == 0xff000000 && out[4] == 0);
	fake_feed(&f, "\033[H\033P0;1;0q#1;2;100;0;0#1!4@-!4@\033\\");
	fake_term_read(&f);
	CHECK(image_tile_pixels(st, f.cells[0][0].ch, CW, CH, out));
	CHECK(out[0] == 0xffff0000 && out[CW] == 0);

	/* 8452: right of the image on its last row */
	place_at(&f, "\033[2J\033[3;5H\033[?8452h", 16, 3);
	CHECK(cx(&f) == 6 && cy(&f) == 3);
	/* ... and past the right edge: the start of the next line */
	place_at(&f, "\033[1;19H", 16, 3);
	CHECK(cx(&f) == 0 && cy(&f) == 2);
	fake_feed(&f, "\033[?8452l");
	/* clipped at the right edge: one column of tiles */
	place_at(&f, "\033[2J\033[1;20H", 16, 3);
	first = f.cells[0][19].ch;
	CHECK(image_is_tile(first));
	CHECK_EQ_U(f.cells[1][19].ch, first + 1);
	CHECK(f.cells[0][0].ch == ' ' && f.cells[1][0].ch == ' ');
	CHECK(cx(&f) == 19 && cy(&f) == 1);

	/* 80: at the top left, the cursor where it was, no scrolling */
	place_at(&f, "\033[2J\033[4;6H\033[?80h", 16, 3);
	CHECK(image_is_tile(f.cells[0][0].ch) && image_is_tile(f.cells[1][1].ch));
	CHECK(cx(&f) == 5 && cy(&f) == 3);
	/* taller than the screen: clipped at the bottom, nothing scrolled */
	fake_feed(&f, "\033[2J\033[6;1H");
	sb = ((const struct tsmpeek_screen *)(void *)f.screen)->sb_count;
	fake_feed(&f, sixel(buf, sizeof(buf), "", 8, 20)); /* 120 rows: 6 cells kept */
	fake_term_read(&f);
	CHECK(image_is_tile(f.cells[0][0].ch) && image_is_tile(f.cells[5][0].ch));
	CHECK(cx(&f) == 0 && cy(&f) == 5);
	CHECK_EQ_U(((const struct tsmpeek_screen *)(void *)f.screen)->sb_count, sb);
	fake_feed(&f, "\033[?80l");
	/* origin mode and insert mode: tiles from the screen's top, written
	 * over what is there; both modes back after */
	place_at(&f, "\033[2J\033[3;5r\033[?6h\033[4h\033[Hxy\033[H", 8, 1);
	CHECK(image_is_tile(f.cells[2][0].ch) && f.cells[2][1].ch == 'y');
	CHECK(tsm_screen_get_flags(f.screen) & TSM_SCREEN_INSERT_MODE);
	CHECK(tsm_screen_get_flags(f.screen) & TSM_SCREEN_REL_ORIGIN);
	fake_term_fini(&f);
	image_store_free(st);
}

/* An image runs past the bottom: the screen scrolls; it then goes into the
 * scrollback with the text and comes back when scrolled to; text over part
 * of it replaces that part; ED and EL erase it. */
static void test_scroll_erase(void)
{
	struct fake_term f;
	struct image_store *st = fake_images(&f, 20, 6, 1 << 20);
	uint32_t first;

	fake_feed(&f, "\033[6;1Htop");
	place_at(&f, "\033[6;1H", 16, 3);
	first = f.cells[4][0].ch;
	CHECK(image_is_tile(first));
	CHECK_EQ_U(f.cells[4][1].ch, first + 1);
	CHECK_EQ_U(f.cells[5][0].ch, first + 2);
	CHECK(cx(&f) == 0 && cy(&f) == 5);
	/* ten lines more: into the scrollback, then scrolled back to */
	fake_feed(&f, "\n\n\n\n\n\n\n\n\n\n");
	fake_term_read(&f);
	for (unsigned y = 0; y < 6; y++)
		for (unsigned x = 0; x < 20; x++)
			CHECK(!image_is_tile(f.cells[y][x].ch));
	tsm_screen_sb_up(f.screen, 6);
	fake_term_read(&f);
	CHECK_EQ_U(f.cells[0][0].ch, first);
	CHECK_EQ_U(f.cells[1][1].ch, first + 3);
	CHECK(f.cells[2][0].ch == ' ');
	tsm_screen_sb_reset(f.screen);
	/* text over part of an image */
	place_at(&f, "\033[2J\033[H", 24, 3); /* 3 x 2 cells */
	fake_feed(&f, "\033[2;2HX");
	fake_term_read(&f);
	first = f.cells[0][0].ch;
	CHECK(f.cells[1][1].ch == 'X' && f.cells[1][0].ch == first + 3 &&
	      f.cells[1][2].ch == first + 5);
	/* EL, then ED */
	fake_feed(&f, "\033[1;2H\033[K");
	fake_term_read(&f);
	CHECK(f.cells[0][0].ch == first && f.cells[0][1].ch == ' ' && f.cells[0][2].ch == ' ');
	fake_feed(&f, "\033[2J");
	fake_term_read(&f);
	CHECK(!image_is_tile(f.cells[0][0].ch) && !image_is_tile(f.cells[1][0].ch));
	fake_term_fini(&f);
	image_store_free(st);
}

/* The budget counts what is being decoded too: the oldest image goes for a
 * new one; an image is clipped to the largest kept (the text area); a cut
 * string (CAN) places what was decoded. */
static void test_stream_budget(void)
{
	struct fake_term f;
	size_t screen = 160 * 96 * 4;
	struct image_store *st = fake_images(&f, 20, 6, screen + screen / 2 + 8192);
	char buf[512];
	uint32_t a, b, out[CW * CH];

	fake_feed(&f, sixel(buf, sizeof(buf), "", 160, 16));
	fake_term_read(&f);
	a = f.cells[0][0].ch;
	CHECK(image_is_tile(a) && image_is_tile(f.cells[5][19].ch));
	fake_feed(&f, "\033[H");
	sixel(buf, sizeof(buf), "", 300, 20); /* clipped to 160 x 96 */
	/* while it is decoded, before its end, the oldest goes already */
	fake_feed_n(&f, buf, strlen(buf) - 2);
	CHECK(!image_tile_pixels(st, a, CW, CH, out));
	CHECK(stream_in_sixel(f.stream)); /* term.c reads less meanwhile */
	fake_feed(&f, "\033\\");
	CHECK(!stream_in_sixel(f.stream));
	fake_term_read(&f);
	b = f.cells[0][0].ch;
	CHECK(image_is_tile(b) && b != a && f.cells[5][19].ch == b + 6 * 20 - 1);
	CHECK(!image_tile_pixels(st, a, CW, CH, out)); /* dropped: the placeholder */
	CHECK(image_tile_pixels(st, b, CW, CH, out));
	CHECK_EQ_U(image_store_count(st), 1);
	CHECK_EQ_U(image_store_memory(st), screen);
	/* CAN: what came so far is placed, and the text after it printed */
	fake_feed(&f, "\033[5;1H\033[?8452h\033Pq#1;2;0;100;0#1!8~\030Z");
	fake_term_read(&f);
	CHECK(image_is_tile(f.cells[4][0].ch) && f.cells[4][1].ch == 'Z');
	CHECK(image_store_memory(st) <= image_store_budget(st));
	fake_term_fini(&f);
	image_store_free(st);
}

/* What one read places is bounded: a few bytes of raster attributes make
 * a screenful of pixels, and one read of six of them places four screens;
 * the next read places again. */
static void test_stream_per_read(void)
{
	struct fake_term f;
	struct image_store *st = fake_images(&f, 20, 6, 64 << 20);
	const char *screenful = "\033[H\033Pq\"1;1;160;96#1?\033\\";
	char buf[512] = "";

	for (int k = 0; k < 6; k++)
		strcat(buf, screenful);
	fake_feed(&f, buf);
	CHECK_EQ_U(image_store_count(st), 4);
	fake_feed(&f, screenful);
	CHECK_EQ_U(image_store_count(st), 5);
	fake_term_read(&f);
	CHECK(image_is_tile(f.cells[0][0].ch) && image_is_tile(f.cells[5][19].ch));
	fake_term_fini(&f);
	image_store_free(st);
}

static bool replied(struct fake_term *f, const char *want)
{
	bool ok = strcmp(f->replies, want) == 0;

	if (!ok)
		fprintf(stderr, "replied \"%s\", want \"%s\"\n",
			f->replies + (f->replies[0] == 033), want + 1);
	f->n_replies = 0;
	f->replies[0] = '\0';
	return ok;
}

/* DA1 reports sixel (4); XTSMGRAPHICS the registers and the largest image;
 * DECRQM the modes 80, 1070, 8452, which RIS resets; programs' own code
 * points of the tile area become stand-ins; a new session wipes every
 * image. */
static void test_queries(void)
{
	struct fake_term f;
	struct image_store *st = fake_images(&f, 20, 6, 1 << 20);
	char buf[256];
	size_t len;
	const uint32_t *seq;

	static const struct {
		const char *in, *out;
	} answers[] = {
	    {"\033[c", "\033[?60;1;4;6;9;15c"},
	    {"\033[0c", "\033[?60;1;4;6;9;15c"},
	    {"\033[?1;1S\033[?1;4S\033[?1;3;16S\033[?1;2S",
	     "\033[?1;0;1024S\033[?1;0;1024S\033[?1;0;1024S\033[?1;0;1024S"},
	    {"\033[?2;1S\033[?2;4S", "\033[?2;0;160;96S\033[?2;0;160;96S"},
	    {"\033[?3;1S\033[?1;7S", "\033[?3;1;0S\033[?1;2;0S"},
	    {"\033[?80$p\033[?1070$p\033[?8452$p", "\033[?80;2$y\033[?1070;1$y\033[?8452;2$y"},
	    {"\033[?80;8452h\033[?1070l\033[?80$p\033[?1070$p\033[?8452$p",
	     "\033[?80;1$y\033[?1070;2$y\033[?8452;1$y"},
	    /* DECSTR leaves them, as xterm's soft reset; RIS resets them */
	    {"\033[!p\033[?80$p", "\033[?80;1$y"},
	    {"\033c\033[?80$p\033[?1070$p\033[?8452$p", "\033[?80;2$y\033[?1070;1$y\033[?8452;2$y"},
	};

	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		fake_feed(&f, answers[i].in);
		CHECK(replied(&f, answers[i].out));
	}
	/* no more rows than IMAGE_TILES cells hold: 65534 / 300 = 218 */
	stream_set_cell_size(f.stream, 1, 1);
	tsm_screen_resize(f.screen, 300, 300);
	fake_feed(&f, "\033[?2;1S");
	CHECK(replied(&f, "\033[?2;0;300;218S"));
	tsm_screen_resize(f.screen, 20, 6);
	stream_set_cell_size(f.stream, CW, CH);
	/* the program's U+F0000 and U+FFFFD: stand-ins, not tiles */
	fake_feed(&f, "\xf3\xb0\x80\x80\xf3\xbf\xbf\xbd");
	fake_term_read(&f);
	seq = cluster_lookup(f.table, f.cells[0][0].ch, &len, NULL);
	CHECK(seq && len == 1 && seq[0] == 0xf0000);
	seq = cluster_lookup(f.table, f.cells[0][1].ch, &len, NULL);
	CHECK(seq && len == 1 && seq[0] == 0xffffd);
	/* a new session: no image left */
	fake_feed(&f, sixel(buf, sizeof(buf), "", 16, 3));
	CHECK_EQ_U(image_store_count(st), 1);
	stream_wipe(f.stream);
	CHECK_EQ_U(image_store_count(st), 0);
	CHECK_EQ_U(image_store_memory(st), 0);
	fake_term_fini(&f);
	image_store_free(st);
	/* without a store: libtsm's DA1, no sixel; sixel data dropped */
	fake_term_init(&f, 20, 6);
	fake_feed(&f, "\033[c");
	CHECK(replied(&f, "\033[?60;1;6;9;15c"));
	fake_feed(&f, sixel(buf, sizeof(buf), "", 16, 3));
	fake_term_read(&f);
	CHECK(f.cells[0][0].ch == ' ' && cx(&f) == 0 && cy(&f) == 0);
	fake_term_fini(&f);
}

/* Session restore keeps no image: the restored cells hold their tile code
 * points, which draw as the placeholder (the store says false), and the new
 * store never hands out one of them. */
static void test_restore(void)
{
	struct fake_term a, b;
	struct image_store *sa = fake_images(&a, 20, 6, 1 << 20);
	struct image_store *sb = fake_images(&b, 20, 6, 1 << 20);
	struct snapshot *snap;
	uint32_t held, out[CW * CH];

	place_at(&a, "x", 16, 3);
	held = a.cells[0][1].ch;
	CHECK(image_is_tile(held) && image_tile_pixels(sa, held, CW, CH, out));
	CHECK(snapshot_new(100, &snap) == 0);
	CHECK(snapshot_update(snap, a.screen, a.stream, a.table) == 0);
	CHECK(snapshot_restore(snapshot_fd(snap), b.screen, b.vte, b.stream, b.table, NULL, NULL) ==
	      0);
	fake_term_read(&b);
	CHECK(b.cells[0][0].ch == 'x');
	CHECK_EQ_U(b.cells[0][1].ch, held);
	CHECK_EQ_U(b.cells[1][2].ch, held + 3);
	CHECK(!image_tile_pixels(sb, held, CW, CH, out));
	CHECK(!image_tile_pixels(sb, held + 3, CW, CH, out));
	place_at(&b, "\033[4;1H", 16, 3);
	CHECK(image_is_tile(b.cells[3][0].ch) && b.cells[3][0].ch > held + 3);
	CHECK(image_tile_pixels(sb, b.cells[3][0].ch, CW, CH, out));
	snapshot_free(snap);
	fake_term_fini(&a);
	fake_term_fini(&b);
	image_store_free(sa);
	image_store_free(sb);
}

int main(void)
{
	RUN(test_store_pixels);
	RUN(test_store_budget);
	RUN(test_store_recycle);
	RUN(test_store_starved);
	RUN(test_store_fragmented);
	RUN(test_store_restored);
	RUN(test_place);
	RUN(test_scroll_erase);
	RUN(test_stream_budget);
	RUN(test_stream_per_read);
	RUN(test_queries);
	RUN(test_restore);
	return TESTS_RESULT();
}
