/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Damage tracking. libtsm's cell ages cannot tell a scroll from a repaint and
 * say nothing about what is already on the glass, so the renderer keeps the
 * cells of the last frame it drew, each resolved to what decides its pixels
 * (glyph and the two pixel values), and draws only the cells that differ.
 * A row's differing cells are grouped in runs; runs separated by a short gap
 * of equal cells are merged, since one longer write beats two short ones.
 */
#include <stdbool.h>
#include <stdint.h>

struct cell {
	uint32_t glyph;	 /* index into the font */
	uint32_t fg, bg; /* pixel values in the framebuffer's format */
};

struct damage_run {
	unsigned start, end; /* cells [start, end) */
};

static inline bool cell_equal(const struct cell *a, const struct cell *b)
{
	return a->glyph == b->glyph && a->fg == b->fg && a->bg == b->bg;
}

/* Fills runs (room for cols / 2 + 1) with the damaged runs of one row, merging
 * runs separated by at most merge_gap equal cells; returns how many. */
unsigned damage_row_runs(const struct cell *prev, const struct cell *cur, unsigned cols,
			 unsigned merge_gap, struct damage_run *runs);
