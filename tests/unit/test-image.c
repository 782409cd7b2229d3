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

#include "../../daemon/terminal/image.h"
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

int main(void)
{
	RUN(test_store_pixels);
	RUN(test_store_budget);
	RUN(test_store_recycle);
	RUN(test_store_restored);
	return TESTS_RESULT();
}
