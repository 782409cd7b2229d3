/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "damage.h"

unsigned damage_row_runs(const struct cell *prev, const struct cell *cur, unsigned cols,
			 unsigned merge_gap, struct damage_run *runs)
{
	unsigned n = 0, x = 0;

	while (x < cols) {
		unsigned start, end;

		while (x < cols && cell_equal(&prev[x], &cur[x]))
			x++;
		if (x == cols)
			break;
		start = x;
		while (x < cols && !cell_equal(&prev[x], &cur[x]))
			x++;
		end = x;

		if (n > 0 && start - runs[n - 1].end <= merge_gap)
			runs[n - 1].end = end;
		else
			runs[n++] = (struct damage_run){start, end};
	}
	return n;
}

void damage_hash_rows(const struct cell *cells, unsigned cols, unsigned rows, uint64_t *ret)
{
	for (unsigned y = 0; y < rows; y++) {
		/* FNV-1a over the cell words: fast, and collisions only cost time. */
		uint64_t h = 0xcbf29ce484222325ull;
		const struct cell *c = cells + (size_t)y * cols;

		for (unsigned x = 0; x < cols; x++) {
			h = (h ^ c[x].glyph) * 0x100000001b3ull;
			h = (h ^ c[x].attr) * 0x100000001b3ull;
			h = (h ^ c[x].fg) * 0x100000001b3ull;
			h = (h ^ c[x].bg) * 0x100000001b3ull;
		}
		ret[y] = h;
	}
}

/* For content moving up by k > 0 (rows given in screen order) or, with the
 * rows mirrored, down: dest row r shows source row r + k. Scores every region
 * [top, bottom) whose dest rows are [top, e] and whose exposed rows are
 * [e + 1, e + k], and keeps the best in *best (mirrored back by the caller). */
static void find_up(const uint64_t *prev, const uint64_t *cur, unsigned rows, unsigned k,
		    unsigned *right, int *ret_full_gain, struct scroll_guess *best)
{
	int run = 0, full = 0;
	unsigned run_start = 0;

	/* right[r]: how many of rows [0, r) are right before any move. */
	right[0] = 0;
	for (unsigned r = 0; r < rows; r++)
		right[r + 1] = right[r] + (prev[r] == cur[r]);

	for (unsigned e = 0; e + k < rows; e++) {
		int v = (cur[e] == prev[e + k]) - (cur[e] == prev[e]);
		int exposed = (int)(right[e + k + 1] - right[e + 1]);

		full += v;
		/* Kadane: the best segment of dest rows ending at e. */
		if (run <= 0) {
			run = v;
			run_start = e;
		} else
			run += v;

		if (run - exposed > best->gain) {
			best->gain = run - exposed;
			best->top = run_start;
			best->bottom = e + k + 1;
			best->shift = (int)k;
		}
	}
	*ret_full_gain = full - (int)(right[rows] - right[rows - k]);
}

void damage_find_scroll(const uint64_t *prev_hash, const uint64_t *cur_hash, unsigned rows,
			struct scroll_guess *ret_full, struct scroll_guess *ret_region)
{
	uint64_t *rprev, *rcur;
	unsigned *right;
	struct scroll_guess full = {0, rows, 0, 0}, region = {0, rows, 0, 0};
	unsigned differ = 0;

	/* A move by k of a region of h rows leaves at most h - k of them right
	 * after it, and at least h - d were right before it, d the rows that
	 * differ: it gains at most d - k, so only shifts below d can gain. One
	 * changed row (an echo) has no move to look for. */
	for (unsigned r = 0; r < rows; r++)
		differ += prev_hash[r] != cur_hash[r];
	if (differ <= 1) {
		*ret_full = full;
		*ret_region = region;
		return;
	}
	rprev = malloc(rows * sizeof(uint64_t) * 2 + (rows + 1) * sizeof(unsigned));
	if (!rprev) {
		*ret_full = full;
		*ret_region = region;
		return;
	}
	rcur = rprev + rows;
	right = (unsigned *)(rcur + rows);
	for (unsigned r = 0; r < rows; r++) {
		rprev[r] = prev_hash[rows - 1 - r];
		rcur[r] = cur_hash[rows - 1 - r];
	}

