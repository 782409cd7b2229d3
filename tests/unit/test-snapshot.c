/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The snapshot (daemon/terminal/snapshot.c) with the real libtsm 4 and stream stage:
 * random streams are fed, snapshotted, restored into a fresh terminal and
 * compared cell by cell (main screen, alternate screen, scrollback: code
 * point, width, attributes), with cursor, flags, margins, tab stops and the
 * erase attribute; then both get the same continuation and must still agree
 * (the vte's hidden state). Broken snapshots (torn updates, truncation,
 * flipped bytes, another version) are refused or give the previous state,
 * never a crash (the suite runs under ASan too). And the update's cost.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../daemon/terminal/cluster.h"
#include "../../daemon/util/log.h"
#include "../../daemon/terminal/snapshot.h"
#include "../../daemon/terminal/stream.h"
#include "../../daemon/terminal/tsmpeek.h"
#include "../../daemon/util/util.h"
#include "tests.h"

struct term {
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *table;
	struct stream *stream;
	char replies[4096];
	size_t n_replies;
};

static void term_reply(const char *bytes, size_t len, void *data)
{
	struct term *t = data;

	len = MIN(len, sizeof(t->replies) - 1 - t->n_replies);
	memcpy(t->replies + t->n_replies, bytes, len);
	t->n_replies += len;
	t->replies[t->n_replies] = '\0';
}

static void vte_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	term_reply(u8, len, data);
}

static void term_init(struct term *t, unsigned cols, unsigned rows, unsigned sb)
{
	memset(t, 0, sizeof(*t));
	if (tsm_screen_new(&t->screen, NULL, NULL) < 0 ||
	    tsm_screen_resize(t->screen, cols, rows) < 0 ||
	    tsm_vte_new(&t->vte, t->screen, vte_write, t, NULL, NULL) < 0)
		abort();
	tsm_screen_set_max_sb(t->screen, sb);
	t->table = cluster_table_new();
	t->stream = stream_new(&(struct stream_config){.vte = t->vte,
						       .screen = t->screen,
						       .table = t->table,
						       .reply = term_reply,
						       .userdata = t});
}

static void term_fini(struct term *t)
{
	stream_free(t->stream);
	tsm_vte_unref(t->vte);
	tsm_screen_clear_sb(t->screen);
	tsm_screen_unref(t->screen);
	cluster_table_free(t->table);
}

static void feed(struct term *t, const char *s, size_t len)
{
	stream_feed(t->stream, s, len);
}

static void feeds(struct term *t, const char *s)
{
	feed(t, s, strlen(s));
}

/* ---- what a terminal holds, as text ---------------------------------------- */

struct dump {
	char *buf;
	size_t len, cap;
};

