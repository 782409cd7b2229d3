/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Session restore of the vte's hidden state (stream_get_state(),
 * stream_set_state()) against the real libtsm 4.0.2. Terminal A is fed a
 * random byte stream; its state is taken; terminal B is built as session
 * restore builds it: a fresh screen, tsm_vte_hard_reset(), the cells of
 * both screen buffers, the cursor (a pending wrap by writing the row's last
 * cell last), the flags, margins and tab stops set through libtsm's public
 * screen API, then stream_set_state(). Margins and tab stops, which libtsm
 * does not show, are set alike on A and B before A's state is taken (A's
 * own were made by the random stream). Both then get the same probes:
 * DECRC and SCORC, text in every character set and shift, a line feed
 * (LNM), an erase (the pen as erase colour), REP, leaving and entering the
 * alternate screen, writing past the margin, and keys through libtsm's and
 * keys.c's encoders; the screens must agree cell by cell with attributes,
 * the cursor and flags, and the keys byte for byte.
 */
#include <errno.h>
#include <libtsm.h>
#include <stdio.h>
#include <string.h>
#include <xkbcommon/xkbcommon-keysyms.h>

#include "../../daemon/terminal/cluster.h"
#include "../../daemon/terminal/keys.h"
#include "../../daemon/terminal/stream.h"
#include "../../daemon/util/util.h"
#include "test-stream-fake.h"
#include "tests.h"

#define COLS_MAX 40
#define ROWS_MAX 12

struct term {
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *table; /* shared: restore brings the table back too */
	struct stream *stream;
	struct keys_modes keys;
	size_t n_seen; /* bytes the stage handed on (libtsm and keys' follower) */
	char out[4096];
	size_t n_out;
};

static void term_out(const char *bytes, size_t len, void *data)
{
	struct term *t = data;

	if (t->n_out + len < sizeof(t->out)) {
		memcpy(t->out + t->n_out, bytes, len);
		t->n_out += len;
		t->out[t->n_out] = '\0';
	}
}

static void term_vte_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	term_out(u8, len, data);
}

static void term_seen(const char *bytes, size_t len, void *data)
{
	struct term *t = data;

	t->n_seen += len;
	keys_modes_feed(&t->keys, bytes, len);
}

static void term_init(struct term *t, unsigned cols, unsigned rows, struct cluster_table *table)
{
	memset(t, 0, sizeof(*t));
	keys_modes_init(&t->keys);
	CHECK(tsm_screen_new(&t->screen, NULL, NULL) == 0);
	tsm_screen_set_max_sb(t->screen, 20);
	CHECK(tsm_screen_resize(t->screen, cols, rows) == 0);
	CHECK(tsm_vte_new(&t->vte, t->screen, term_vte_write, t, NULL, NULL) == 0);
	t->table = table;
	t->stream = stream_new(&(struct stream_config){.vte = t->vte,
						       .screen = t->screen,
						       .table = table,
						       .reply = term_out,
						       .seen = term_seen,
						       .userdata = t});
}

static void term_fini(struct term *t)
{
	stream_free(t->stream);
	tsm_vte_unref(t->vte);
	tsm_screen_clear_sb(t->screen);
	tsm_screen_unref(t->screen);
}

static void feed(struct term *t, const char *s)
{
	stream_feed(t->stream, s, strlen(s));
}

static void put_flags(struct tsm_screen *screen, unsigned flags)
{
	unsigned now = tsm_screen_get_flags(screen);

	if (flags & ~now)
		tsm_screen_set_flags(screen, flags & ~now);
	if (now & ~flags)
		tsm_screen_reset_flags(screen, now & ~flags);
}

/* ---- reading a screen ----------------------------------------------------- */

struct cell {
	uint32_t ch; /* 0: drawn empty (libtsm draws a space so too) */
	unsigned width;
	struct tsm_screen_attr attr;
};

struct cells {
	struct cell c[ROWS_MAX][COLS_MAX];
};

