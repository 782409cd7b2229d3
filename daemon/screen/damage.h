/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Damage tracking. libtsm's cell ages cannot tell a scroll from a repaint and
 * say nothing about what is already on the glass, so the renderer keeps the
 * cells of the last frame it drew, each resolved to what decides its pixels
 * (glyph and the two pixel values), and draws only the cells that differ.
 * A row's differing cells are grouped in runs; runs separated by a short gap
 * of equal cells are merged, since one longer write beats two short ones.
 *
 * Scroll detection: libtsm cannot tell a scroll from a repaint, so the
 * renderer compares the rows of the last frame with the new ones. For every
 * shift k (content moved up by k rows for k > 0, down for k < 0) the gain of
 * moving rows [top, bottom) by k is the number of rows in it that are right
 * after the move minus those that were right before (the rows the move
 * exposes are never right: they must be drawn). The best full-screen shift
 * and the best region (a maximum-sum segment, found in O(rows) per shift) are
 * both returned; the caller picks by what its strategies can do. A guess is
 * only a plan: after the move every cell that still differs is drawn, so a
 * wrong guess (identical lines, a hash collision) costs time, never pixels.
 */
#include <stdbool.h>
#include <stdint.h>

struct cell {
	uint32_t glyph;	 /* what is drawn: a code point or a cluster's id */
	uint32_t attr;	 /* how: the renderer's style and cell-half bits */
	uint32_t fg, bg; /* pixel values in the framebuffer's format */
};

struct damage_run {
	unsigned start, end; /* cells [start, end) */
};

static inline bool cell_equal(const struct cell *a, const struct cell *b)
{
	return a->glyph == b->glyph && a->attr == b->attr && a->fg == b->fg && a->bg == b->bg;
}

/* Marks a cell whose pixels are unknown (rows a scroll exposed): it differs
 * from every real cell. */
#define CELL_GLYPH_UNKNOWN UINT32_MAX

struct scroll_guess {
	unsigned top, bottom; /* the region: rows [top, bottom) */
	int shift;	      /* rows the content moves up (> 0) or down (< 0); 0 = none */
	int gain;	      /* rows right after the move minus rows right before */
};

/* Hashes each of `rows` rows of `cols` cells. */
void damage_hash_rows(const struct cell *cells, unsigned cols, unsigned rows, uint64_t *ret);

/* Finds the best full-screen move (ret_full) and the best region move
 * (ret_region) turning prev into cur; shift 0 when nothing gains. */
void damage_find_scroll(const uint64_t *prev_hash, const uint64_t *cur_hash, unsigned rows,
			struct scroll_guess *ret_full, struct scroll_guess *ret_region);

/* The same as damage_hash_rows() when only the rows marked in changed may
 * differ from the grid prev_hash was taken of: those are hashed, the others
 * keep prev_hash's. A frame whose cells were taken incrementally knows the
 * rows it changed, and an echo hashes one row instead of both grids. */
void damage_hash_changed_rows(const struct cell *cells, unsigned cols, unsigned rows,
			      const bool *changed, const uint64_t *prev_hash, uint64_t *ret);

/* From the row hashes of the last frame and the new one: whether any row
 * differs and, if so, the best full-screen and region moves (only shifts
 * below the number of rows that differ can gain, so one changed row costs
 * no search). damage_guess_within() keeps the moves within rows
 * [top, bottom), as damage_detect_within() below. */
bool damage_guess(const uint64_t *prev_hash, const uint64_t *cur_hash, unsigned rows,
		  struct scroll_guess *ret_full, struct scroll_guess *ret_region);
bool damage_guess_within(const uint64_t *prev_hash, const uint64_t *cur_hash, unsigned rows,
			 unsigned top, unsigned bottom, struct scroll_guess *ret_full,
			 struct scroll_guess *ret_region);

/* A frame's first step: hashes the rows of the last frame (prev) and the new
 * one (cur) into the two hash arrays and, when a row differs, finds the best
 * full-screen and region moves. Returns whether any row differs (false:
 * the guesses are not filled in). */
bool damage_detect(const struct cell *prev, const struct cell *cur, unsigned cols, unsigned rows,
		   uint64_t *prev_hash, uint64_t *cur_hash, struct scroll_guess *ret_full,
		   struct scroll_guess *ret_region);

/* The same, when only rows [top, bottom) may move (the others are drawn
 * over the screen: render.h, render_set_overlay()): every row is hashed and
 * compared, but the guesses keep within those rows. The full-screen guess
 * is none; the best move of [top, bottom), whole or a part, is the region
 * guess. */
bool damage_detect_within(const struct cell *prev, const struct cell *cur, unsigned cols,
			  unsigned rows, unsigned top, unsigned bottom, uint64_t *prev_hash,
			  uint64_t *cur_hash, struct scroll_guess *ret_full,
			  struct scroll_guess *ret_region);

/* Moves the rows of region [top, bottom) of a cell grid by shift as a scroll
 * does and marks the exposed rows unknown. */
void damage_apply_scroll(struct cell *cells, unsigned cols, unsigned top, unsigned bottom,
			 int shift);

/* Fills runs (room for cols / 2 + 1) with the damaged runs of one row, merging
 * runs separated by at most merge_gap equal cells; returns how many. */
unsigned damage_row_runs(const struct cell *prev, const struct cell *cur, unsigned cols,
			 unsigned merge_gap, struct damage_run *runs);