	/* Smallest shifts first: among equal gains (identical lines) the
	 * smallest move wins, which is also the cheapest. */
	for (unsigned k = 1; k < rows && k < differ; k++) {
		for (int dir = 1; dir >= -1; dir -= 2) {
			struct scroll_guess g = {0, 0, 0, 0};
			int full_gain;

			if (dir > 0)
				find_up(prev_hash, cur_hash, rows, k, right, &full_gain, &g);
			else {
				find_up(rprev, rcur, rows, k, right, &full_gain, &g);
				if (g.shift) {
					unsigned top = rows - g.bottom;
					g.bottom = rows - g.top;
					g.top = top;
					g.shift = -g.shift;
				}
			}
			if (full_gain > full.gain) {
				full.gain = full_gain;
				full.shift = dir * (int)k;
			}
			if (g.shift && g.gain > region.gain)
				region = g;
		}
	}
	free(rprev);
	*ret_full = full;
	*ret_region = region;
}

void damage_apply_scroll(struct cell *cells, unsigned cols, unsigned top, unsigned bottom,
			 int shift)
{
	unsigned k = (unsigned)abs(shift), height = bottom - top;
	size_t row = (size_t)cols;

	if (shift == 0 || bottom <= top)
		return;
	if (k >= height) {
		k = height;
	} else if (shift > 0)
		memmove(cells + top * row, cells + (top + k) * row,
			(height - k) * row * sizeof(*cells));
	else
		memmove(cells + (top + k) * row, cells + top * row,
			(height - k) * row * sizeof(*cells));

	/* The exposed rows: at the bottom of the region for an up move. */
	unsigned first = shift > 0 ? bottom - k : top;
	for (unsigned y = first; y < first + k; y++)
		for (unsigned x = 0; x < cols; x++)
			cells[y * row + x].glyph = CELL_GLYPH_UNKNOWN;
}

void damage_hash_changed_rows(const struct cell *cells, unsigned cols, unsigned rows,
			      const bool *changed, const uint64_t *prev_hash, uint64_t *ret)
{
	for (unsigned y = 0; y < rows; y++)
		if (changed[y])
			damage_hash_rows(cells + (size_t)y * cols, cols, 1, &ret[y]);
		else
			ret[y] = prev_hash[y];
}

bool damage_guess(const uint64_t *prev_hash, const uint64_t *cur_hash, unsigned rows,
		  struct scroll_guess *ret_full, struct scroll_guess *ret_region)
{
	bool any = false;

	for (unsigned y = 0; y < rows && !any; y++)
		any = prev_hash[y] != cur_hash[y];
	if (any)
		damage_find_scroll(prev_hash, cur_hash, rows, ret_full, ret_region);
	return any;
}

bool damage_guess_within(const uint64_t *prev_hash, const uint64_t *cur_hash, unsigned rows,
			 unsigned top, unsigned bottom, struct scroll_guess *ret_full,
			 struct scroll_guess *ret_region)
{
	struct scroll_guess full, region = {top, bottom, 0, 0};
	bool any = false;

	for (unsigned y = 0; y < rows && !any; y++)
		any = prev_hash[y] != cur_hash[y];
	if (!any)
		return false;
	if (bottom > top + 1) {
		damage_find_scroll(prev_hash + top, cur_hash + top, bottom - top, &full, &region);
		/* the part's full-screen move is a region move of the screen */
		if (full.shift && full.gain > region.gain)
			region = (struct scroll_guess){0, bottom - top, full.shift, full.gain};
		region.top += top;
		region.bottom += top;
	}
	*ret_full = (struct scroll_guess){0, rows, 0, 0};
	*ret_region = region;
	return true;
}

bool damage_detect(const struct cell *prev, const struct cell *cur, unsigned cols, unsigned rows,
		   uint64_t *prev_hash, uint64_t *cur_hash, struct scroll_guess *ret_full,
		   struct scroll_guess *ret_region)
{
	damage_hash_rows(prev, cols, rows, prev_hash);
	damage_hash_rows(cur, cols, rows, cur_hash);
	return damage_guess(prev_hash, cur_hash, rows, ret_full, ret_region);
}

bool damage_detect_within(const struct cell *prev, const struct cell *cur, unsigned cols,
			  unsigned rows, unsigned top, unsigned bottom, uint64_t *prev_hash,
			  uint64_t *cur_hash, struct scroll_guess *ret_full,
			  struct scroll_guess *ret_region)
{
	damage_hash_rows(prev, cols, rows, prev_hash);
	damage_hash_rows(cur, cols, rows, cur_hash);
	return damage_guess_within(prev_hash, cur_hash, rows, top, bottom, ret_full, ret_region);
}