static int read_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
		     unsigned width, unsigned posx, unsigned posy,
		     const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct cells *cells = data;

	(void)con;
	(void)id;
	(void)age;
	if (posx < COLS_MAX && posy < ROWS_MAX)
		cells->c[posy][posx] = (struct cell){len ? ch[0] : 0, width, *attr};
	return 0;
}

/* The current buffer's cells as stored (the cursor hidden and the screen
 * not inverted while drawing). */
static void read_cells(struct tsm_screen *screen, struct cells *cells)
{
	unsigned flags = tsm_screen_get_flags(screen);

	memset(cells, 0, sizeof(*cells));
	tsm_screen_set_flags(screen, TSM_SCREEN_HIDE_CURSOR);
	tsm_screen_reset_flags(screen, TSM_SCREEN_INVERSE);
	tsm_screen_draw(screen, read_cell, cells);
	put_flags(screen, flags);
}

/* A cell as what it means: a stand-in as its cluster and flags. */
static void describe(const struct term *t, const struct cell *c, char *buf, size_t size)
{
	const struct tsm_screen_attr *a = &c->attr;
	unsigned flags = 0;
	size_t len = 0;
	const uint32_t *seq = cluster_lookup(t->table, c->ch, &len, &flags);
	int n = snprintf(buf, size, "%x", seq ? seq[0] : c->ch);

	for (size_t i = 1; seq && i < len; i++)
		n += snprintf(buf + n, size - (size_t)n, "+%x", seq[i]);
	snprintf(buf + n, size - (size_t)n, "/%u w%u %d %d %u,%u,%u %u,%u,%u %u%u%u%u%u%u", flags,
		 c->width, a->fccode, a->bccode, a->fr, a->fg, a->fb, a->br, a->bg, a->bb, a->bold,
		 a->italic, a->underline, a->inverse, a->protect, a->blink);
}

/* Whether A and B show the same: every cell, the cursor and the flags. */
static bool same_screen(struct term *a, struct term *b, const char *what)
{
	static struct cells ca, cb;
	unsigned w = tsm_screen_get_width(a->screen), h = tsm_screen_get_height(a->screen);
	char da[160], db[160];

	read_cells(a->screen, &ca);
	read_cells(b->screen, &cb);
	for (unsigned y = 0; y < h; y++)
		for (unsigned x = 0; x < w; x++) {
			describe(a, &ca.c[y][x], da, sizeof(da));
			describe(b, &cb.c[y][x], db, sizeof(db));
			if (strcmp(da, db) != 0) {
				fprintf(stderr, "%s: cell %u,%u: %s != %s\n", what, x, y, da, db);
				return false;
			}
		}
	if (tsm_screen_get_cursor_x(a->screen) != tsm_screen_get_cursor_x(b->screen) ||
	    tsm_screen_get_cursor_y(a->screen) != tsm_screen_get_cursor_y(b->screen) ||
	    tsm_screen_get_flags(a->screen) != tsm_screen_get_flags(b->screen)) {
		fprintf(stderr, "%s: cursor %u,%u flags %x != cursor %u,%u flags %x\n", what,
			tsm_screen_get_cursor_x(a->screen), tsm_screen_get_cursor_y(a->screen),
			tsm_screen_get_flags(a->screen), tsm_screen_get_cursor_x(b->screen),
			tsm_screen_get_cursor_y(b->screen), tsm_screen_get_flags(b->screen));
		return false;
	}
	return true;
}

/* ---- building B as session restore does ----------------------------------- */

/* One cell as A holds it: written, or erased with its attributes (the
 * cells right of a wide character keep what they held, width 0). */
static void put_cell(struct tsm_screen *screen, unsigned x, unsigned y, const struct cell *c)
{
	tsm_screen_move_to(screen, x, y);
	if (c->ch) {
		tsm_screen_write(screen, c->ch, &c->attr);
		return;
	}
	tsm_screen_set_def_attr(screen, &c->attr);
	tsm_screen_erase_chars(screen, 1);
}

