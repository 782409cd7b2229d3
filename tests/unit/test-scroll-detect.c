/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scroll detection on synthetic frames: a "screen" is rows of text; tests
 * build the previous frame, apply what a program would do (scrolls of the
 * screen or a region, edits), and check the guess, and that moving by the
 * guess and redrawing what still differs reproduces the new frame.
 */
#include <stdlib.h>

#include "../../daemon/screen/damage.h"
#include "tests.h"

#define COLS 8
#define MAXROWS 64

struct frame {
	unsigned rows;
	struct cell c[MAXROWS * COLS];
};

static void set_row(struct frame *f, unsigned y, const char *text)
{
	for (unsigned x = 0; x < COLS; x++) {
		char ch = text[0] ? text[x % strlen(text)] : ' ';
		f->c[y * COLS + x] = (struct cell){.glyph = (uint8_t)ch, .fg = 7, .bg = 0};
	}
}

static void numbered(struct frame *f, unsigned rows, unsigned base)
{
	char buf[16];

	f->rows = rows;
	for (unsigned y = 0; y < rows; y++) {
		snprintf(buf, sizeof(buf), "L%u.", base + y);
		set_row(f, y, buf);
	}
}

/* What a terminal does: region [top, bottom) scrolls by k, new rows get text. */
static void scroll(struct frame *f, unsigned top, unsigned bottom, int k, unsigned *serial)
{
	char buf[16];

	damage_apply_scroll(f->c, COLS, top, bottom, k);
	for (unsigned y = top; y < bottom; y++)
		if (f->c[y * COLS].glyph == CELL_GLYPH_UNKNOWN) {
			snprintf(buf, sizeof(buf), "N%u.", (*serial)++);
			set_row(f, y, buf);
		}
}

static void guess(const struct frame *prev, const struct frame *cur, struct scroll_guess *full,
		  struct scroll_guess *region)
{
	uint64_t hp[MAXROWS], hc[MAXROWS];

	damage_hash_rows(prev->c, COLS, prev->rows, hp);
	damage_hash_rows(cur->c, COLS, cur->rows, hc);
	damage_find_scroll(hp, hc, cur->rows, full, region);
}

static unsigned rows_differing(const struct frame *a, const struct frame *b)
{
	unsigned n = 0;

	for (unsigned y = 0; y < a->rows; y++)
		n += memcmp(&a->c[y * COLS], &b->c[y * COLS], COLS * sizeof(struct cell)) != 0;
	return n;
}

/* Moving by g then drawing the differing cells gives cur; returns how many
 * rows had to be drawn. */
static unsigned replay(const struct frame *prev, const struct frame *cur,
		       const struct scroll_guess *g)
{
	struct frame glass = *prev;
	unsigned drawn = 0;

	if (g->shift) {
		CHECK(g->top < g->bottom && g->bottom <= cur->rows);
		CHECK((unsigned)abs(g->shift) < g->bottom - g->top);
		damage_apply_scroll(glass.c, COLS, g->top, g->bottom, g->shift);
	}
	for (unsigned y = 0; y < cur->rows; y++) {
		struct damage_run runs[COLS / 2 + 1];
		unsigned n = damage_row_runs(&glass.c[y * COLS], &cur->c[y * COLS], COLS, 0, runs);
		for (unsigned i = 0; i < n; i++)
			memcpy(&glass.c[y * COLS + runs[i].start],
			       &cur->c[y * COLS + runs[i].start],
			       (runs[i].end - runs[i].start) * sizeof(struct cell));
		drawn += n > 0;
	}
	CHECK(rows_differing(&glass, cur) == 0);
	return drawn;
}

static void test_full_up_down(void)
{
	struct frame a, b;
	struct scroll_guess full, region;
	unsigned serial = 1000;

	for (unsigned k = 1; k < 30; k++) {
		numbered(&a, 30, 0);
		b = a;
		scroll(&b, 0, 30, (int)k, &serial);
		guess(&a, &b, &full, &region);
		CHECK_EQ_U(full.shift, k);
		CHECK_EQ_U(full.gain, 30 - k);
		CHECK_EQ_U(replay(&a, &b, &full), k);

		b = a;
		scroll(&b, 0, 30, -(int)k, &serial);
		guess(&a, &b, &full, &region);
		CHECK_EQ_U((uint64_t)(int64_t)full.shift, (uint64_t)(int64_t) - (int)k);
		CHECK_EQ_U(replay(&a, &b, &full), k);
	}
}

static void test_several_scrolls_between_frames(void)
{
	struct frame a, b;
	struct scroll_guess full, region;
	unsigned serial = 1000;

	numbered(&a, 25, 0);
	b = a;
	scroll(&b, 0, 25, 3, &serial);
	scroll(&b, 0, 25, 4, &serial);
	scroll(&b, 0, 25, 1, &serial);
	guess(&a, &b, &full, &region);
	CHECK_EQ_U(full.shift, 8);
	CHECK_EQ_U(replay(&a, &b, &full), 8);

	/* more than a screen: nothing to keep */
	b = a;
	scroll(&b, 0, 25, 20, &serial);
	scroll(&b, 0, 25, 20, &serial);
	guess(&a, &b, &full, &region);
	CHECK_EQ_U(full.shift, 0);
	CHECK_EQ_U(region.shift, 0);
	CHECK_EQ_U(replay(&a, &b, &full), 25);
}

