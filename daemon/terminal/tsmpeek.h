/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * A read-only view of libtsm 4.0.2's screen internals, for the snapshot
 * (snapshot.h): libtsm shows drawn cells, the cursor and the flags, but not
 * the margins, the tab stops, the main and alternate line arrays behind the
 * alternate screen, the scrollback's count or the cells' ages, which an
 * incremental snapshot needs.
 *
 * The structures below describe the memory libtsm 4.0.2 allocates (its
 * src/tsm/libtsm-int.h), field for field in type and order, so that the
 * compiler lays them out as libtsm was laid out. Nothing here is written:
 * every change goes through libtsm's public API. tsmpeek_check() makes sure
 * the layout holds for the libtsm this process runs with before any of it is
 * used (a scratch screen is driven through the public API and read back
 * here); if it fails, session restore is off.
 */
#include <libtsm.h>
#include <stdbool.h>
#include <stdint.h>

struct tsmpeek_cell {
	tsm_symbol_t ch;    /* the code point (libtsm 4 never combines) */
	unsigned int width; /* 1 or 2; 0 behind a wide character */
	struct tsm_screen_attr attr;
	tsm_age_t age; /* the screen's age when last written */
};

struct tsmpeek_line {
	struct tsmpeek_line *next; /* scrollback: newer line */
	struct tsmpeek_line *prev; /* scrollback: older line */
	unsigned int size;	   /* cells allocated (may exceed the width) */
	struct tsmpeek_cell *cells;
	uint64_t sb_id; /* scrollback: the push's number */
	tsm_age_t age;
};

struct tsmpeek_selpos {
	struct tsmpeek_line *line;
	unsigned int x;
	int y;
};

struct tsmpeek_screen {
	size_t ref;
	void *log_fn;
	void *log_data;
	unsigned int opts;
	unsigned int flags; /* TSM_SCREEN_* */
	void *symbols;
	struct tsm_screen_attr def_attr; /* what erased cells get */
	tsm_age_t age_cnt;		 /* the age counter, bumped by every change */
	unsigned int age_reset : 1;
	unsigned int cols;
	unsigned int rows;
	unsigned int margin_top; /* 0-based, inclusive */
	unsigned int margin_bottom;
	unsigned int line_num;	     /* lines allocated in each array */
	struct tsmpeek_line **lines; /* main_lines or alt_lines */
	struct tsmpeek_line **main_lines;
	struct tsmpeek_line **alt_lines;
	tsm_age_t age;
	unsigned int sb_count;
	struct tsmpeek_line *sb_first; /* oldest */
	struct tsmpeek_line *sb_last;  /* newest */
	unsigned int sb_max;
	struct tsmpeek_line *sb_pos;
	uint64_t sb_last_id;   /* pushes so far: the newest line's sb_id */
	unsigned int cursor_x; /* cols (or cols + 1 after a wide character): wrap pending */
	unsigned int cursor_y;
	bool *tab_stops; /* cols entries */
	bool sel_active;
	struct tsmpeek_selpos sel_start;
	struct tsmpeek_selpos sel_end;
};

/* Whether libtsm's screens are laid out as above (checked once, on a scratch
 * screen; the result is kept), and `screen`'s public getters agree with what
 * the view reads from it. */
bool tsmpeek_check(struct tsm_screen *screen);

static inline const struct tsmpeek_screen *tsmpeek(struct tsm_screen *screen)
{
	return (const struct tsmpeek_screen *)(const void *)screen;
}

/* The scrollback lines the view shows above the screen's first row (0 when
 * it is not scrolled back): tsm_screen_draw() draws the screen's row y at
 * y plus this. The scrollback's lines are numbered in order (sb_id), from
 * sb_pos to sb_last. */
static inline uint64_t tsmpeek_view_offset(const struct tsmpeek_screen *p)
{
	return p->sb_pos ? p->sb_last_id - p->sb_pos->sb_id + 1 : 0;
}

/* Whether libtsm changed the line, or any of its cells [0, n), after the
 * age `since` (the snapshot's and the vcs mirror's test of a row). */
static inline bool tsmpeek_line_newer(const struct tsmpeek_line *line, unsigned n, tsm_age_t since)
{
	if (line->age > since)
		return true;
	for (unsigned x = 0; x < n; x++)
		if (line->cells[x].age > since)
			return true;
	return false;
}