/* A row as A holds it, also where libtsm left a wide character half
 * overwritten: a cell of width 0 is made by writing a wide character left
 * of it (which keeps the cell's character and attributes), then what A has
 * there; right to left, as a cell of width 0 may follow another. */
static void write_cells(struct tsm_screen *screen, const struct cells *cells, unsigned w,
			unsigned h)
{
	static const struct tsm_screen_attr plain = {.fccode = 7, .bccode = 0};

	for (unsigned y = 0; y < h; y++) {
		const struct cell *row = cells->c[y];

		for (unsigned x = 0; x < w; x++)
			put_cell(screen, x, y, &row[x]);
		for (unsigned x = w - 1; x > 0; x--) {
			if (row[x].width != 0)
				continue;
			if (row[x - 1].width != 2) {
				tsm_screen_move_to(screen, x - 1, y);
				tsm_screen_write(screen, 0x4e2d, &plain);
			}
			put_cell(screen, x - 1, y, &row[x - 1]);
		}
	}
}

static void rewrite(struct tsm_screen *screen, unsigned x, unsigned y, const struct cell *c,
		    bool wide)
{
	tsm_screen_move_to(screen, x, y);
	tsm_screen_write(screen, c->ch ? c->ch : wide ? 0x4e2d : ' ', &c->attr);
	if (!c->ch) {
		tsm_screen_set_def_attr(screen, &c->attr);
		tsm_screen_erase_chars(screen, 1);
	}
}

/* The cursor at the width or beyond (a wrap pending): the character that
 * ends there written again (the rightmost; an empty cell as a space erased
 * again), else an empty last cell of another row written and erased again,
 * and the cursor moved up or down from there; false if nothing worked. */
static bool put_pending_wrap(struct tsm_screen *screen, const struct cells *cells, unsigned w,
			     unsigned h, unsigned x, unsigned y)
{
	for (unsigned k = 1; k <= 2; k++) {
		const struct cell *c = &cells->c[y][x - k];

		if (x - k >= w || c->width != k)
			continue;
		rewrite(screen, x - k, y, c, false);
		return true;
	}
	for (unsigned from = 0; from < h; from++) {
		const struct cell *c = &cells->c[from][w - 1];

		if (c->ch || c->width != 1)
			continue;
		rewrite(screen, w - 1, from, c, x > w);
		if (from > y)
			tsm_screen_move_up(screen, from - y, false);
		else
			tsm_screen_move_down(screen, y - from, false);
		if (tsm_screen_get_cursor_x(screen) == x && tsm_screen_get_cursor_y(screen) == y)
			return true;
	}
	return false;
}

/* B gets A's screen through the public API after a hard reset of its vte;
 * false if A's cursor cannot be made so (then the case is skipped). */
static bool rebuild(struct term *a, struct term *b)
{
	static struct cells cur, other;
	unsigned flags = tsm_screen_get_flags(a->screen);
	unsigned w = tsm_screen_get_width(a->screen), h = tsm_screen_get_height(a->screen);
	unsigned x = tsm_screen_get_cursor_x(a->screen), y = tsm_screen_get_cursor_y(a->screen);

	read_cells(a->screen, &cur);
	if (flags & TSM_SCREEN_ALTERNATE) {
		tsm_screen_reset_flags(a->screen, TSM_SCREEN_ALTERNATE);
		read_cells(a->screen, &other);
		tsm_screen_set_flags(a->screen, TSM_SCREEN_ALTERNATE);
	}

	tsm_vte_hard_reset(b->vte);
	stream_reset(b->stream);
	keys_modes_init(&b->keys);
	tsm_screen_reset_flags(b->screen, tsm_screen_get_flags(b->screen));
	if (flags & TSM_SCREEN_ALTERNATE) {
		write_cells(b->screen, &other, w, h);
		tsm_screen_set_flags(b->screen, TSM_SCREEN_ALTERNATE);
	}
	write_cells(b->screen, &cur, w, h);
	if (x < w)
		tsm_screen_move_to(b->screen, x, y);
	else if (!put_pending_wrap(b->screen, &cur, w, h, x, y))
		return false;
	put_flags(b->screen, flags);
	return tsm_screen_get_cursor_x(b->screen) == x && tsm_screen_get_cursor_y(b->screen) == y;
}

