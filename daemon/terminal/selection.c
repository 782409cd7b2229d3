/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "selection"
#include <errno.h>
#include <libtsm.h>
#include <string.h>

#include "cluster.h"
#include "image.h"
#include "selection.h"
#include "term.h"
#include "tsmpeek.h"
#include "../util/log.h"
#include "../util/util.h"

#define WORD_CHARS_MAX 64

/* A cell by its line's number (see selection.h) and column. */
struct pos {
	uint64_t line;
	unsigned col;
};

struct selection {
	struct selection_target target;
	uint32_t word_chars[WORD_CHARS_MAX];
	size_t n_word_chars;

	bool active;   /* a selection is shown */
	bool dragging; /* the button is held */
	bool moved;    /* a one-click selection covers a cell only once moved */
	unsigned unit; /* 1 cells, 2 words, 3 lines */
	/* the unit under the press (or the end kept by an extend): the
	 * selection always holds it */
	struct pos anchor_lo, anchor_hi;
	struct pos start, end; /* start <= end, both inclusive */
	uint64_t hash;	       /* of the selected cells when last set */

	/* what libtsm was last given, in view coordinates; shown: it has one */
	bool shown;
	unsigned shown_x0, shown_y0, shown_x1, shown_y1;
	uint64_t shown_top;

	char *buf; /* the copy buffer */
	size_t buf_len;
};

/* ---- lines ---------------------------------------------------------------- */

static const struct tsmpeek_screen *peek(struct selection *s)
{
	return tsmpeek(s->target.screen);
}

static unsigned cols(struct selection *s)
{
	return tsm_screen_get_width(s->target.screen);
}

static unsigned rows(struct selection *s)
{
	return tsm_screen_get_height(s->target.screen);
}

/* The number of the line at the view's top. */
static uint64_t view_top(struct selection *s)
{
	const struct tsmpeek_screen *p = peek(s);

	return p->sb_pos ? p->sb_pos->sb_id : p->sb_last_id + 1;
}

/* The line numbered n, or NULL when it is gone (or not there yet). */
static const struct tsmpeek_line *get_line(struct selection *s, uint64_t n)
{
	const struct tsmpeek_screen *p = peek(s);
	const struct tsmpeek_line *l;

	if (n > p->sb_last_id) {
		uint64_t r = n - p->sb_last_id - 1;

		return r < rows(s) ? p->lines[r] : NULL;
	}
	for (l = p->sb_last; l && l->sb_id > n; l = l->prev)
		;
	return l && l->sb_id == n ? l : NULL;
}

/* The line after l (numbered n): the scrollback's next, or a screen row;
 * walking a selection so costs a step a line, not a search. */
static const struct tsmpeek_line *next_line(struct selection *s, uint64_t n,
					    const struct tsmpeek_line *l)
{
	if (l && n < peek(s)->sb_last_id)
		return l->next;
	return get_line(s, n + 1);
}

/* The lowest line number that exists: the scrollback's oldest line, or
 * the screen's top. */
static uint64_t first_line(struct selection *s)
{
	const struct tsmpeek_screen *p = peek(s);

	return p->sb_first ? p->sb_first->sb_id : p->sb_last_id + 1;
}

static uint64_t last_line(struct selection *s)
{
	return peek(s)->sb_last_id + rows(s);
}

static const struct tsmpeek_cell *get_cell(const struct tsmpeek_line *l, unsigned col)
{
	return l && col < l->size ? &l->cells[col] : NULL;
}

/* The second half of a wide character (libtsm leaves its ch as it was). */
static bool is_continuation(const struct tsmpeek_line *l, unsigned col)
{
	const struct tsmpeek_cell *c = get_cell(l, col), *prev = col ? get_cell(l, col - 1) : NULL;

	return c && c->width == 0 && prev && prev->width == 2;
}

