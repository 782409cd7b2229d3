/* SPDX-License-Identifier: GPL-2.0-or-later */
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