/* ---- random streams ------------------------------------------------------- */

static uint32_t rng_state;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state % n;
}

static const char *const sgr_params[] = {
    "0",       "1",	      "2",	    "3",
    "4",       "5",	      "7",	    "8",
    "9",       "21",	      "22",	    "23",
    "24",      "25",	      "27",	    "28",
    "29",      "30",	      "31",	    "37",
    "39",      "40",	      "42",	    "47",
    "49",      "90",	      "93",	    "97",
    "100",     "104",	      "107",	    "",
    "38;5;3",  "38;5;12",     "38;5;100",   "38;5;250",
    "48;5;9",  "48;5;200",    "38;2;1;2;3", "48;2;250;0;9",
    "38:5:45", "38:2::9:8:7", "4:0",	    "58;5;3",
    "38;5",    "38;2;1",
};

static const char *const tokens[] = {
    /* text */
    "abc",
    "q~x`",
    "lmnoj",
    "\xc2\xa1\xc3\xbe\xc2\xbf",
    "\xe4\xb8\xad",
    "e\xcc\x81",
    "   ",
    /* controls */
    "\r",
    "\n",
    "\b",
    "\t",
    "\016",
    "\017",
    "\r\n",
    /* character sets and shifts */
    "\033(0",
    "\033(B",
    "\033)0",
    "\033)<",
    "\033*0",
    "\033+0",
    "\033(A",
    "\033*K",
    "\033+<",
    "\033n",
    "\033o",
    "\033~",
    "\033}",
    "\033|",
    "\033N",
    "\033O",
    "\xc2\x8e",
    "\xc2\x8f",
    /* saving and restoring */
    "\0337",
    "\0338",
    "\033[s",
    "\033[u",
    /* modes */
    "\033[?1h",
    "\033[?1l",
    "\033=",
    "\033>",
    "\033[?66h",
    "\033[?66l",
    "\033[20h",
    "\033[20l",
    "\033[?6h",
    "\033[?6l",
    "\033[?7h",
    "\033[?7l",
    "\033[4h",
    "\033[4l",
    "\033[?25l",
    "\033[?25h",
    "\033[?5h",
    "\033[?5l",
    /* the alternate screen */
    "\033[?1049h",
    "\033[?1049l",
    "\033[?1048h",
    "\033[?1048l",
    "\033[?47h",
    "\033[?47l",
    "\033[?1047h",
    "\033[?1047l",
    /* moving, erasing, repeating */
    "\033[H",
    "\033[5;3H",
    "\033[2;5r",
    "\033[r",
    "\033[K",
    "\033[2J",
    "\033[3b",
    "\033[2A",
    "\033[4C",
};

static size_t gen(char *buf, size_t cap, unsigned cols, unsigned rows)
{
	size_t n = 0;
	unsigned count = 1 + rnd(60);

	for (unsigned k = 0; k < count && n + 64 < cap; k++) {
		unsigned pick = rnd(100);

		if (pick < 25) {
			unsigned np = 1 + rnd(4);

			n += (size_t)snprintf(buf + n, cap - n, "\033[");
			for (unsigned i = 0; i < np; i++)
				n += (size_t)snprintf(
				    buf + n, cap - n, "%s%s", i ? ";" : "",
				    sgr_params[rnd((unsigned)ELEMENTSOF(sgr_params))]);
			buf[n++] = 'm';
		} else if (pick < 32) {
			/* the last column: a wrap pending */
			n += (size_t)snprintf(buf + n, cap - n, "\033[%u;%uH%s", 1 + rnd(rows + 1),
					      cols - rnd(2), rnd(3) ? "Z" : "\xe4\xb8\xad");
		} else if (pick < 35) {
			n += (size_t)snprintf(buf + n, cap - n, "\033[%u;%uH", 1 + rnd(rows + 2),
					      1 + rnd(cols + 2));
		} else if (pick < 36) {
			static const char *const resets[] = {"\033c", "\033[!p", "\033[61\"p"};

			n += (size_t)snprintf(buf + n, cap - n, "%s", resets[rnd(3)]);
		} else if (pick < 37) {
			buf[n++] = (char)rnd(256); /* anything */
		} else
			n += (size_t)snprintf(buf + n, cap - n, "%s",
					      tokens[rnd((unsigned)ELEMENTSOF(tokens))]);
	}
	return n;
}