static bool is_wide(const struct tsmpeek_line *l, unsigned col)
{
	const struct tsmpeek_cell *c = get_cell(l, col);

	return c && c->width == 2 && is_continuation(l, col + 1);
}

/* The text wrapped from line l (numbered n) into the next: its last cell
 * holds a character (the Linux console's rule; libtsm keeps no wrap flag). */
static bool line_wraps(struct selection *s, uint64_t n, const struct tsmpeek_line *l)
{
	unsigned w = cols(s);
	const struct tsmpeek_cell *c = get_cell(l, w - 1);

	if (!c || n >= last_line(s))
		return false;
	return c->ch != 0 || is_continuation(l, w - 1);
}

/* The code point a cell shows as the base (a stand-in's first), 0 empty (an
 * image's tile too). */
static uint32_t base_of(struct selection *s, const struct tsmpeek_line *l, unsigned col)
{
	const struct tsmpeek_cell *c = get_cell(l, col);
	const uint32_t *seq;
	size_t len;

	if (!c || is_continuation(l, col) || image_is_tile(c->ch))
		return 0;
	seq = cluster_lookup(s->target.clusters, c->ch, &len, NULL);
	return seq ? seq[0] : c->ch;
}

static int pos_cmp(struct pos a, struct pos b)
{
	if (a.line != b.line)
		return a.line < b.line ? -1 : 1;
	return a.col < b.col ? -1 : a.col > b.col;
}

/* ---- UTF-8 ---------------------------------------------------------------- */

static int parse_word_chars(const char *text, uint32_t *out, size_t *ret_n)
{
	size_t len = strlen(text), n = 0;

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t k = utf8_get((const unsigned char *)text + i, len - i, &cp);

		if (k == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || n == WORD_CHARS_MAX)
			return -EINVAL;
		out[n++] = cp;
		i += k;
	}
	*ret_n = n;
	return 0;
}

bool selection_word_chars_valid(const char *word_chars)
{
	uint32_t tmp[WORD_CHARS_MAX];
	size_t n;

	return parse_word_chars(word_chars, tmp, &n) == 0;
}

/* ---- units ---------------------------------------------------------------- */

static bool is_space(uint32_t cp)
{
	return cp == 0 || cp == ' ' || cp == 0xa0 || cp == 0x1680 ||
	       (cp >= 0x2000 && cp <= 0x200b) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
	       cp == 0x205f || cp == 0x3000;
}