static void dump_add(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dump_add(struct dump *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (d->len + (size_t)n + 1 > d->cap) {
		d->cap = 2 * (d->len + (size_t)n + 1) + 4096;
		d->buf = xrealloc(d->buf, d->cap);
	}
	va_start(ap, fmt);
	vsnprintf(d->buf + d->len, d->cap - d->len, fmt, ap);
	va_end(ap);
	d->len += (size_t)n;
}

static void dump_attr(struct dump *d, const struct tsm_screen_attr *a)
{
	dump_add(d, "%d,%d,%u,%u,%u,%u,%u,%u,%u%u%u%u%u%u", a->fccode, a->bccode, a->fr, a->fg,
		 a->fb, a->br, a->bg, a->bb, a->bold, a->italic, a->underline, a->inverse,
		 a->protect, a->blink);
}

/* A line as tsm_screen_draw() shows it: the cells up to the width, blank
 * ones with the erase attribute past a shorter scrollback line. A stand-in
 * as the cluster it means. */
static void dump_line(struct dump *d, struct term *t, const struct tsmpeek_line *l)
{
	const struct tsmpeek_screen *p = tsmpeek(t->screen);

	for (unsigned x = 0; x < p->cols; x++) {
		struct tsmpeek_cell empty = {.ch = 0, .width = 1, .attr = p->def_attr};
		const struct tsmpeek_cell *c = x < l->size ? &l->cells[x] : &empty;
		uint32_t ch = c->ch;
		size_t len = 0;
		unsigned flags = 0;
		const uint32_t *seq = cluster_lookup(t->table, ch, &len, &flags);

		/* 0 and a space are drawn alike (libtsm passes no character for
		 * either) */
		if (ch == ' ' && !c->attr.underline)
			ch = 0;
		if (seq) {
			dump_add(d, "[");
			for (size_t i = 0; i < len; i++)
				dump_add(d, "%x.", seq[i]);
			dump_add(d, "/%u]", flags);
		} else
			dump_add(d, "%x", ch);
		dump_add(d, "/%u ", c->width);
		dump_attr(d, &c->attr);
		dump_add(d, ";");
	}
	dump_add(d, "\n");
}

/* Everything the snapshot is to keep, read through tsmpeek.h. */
static char *term_dump(struct term *t)
{
	const struct tsmpeek_screen *p = tsmpeek(t->screen);
	struct dump d = {0};

	CHECK(tsmpeek_check(t->screen));
	dump_add(&d, "grid %ux%u cursor %u,%u flags %x margins %u-%u sb %u\ndef ", p->cols, p->rows,
		 p->cursor_x, p->cursor_y, p->flags, p->margin_top, p->margin_bottom, p->sb_count);
	dump_attr(&d, &p->def_attr);
	dump_add(&d, "\ntabs ");
	for (unsigned x = 0; x < p->cols; x++)
		dump_add(&d, "%c", p->tab_stops[x] ? 'T' : '.');
	dump_add(&d, "\n");
	for (const struct tsmpeek_line *l = p->sb_first; l; l = l->next) {
		dump_add(&d, "sb ");
		dump_line(&d, t, l);
	}
	for (unsigned y = 0; y < p->rows; y++) {
		dump_add(&d, "main%u ", y);
		dump_line(&d, t, p->main_lines[y]);
	}
	for (unsigned y = 0; y < p->rows; y++) {
		dump_add(&d, "alt%u ", y);
		dump_line(&d, t, p->alt_lines[y]);
	}
	return d.buf;
}

static bool dumps_equal(const char *what, const char *a, const char *b)
{
	size_t i = 0, line = 1, start = 0;

	if (strcmp(a, b) == 0)
		return true;
	while (a[i] && a[i] == b[i]) {
		if (a[i] == '\n') {
			line++;
			start = i + 1;
		}
		i++;
	}
	fprintf(stderr, "%s: differs in line %zu:\n  %.*s\n  %.*s\n", what, line,
		getenv("SNAP_SEED") ? 4000 : 200, a + start, getenv("SNAP_SEED") ? 4000 : 200,
		b + start);
	return false;
}

/* ---- random streams -------------------------------------------------------- */

static unsigned rnd(unsigned n)
{
	return (unsigned)rand() % n;
}

static void gen_piece(struct dump *d)
{
	static const char *const fixed[] = {
	    "\r\n",
	    "\n",
	    "\n\n\n",
	    "\r",
	    "\t",
	    "\b",
	    "\033[?1049h",
	    "\033[?1049l",
	    "\033[?47h",
	    "\033[?47l",
	    "\033[?1048h",
	    "\033[?1048l",
	    "\033[?6h",
	    "\033[?6l",
	    "\033[?7l",
	    "\033[?7h",
	    "\033[?25l",
	    "\033[?25h",
	    "\033[?5h",
	    "\033[?5l",
	    "\033[4h",
	    "\033[4l",
	    "\0337",
	    "\0338",
	    "\033[s",
	    "\033[u",
	    "\016",
	    "\017",
	    "\033(0",
	    "\033(B",
	    "\033)0",
	    "\033*<",
	    "\033+A",
	    "\033N",
	    "\033O",
	    "\033n",
	    "\033~",
	    "\033[?1h",
	    "\033[?1l",
	    "\033=",
	    "\033>",
	    "\033[20h",
	    "\033[20l",
	    "\033[3J",
	    "\033[!p",
	    "\033H",
	    "\033[g",
	    "\033[3g",
	    "\033[r",
	    "\033M",
	    "\033D",
	    "\033E",
	    "\033[m",
	    "\033[2m",
	    "\033[9m",
	    "\033[8m",
	    "\033[28m",
	    "\033[22;29m",
	    "\033[1;4;5;7m",
	    "\033[3m",
	    "\033[K",
	    "\033[1K",
	    "\033[2K",
	    "\033[J",
	    "\033[1J",
	    "\033[2J",
	    "\xe4\xb8\xad",
	    "\xe6\x96\x87",
	    "\xef\xbc\xa1",
	    "e\xcc\x81",
	    "a\xcc\x88\xcc\xa3",
	    "\xf4\x80\x80\x81",
	    "\xe2\x94\x80",
	    "qqqq",
	    "\033[?66h",
	    "\033[?66l",
	    "\033c",
	};
	unsigned k = rnd(100);

	if (k < 35) {
		/* text */
		unsigned n = 1 + rnd(12);

		for (unsigned i = 0; i < n; i++)
			dump_add(d, "%c", 'A' + rnd(58));
	} else if (k < 70)
		dump_add(d, "%s", fixed[rnd(ELEMENTSOF(fixed))]);
	else if (k < 78)
		dump_add(d, "\033[%u;%uH", rnd(12), rnd(30));
	else if (k < 82)
		dump_add(d, "\033[%u;%ur", rnd(10), rnd(12));
	else if (k < 88) {
		switch (rnd(4)) {
		case 0:
			dump_add(d, "\033[%um", 30 + rnd(10));
			break;
		case 1:
			dump_add(d, "\033[%um", 90 + rnd(18));
			break;
		case 2:
			dump_add(d, "\033[38;5;%um", rnd(256));
			break;
		default:
			dump_add(d, "\033[48;2;%u;%u;%um", rnd(256), rnd(256), rnd(256));
		}
	} else {
		static const char ops[] = "@PLMXACDBGdbSTEF`aZI";

		dump_add(d, "\033[%u%c", rnd(5), ops[rnd(sizeof(ops) - 1)]);
	}
}

static char *gen_stream(unsigned pieces, size_t *ret_len)
{
	struct dump d = {0};

	dump_add(&d, "%s", "");
	for (unsigned i = 0; i < pieces; i++)
		gen_piece(&d);
	*ret_len = d.len;
	return d.buf;
}

/* ---- snapshot helpers ------------------------------------------------------ */

/* A copy of the memfd as it is now (what a crash now would leave). */
static int fd_copy(int fd, off_t cut)
{
	struct stat st;
	int copy = memfd_create("snapshot-copy", MFD_CLOEXEC);
	char *buf;

	if (copy < 0 || fstat(fd, &st) < 0)
		abort();
	if (cut >= 0 && cut < st.st_size)
		st.st_size = cut;
	buf = xmalloc((size_t)st.st_size + 1);
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size ||
	    write(copy, buf, (size_t)st.st_size) != st.st_size)
		abort();
	free(buf);
	return copy;
}

static int restore_into(struct term *t, int fd)
{
	unsigned cols = 0, rows = 0;
	int r = snapshot_restore(fd, t->screen, t->vte, t->stream, t->table, &cols, &rows);

	if (r == 0) {
		CHECK_EQ_U(cols, tsm_screen_get_width(t->screen));
		CHECK_EQ_U(rows, tsm_screen_get_height(t->screen));
	}
	return r;
}

/* Restores fd into a fresh terminal and compares it with `want`. */
static bool restore_equals(int fd, const char *want, unsigned sb, const char *what)
{
	struct term b;
	char *got;
	bool ok;
	int r;

	term_init(&b, 7, 3, sb);
	r = restore_into(&b, fd);
	if (r < 0) {
		fprintf(stderr, "%s: restore: %s\n", what, strerror(-r));
		term_fini(&b);
		return false;
	}
	got = term_dump(&b);
	ok = dumps_equal(what, want, got);
	free(got);
	term_fini(&b);
	return ok;
}

/* a's state, restored into b: equal now, and after the same continuation. */
static void check_round_trip(struct term *a, struct snapshot *s, const char *cont, size_t cont_len,
			     const char *what)
{
	const struct tsmpeek_screen *pa = tsmpeek(a->screen);
	struct term b;
	char *da, *db;
	int r;

	CHECK(snapshot_update(s, a->screen, a->stream, a->table) == 0);
	term_init(&b, 11, 4, pa->sb_max);
	/* something to overwrite */
	feeds(&b, "\033[31mold\r\n\033[?1049hjunk\033[2;3r");
	r = restore_into(&b, snapshot_fd(s));
	CHECK(r == 0);
	da = term_dump(a);
	db = term_dump(&b);
	if (!dumps_equal(what, da, db)) {
		if (getenv("SNAP_SEED"))
			fprintf(stderr, "=== original\n%s=== restored\n%s", da, db);
		CHECK(!"restored screen equals");
	}
	free(da);
	free(db);

	a->n_replies = b.n_replies = 0;
	a->replies[0] = b.replies[0] = '\0';
	feed(a, cont, cont_len);
	feed(&b, cont, cont_len);
	da = term_dump(a);
	db = term_dump(&b);
	if (!dumps_equal(what, da, db) || strcmp(a->replies, b.replies) != 0) {
		if (getenv("SNAP_SEED"))
			fprintf(stderr, "=== original\n%s=== restored\n%s", da, db);
		fprintf(stderr, "%s: after the continuation (replies '%s' '%s')\n", what,
			a->replies, b.replies);
		CHECK(!"continuation equal");
	}
	free(da);
	free(db);
	term_fini(&b);
}