/* ---- the probes ------------------------------------------------------------ */

static const char *const probes[] = {
    /* the pending single shift, GL, GR, the pen */
    "q\xc2\xa1qx~`\xc3\xbe",
    "\033N`q\033Oq\016qx\017qx\033nqj\033oqj\033}\xc2\xa1\033|\xc2\xa1",
    "\0338qx~a\xc2\xa1", /* DECRC: cursor, pen, shifts, DECAWM, DECOM */
    "\033[uqx\033[2Am",	 /* SCORC */
    "\033[?6l\0338b",	 /* DECRC from outside origin mode */
    "a\nb\rc\033[K",	 /* LNM; the erase colour */
    "\033[3b",		 /* REP */
    "\033[99Cwrap",
    "\033[?1049lM\033[?1048lN",
    "\033[?1049hO\033[?1049l",
    "\0337\033[Hzz\0338y",
    "\033[?1048lP\033[2J",
    "\033c\0338Q",
};

struct key {
	uint32_t keysym;
	uint32_t unicode;
};

static const struct key keys[] = {
    {XKB_KEY_Up, TSM_VTE_INVALID}, {XKB_KEY_Home, TSM_VTE_INVALID}, {XKB_KEY_KP_1, '1'},
    {XKB_KEY_KP_Enter, '\r'},	   {XKB_KEY_Return, '\r'},	    {XKB_KEY_KP_Add, '+'},
    {XKB_KEY_KP_Subtract, '-'},
};

/* What each key sends from B and from A: libtsm's encoder, and keys.c's
 * with each one's followed modes (Num Lock off and on). */
static bool same_keys(struct term *a, struct term *b)
{
	bool ok = a->keys.modes == b->keys.modes;

	if (!ok)
		fprintf(stderr, "keys: modes %x != %x\n", a->keys.modes, b->keys.modes);
	/* the daemon's encoder reads the stage's own view: after a restore
	 * too it is the follower's */
	if (stream_key_modes(a->stream) != a->keys.modes ||
	    stream_key_modes(b->stream) != b->keys.modes) {
		fprintf(stderr, "keys: stream's modes %x, %x != followed %x, %x\n",
			stream_key_modes(a->stream), stream_key_modes(b->stream), a->keys.modes,
			b->keys.modes);
		ok = false;
	}
	for (size_t i = 0; i < (unsigned)ELEMENTSOF(keys); i++) {
		char ka[KEYS_MAX], kb[KEYS_MAX];

		a->n_out = b->n_out = 0;
		a->out[0] = b->out[0] = '\0';
		tsm_vte_handle_keyboard(a->vte, keys[i].keysym, 0, 0, keys[i].unicode);
		tsm_vte_handle_keyboard(b->vte, keys[i].keysym, 0, 0, keys[i].unicode);
		if (a->n_out != b->n_out || memcmp(a->out, b->out, a->n_out) != 0) {
			fprintf(stderr, "key %x: libtsm sends %s in A, %s in B\n", keys[i].keysym,
				a->out, b->out);
			ok = false;
		}
		for (unsigned num = 0; num <= KEYS_NUM_LOCK_MASK; num += KEYS_NUM_LOCK_MASK) {
			size_t na = keys_encode(keys[i].keysym, num, a->keys.modes, ka);
			size_t nb = keys_encode(keys[i].keysym, num, b->keys.modes, kb);

			if (na != nb || memcmp(ka, kb, na) != 0) {
				fprintf(stderr, "key %x: keys.c differs\n", keys[i].keysym);
				ok = false;
			}
		}
	}
	a->n_out = b->n_out = 0;
	return ok;
}