static bool is_word(struct selection *s, uint32_t cp)
{
	if ((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z'))
		return true;
	for (size_t i = 0; i < s->n_word_chars; i++)
		if (s->word_chars[i] == cp)
			return true;
	return cp > 0xa0 && !is_space(cp);
}

/* 0 blanks, 1 word characters, 2 others (each its own word). */
static int char_class(struct selection *s, uint32_t cp)
{
	return is_space(cp) ? 0 : is_word(s, cp) ? 1 : 2;
}

/* The column col of line l, moved onto the start of a wide character. */
static unsigned col_start(const struct tsmpeek_line *l, unsigned col)
{
	return col > 0 && is_continuation(l, col) ? col - 1 : col;
}

/* The column col of line l, moved onto the end of a wide character. */
static unsigned col_end(const struct tsmpeek_line *l, unsigned col)
{
	return is_wide(l, col) ? col + 1 : col;
}

/* A cell, moved onto the start of a wide character. */
static struct pos cell_start(struct selection *s, struct pos p)
{
	return (struct pos){p.line, col_start(get_line(s, p.line), p.col)};
}

/* The line before l (numbered n), a step like next_line()'s. */
static const struct tsmpeek_line *prev_line(struct selection *s, uint64_t n,
					    const struct tsmpeek_line *l)
{
	const struct tsmpeek_screen *p = peek(s);

	if (n == 0)
		return NULL;
	if (l && n <= p->sb_last_id)
		l = l->prev;
	else if (n == p->sb_last_id + 1)
		l = p->sb_last;
	else
		return get_line(s, n - 1);
	return l && l->sb_id == n - 1 ? l : NULL;
}

/* The first and last cell of the unit at p. The walks across wrapped lines
 * step from line to line by their links: a line is looked up by its number
 * once, not once a cell (a word wrapped over the whole scrollback). */
static void unit_at(struct selection *s, struct pos p, struct pos *lo, struct pos *hi)
{
	unsigned w = cols(s);
	uint64_t first = first_line(s);
	const struct tsmpeek_line *at = get_line(s, p.line), *l;

	if (s->unit == 3) {
		*lo = (struct pos){p.line, 0};
		*hi = (struct pos){p.line, w - 1};
		for (l = at; lo->line > first; lo->line--) {
			l = prev_line(s, lo->line, l);
			if (!line_wraps(s, lo->line - 1, l))
				break;
		}
		for (l = at; line_wraps(s, hi->line, l); hi->line++)
			l = next_line(s, hi->line, l);
		return;
	}
	*lo = (struct pos){p.line, col_start(at, p.col)};
	*hi = (struct pos){p.line, col_end(at, p.col)};
	if (s->unit != 2)
		return;

	int cls = char_class(s, base_of(s, at, lo->col));

	if (cls == 2)
		return;
	/* along the line, and across wraps; l is lo's (hi's) line */
	for (l = at;;) {
		const struct tsmpeek_line *ql = l;
		struct pos q = *lo;

		if (q.col == 0) {
			if (q.line <= first)
				break;
			ql = prev_line(s, q.line, l);
			if (!line_wraps(s, q.line - 1, ql))
				break;
			q = (struct pos){q.line - 1, w - 1};
		} else
			q.col--;
		q.col = col_start(ql, q.col);
		if (char_class(s, base_of(s, ql, q.col)) != cls)
			break;
		*lo = q;
		l = ql;
	}
	for (l = at;;) {
		const struct tsmpeek_line *ql = l;
		struct pos q = *hi;

		if (q.col + 1 >= w) {
			if (!line_wraps(s, q.line, l))
				break;
			ql = next_line(s, q.line, l);
			q = (struct pos){q.line + 1, 0};
		} else
			q.col++;
		q.col = col_end(ql, q.col);
		if (char_class(s, base_of(s, ql, col_start(ql, q.col))) != cls)
			break;
		*hi = q;
		l = ql;
	}
}

/* ---- text ----------------------------------------------------------------- */

struct text {
	char *buf;
	size_t len, cap;
	bool full;
};

static void text_put(struct text *t, const char *bytes, size_t len)
{
	if (t->full || t->len + len > SELECTION_MAX) {
		t->full = true;
		return;
	}
	if (t->len + len > t->cap) {
		t->cap = MAX(t->cap * 2, t->len + len + 256);
		t->buf = xrealloc(t->buf, t->cap);
	}
	memcpy(t->buf + t->len, bytes, len);
	t->len += len;
}

static void text_put_cp(struct text *t, uint32_t cp)
{
	char u[4];

	text_put(t, u, utf8_put(cp, u));
}

/* The selected text (see selection.h). */
static void selection_text(struct selection *s, struct text *t)
{
	unsigned w = cols(s);
	const struct tsmpeek_line *l = get_line(s, s->start.line);

	for (uint64_t n = s->start.line; n <= s->end.line; l = next_line(s, n, l), n++) {
		unsigned c0 = n == s->start.line ? s->start.col : 0;
		unsigned c1 = n == s->end.line ? s->end.col : w - 1;
		bool joined = n < s->end.line && c1 == w - 1 && line_wraps(s, n, l);
		size_t line_start = t->len;

		for (unsigned c = c0; c <= c1 && c < w; c++) {
			const struct tsmpeek_cell *cell = get_cell(l, c);
			const uint32_t *seq;
			size_t len;

			if (!cell || is_continuation(l, c))
				continue;
			seq = cluster_lookup(s->target.clusters, cell->ch, &len, NULL);
			if (seq)
				for (size_t i = 0; i < len; i++)
					text_put_cp(t, seq[i]);
			else if (image_is_tile(cell->ch))
				/* nothing of an image: a space per cell (a line's
				 * trailing ones go as any) */
				text_put_cp(t, ' ');
			else
				text_put_cp(t, cell->ch ? cell->ch : ' ');
		}
		if (!joined) {
			while (t->len > line_start && t->buf[t->len - 1] == ' ')
				t->len--;
			if (n < s->end.line || s->unit == 3)
				text_put(t, "\n", 1);
		}
	}
}

/* What the selected cells hold, hashed: output that changes one changes it
 * (a line gone from the scrollback too). */
static uint64_t selection_hash(struct selection *s)
{
	uint64_t h = 0xcbf29ce484222325u;
	unsigned w = cols(s);
	const struct tsmpeek_line *l = get_line(s, s->start.line);

	for (uint64_t n = s->start.line; n <= s->end.line; l = next_line(s, n, l), n++) {
		unsigned c0 = n == s->start.line ? s->start.col : 0;
		unsigned c1 = n == s->end.line ? s->end.col : w - 1;

		if (!l) {
			h = (h ^ 0xffffffffu) * 0x100000001b3u;
			continue;
		}
		for (unsigned c = c0; c <= c1 && c < w; c++) {
			const struct tsmpeek_cell *cell = get_cell(l, c);
			uint64_t v = cell ? (uint64_t)cell->ch << 2 | cell->width : 3;

			h = (h ^ v) * 0x100000001b3u;
		}
	}
	return h;
}

/* ---- showing -------------------------------------------------------------- */

static void damage(struct selection *s)
{
	if (s->target.damage)
		s->target.damage(s->target.userdata);
}

/* Hands libtsm what the view shows of the selection. */
static void show(struct selection *s)
{
	uint64_t top = view_top(s), bottom = top + rows(s) - 1;
	unsigned x0, y0, x1, y1;

	if (!s->active || (s->unit == 1 && !s->moved) || s->end.line < top ||
	    s->start.line > bottom) {
		if (s->shown) {
			tsm_screen_selection_reset(s->target.screen);
			s->shown = false;
			damage(s);
		}
		return;
	}
	if (s->start.line < top)
		x0 = 0, y0 = 0;
	else
		x0 = s->start.col, y0 = (unsigned)(s->start.line - top);
	if (s->end.line > bottom)
		x1 = cols(s) - 1, y1 = rows(s) - 1;
	else
		x1 = s->end.col, y1 = (unsigned)(s->end.line - top);
	if (s->shown && s->shown_top == top && s->shown_x0 == x0 && s->shown_y0 == y0 &&
	    s->shown_x1 == x1 && s->shown_y1 == y1 && peek(s)->sel_active)
		return;
	tsm_screen_selection_start(s->target.screen, x0, y0);
	tsm_screen_selection_target(s->target.screen, x1, y1);
	s->shown = true;
	s->shown_top = top;
	s->shown_x0 = x0, s->shown_y0 = y0, s->shown_x1 = x1, s->shown_y1 = y1;
	damage(s);
}

/* The selection from the anchor to the unit at p. */
static void select_to(struct selection *s, struct pos p)
{
	struct pos lo, hi;

	unit_at(s, p, &lo, &hi);
	if (pos_cmp(lo, s->anchor_lo) < 0) {
		s->start = lo;
		s->end = s->anchor_hi;
	} else {
		s->start = s->anchor_lo;
		s->end = pos_cmp(hi, s->anchor_hi) > 0 ? hi : s->anchor_hi;
	}
	s->hash = selection_hash(s);
	show(s);
}

/* The cell under view cell col,row: past the edges the view scrolls a line. */
static struct pos view_pos(struct selection *s, unsigned col, int row, bool scroll)
{
	unsigned h = rows(s);

	if (row < 0) {
		if (scroll) {
			tsm_screen_sb_up(s->target.screen, 1);
			damage(s);
		}
		row = 0;
	} else if ((unsigned)row >= h) {
		if (scroll) {
			tsm_screen_sb_down(s->target.screen, 1);
			damage(s);
		}
		row = (int)h - 1;
	}
	return (struct pos){view_top(s) + (unsigned)row, MIN(col, cols(s) - 1)};
}

/* ---- the API -------------------------------------------------------------- */

int selection_new_target(const struct selection_target *target, const char *word_chars,
			 struct selection **ret)
{
	struct selection *s;
	int r;

	if (!tsmpeek_check(target->screen))
		return log_error_errno(-EPROTONOSUPPORT,
				       "libtsm's screen is not laid out as expected, no selection");
	s = xcalloc(1, sizeof(*s));
	s->target = *target;
	r = parse_word_chars(word_chars ? word_chars : SELECTION_WORD_CHARS_DEFAULT, s->word_chars,
			     &s->n_word_chars);
	if (r < 0) {
		free(s);
		return log_error_errno(r, "Invalid word characters '%s'", word_chars);
	}
	*ret = s;
	return 0;
}

static void term_target_write(const char *bytes, size_t len, void *userdata)
{
	term_send(userdata, bytes, len);
}

static void term_target_damage(void *userdata)
{
	term_redraw(userdata);
}

int selection_new(struct term *t, const char *word_chars, struct selection **ret)
{
	return selection_new_target(
	    &(struct selection_target){
		.screen = term_screen(t),
		.clusters = term_clusters(t),
		.write = term_target_write,
		.damage = term_target_damage,
		.userdata = t,
	    },
	    word_chars, ret);
}

static void buf_free(struct selection *s)
{
	if (s->buf)
		explicit_bzero(s->buf, s->buf_len);
	free(s->buf);
	s->buf = NULL;
	s->buf_len = 0;
}

void selection_free(struct selection *s)
{
	if (!s)
		return;
	buf_free(s);
	free(s);
}

void selection_start(struct selection *s, unsigned col, int row, unsigned clicks, bool extend)
{
	struct pos p = view_pos(s, col, row, false);

	if (extend && s->active) {
		/* the end farther from p stays */
		uint64_t w = cols(s);

		if (pos_cmp(p, s->start) < 0 ||
		    (pos_cmp(p, s->end) <= 0 &&
		     (p.line - s->start.line) * w + p.col - s->start.col <
			 (s->end.line - p.line) * w + s->end.col - p.col)) {
			s->anchor_lo = s->anchor_hi = s->end;
		} else {
			s->anchor_lo = s->anchor_hi = s->start;
		}
		s->dragging = s->moved = true;
		select_to(s, p);
		return;
	}
	s->unit = clicks >= 3 ? 3 : clicks == 2 ? 2 : 1;
	s->active = s->dragging = true;
	s->moved = s->unit > 1;
	unit_at(s, p, &s->anchor_lo, &s->anchor_hi);
	select_to(s, p);
}

void selection_move(struct selection *s, unsigned col, int row)
{
	struct pos p;

	if (!s->dragging)
		return;
	p = view_pos(s, col, row, true);
	if (s->unit == 1 && !s->moved && pos_cmp(cell_start(s, p), s->anchor_lo) == 0)
		return;
	s->moved = true;
	select_to(s, p);
}

void selection_set_buffer(struct selection *s, const char *text, size_t len)
{
	if (len > SELECTION_MAX)
		return;
	buf_free(s);
	if (len == 0)
		return;
	s->buf = xmalloc(len);
	memcpy(s->buf, text, len);
	s->buf_len = len;
}

bool selection_end(struct selection *s)
{
	struct text t = {};

	if (!s->dragging)
		return false;
	s->dragging = false;
	if (!s->active || (s->unit == 1 && !s->moved)) {
		selection_clear(s);
		return false;
	}
	selection_text(s, &t);
	/* text_put() takes whole characters only: the cut is between two */
	if (t.full)
		log_info("The selection is longer than %u bytes: copied in part", SELECTION_MAX);
	selection_set_buffer(s, t.buf, t.len);
	if (t.buf)
		explicit_bzero(t.buf, t.cap);
	free(t.buf);
	return true;
}

void selection_clear(struct selection *s)
{
	s->active = s->dragging = false;
	show(s);
}

void selection_check(struct selection *s)
{
	if (!s->active)
		return;
	if (s->start.line < first_line(s) || selection_hash(s) != s->hash) {
		selection_clear(s);
		return;
	}
	show(s);
}

size_t selection_sanitize(const char *in, size_t len, char *out)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t n = 0;

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t k = utf8_get(p + i, len - i, &cp);

		if (k == 0) {
			i++;
			continue;
		}
		if (cp == '\r' && i + 1 < len && p[i + 1] == '\n') {
			i++; /* CR LF: one CR */
			continue;
		}
		if (cp == '\n' || cp == '\r')
			out[n++] = '\r';
		else if (cp == '\t' || (cp >= 0x20 && cp < 0x7f) || cp > 0x9f) {
			memcpy(out + n, p + i, k);
			n += k;
		}
		i += k;
	}
	return n;
}