/* ---- tests ----------------------------------------------------------------- */

static void test_supported(void)
{
	struct term a;

	term_init(&a, 30, 8, 10);
	CHECK(snapshot_supported(a.screen));
	/* the live check compares with the getters */
	feeds(&a, "abc\033[?25l\033[3;5H");
	CHECK(snapshot_supported(a.screen));
	term_fini(&a);
}

static void test_random(void)
{
	unsigned fails = 0;

	unsigned only = getenv("SNAP_SEED") ? (unsigned)atoi(getenv("SNAP_SEED")) : 0;

	unsigned from = getenv("SNAP_FROM") ? (unsigned)atoi(getenv("SNAP_FROM")) : 1;

	for (unsigned seed = only ? from : 1; seed <= (only ? only : 400); seed++) {
		static const unsigned grids[][3] = {
		    {20, 6, 15}, {13, 5, 40}, {31, 9, 0}, {8, 3, 7}};
		const unsigned *g = grids[seed % ELEMENTSOF(grids)];
		struct term a;
		struct snapshot *s;
		char *text, *cont, what[64];
		size_t len, cont_len, i = 0;
		int was_failed = tests_failed;

		tests_failed = 0;

		srand(seed);
		text = gen_stream(20 + rnd(400), &len);
		cont = gen_stream(60, &cont_len);
		if (only == seed) { /* SNAP_SEED=n: the streams, for a closer look */
			fwrite(text, 1, len, stdout);
			printf("\n----\n");
			fwrite(cont, 1, cont_len, stdout);
		}
		term_init(&a, g[0], g[1], g[2]);
		CHECK(snapshot_new(g[2], &s) == 0);
		/* updates now and then along the way */
		while (i < len) {
			size_t r = 1 + (size_t)rnd(64), n = MIN(len - i, r);

			feed(&a, text + i, n);
			i += n;
			if (rnd(3) == 0)
				CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
		}
		snprintf(what, sizeof(what), "random seed %u", seed);
		check_round_trip(&a, s, cont, cont_len, what);
		snapshot_free(s);
		term_fini(&a);
		free(text);
		free(cont);
		if (tests_failed)
			fails++;
		tests_failed |= was_failed;
	}
	fprintf(stderr, "random: %u of %u seeds differ\n", fails, only ? 1 : 400);
}

/* The cases named: each made on purpose, its presence checked, then the
 * round trip. */
static void test_cases(void)
{
	/* (the kitty keyboard flags asked on either screen: their answers
	 * are compared) */
	static const char cont[] = "Z\033[?u\033[?1049l\033[?uback\r\nmore\033[5;1Hy\xe4\xb8\xad"
				   "\tq\033[b\0338!\033[<u\033[?u";
	struct term a;
	struct snapshot *s;
	const struct tsmpeek_screen *p;

	/* alternate screen over a main screen with scrollback */
	term_init(&a, 20, 5, 30);
	p = tsmpeek(a.screen);
	CHECK(snapshot_new(30, &s) == 0);
	for (unsigned i = 0; i < 12; i++) {
		char line[32];

		snprintf(line, sizeof(line), "\033[3%umline %u\r\n", i % 8, i);
		feeds(&a, line);
	}
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	feeds(&a, "\033[>1u\033[>3u");
	feeds(&a, "\033[?1049h\033[44mvim\033[2;4r\033[?1h\033=\033[3;1Hin region\033[?25l");
	feeds(&a, "\033[>31u");
	CHECK(p->flags & TSM_SCREEN_ALTERNATE);
	CHECK(p->sb_count > 0 && p->margin_top == 1 && p->margin_bottom == 3);
	check_round_trip(&a, s, cont, sizeof(cont) - 1, "alternate screen");
	snapshot_free(s);
	term_fini(&a);

	/* scrollback full and trimmed, lines wider and shorter */
	term_init(&a, 16, 4, 10);
	p = tsmpeek(a.screen);
	CHECK(snapshot_new(10, &s) == 0);
	for (unsigned i = 0; i < 50; i++) {
		char line[64];

		snprintf(line, sizeof(line), "%u%s\r\n", i, i % 3 ? "" : " a longer line here");
		feeds(&a, line);
		if (i % 7 == 0)
			CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	}
	CHECK(p->sb_count == 10 && p->sb_last_id > 40);
	check_round_trip(&a, s, cont, sizeof(cont) - 1, "scrollback trimmed");
	/* cleared (CSI 3 J) and filled again */
	feeds(&a, "\033[3Jx\r\ny\r\nz\r\nw\r\nv\r\n");
	CHECK(p->sb_count == 2);
	check_round_trip(&a, s, cont, sizeof(cont) - 1, "scrollback cleared");
	snapshot_free(s);
	term_fini(&a);

	/* wide characters, orphaned halves, stand-ins, a pending wrap */
	term_init(&a, 10, 4, 5);
	p = tsmpeek(a.screen);
	CHECK(snapshot_new(5, &s) == 0);
	feeds(&a, "\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad"); /* 5 wide */
	feeds(&a, "\033[1;1H\033[P\033[1;4Ha"); /* halves without their character */
	feeds(&a, "\033[2;1He\xcc\x81\033[2m dim\033[9mx\033[m\xf4\x80\x80\x85");
	CHECK(cluster_table_count(a.table) >= 3);
	feeds(&a, "\033[3;1H\033[41m0123456789"); /* wrap pending */
	CHECK(p->cursor_x == 10 && p->cursor_y == 2);
	CHECK(p->main_lines[0]->cells[0].width == 0);
	check_round_trip(&a, s, cont, sizeof(cont) - 1, "wide and wrap");
	/* a wide character in the last column: the cursor one further */
	feeds(&a, "\033[4;10H\xe4\xb8\xad");
	CHECK(p->cursor_x == 11);
	check_round_trip(&a, s, cont, sizeof(cont) - 1, "wide at the end");
	/* a pending wrap over an erased cell */
	feeds(&a, "\033[4;1H0123456789\033[1K");
	CHECK(p->cursor_x == 10);
	check_round_trip(&a, s, cont, sizeof(cont) - 1, "wrap after erase");
	snapshot_free(s);
	term_fini(&a);

	/* DECSTBM with origin mode, tab stops, saved cursor, charsets, modes */
	term_init(&a, 24, 8, 5);
	p = tsmpeek(a.screen);
	CHECK(snapshot_new(5, &s) == 0);
	feeds(&a, "\033[3g\033[1;4H\033H\033[1;13H\033H\033[3;6r\033[?6h\033[2;2H\033[1;33m"
		  "\0337\033[m\033(0\016\033[20h\033[4hlqk");
	CHECK(p->margin_top == 2 && p->margin_bottom == 5);
	CHECK(p->tab_stops[3] && p->tab_stops[12] && !p->tab_stops[8]);
	CHECK(p->flags & TSM_SCREEN_REL_ORIGIN && p->flags & TSM_SCREEN_INSERT_MODE);
	{
		static const char more[] = "\tT\0338x\n\n\n\n\n\017lqk\033[6n";

		check_round_trip(&a, s, more, sizeof(more) - 1, "margins and tabs");
	}
	snapshot_free(s);
	term_fini(&a);
}