/* One random case; false if A and B came apart. */
static bool round_trip(unsigned seed, unsigned *skipped)
{
	static char buf[8192];
	struct cluster_table *table = cluster_table_new();
	unsigned cols = 8 + seed % 23, rows = 3 + seed % 7;
	struct term a, b;
	struct stream_state st;
	size_t n;
	bool ok = true;
	char what[64];

	rng_state = seed * 2654435761u + 1;
	term_init(&a, cols, rows, table);
	term_init(&b, cols, rows, table);
	n = gen(buf, sizeof(buf), cols, rows);
	/* CAN: nothing cut (a UTF-8 or escape sequence is no part of the state) */
	buf[n++] = '\030';
	stream_feed(a.stream, buf, n);

	/* what libtsm hides of the screen, alike on both */
	unsigned top = 1 + rnd(rows), bottom = top + rnd(rows + 1 - top);

	tsm_screen_set_margins(a.screen, top, bottom);
	tsm_screen_reset_all_tabstops(a.screen);
	stream_get_state(a.stream, &st);

	if (!rebuild(&a, &b)) {
		if (getenv("STREAM_STATE_VERBOSE"))
			fprintf(stderr, "seed %u: skipped: cursor %u,%u of %u\n", seed,
				tsm_screen_get_cursor_x(a.screen),
				tsm_screen_get_cursor_y(a.screen), cols);
		(*skipped)++;
		goto out;
	}
	tsm_screen_set_margins(b.screen, top, bottom);
	tsm_screen_reset_all_tabstops(b.screen);

	/* set_state leaves the screen as it found it */
	snprintf(what, sizeof(what), "seed %u: rebuilt", seed);
	ok = same_screen(&a, &b, what);
	CHECK(stream_set_state(b.stream, &st) == 0);
	snprintf(what, sizeof(what), "seed %u: after set_state", seed);
	ok = ok && same_screen(&a, &b, what);
	ok = ok && same_keys(&a, &b);

	for (size_t i = 0; ok && i < (unsigned)ELEMENTSOF(probes); i++) {
		feed(&a, probes[i]);
		feed(&b, probes[i]);
		snprintf(what, sizeof(what), "seed %u: probe %zu", seed, i);
		ok = same_screen(&a, &b, what) && same_keys(&a, &b);
	}
out:
	term_fini(&a);
	term_fini(&b);
	cluster_table_free(table);
	return ok;
}

static void test_round_trip(void)
{
	unsigned skipped = 0, failed = 0;

	for (unsigned seed = 1; seed <= 1000; seed++)
		if (!round_trip(seed, &skipped) && ++failed >= 5)
			break;
	fprintf(stderr, "round trips: %u failed, %u skipped\n", failed, skipped);
	CHECK(failed == 0);
	CHECK(skipped < 30);
}

