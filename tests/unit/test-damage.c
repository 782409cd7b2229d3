/* SPDX-License-Identifier: GPL-2.0-or-later */
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

int main(void)
{
	RUN(test_runs);
	return TESTS_RESULT();
}