/* A crash between writing rows and committing the header: the copy taken
 * there restores the previous update's state. */
struct crash {
	int copy[3]; /* by phase */
};

static void feedf(struct term *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void feedf(struct term *t, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	feeds(t, buf);
}

/* The line with a colour per character, then CR LF. */
static void feed_rainbow(struct term *t, const char *text)
{
	char buf[512];
	size_t n = 0;

	for (unsigned i = 0; text[i] && n + 16 < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\033[3%um%c", 1 + i % 7, text[i]);
	snprintf(buf + n, sizeof(buf) - n, "\r\n");
	feeds(t, buf);
}

static void crash_hook(int fd, unsigned phase, void *userdata)
{
	struct crash *c = userdata;

	if (phase < 3 && c->copy[phase] < 0)
		c->copy[phase] = fd_copy(fd, -1);
}

static void test_crash(void)
{
	struct crash c = {{-1, -1, -1}};
	struct term a;
	struct snapshot *s;
	char *before, *after, *phase1;

	term_init(&a, 20, 5, 8);
	CHECK(snapshot_new(8, &s) == 0);
	/* a colour per character: lines that take much of the ring, so that
	 * the new ones overwrite lines the header counts */
	for (unsigned i = 0; i < 20; i++)
		feed_rainbow(&a, "a line that scrolls");
	feeds(&a, "\033[?1049hfull screen\033[2;1H\xe4\xb8\xad");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	before = term_dump(&a);

	/* rows change on both screens, lines are pushed over the ones the
	 * header counts (phase 1), and the update stops before its header */
	feeds(&a, "\033[3;3Hchanged\033[?1049l\033[31m");
	for (unsigned i = 0; i < 6; i++)
		feed_rainbow(&a, "new scrolled line");
	snapshot_test_commit_hook = crash_hook;
	snapshot_test_commit_userdata = &c;
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	snapshot_test_commit_hook = NULL;
	after = term_dump(&a);
	CHECK(c.copy[1] >= 0 && c.copy[2] >= 0);

	/* before phase 1: the last update's state */
	CHECK(restore_equals(c.copy[1], before, 8, "crash before phase 1"));
	/* between the phases: the previous state, less the dropped lines */
	{
		struct term b;

		term_init(&b, 7, 3, 8);
		CHECK(restore_into(&b, c.copy[2]) == 0);
		phase1 = term_dump(&b);
		CHECK(tsmpeek(b.screen)->sb_count < tsmpeek(a.screen)->sb_count);
		CHECK(strstr(phase1, "alt2 ") && strstr(before, "alt2 "));
		CHECK(dumps_equal("crash between phases (screens)", strstr(before, "main0 "),
				  strstr(phase1, "main0 ")));
		free(phase1);
		term_fini(&b);
	}
	/* the update itself */
	CHECK(restore_equals(snapshot_fd(s), after, 8, "after the update"));

	/* an update without phase 1 */
	close(c.copy[1]);
	close(c.copy[2]);
	c.copy[1] = c.copy[2] = -1;
	feeds(&a, "\033[Hover the top\033[5;1H\xe4\xb8\xad");
	snapshot_test_commit_hook = crash_hook;
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	snapshot_test_commit_hook = NULL;
	CHECK(c.copy[1] < 0 && c.copy[2] >= 0);
	CHECK(restore_equals(c.copy[2], after, 8, "crash before the header"));
	close(c.copy[2]);
	free(before);
	free(after);
	snapshot_free(s);
	term_fini(&a);
}

/* dump (term_dump()) with only its newest `keep` scrollback lines. */
static char *dump_keep_sb(const char *dump, unsigned keep)
{
	struct dump d = {0};
	const char *nl = strchr(dump, '\n'), *sb = strstr(dump, " sb "), *p, *e;
	unsigned total = 0, skip;

	CHECK(nl && sb && sb < nl);
	for (p = nl + 1; (e = strchr(p, '\n')); p = e + 1)
		total += strncmp(p, "sb ", 3) == 0;
	CHECK(keep <= total);
	skip = total - keep;
	dump_add(&d, "%.*s sb %u\n", (int)(sb - dump), dump, keep);
	for (p = nl + 1; (e = strchr(p, '\n')); p = e + 1) {
		if (strncmp(p, "sb ", 3) == 0 && skip > 0) {
			skip--;
			continue;
		}
		dump_add(&d, "%.*s\n", (int)(e - p), p);
	}
	return d.buf;
}

/* Updates during a flood (snapshot_update_flood()): at most a screenful of
 * new scrollback; more starts the snapshot's scrollback over from the newest
 * lines; the next snapshot_update() writes the whole scrollback again (a
 * crash in the middle of that leaves the flood's state). */
static void test_flood(void)
{
	struct crash c = {{-1, -1, -1}};
	struct term a;
	struct snapshot *s;
	char *want, *part;

	term_init(&a, 20, 5, 50);
	CHECK(snapshot_new(50, &s) == 0);
	for (unsigned i = 0; i < 40; i++)
		feedf(&a, "\033[3%umold line %u\r\n", i % 8, i);
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	/* a screenful or less: all of it */
	for (unsigned i = 0; i < 5; i++)
		feedf(&a, "slow line %u\r\n", i);
	CHECK(snapshot_update_flood(s, a.screen, a.stream, a.table) == 0);
	want = term_dump(&a);
	CHECK(restore_equals(snapshot_fd(s), want, 50, "flood, a screenful"));
	free(want);

	/* more: the newest screenful only */
	for (unsigned i = 0; i < 12; i++)
		feedf(&a, "\033[1mflood line %u\r\n", i);
	CHECK(snapshot_update_flood(s, a.screen, a.stream, a.table) == 1);
	want = term_dump(&a);
	part = dump_keep_sb(want, 5);
	CHECK(restore_equals(snapshot_fd(s), part, 50, "flood, the newest screenful"));
	free(want);
	free(part);
	/* a few more: appended, the scrollback still partial */
	for (unsigned i = 0; i < 3; i++)
		feedf(&a, "\033[mflood end %u\r\n", i);
	CHECK(snapshot_update_flood(s, a.screen, a.stream, a.table) == 1);
	want = term_dump(&a);
	part = dump_keep_sb(want, 8);
	CHECK(restore_equals(snapshot_fd(s), part, 50, "flood, appended"));

	/* the output stopped: everything, and a crash before its header
	 * leaves the flood's state */
	snapshot_test_commit_hook = crash_hook;
	snapshot_test_commit_userdata = &c;
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	snapshot_test_commit_hook = NULL;
	CHECK(c.copy[2] >= 0);
	CHECK(restore_equals(c.copy[2], part, 50, "crash in the update after the flood"));
	if (c.copy[1] >= 0) {
		CHECK(restore_equals(c.copy[1], part, 50, "crash before phase 1"));
		close(c.copy[1]);
	}
	close(c.copy[2]);
	CHECK(restore_equals(snapshot_fd(s), want, 50, "after the flood"));
	/* and goes on as usual */
	feedf(&a, "after %u\r\n", 1);
	check_round_trip(&a, s, "x\r\n", 3, "after the flood, more");
	free(want);
	free(part);
	snapshot_free(s);
	term_fini(&a);
}

/* A broken snapshot is refused and the terminal left as it was. */
static void check_refused(int fd, int want, const char *what)
{
	struct term b;
	char *d0, *d1;
	int r;

	term_init(&b, 9, 4, 5);
	feeds(&b, "untouched\033[31m\r\nx");
	d0 = term_dump(&b);
	r = restore_into(&b, fd);
	d1 = term_dump(&b);
	if (r != want) {
		fprintf(stderr, "%s: restore gave %d, not %d\n", what, r, want);
		CHECK(!"refused");
	}
	CHECK(strcmp(d0, d1) == 0);
	free(d0);
	free(d1);
	term_fini(&b);
}

static void test_broken(void)
{
	struct term a;
	struct snapshot *s;
	struct stat st;
	char *want, *prev;
	unsigned char *map;
	int fd;

	term_init(&a, 20, 5, 10);
	CHECK(snapshot_new(10, &s) == 0);
	fd = snapshot_fd(s);
	/* empty: nothing written yet */
	check_refused(fd, -EBADMSG, "empty");
	for (unsigned i = 0; i < 14; i++)
		feeds(&a, "\033[32mline \xe4\xb8\xad e\xcc\x81\r\n");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	prev = term_dump(&a);
	feeds(&a, "\033[?1049hx\033[2;4r");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	want = term_dump(&a);
	CHECK(fstat(fd, &st) == 0);

	/* truncated anywhere */
	for (off_t cut = 0; cut < st.st_size; cut += cut < 8192 ? 1021 : 331) {
		int copy = fd_copy(fd, cut);

		check_refused(copy, -EBADMSG, "truncated");
		close(copy);
	}

	/* a byte flipped where the snapshot lives: refused, or the same state
	 * (an unused byte), or the previous update's (the newest header broken:
	 * the other one is whole) */
	{
		int copy = fd_copy(fd, -1);
		size_t size = (size_t)st.st_size;
		unsigned refused = 0, same = 0;

		map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, copy, 0);
		CHECK(map != MAP_FAILED);
		srand(7);
		for (unsigned i = 0; i < 3000; i++) {
			size_t at;
			unsigned char bit = (unsigned char)(1u << rnd(8));
			struct term b;
			char *got;
			int r;

			/* the headers, the stand-ins, and the rest of the region */
			at = i % 3 == 0	  ? rnd(8192)
			     : i % 3 == 1 ? 8192 + rnd(200)
					  : 8192 + rnd((unsigned)MIN(size - 8192, 60000));
			map[at] ^= bit;
			term_init(&b, 9, 4, 10);
			r = restore_into(&b, copy);
			if (r == 0) {
				got = term_dump(&b);
				if (strcmp(got, want) != 0 && strcmp(got, prev) != 0) {
					fprintf(stderr, "flipped bit %x at %zu: another state\n",
						bit, at);
					if (getenv("SNAP_SEED"))
						fprintf(stderr, "=== original\n%s=== restored\n%s",
							want, got);
					CHECK(!"a flipped byte gives a known state");
				}
				free(got);
				same++;
			} else {
				CHECK(r == -EBADMSG);
				refused++;
			}
			term_fini(&b);
			map[at] ^= bit;
		}
		fprintf(stderr, "flipped bytes: %u refused, %u restored (same or previous state)\n",
			refused, same);
		CHECK(refused > 300);
		/* both headers broken: nothing */
		map[100] ^= 1;
		map[4096 + 100] ^= 1;
		check_refused(copy, -EBADMSG, "both headers");
		map[100] ^= 1;
		map[4096 + 100] ^= 1;
		/* another version in both (this one writes 2) */
		map[8] = 3;
		map[4096 + 8] = 3;
		check_refused(copy, -EPROTONOSUPPORT, "foreign version");
		munmap(map, size);
		close(copy);
	}
	CHECK(restore_equals(fd, want, 10, "unharmed original"));

	/* a new session: nothing stays */
	snapshot_reset(s);
	CHECK(fstat(fd, &st) == 0 && st.st_size == 0);
	check_refused(fd, -EBADMSG, "reset");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	CHECK(restore_equals(fd, want, 10, "after reset"));
	free(want);
	free(prev);
	snapshot_free(s);
	term_fini(&a);
}

/* Whether `secret` is anywhere in the fd's bytes: as text (the scrollback's
 * records) or as the code points of consecutive cells (the rows). */
static bool fd_holds(int fd, const char *secret)
{
	struct stat st;
	size_t n = strlen(secret);
	uint8_t *buf;
	bool found = false;

	CHECK(fstat(fd, &st) == 0);
	buf = xmalloc((size_t)st.st_size + 1);
	CHECK(pread(fd, buf, (size_t)st.st_size, 0) == st.st_size);
	for (size_t at = 0; at + n * 12 <= (size_t)st.st_size && !found; at++) {
		size_t k = 0;

		while (k < n && buf[at + k * 12] == (uint8_t)secret[k] && !buf[at + k * 12 + 1])
			k++;
		found = k == n || memcmp(buf + at, secret, n) == 0;
	}
	free(buf);
	return found;
}

/* A new session (stream_wipe(), as term_restart() does it): after any
 * stream, the terminal equals a fresh one, libtsm's line arrays (main,
 * alternate, scrollback) and hidden state included: both get the same
 * continuation and still agree. The snapshot made from it holds nothing of
 * the last session. */
static void test_wipe(void)
{
	static const char secret[] =
	    "\033[?1049h\033[3;5H\033[2mDIMSECRET\033[0m "
	    "e\xcc\x81\033[4;1HALTSECRET\033[4;7H\033[?1048h\0337\033[?1049l"
	    "MAINSECRET\033[6;9H\0337\033[2;4r\033[?6h\033[?1h\033[20h";
	static const char reveal[] = "\033[?1048lA\0338B\033[?47hC\033[?47l\033[?1047hD";
	unsigned fails = 0;

	for (unsigned seed = 1; seed <= 60; seed++) {
		struct term a, b;
		struct snapshot *s;
		char *text, *cont, *da, *db, what[64];
		size_t len, cont_len;
		int was_failed = tests_failed;

		tests_failed = 0;
		srand(seed);
		text = gen_stream(20 + rnd(300), &len);
		cont = gen_stream(40, &cont_len);
		term_init(&a, 20, 6, 15);
		term_init(&b, 20, 6, 15);
		/* (libtsm gives a new screen's alternate rows other blank
		 * attributes than an erase: shown once, they are erased) */
		feeds(&b, "\033[?1049h\033[?1049l");
		feeds(&a, secret);
		feed(&a, text, len);
		feeds(&a, secret);
		for (unsigned i = 0; i < 8; i++)
			feeds(&a, "SBSECRET\r\n");
		feeds(&a, "\033[?1049h\033[5;1H\033[9mSTRUCK\033[1;20r\033]52;c;c2VjcmV0");
		CHECK(cluster_table_count(a.table) > 0);

		stream_wipe(a.stream);
		snprintf(what, sizeof(what), "wipe seed %u", seed);
		da = term_dump(&a);
		db = term_dump(&b);
		if (!dumps_equal(what, da, db))
			CHECK(!"a wiped terminal equals a fresh one");
		CHECK(cluster_table_count(a.table) == 0);
		free(da);
		free(db);

		/* what libtsm keeps out of sight comes out the same */
		a.n_replies = b.n_replies = 0;
		a.replies[0] = b.replies[0] = '\0';
		feeds(&a, reveal);
		feeds(&b, reveal);
		feed(&a, cont, cont_len);
		feed(&b, cont, cont_len);
		feeds(&a, reveal);
		feeds(&b, reveal);
		da = term_dump(&a);
		db = term_dump(&b);
		if (!dumps_equal(what, da, db) || strcmp(a.replies, b.replies) != 0)
			CHECK(!"a wiped terminal goes on as a fresh one");
		free(da);
		free(db);
		term_fini(&b);

		/* the next session's snapshot */
		CHECK(snapshot_new(15, &s) == 0);
		term_fini(&a);
		term_init(&a, 20, 6, 15);
		feeds(&a, secret);
		for (unsigned i = 0; i < 8; i++)
			feeds(&a, "SBSECRET\r\n");
		feeds(&a, secret);
		CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
		CHECK(fd_holds(snapshot_fd(s), "ALTSECRET"));
		CHECK(fd_holds(snapshot_fd(s), "SBSECRET"));
		snapshot_reset(s);
		stream_wipe(a.stream);
		CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
		CHECK(!fd_holds(snapshot_fd(s), "SECRET"));
		snapshot_free(s);
		term_fini(&a);
		free(text);
		free(cont);
		if (tests_failed)
			fails++;
		tests_failed |= was_failed;
	}
	fprintf(stderr, "wipe: %u of 60 seeds differ\n", fails);
}

/* Cells holding stand-ins the table no longer has (what a consoled that
 * reset the table but kept the alternate screen's rows wrote): the session
 * is restored, those cells as U+FFFD, every other cell as it was. */
static void test_unknown_standin(void)
{
	struct term a, b;
	struct snapshot *s;
	const struct tsmpeek_screen *p;
	unsigned replaced = 0, kept = 0;

	term_init(&a, 20, 5, 10);
	CHECK(snapshot_new(10, &s) == 0);
	feeds(&a, "\033[2mdim\033[0m e\xcc\x81 sb\r\n\n\n\n\n\033[?1049h\033[9mstruck\033[0m "
		  "alt\033[?1049l\033[2mx\033[0m main");
	CHECK(cluster_table_count(a.table) > 0);
	cluster_table_reset(a.table);
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	term_init(&b, 20, 5, 10);
	CHECK(restore_into(&b, snapshot_fd(s)) == 0);
	p = tsmpeek(b.screen);
	for (const struct tsmpeek_line *l = p->sb_first; l; l = l->next)
		for (unsigned x = 0; x < MIN(l->size, p->cols); x++)
			replaced += l->cells[x].ch == 0xfffd;
	for (unsigned k = 0; k < 2; k++)
		for (unsigned y = 0; y < p->rows; y++) {
			const struct tsmpeek_line *l = (k ? p->alt_lines : p->main_lines)[y];

			for (unsigned x = 0; x < p->cols; x++) {
				replaced += l->cells[x].ch == 0xfffd;
				CHECK(l->cells[x].ch < CLUSTER_FIRST);
				kept += l->cells[x].ch == 'a' || l->cells[x].ch == 'm';
			}
		}
	/* d, i, m, e with its mark (scrollback); s, t, r, u, c, k; x */
	CHECK_EQ_U(replaced, 11);
	CHECK(kept >= 3);
	snapshot_free(s);
	term_fini(&a);
	term_fini(&b);
}

/* More stand-ins than the first region holds: a larger one. */
static void test_many_clusters(void)
{
	struct term a;
	struct snapshot *s;

	term_init(&a, 40, 6, 20);
	CHECK(snapshot_new(20, &s) == 0);
	for (unsigned i = 0; i < 300; i++) {
		char buf[16];
		unsigned mark = 0x300 + i % 48;

		snprintf(buf, sizeof(buf), "%c%c%c", 'a' + i / 48, 0xc0 | mark >> 6,
			 0x80 | (mark & 0x3f));
		feeds(&a, buf);
		if (i % 50 == 0)
			CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	}
	CHECK(cluster_table_count(a.table) == 300);
	check_round_trip(&a, s, "\033[H\033[2Pq", 8, "300 stand-ins");
	snapshot_free(s);
	term_fini(&a);
}

/* The grid changes: a new region, the old one freed. */
static void test_resize(void)
{
	static const char cont[] = "after\r\n\xe4\xb8\xad\033[2Lx";
	struct term a;
	struct snapshot *s;

	term_init(&a, 20, 6, 20);
	CHECK(snapshot_new(20, &s) == 0);
	for (unsigned i = 0; i < 30; i++)
		feeds(&a, "some line of text\r\n");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	CHECK(tsm_screen_resize(a.screen, 30, 4) == 0);
	check_round_trip(&a, s, cont, sizeof(cont) - 1, "wider");
	CHECK(tsm_screen_resize(a.screen, 12, 9) == 0);
	feeds(&a, "narrow now\r\n");
	check_round_trip(&a, s, cont, sizeof(cont) - 1, "narrower");
	snapshot_free(s);
	term_fini(&a);
}

/* The ring holds the lines libtsm keeps: with the terminal's bound below
 * sb-size (term_sb_lines_fit()), the memfd is no larger than that many
 * lines need, and a lower bound later (a wider grid) is followed. */
static void test_sb_bound(void)
{
	struct term a;
	struct snapshot *s;
	struct stat st;
	/* 80x24: the rows' slots (4 x 24 x align8(16 + 80 x 12)), the
	 * stand-ins (64 x 40), the headers, and the ring's lines of
	 * align8(32 + 80 x 16) bytes */
	const off_t fixed = 8192 + 4 * 24 * 976 + 64 * 40, line = 1312;

	term_init(&a, 80, 24, 10);
	CHECK(snapshot_new(1000, &s) == 0);
	for (unsigned i = 0; i < 50; i++)
		feedf(&a, "line %u\r\n", i);
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	CHECK(fstat(snapshot_fd(s), &st) == 0);
	/* 10 lines and the ring's spare one, not 1000 */
	if (st.st_size > fixed + 12 * line + 4096) {
		fprintf(stderr, "snapshot of 10 kept lines (sb-size 1000): %lld bytes\n",
			(long long)st.st_size);
		CHECK(!"the ring follows libtsm's bound");
	}
	{
		char *want = term_dump(&a);

		CHECK(restore_equals(snapshot_fd(s), want, 1000, "bounded"));
		free(want);
	}
	/* the bound lowered: the snapshot is laid out again with it */
	tsm_screen_set_max_sb(a.screen, 4);
	feeds(&a, "after\r\n");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	{
		char *want = term_dump(&a);

		CHECK(restore_equals(snapshot_fd(s), want, 1000, "lowered"));
		free(want);
	}
	snapshot_free(s);
	term_fini(&a);
}

/* A snapshot file larger than a 32-bit process can map is refused there:
 * mmap() of its size would map the size modulo 4 GiB (here 4 KiB, one
 * header) and the checks, which trust the size, would read past it. On a
 * 64-bit machine it restores. */
static void test_huge_file(void)
{
	struct term a, b;
	struct snapshot *s;
	char *want;
	int fd, r;

	term_init(&a, 20, 6, 20);
	CHECK(snapshot_new(20, &s) == 0);
	feeds(&a, "hello\r\n");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	fd = fd_copy(snapshot_fd(s), -1);
	CHECK(ftruncate(fd, (off_t)(UINT64_C(1) << 32) + 4096) == 0);
	term_init(&b, 7, 3, 20);
	r = restore_into(&b, fd);
	if (SIZE_MAX <= UINT32_MAX) {
		CHECK(r == -EFBIG);
	} else {
		CHECK(r == 0);
		want = term_dump(&a);
		CHECK(restore_equals(fd, want, 20, "4 GiB file"));
		free(want);
	}
	close(fd);
	term_fini(&b);
	snapshot_free(s);
	term_fini(&a);
}

/* A grid whose snapshot is larger than the address space (4096 columns and
 * a million lines of scrollback: a ring of 65 GB): refused on a 32-bit
 * machine, where mmap() would map the size modulo 4 GiB and the update
 * write past it. Only there: on a 64-bit machine the sparse memfd would be
 * mapped whole. */
static void test_huge_layout(void)
{
	struct term a;
	struct snapshot *s;

	if (SIZE_MAX > UINT32_MAX) {
		fprintf(stderr, "test_huge_layout: a 64-bit size_t maps it\n");
		return;
	}
	term_init(&a, 4096, 2, 1000000);
	CHECK(snapshot_new(1000000, &s) == 0);
	feeds(&a, "x");
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == -E2BIG);
	snapshot_free(s);
	term_fini(&a);
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What `cat` of 20000 lines costs with updates every 16 ms of input (as the
 * daemon does per frame), after every 4 KiB read, and none; and single
 * updates. Printed; the check is loose (timings on a shared machine). */
static double in_updates;

/* mode 0: no snapshot; 1: an update every 16 ms of input; 2: after every
 * 4 KiB read; 3: after every 20 KiB (about 360 lines: what a frame of the
 * daemon saw in QEMU before updates were paced); 4: the same with
 * snapshot_update_flood() (as the daemon's updates during a flood), the last
 * one whole. *ret_in: the time in updates. */
static double run_cat(const char *text, size_t len, int mode, bool warm, unsigned *ret_updates,
		      double *ret_in)
{
	struct term a;
	struct snapshot *s = NULL;
	double t0, last, best = 1e9;

	for (unsigned rep = 0; rep < 3; rep++) {
		unsigned updates = 0;

		in_updates = 0;
		term_init(&a, 160, 50, 1000);
		if (mode)
			CHECK(snapshot_new(1000, &s) == 0);
		if (warm) {
			/* a terminal that has been in use: scrollback full, and
			 * (with updates) the memfd's pages there */
			feed(&a, text, len);
			if (mode)
				CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
		}
		t0 = last = now_sec();
		for (size_t i = 0; i < len; i += 4096) {
			feed(&a, text + i, MIN(4096, len - i));
			if (mode == 2 || (mode >= 3 && (i / 4096) % 5 == 4) ||
			    (mode == 1 && now_sec() - last >= 0.016)) {
				double u0 = now_sec();

				if (mode == 4)
					CHECK(snapshot_update_flood(s, a.screen, a.stream,
								    a.table) >= 0);
				else
					CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
				last = now_sec();
				in_updates += last - u0;
				updates++;
			}
		}
		if (mode) {
			double u0 = now_sec();

			CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
			in_updates += now_sec() - u0;
		}
		t0 = now_sec() - t0;
		if (t0 < best) {
			best = t0;
			*ret_in = in_updates;
		}
		if (mode && getenv("SNAP_COST_ONLY"))
			fprintf(stderr, "mode %d: %u updates took %.2f ms\n", mode, updates,
				in_updates * 1e3);
		*ret_updates = updates;
		snapshot_free(s);
		s = NULL;
		term_fini(&a);
	}
	return best;
}

static void test_cost(void)
{
	struct dump d = {0};
	unsigned u0, u1, u2, u3, u4;
	double none, frames, reads, big, flood, i0, i1, i2, i3, i4;
	struct term a;
	struct snapshot *s;
	double t0, one_row, many_sb;

	for (unsigned i = 1; i <= 20000; i++)
		dump_add(&d, "line %u of the benchmark file, some text to fill the row\n", i);
	for (int warm = 0; warm < 2; warm++) {
		none = run_cat(d.buf, d.len, 0, warm, &u0, &i0);
		frames = run_cat(d.buf, d.len, 1, warm, &u1, &i1);
		reads = run_cat(d.buf, d.len, 2, warm, &u2, &i2);
		big = run_cat(d.buf, d.len, 3, warm, &u3, &i3);
		flood = run_cat(d.buf, d.len, 4, warm, &u4, &i4);
		fprintf(
		    stderr,
		    "cost (%s): cat of 20000 lines through stream+libtsm (160x50, sb 1000): "
		    "%.1f ms; with updates every 16 ms %.1f ms (%u updates + 1 taking %.1f ms, "
		    "%+.1f%%); after every 4 KiB read %.1f ms (%u + 1 taking %.1f ms, %+.1f%%); "
		    "after every 20 KiB %.1f ms (%u + 1 taking %.1f ms, %+.1f%%); the same as "
		    "during a flood %.1f ms (%u + 1 taking %.1f ms, %+.1f%%)\n",
		    warm ? "terminal in use" : "fresh terminal", none * 1e3, frames * 1e3, u1,
		    i1 * 1e3, (frames / none - 1) * 100, reads * 1e3, u2, i2 * 1e3,
		    (reads / none - 1) * 100, big * 1e3, u3, i3 * 1e3, (big / none - 1) * 100,
		    flood * 1e3, u4, i4 * 1e3, (flood / none - 1) * 100);
	}

	/* one changed row with a full scrollback: the update does not grow
	 * with the scrollback */
	term_init(&a, 160, 50, 1000);
	CHECK(snapshot_new(1000, &s) == 0);
	feed(&a, d.buf, d.len);
	CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	t0 = now_sec();
	for (unsigned i = 0; i < 1000; i++) {
		feeds(&a, i % 2 ? "\033[10;10Hx" : "\033[10;10Hy");
		CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	}
	one_row = (now_sec() - t0) / 1000;
	t0 = now_sec();
	for (unsigned i = 0; i < 1000; i++) {
		feeds(&a, "\r\na new line");
		CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
	}
	many_sb = (now_sec() - t0) / 1000;
	fprintf(stderr,
		"cost: an update after one cell changed: %.1f us; after one line scrolled "
		"(all rows move, one scrollback line): %.1f us\n",
		one_row * 1e6, many_sb * 1e6);
	snapshot_free(s);
	term_fini(&a);
	free(d.buf);
}

/* SNAP_WRITE_CORPUS=DIR: the seeds of tests/fuzz/corpus/snapshot, valid
 * snapshots of a 20x6 terminal with 10 lines of scrollback (fuzz-snapshot's)
 * and a few broken ones. */
static void write_file(const char *dir, const char *name, int fd, off_t cut, int patch_at,
		       uint8_t patch)
{
	char path[4096];
	int copy = fd_copy(fd, cut);
	struct stat st;
	char *buf;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK(fstat(copy, &st) == 0);
	buf = xmalloc((size_t)st.st_size + 1);
	CHECK(pread(copy, buf, (size_t)st.st_size, 0) == st.st_size);
	if (patch_at >= 0) {
		buf[patch_at] = (char)patch;
		buf[4096 + patch_at] = (char)patch;
	}
	f = fopen(path, "we");
	CHECK(f && fwrite(buf, 1, (size_t)st.st_size, f) == (size_t)st.st_size);
	fclose(f);
	free(buf);
	close(copy);
}

static void write_corpus(const char *dir)
{
	static const char *const seeds[][2] = {
	    {"text", "hello\r\n\033[31mred\033[m \033[1;4mbold\r\n$ "},
	    {"alternate", "shell$ ls\r\na b c\r\n\033[?1049h\033[44m\033[2J\033[Hvim\033[2;5r"
			  "\033[?1h\033=\033[?25l"},
	    {"wide-standins-wrap", "\xe4\xb8\xad\xe6\x96\x87\033[1;2Ha\033[2;1He\xcc\x81\033[2mdim"
				   "\033[9mx\033[m\xf4\x80\x80\x85\033[3;1H01234567890123456789"},
	    {"scrollback",
	     "1\r\n2 a longer line\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8\r\n9\r\n10\r\n"
	     "11\r\n12\r\n13\r\n14 \033[42mgreen\r\n15\r\n16\r\n17\r\n18\r\n19\r\n20"},
	    {"modes", "\033[3g\033[1;4H\033H\033[3;5r\033[?6h\033[1;33m\0337\033[m\033(0\016"
		      "\033[20h\033[4hlqk\033[?5h\033*<\033N"},
	    /* with the MOUSE record (the seeds above were written before it) */
	    {"mouse", "mouse\r\n\033[?1002;1006;1004;2004h"},
	};

	for (size_t i = 0; i < ELEMENTSOF(seeds); i++) {
		struct term a;
		struct snapshot *s;

		term_init(&a, 20, 6, 10);
		CHECK(snapshot_new(10, &s) == 0);
		feeds(&a, seeds[i][1]);
		CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
		/* a second generation, so both header slots are used */
		feeds(&a, "\r\nmore\r\n");
		CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
		write_file(dir, seeds[i][0], snapshot_fd(s), -1, -1, 0);
		if (i == 0) {
			write_file(dir, "bad-truncated", snapshot_fd(s), 9000, -1, 0);
			write_file(dir, "bad-version", snapshot_fd(s), -1, 8, 3);
		}
		snapshot_free(s);
		term_fini(&a);
	}
}

/* A resize away and back between two updates changes cells of the screen
 * not shown too (libtsm blanks the main screen's columns past a narrower
 * width, and the alternate screen's new columns when it widens), with no
 * screen age of its own: an update must read the cells of both screens. */
static void test_hidden_resize(void)
{
	static const char cont[] = "x";
	static const char *const before[] = {
	    /* the alternate screen written, then left: hidden when it widens */
	    "\033[?1049hALTALTALTALTALTALTAL\r\nALT2ALT2ALT2ALT2ALT2\033[?1049l",
	    /* long lines on the main screen, then the alternate one shown */
	    "0123456789ABCDEFGHIJ\r\nabcdefghijklmnopqrst\033[?1049hvim",
	};

	for (size_t i = 0; i < ELEMENTSOF(before); i++) {
		struct term a;
		struct snapshot *s;
		char what[48];

		term_init(&a, 20, 6, 20);
		CHECK(snapshot_new(20, &s) == 0);
		feeds(&a, before[i]);
		CHECK(snapshot_update(s, a.screen, a.stream, a.table) == 0);
		CHECK(tsm_screen_resize(a.screen, 12, 6) == 0);
		CHECK(tsm_screen_resize(a.screen, 20, 6) == 0);
		snprintf(what, sizeof(what), "resized away and back, case %zu", i);
		check_round_trip(&a, s, cont, sizeof(cont) - 1, what);
		snapshot_free(s);
		term_fini(&a);
	}
}

int main(void)
{
	if (getenv("SNAP_WRITE_CORPUS")) {
		write_corpus(getenv("SNAP_WRITE_CORPUS"));
		return TESTS_RESULT();
	}
	log_set_max_level(getenv("SNAP_SEED") ? LOG_DEBUG : LOG_WARNING);
	if (getenv("SNAP_COST_ONLY")) { /* for profiling */
		RUN(test_cost);
		return TESTS_RESULT();
	}
	RUN(test_supported);
	RUN(test_cases);
	RUN(test_random);
	RUN(test_crash);
	RUN(test_flood);
	RUN(test_broken);
	RUN(test_resize);
	RUN(test_hidden_resize);
	RUN(test_sb_bound);
	RUN(test_huge_file);
	RUN(test_huge_layout);
	RUN(test_many_clusters);
	RUN(test_wipe);
	RUN(test_unknown_standin);
	RUN(test_cost);
	return TESTS_RESULT();
}