/* The state's fields as libtsm holds them. */
static void test_get_state(void)
{
	struct cluster_table *table = cluster_table_new();
	struct stream_state st;
	struct term t;

	term_init(&t, 20, 6, table);
	feed(&t, "\033[3;5H\033[1;4;38;5;100;48;5;3m\033)0\016\033[?6h\0337\033[m\033(<");
	feed(&t, "\033[2;3Hab\033[?1049h\033[?1h\033[?66h\033[20h");
	stream_get_state(t.stream, &st);
	CHECK(st.g[0] == STREAM_CHARSET_DEC_SUPPLEMENTAL && st.g[1] == STREAM_CHARSET_DEC_SPECIAL);
	CHECK(st.gl == 1 && st.gr == 1 && st.glt == -1 && st.pen.attr.fccode == 16);
	CHECK(st.modes == (STREAM_MODE_DECCKM | STREAM_MODE_KEYS_KEYPAD | STREAM_MODE_LNM |
			   STREAM_MODE_KEYS_LNM));
	CHECK(st.saved.x == 4 && st.saved.y == 2 && st.saved.origin && st.saved.wrap);
	CHECK(st.saved.pen.attr.bold && st.saved.pen.attr.underline && !st.saved.pen.attr.italic);
	CHECK(st.saved.pen.attr.fccode == -1 && st.saved.pen.attr.fr == 0x87 &&
	      st.saved.pen.attr.fg == 0x87 && st.saved.pen.attr.fb == 0);
	CHECK(st.saved.pen.attr.bccode == 3 && st.saved.gl == 1 && st.saved.gr == 1);
	CHECK(st.alt.x == 4 && st.alt.y == 1);
	feed(&t, "\033[!p\033[9;95mx\033N");
	stream_get_state(t.stream, &st);
	CHECK(st.saved.x == 0 && st.saved.y == 0 && !st.saved.origin && st.saved.wrap);
	CHECK(st.saved.pen.attr.fccode == 16 && st.saved.gl == 0 && st.alt.x == 4);
	/* DECSTR: the pen, shifts and modes back, the encoder's LNM kept */
	CHECK(st.g[0] == STREAM_CHARSET_ASCII && st.g[1] == STREAM_CHARSET_UPPER && st.gl == 0);
	CHECK(st.modes == STREAM_MODE_KEYS_LNM);
	CHECK(st.glt == 2 && st.pen.extra == CLUSTER_STRIKE && st.pen.attr.fccode == 13);
	CHECK(st.rep_len == 1 && st.rep[0] == 'x');
	term_fini(&t);
	cluster_table_free(table);
}

static bool state_eq(const struct stream_state *a, const struct stream_state *b)
{
	return stream_pen_eq(&a->pen, &b->pen) && memcmp(a->g, b->g, sizeof(a->g)) == 0 &&
	       a->gl == b->gl && a->gr == b->gr && a->glt == b->glt && a->modes == b->modes &&
	       a->saved.x == b->saved.x && a->saved.y == b->saved.y &&
	       stream_pen_eq(&a->saved.pen, &b->saved.pen) && a->saved.gl == b->saved.gl &&
	       a->saved.gr == b->saved.gr && a->saved.wrap == b->saved.wrap &&
	       a->saved.origin == b->saved.origin && a->alt.x == b->alt.x && a->alt.y == b->alt.y &&
	       a->rep_len == b->rep_len &&
	       memcmp(a->rep, b->rep, a->rep_len * sizeof(uint32_t)) == 0;
}

/* Out of range: -EINVAL, and nothing reaches libtsm or changes. */
static void test_invalid(void)
{
	struct cluster_table *table = cluster_table_new();
	struct stream_state good, bad, now;
	struct term t;

	term_init(&t, 20, 6, table);
	feed(&t, "\033[31mab\033[?1h");
	stream_get_state(t.stream, &good);
	for (int k = 0; k < 9; k++) {
		size_t seen = t.n_seen;

		bad = good;
		switch (k) {
		case 0:
			bad.pen.attr.fccode = 17;
			break;
		case 1:
			bad.saved.pen.attr.bccode = 16;
			break;
		case 2:
			bad.g[3] = 4;
			break;
		case 3:
			bad.gr = 0;
			break;
		case 4:
			bad.glt = 1;
			break;
		case 5:
			bad.modes = 1u << 7;
			break;
		case 6:
			bad.rep_len = STREAM_REP_MAX + 1;
			break;
		case 7:
			bad.pen.extra = 1u << 5;
			break;
		case 8:
			bad.modes = STREAM_MODE_LNM;
			break;
		}
		CHECK(stream_set_state(t.stream, &bad) == -EINVAL);
		CHECK(t.n_seen == seen);
		stream_get_state(t.stream, &now);
		CHECK(state_eq(&now, &good));
	}
	CHECK(tsm_screen_get_cursor_x(t.screen) == 2);
	term_fini(&t);
	cluster_table_free(table);
}

int main(void)
{
	RUN(test_get_state);
	RUN(test_invalid);
	RUN(test_round_trip);
	return TESTS_RESULT();
}
