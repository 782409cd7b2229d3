/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * A terminal as term.c builds it, without the pty: the real libtsm screen
 * and vte behind the pty stream stage (stream.h), the stage's answers and
 * libtsm's collected in one buffer in the order the session would read
 * them, and the screen read back cell by cell.
 */
#include <libtsm.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/terminal/cluster.h"
#include "../../daemon/color/pixel.h"
#include "../../daemon/terminal/stream.h"
#include "tests.h"

#define FAKE_COLS_MAX 80
#define FAKE_ROWS_MAX 30

struct fake_cell {
	uint32_t ch; /* the code point libtsm holds: maybe a stand-in */
	struct tsm_screen_attr attr;
};

struct fake_term {
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *table;
	struct stream *stream;
	struct palette palette; /* libtsm's and the stage's, as term.c sets them */
	unsigned cols, rows;
	char replies[4096];
	size_t n_replies;
	struct fake_cell cells[FAKE_ROWS_MAX][FAKE_COLS_MAX];
};

static inline void fake_reply(const char *bytes, size_t len, void *data)
{
	struct fake_term *f = data;

	if (f->n_replies + len < sizeof(f->replies)) {
		memcpy(f->replies + f->n_replies, bytes, len);
		f->n_replies += len;
		f->replies[f->n_replies] = '\0';
	}
}

static inline void fake_vte_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	fake_reply(u8, len, data);
}

/* The stage made again, with what cfg adds (an osc52 callback, a cursor)
 * to the fake's own vte, screen, table, palette and replies. */
static inline void fake_term_restream(struct fake_term *f, struct stream_config cfg)
{
	cfg.vte = f->vte;
	cfg.screen = f->screen;
	cfg.table = f->table;
	cfg.palette = &f->palette;
	cfg.reply = fake_reply;
	cfg.userdata = f;
	stream_free(f->stream);
	f->stream = stream_new(&cfg);
}

static inline void fake_term_init(struct fake_term *f, unsigned cols, unsigned rows)
{
	memset(f, 0, sizeof(*f));
	f->cols = cols;
	f->rows = rows;
	CHECK(tsm_screen_new(&f->screen, NULL, NULL) == 0);
	tsm_screen_set_max_sb(f->screen, 100);
	CHECK(tsm_screen_resize(f->screen, cols, rows) == 0);
	CHECK(tsm_vte_new(&f->vte, f->screen, fake_vte_write, f, NULL, NULL) == 0);
	/* the Linux console's colours, given to libtsm as term.c gives them:
	 * the stage then prints plain text on the screen itself */
	palette_init(&f->palette, PALETTE_LINUX, NULL);
	CHECK(stream_vte_set_palette(f->vte, &f->palette) == 0);
	f->table = cluster_table_new();
	fake_term_restream(f, (struct stream_config){0});
}

static inline void fake_term_fini(struct fake_term *f)
{
	stream_free(f->stream);
	tsm_vte_unref(f->vte);
	tsm_screen_clear_sb(f->screen); /* libtsm leaks the scrollback otherwise */
	tsm_screen_unref(f->screen);
	cluster_table_free(f->table);
}

static inline void fake_feed_n(struct fake_term *f, const char *s, size_t len)
{
	stream_feed(f->stream, s, len);
}

static inline void fake_feed(struct fake_term *f, const char *s)
{
	fake_feed_n(f, s, strlen(s));
}

static inline int fake_draw_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch,
				 size_t len, unsigned width, unsigned posx, unsigned posy,
				 const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct fake_term *f = data;

	(void)con;
	(void)id;
	(void)width;
	(void)age;
	if (posx < FAKE_COLS_MAX && posy < FAKE_ROWS_MAX) {
		f->cells[posy][posx].ch = len ? ch[0] : ' ';
		f->cells[posy][posx].attr = *attr;
	}
	return 0;
}

/* Reads the screen (the view: the scrollback when scrolled back). The
 * cursor's cell is drawn inverted by libtsm unless it is hidden. */
static inline void fake_term_read(struct fake_term *f)
{
	memset(f->cells, 0, sizeof(f->cells));
	tsm_screen_draw(f->screen, fake_draw_cell, f);
}

/* The base character a cell shows (a stand-in's first code point). */
static inline uint32_t fake_base(struct fake_term *f, unsigned x, unsigned y)
{
	uint32_t ch = f->cells[y][x].ch;
	size_t len;
	const uint32_t *seq = cluster_lookup(f->table, ch, &len, NULL);

	return seq ? seq[0] : ch;
}

/* The stand-in flags of a cell (0 for a plain character). */
static inline unsigned fake_flags(struct fake_term *f, unsigned x, unsigned y)
{
	size_t len;
	unsigned flags = 0;

	cluster_lookup(f->table, f->cells[y][x].ch, &len, &flags);
	return flags;
}

/* Row y as text (ASCII bases, '#' for others), trailing blanks cut. */
static inline const char *fake_row(struct fake_term *f, unsigned y)
{
	static char buf[FAKE_COLS_MAX + 1];
	size_t n = 0;

	for (unsigned x = 0; x < f->cols; x++) {
		uint32_t ch = fake_base(f, x, y);

		buf[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : ch == 0 ? ' ' : '#';
	}
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return buf;
}

static inline void fake_clear_replies(struct fake_term *f)
{
	f->n_replies = 0;
	f->replies[0] = '\0';
}

/* Two pens (stream_state) alike, field by field (not their padding). */
static inline bool stream_pen_eq(const struct stream_pen *a, const struct stream_pen *b)
{
	const struct tsm_screen_attr *x = &a->attr, *y = &b->attr;

	return a->extra == b->extra && x->fccode == y->fccode && x->bccode == y->bccode &&
	       x->fr == y->fr && x->fg == y->fg && x->fb == y->fb && x->br == y->br &&
	       x->bg == y->bg && x->bb == y->bb && x->bold == y->bold && x->italic == y->italic &&
	       x->underline == y->underline && x->inverse == y->inverse &&
	       x->protect == y->protect && x->blink == y->blink;
}
