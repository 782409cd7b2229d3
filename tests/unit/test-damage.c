/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>

#include "../../daemon/screen/damage.h"
#include "tests.h"

#define COLS 16

static void fill(struct cell *c, const char *s)
{
	for (unsigned i = 0; i < COLS; i++)
		c[i] = (struct cell){.glyph = (uint8_t)s[i], .fg = 7, .bg = 0};
}

static void test_runs(void)
{
	struct cell a[COLS], b[COLS];
	struct damage_run runs[COLS / 2 + 1];
	unsigned n;

	fill(a, "abcdefghijklmnop");
	fill(b, "abcdefghijklmnop");
	CHECK_EQ_U(damage_row_runs(a, b, COLS, 0, runs), 0);

	fill(b, "Xbcdefghijklmnop");
	n = damage_row_runs(a, b, COLS, 0, runs);
	CHECK_EQ_U(n, 1);
	CHECK(runs[0].start == 0 && runs[0].end == 1);

	fill(b, "abcdefghijklmnoX");
	n = damage_row_runs(a, b, COLS, 0, runs);
	CHECK_EQ_U(n, 1);
	CHECK(runs[0].start == 15 && runs[0].end == 16);

	/* two runs far apart stay two, close ones merge */
	fill(b, "aXXdefghijklmYop");
	n = damage_row_runs(a, b, COLS, 2, runs);
	CHECK_EQ_U(n, 2);
	CHECK(runs[0].start == 1 && runs[0].end == 3);
	CHECK(runs[1].start == 13 && runs[1].end == 14);

	fill(b, "aXcXeXghijklmnop");
	n = damage_row_runs(a, b, COLS, 1, runs);
	CHECK_EQ_U(n, 1);
	CHECK(runs[0].start == 1 && runs[0].end == 6);
	n = damage_row_runs(a, b, COLS, 0, runs);
	CHECK_EQ_U(n, 3);

	/* worst case: every other cell, no merging, fits in cols/2 + 1 */
	fill(b, "XbXdXfXhXjXlXnXp");
	n = damage_row_runs(a, b, COLS, 0, runs);
	CHECK_EQ_U(n, 8);

	/* a colour change alone is damage */
	fill(b, "abcdefghijklmnop");
	b[5].fg = 9;
	n = damage_row_runs(a, b, COLS, 0, runs);
	CHECK(n == 1 && runs[0].start == 5 && runs[0].end == 6);
	b[5].fg = 7;
	b[6].bg = 4;
	n = damage_row_runs(a, b, COLS, 0, runs);
	CHECK(n == 1 && runs[0].start == 6 && runs[0].end == 7);

	/* everything differs */
	fill(b, "ABCDEFGHIJKLMNOP");
	n = damage_row_runs(a, b, COLS, 0, runs);
	CHECK(n == 1 && runs[0].start == 0 && runs[0].end == COLS);
}

/* The gain of moving rows [top, bottom) by shift, by its definition: rows
 * right after the move minus rows right before it. */
static int gain_of(const uint64_t *prev, const uint64_t *cur, unsigned top, unsigned bottom,
		   int shift)
{
	unsigned k = (unsigned)abs(shift);
	int gain = 0;

	for (unsigned y = top; y < bottom; y++) {
		gain -= prev[y] == cur[y];
		/* dest rows: those whose source is inside the region */
		if (shift > 0 && y + k < bottom)
			gain += cur[y] == prev[y + k];
		else if (shift < 0 && y >= top + k)
			gain += cur[y] == prev[y - k];
	}
	return gain;
}

/* damage_find_scroll() against every region and shift tried, on frames
 * where few rows differ (an echo, a line typed, a short scroll, repeated
 * lines): the best gains agree. The search leaves out the shifts not below
 * the number of rows that differ, which can gain nothing. */
static void test_find_scroll_exhaustive(void)
{
	enum { ROWS = 12 };
	unsigned seed = 7;

	for (unsigned round = 0; round < 4000; round++) {
		uint64_t prev[ROWS], cur[ROWS];
		struct scroll_guess full, region;
		int best_full = 0, best_region = 0;
		unsigned alphabet = 2 + (unsigned)rand_r(&seed) % 6;

		/* few distinct rows, so that moves can match */
		for (unsigned y = 0; y < ROWS; y++)
			prev[y] = cur[y] = (uint64_t)rand_r(&seed) % alphabet;
		if (round % 2) {
			int k = 1 + rand_r(&seed) % 3;

			for (unsigned y = 0; y < ROWS; y++)
				cur[y] = y + (unsigned)k < ROWS ? prev[y + (unsigned)k] : 100 + y;
		}
		for (unsigned n = (unsigned)rand_r(&seed) % 4; n > 0; n--)
			cur[(unsigned)rand_r(&seed) % ROWS] = 200 + (uint64_t)rand_r(&seed) % 3;

		damage_find_scroll(prev, cur, ROWS, &full, &region);
		for (int k = 1; k < ROWS; k++)
			for (int dir = 1; dir >= -1; dir -= 2) {
				int g = gain_of(prev, cur, 0, ROWS, dir * k);

				if (g > best_full)
					best_full = g;
				for (unsigned top = 0; top < ROWS; top++)
					for (unsigned bottom = top + (unsigned)k + 1;
					     bottom <= ROWS; bottom++) {
						g = gain_of(prev, cur, top, bottom, dir * k);
						if (g > best_region)
							best_region = g;
					}
			}
		if (full.gain != best_full || region.gain != best_region ||
		    (full.shift && gain_of(prev, cur, 0, ROWS, full.shift) != full.gain) ||
		    (region.shift &&
		     gain_of(prev, cur, region.top, region.bottom, region.shift) != region.gain)) {
			fprintf(stderr,
				"round %u: full %d (shift %d), best %d; region %d (%u-%u by %d), "
				"best %d\n",
				round, full.gain, full.shift, best_full, region.gain, region.top,
				region.bottom, region.shift, best_region);
			CHECK(0);
			return;
		}
	}
}

int main(void)
{
	RUN(test_runs);
	RUN(test_find_scroll_exhaustive);
	return TESTS_RESULT();
}