void selection_paste(struct selection *s, bool bracketed)
{
	static const char open[] = "\033[200~", close[] = "\033[201~";
	size_t n = 0, cap;
	char *out;

	if (!s->buf_len || !s->target.write)
		return;
	cap = s->buf_len + sizeof(open) + sizeof(close);
	out = xmalloc(cap);
	if (bracketed) {
		memcpy(out, open, sizeof(open) - 1);
		n = sizeof(open) - 1;
	}
	n += selection_sanitize(s->buf, s->buf_len, out + n);
	if (bracketed) {
		memcpy(out + n, close, sizeof(close) - 1);
		n += sizeof(close) - 1;
	}
	/* one write: a paste is queued whole or not at all */
	s->target.write(out, n, s->target.userdata);
	explicit_bzero(out, cap);
	free(out);
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Decodes base64 (padding optional); -EINVAL when malformed. */
static int b64_decode(const char *in, size_t len, char *out, size_t *ret_len)
{
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t n = 0;

	while (len > 0 && in[len - 1] == '=')
		len--;
	for (size_t i = 0; i < len; i++) {
		int v = b64_value(in[i]);

		if (v < 0)
			return -EINVAL;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (bits >= 6)
		return -EINVAL; /* one character left over */
	*ret_len = n;
	return 0;
}

bool selection_osc52(struct selection *s, const char *args, size_t len)
{
	const char *data = memchr(args, ';', len);
	size_t data_len, n;
	bool set = false;
	char *text;

	if (!data)
		return false;
	data++;
	data_len = len - (size_t)(data - args);
	if (data_len == 1 && data[0] == '?')
		return false; /* a query: what the user copied is not the program's to read */
	if (data_len / 4 * 3 > SELECTION_MAX + 3)
		return false;
	text = xmalloc(data_len / 4 * 3 + 3);
	if (b64_decode(data, data_len, text, &n) == 0 && n <= SELECTION_MAX) {
		selection_set_buffer(s, text, n);
		set = true;
	}
	explicit_bzero(text, data_len / 4 * 3 + 3);
	free(text);
	return set;
}

void selection_wipe(struct selection *s)
{
	selection_clear(s);
	buf_free(s);
}

const char *selection_buffer(const struct selection *s, size_t *ret_len)
{
	*ret_len = s->buf_len;
	return s->buf;
}

bool selection_active(const struct selection *s)
{
	return s->active;
}
