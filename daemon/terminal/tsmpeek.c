/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "tsmpeek"
#include <malloc.h>

#include "tsmpeek.h"
#include "../util/log.h"

static bool line_ok(const struct tsmpeek_line *l, unsigned cols)
{
	return l && l->cells && l->size >= cols;
}

/* A scratch screen driven through the public API: each step's effect must
 * show in the fields the view reads, at the offsets it reads them. */
static bool layout_matches(void)
{
	static const struct tsm_screen_attr red = {.fccode = 1, .bccode = 4, .bold = 1};
	const struct tsmpeek_screen *p;
	struct tsm_screen *s;
	tsm_age_t age;
	bool ok = false;

	if (tsm_screen_new(&s, NULL, NULL) < 0)
		return false;
	/* everything read lies inside what libtsm allocated */
	if (malloc_usable_size(s) < sizeof(struct tsmpeek_screen))
		goto out;
	p = tsmpeek(s);
	if (tsm_screen_resize(s, 37, 11) < 0)
		goto out;
	tsm_screen_set_max_sb(s, 4093);
	tsm_screen_set_margins(s, 3, 9);
	tsm_screen_move_to(s, 5, 7);
	age = p->age_cnt;
	tsm_screen_write(s, 'Q', &red);
	if (p->cols != 37 || p->rows != 11 || p->sb_max != 4093 || p->margin_top != 2 ||
	    p->margin_bottom != 8 || p->cursor_x != 6 || p->cursor_y != 7 ||
	    p->cursor_x != tsm_screen_get_cursor_x(s) || p->flags != tsm_screen_get_flags(s) ||
	    p->line_num < 11 || !p->main_lines || !p->alt_lines || p->lines != p->main_lines ||
	    p->sb_count != 0 || p->sb_first || p->sb_last || p->sb_last_id != 0 || !p->tab_stops)
		goto out;
	for (unsigned y = 0; y < 11; y++)
		if (!line_ok(p->main_lines[y], 37) || !line_ok(p->alt_lines[y], 37))
			goto out;
	{
		const struct tsmpeek_cell *c = &p->main_lines[7]->cells[5];

		if (c->ch != 'Q' || c->width != 1 || c->attr.fccode != 1 || c->attr.bccode != 4 ||
		    !c->attr.bold || c->age <= age || p->main_lines[7]->cells[6].ch != 0)
			goto out;
	}
	if (!p->tab_stops[0] || !p->tab_stops[8] || !p->tab_stops[32] || p->tab_stops[6])
		goto out;
	tsm_screen_set_tabstop(s);
	if (!p->tab_stops[6])
		goto out;
	tsm_screen_set_flags(s, TSM_SCREEN_ALTERNATE | TSM_SCREEN_HIDE_CURSOR);
	if (p->lines != p->alt_lines || p->flags != tsm_screen_get_flags(s))
		goto out;
	tsm_screen_reset_flags(s, TSM_SCREEN_ALTERNATE | TSM_SCREEN_HIDE_CURSOR);
	/* the scrollback: two lines pushed */
	tsm_screen_set_margins(s, 0, 0);
	tsm_screen_move_to(s, 0, 0);
	tsm_screen_write(s, 'A', &red);
	tsm_screen_scroll_up(s, 1);
	tsm_screen_write(s, 'B', &red);
	tsm_screen_scroll_up(s, 1);
	if (p->margin_top != 0 || p->margin_bottom != 10 || p->sb_count != 2 ||
	    p->sb_last_id != 2 || !p->sb_first || !p->sb_last || p->sb_first->next != p->sb_last ||
	    p->sb_last->prev != p->sb_first || p->sb_first->prev || p->sb_last->next ||
	    p->sb_first->sb_id != 1 || p->sb_last->sb_id != 2 || !line_ok(p->sb_last, 37) ||
	    p->sb_first->cells[0].ch != 'A' || p->sb_last->cells[1].ch != 'B' || p->sb_pos)
		goto out;
	ok = true;
out:
	tsm_screen_clear_sb(s);
	tsm_screen_unref(s);
	return ok;
}

bool tsmpeek_check(struct tsm_screen *screen)
{
	static int layout = -1;
	const struct tsmpeek_screen *p;

	if (layout < 0) {
		layout = layout_matches();
		if (!layout)
			log_warning(
			    "libtsm's screen is not laid out as in libtsm 4.0.2: no snapshots");
	}
	if (!layout || !screen || malloc_usable_size(screen) < sizeof(struct tsmpeek_screen))
		return false;
	p = tsmpeek(screen);
	return p->cols == tsm_screen_get_width(screen) &&
	       p->rows == tsm_screen_get_height(screen) &&
	       p->flags == tsm_screen_get_flags(screen) &&
	       p->cursor_x == tsm_screen_get_cursor_x(screen) &&
	       p->cursor_y == tsm_screen_get_cursor_y(screen) && p->cols > 0 && p->rows > 0 &&
	       p->line_num >= p->rows && p->main_lines && p->alt_lines && p->tab_stops &&
	       p->lines == (p->flags & TSM_SCREEN_ALTERNATE ? p->alt_lines : p->main_lines) &&
	       p->margin_top <= p->margin_bottom && p->margin_bottom < p->rows;
}