static void test_blank_and_identical(void)
{
	struct frame a, b;
	struct scroll_guess full, region;
	unsigned serial = 0;

	/* a blank screen that stays blank: no move */
	a.rows = 20;
	for (unsigned y = 0; y < 20; y++)
		set_row(&a, y, "");
	b = a;
	guess(&a, &b, &full, &region);
	CHECK_EQ_U(full.shift, 0);
	CHECK_EQ_U(region.shift, 0);

	/* a blank screen, one line appears at the bottom (a prompt): no move */
	set_row(&b, 19, "$ ");
	guess(&a, &b, &full, &region);
	CHECK_EQ_U(full.shift, 0);
	CHECK_EQ_U(replay(&a, &b, &full), 1);

	/* many identical lines scrolling: the guess must not cost more rows
	 * than the new ones */
	a.rows = 20;
	for (unsigned y = 0; y < 20; y++)
		set_row(&a, y, y % 3 ? "same" : "");
	b = a;
	scroll(&b, 0, 20, 2, &serial);
	guess(&a, &b, &full, &region);
	CHECK(replay(&a, &b, &full) <= 2);
	CHECK(replay(&a, &b, &region) <= 2);

	/* all lines identical, then text at the bottom after a scroll */
	for (unsigned y = 0; y < 20; y++)
		set_row(&a, y, "x");
	b = a;
	scroll(&b, 0, 20, 1, &serial);
	guess(&a, &b, &full, &region);
	CHECK(replay(&a, &b, &full) <= 1);
}

static void test_scroll_plus_edits(void)
{
	struct frame a, b;
	struct scroll_guess full, region;
	unsigned serial = 500;

	numbered(&a, 30, 0);
	b = a;
	scroll(&b, 0, 30, 2, &serial);
	set_row(&b, 10, "edited");
	set_row(&b, 0, "top edit");
	guess(&a, &b, &full, &region);
	CHECK_EQ_U(full.shift, 2);
	CHECK_EQ_U(replay(&a, &b, &full), 4);
}

static void test_region(void)
{
	struct frame a, b;
	struct scroll_guess full, region;
	unsigned serial = 100;

	/* less/vim: a region [1, 28) scrolls up by one, the status lines (0 and
	 * 28, 29) stay; then the same with the top line changing too */
	numbered(&a, 30, 0);
	b = a;
	scroll(&b, 1, 28, 1, &serial);
	guess(&a, &b, &full, &region);
	CHECK_EQ_U(region.top, 1);
	CHECK_EQ_U(region.bottom, 28);
	CHECK_EQ_U(region.shift, 1);
	CHECK(full.gain < region.gain);
	CHECK_EQ_U(replay(&a, &b, &region), 1);

	set_row(&b, 0, "status changed");
	guess(&a, &b, &full, &region);
	CHECK(region.top <= 1 && region.bottom == 28 && region.shift == 1);
	CHECK_EQ_U(replay(&a, &b, &region), 2);

	/* reverse index at the top of a region: scroll down */
	b = a;
	scroll(&b, 5, 20, -1, &serial);
	guess(&a, &b, &full, &region);
	CHECK_EQ_U(region.top, 5);
	CHECK_EQ_U(region.bottom, 20);
	CHECK_EQ_U((uint64_t)(int64_t)region.shift, (uint64_t)(int64_t)-1);
	CHECK_EQ_U(replay(&a, &b, &region), 1);

	/* IL/DL in the middle of the screen: rows [10, 30) move by 3 */
	b = a;
	scroll(&b, 10, 30, -3, &serial);
	guess(&a, &b, &full, &region);
	CHECK(region.top == 10 && region.bottom == 30 && region.shift == -3);
	CHECK_EQ_U(replay(&a, &b, &region), 3);
}

static void test_random(void)
{
	struct frame a, b;
	struct scroll_guess full, region;
	unsigned serial = 10000;
	unsigned seed = 12345;

	for (unsigned iter = 0; iter < 2000; iter++) {
		unsigned rows = 2 + (unsigned)(rand_r(&seed) % (MAXROWS - 1));
		numbered(&a, rows, iter);
		/* identical lines now and then */
		for (unsigned y = 0; y < rows; y++)
			if (rand_r(&seed) % 4 == 0)
				set_row(&a, y, "dup");
		b = a;
		for (unsigned n = (unsigned)(rand_r(&seed) % 4); n > 0; n--) {
			unsigned top = (unsigned)(rand_r(&seed) % rows);
			unsigned bottom = top + 1 + (unsigned)(rand_r(&seed) % (rows - top));
			int k = 1 + (int)(rand_r(&seed) % (bottom - top));
			scroll(&b, top, bottom, rand_r(&seed) % 2 ? k : -k, &serial);
		}
		for (unsigned n = (unsigned)(rand_r(&seed) % 3); n > 0; n--)
			set_row(&b, (unsigned)(rand_r(&seed) % rows), "edit");
		guess(&a, &b, &full, &region);
		unsigned none = rows_differing(&a, &b);
		/* a guess never makes things worse than not moving */
		CHECK(replay(&a, &b, &full) <= none);
		CHECK(replay(&a, &b, &region) <= none);
		CHECK(full.gain >= 0 && region.gain >= full.gain);
	}
}

int main(void)
{
	RUN(test_full_up_down);
	RUN(test_several_scrolls_between_frames);
	RUN(test_blank_and_identical);
	RUN(test_scroll_plus_edits);
	RUN(test_region);
	RUN(test_random);
	return TESTS_RESULT();
}
