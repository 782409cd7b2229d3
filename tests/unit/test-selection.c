/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mouse selection (selection.h) on the real libtsm 4 screen behind the
 * real pty stream stage: what each unit selects, what libtsm's drawing
 * shows inverted, what a copy holds (clusters, wide characters, wrapped
 * lines, trailing blanks), when output ends a selection, what a paste sends
 * and what OSC 52 does.
 */
#include <stdio.h>

#include "../../daemon/terminal/image.h"
#include "../../daemon/terminal/selection.h"
#include "../../daemon/util/util.h"
#include "test-stream-fake.h"

struct sel_test {
	struct fake_term f;
	struct selection *s;
	char sent[4096];
	size_t n_sent;
	unsigned damages;
};

static void sel_write(const char *bytes, size_t len, void *userdata)
{
	struct sel_test *t = userdata;

	CHECK(t->n_sent + len < sizeof(t->sent));
	if (t->n_sent + len < sizeof(t->sent)) {
		memcpy(t->sent + t->n_sent, bytes, len);
		t->n_sent += len;
		t->sent[t->n_sent] = '\0';
	}
}

static void sel_damage(void *userdata)
{
	struct sel_test *t = userdata;

	t->damages++;
}

static void sel_osc52(const char *args, size_t len, void *userdata)
{
	struct sel_test *t = userdata;

	selection_osc52(t->s, args, len);
}

static void sel_init(struct sel_test *t, unsigned cols, unsigned rows, const char *word_chars)
{
	memset(t, 0, sizeof(*t));
	fake_term_init(&t->f, cols, rows);
	/* the stage as term.c makes it: OSC 52 to the selection */
	stream_free(t->f.stream);
	t->f.stream = stream_new(&(struct stream_config){.vte = t->f.vte,
							 .screen = t->f.screen,
							 .table = t->f.table,
							 .reply = fake_reply,
							 .osc52 = sel_osc52,
							 .userdata = t});
	/* the cursor is not drawn inverted: only the selection is */
	fake_feed(&t->f, "\033[?25l");
	CHECK(selection_new_target(&(struct selection_target){.screen = t->f.screen,
							      .clusters = t->f.table,
							      .write = sel_write,
							      .damage = sel_damage,
							      .userdata = t},
				   word_chars, &t->s) == 0);
}

static void sel_fini(struct sel_test *t)
{
	selection_free(t->s);
	fake_term_fini(&t->f);
}

/* The buffer as a string. */
static const char *buffer(struct sel_test *t)
{
	static char buf[4096];
	size_t len;
	const char *b = selection_buffer(t->s, &len);

	if (!b)
		return "(none)";
	CHECK(len < sizeof(buf));
	memcpy(buf, b, MIN(len, sizeof(buf) - 1));
	buf[MIN(len, sizeof(buf) - 1)] = '\0';
	return buf;
}

/* Which cells of the view libtsm draws inverted, row by row: '#' for an
 * inverted cell, '.' for another. */
static const char *inverted(struct sel_test *t, unsigned y)
{
	static char buf[FAKE_COLS_MAX + 1];

	fake_term_read(&t->f);
	for (unsigned x = 0; x < t->f.cols; x++)
		buf[x] = t->f.cells[y][x].attr.inverse ? '#' : '.';
	buf[t->f.cols] = '\0';
	return buf;
}

static void select_cells(struct sel_test *t, unsigned c0, int r0, unsigned c1, int r1)
{
	selection_start(t->s, c0, r0, 1, false);
	selection_move(t->s, c1, r1);
	selection_end(t->s);
}

static void test_cells(void)
{
	struct sel_test t;

	sel_init(&t, 20, 5, NULL);
	fake_feed(&t.f, "hello world\r\nsecond line");
	/* a click alone selects nothing */
	selection_start(t.s, 3, 0, 1, false);
	selection_end(t.s);
	CHECK(!selection_active(t.s));
	CHECK(strcmp(buffer(&t), "(none)") == 0);

	/* press on 'w', release on the 'n' of "second": across lines */
	selection_start(t.s, 6, 0, 1, false);
	selection_move(t.s, 4, 1);
	CHECK(strcmp(inverted(&t, 0), "......##############") == 0);
	CHECK(strcmp(inverted(&t, 1), "#####...............") == 0);
	CHECK(strcmp(inverted(&t, 2), "....................") == 0);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "world\nsecon") == 0);
	CHECK(selection_active(t.s));
	CHECK(t.damages > 0);

	/* dragged backwards: the same cells */
	select_cells(&t, 4, 1, 6, 0);
	CHECK(strcmp(buffer(&t), "world\nsecon") == 0);

	/* Shift+click extends the nearer end */
	select_cells(&t, 0, 0, 4, 0);
	CHECK(strcmp(buffer(&t), "hello") == 0);
	selection_start(t.s, 10, 0, 1, true);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "hello world") == 0);
	selection_start(t.s, 2, 0, 1, true); /* nearer the start */
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "llo world") == 0);

	selection_clear(t.s);
	CHECK(strcmp(inverted(&t, 0), "....................") == 0);
	CHECK(strcmp(buffer(&t), "llo world") == 0); /* the buffer stays */
	sel_fini(&t);
}

static void test_words_and_lines(void)
{
	struct sel_test t;

	sel_init(&t, 40, 5, NULL);
	fake_feed(&t.f, "ls /usr/lib/x86_64-linux; echo a+b=c\r\n  indented   \r\nnext");
	selection_start(t.s, 8, 0, 2, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "/usr/lib/x86_64-linux") == 0);
	CHECK(strcmp(inverted(&t, 0), "...#####################................") == 0);
	/* punctuation that is no word character is a word of its own */
	selection_start(t.s, 24, 0, 2, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), ";") == 0);
	selection_start(t.s, 32, 0, 2, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "a+b") == 0); /* '=' is not one by default */
	/* dragging with two clicks extends by words */
	selection_start(t.s, 0, 0, 2, false);
	selection_move(t.s, 27, 0);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "ls /usr/lib/x86_64-linux; echo") == 0);

	/* three clicks: the line, trailing blanks dropped, with its newline */
	selection_start(t.s, 5, 1, 3, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "  indented\n") == 0);
	CHECK(strcmp(inverted(&t, 1), "########################################") == 0);
	selection_start(t.s, 5, 1, 3, false);
	selection_move(t.s, 0, 2);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "  indented\nnext\n") == 0);
	sel_fini(&t);

	/* configured word characters */
	sel_init(&t, 40, 5, "=");
	fake_feed(&t.f, "x a+b=c/d y");
	selection_start(t.s, 5, 0, 2, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "b=c") == 0);
	sel_fini(&t);

	CHECK(selection_word_chars_valid(""));
	CHECK(selection_word_chars_valid("-_./~:@+%\xc3\xa9"));
	CHECK(!selection_word_chars_valid("a\tb"));
	CHECK(!selection_word_chars_valid("\xc3"));
	CHECK(!selection_word_chars_valid("\xc2\x9b"));
}

/* Wide characters are selected whole; a combining sequence is copied as
 * what it is, not as libtsm's stand-in. */
static void test_wide_and_clusters(void)
{
	struct sel_test t;

	sel_init(&t, 20, 5, NULL);
	/* a 中 b e+U+0301 x n+U+0303+U+0323 */
	fake_feed(&t.f, "a\xe4\xb8\xad"
			"be\xcc\x81xn\xcc\x83\xcc\xa3 end");
	/* from the right half of 中 to the é */
	select_cells(&t, 2, 0, 4, 0);
	CHECK(strcmp(buffer(&t), "\xe4\xb8\xad"
				 "be\xcc\x81") == 0);
	CHECK(strcmp(inverted(&t, 0), ".####...............") == 0);
	/* ending on the left half takes the right one too */
	select_cells(&t, 0, 0, 1, 0);
	CHECK(strcmp(buffer(&t), "a\xe4\xb8\xad") == 0);
	CHECK(strcmp(inverted(&t, 0), "###.................") == 0);
	/* a word of them (non-ASCII characters are word characters) */
	selection_start(t.s, 4, 0, 2, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "a\xe4\xb8\xad"
				 "be\xcc\x81xn\xcc\x83\xcc\xa3") == 0);
	sel_fini(&t);
}

/* Nothing of an image is copied: a space per tile cell, trimmed at a
 * line's end as any; a tile ends a word. */
static void test_image_tiles(void)
{
	struct sel_test t;
	struct tsm_screen_attr a = {.fccode = TSM_COLOR_FOREGROUND, .bccode = TSM_COLOR_BACKGROUND};

	sel_init(&t, 20, 5, NULL);
	fake_feed(&t.f, "ab");
	tsm_screen_write(t.f.screen, IMAGE_FIRST, &a);
	tsm_screen_write(t.f.screen, IMAGE_FIRST + 1, &a);
	fake_feed(&t.f, "cd\r\n");
	tsm_screen_write(t.f.screen, IMAGE_FIRST + 2, &a);
	select_cells(&t, 0, 0, 5, 0);
	CHECK(strcmp(buffer(&t), "ab  cd") == 0);
	select_cells(&t, 0, 1, 5, 1);
	CHECK(strcmp(buffer(&t), "(none)") == 0); /* nothing to copy */
	selection_start(t.s, 1, 0, 2, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "ab") == 0);
	sel_fini(&t);
}

/* Lines the text wrapped across are joined; others end with a newline,
 * without their trailing blanks. */
static void test_wrap_and_blanks(void)
{
	struct sel_test t;

	sel_init(&t, 10, 6, NULL);
	fake_feed(&t.f, "0123456789abcdef\r\nab   \r\ncd\r\n1234 6789x");
	/* rows: "0123456789" "abcdef" "ab" "cd" "1234 6789" "x" */
	select_cells(&t, 5, 0, 3, 1);
	CHECK(strcmp(buffer(&t), "56789abcd") == 0);
	selection_start(t.s, 2, 1, 3, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "0123456789abcdef\n") == 0);
	CHECK(strcmp(inverted(&t, 0), "##########") == 0);
	CHECK(strcmp(inverted(&t, 1), "##########") == 0);
	/* a word across the wrap */
	selection_start(t.s, 8, 0, 2, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "0123456789abcdef") == 0);
	/* trailing blanks (written spaces and empty cells) dropped */
	select_cells(&t, 0, 1, 9, 3);
	CHECK(strcmp(buffer(&t), "abcdef\nab\ncd") == 0);
	/* a space at the end of a wrapped line is no trailing blank... */
	select_cells(&t, 0, 4, 0, 5);
	CHECK(strcmp(buffer(&t), "1234 6789x") == 0);
	sel_fini(&t);

	sel_init(&t, 10, 3, NULL);
	fake_feed(&t.f, "012345678 next");
	select_cells(&t, 0, 0, 3, 1);
	CHECK(strcmp(buffer(&t), "012345678 next") == 0);
	sel_fini(&t);
}

/* Dragging past the top edge walks the view into the scrollback; the
 * selection stays on its text when the view or the text scrolls. */
static void test_scrollback(void)
{
	struct sel_test t;
	char line[16];

	sel_init(&t, 10, 4, NULL);
	for (int i = 0; i < 10; i++) {
		snprintf(line, sizeof(line), "%sL%d", i ? "\r\n" : "", i);
		fake_feed(&t.f, line);
	}
	fake_term_read(&t.f);
	CHECK(strcmp(fake_row(&t.f, 0), "L6") == 0);
	selection_start(t.s, 1, 1, 1, false); /* the 7 of L7 */
	selection_move(t.s, 0, -1);	      /* above the top: scrolls */
	selection_move(t.s, 0, -1);
	fake_term_read(&t.f);
	CHECK(strcmp(fake_row(&t.f, 0), "L4") == 0);
	CHECK(strcmp(inverted(&t, 0), "##########") == 0);
	CHECK(strcmp(inverted(&t, 3), "##........") == 0);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), "L4\nL5\nL6\nL7") == 0);
	/* and back down past the bottom edge */
	selection_start(t.s, 0, 0, 1, false);
	for (int i = 0; i < 3; i++)
		selection_move(t.s, 1, 4);
	selection_end(t.s);
	fake_term_read(&t.f);
	CHECK(strcmp(fake_row(&t.f, 0), "L6") == 0);
	CHECK(strcmp(buffer(&t), "L4\nL5\nL6\nL7\nL8\nL9") == 0);

	/* output scrolls the selection up with its text, and it stays */
	select_cells(&t, 0, 1, 1, 2); /* L7, L8 */
	fake_feed(&t.f, "\r\nL10\r\nL11");
	selection_check(t.s);
	CHECK(selection_active(t.s));
	fake_term_read(&t.f);
	CHECK(strcmp(fake_row(&t.f, 0), "L8") == 0);
	CHECK(strcmp(inverted(&t, 0), "##........") == 0); /* L8 */
	CHECK(strcmp(inverted(&t, 1), "..........") == 0);
	sel_fini(&t);
}

/* A word (and a line) wrapped over several lines of the scrollback, and
 * across its end into the screen, is found whole from any of its lines: the
 * walk steps along the lines' links (a click in the scrollback on such a
 * word searched the scrollback once a cell before). */
static void test_scrollback_word(void)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	struct sel_test t;
	char word[46], text[128];

	for (size_t i = 0; i < sizeof(word) - 1; i++)
		word[i] = alnum[i % (sizeof(alnum) - 1)];
	word[sizeof(word) - 1] = '\0';
	/* rows of 10: "ab " and the word's first 7, 3 rows of 10 more, its
	 * last 8 and " c", then "d": 6 rows, the word on the first 5 */
	snprintf(text, sizeof(text), "ab %s cd\r\nL1\r\nL2\r\nL3\r\nL4", word);

	sel_init(&t, 10, 4, NULL);
	fake_feed(&t.f, text);
	/* 10 rows: the 6 of the text are all in the scrollback */
	tsm_screen_sb_up(t.f.screen, 6);
	fake_term_read(&t.f);
	CHECK(strcmp(fake_row(&t.f, 0), "ab abcdefg") == 0);
	for (int row = 0; row < 4; row++) {
		selection_start(t.s, row ? 4 : 5, row, 2, false);
		selection_end(t.s);
		CHECK(strcmp(buffer(&t), word) == 0);
	}
	CHECK(strcmp(inverted(&t, 0), "...#######") == 0);
	CHECK(strcmp(inverted(&t, 3), "##########") == 0);
	/* its last row, the view a row lower */
	tsm_screen_sb_down(t.f.screen, 1);
	selection_start(t.s, 0, 3, 2, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), word) == 0);
	/* dragging with two clicks onto the next word ("cd", wrapped too) */
	selection_start(t.s, 5, 0, 2, false);
	selection_move(t.s, 9, 3);
	selection_end(t.s);
	snprintf(text, sizeof(text), "%s cd", word);
	CHECK(strcmp(buffer(&t), text) == 0);
	/* three clicks: the whole line it wrapped over */
	selection_start(t.s, 0, 2, 3, false);
	selection_end(t.s);
	snprintf(text, sizeof(text), "ab %s cd\n", word);
	CHECK(strcmp(buffer(&t), text) == 0);
	sel_fini(&t);

	/* across the scrollback's end: 3 rows of it, the word's 4th and 5th on
	 * the screen's first two */
	sel_init(&t, 10, 4, NULL);
	snprintf(text, sizeof(text), "ab %s cd\r\nL1", word);
	fake_feed(&t.f, text);
	selection_start(t.s, 3, 1, 2, false); /* from the screen */
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), word) == 0);
	tsm_screen_sb_up(t.f.screen, 3);
	selection_start(t.s, 5, 0, 2, false); /* from the scrollback */
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), word) == 0);
	selection_start(t.s, 5, 2, 3, false);
	selection_end(t.s);
	snprintf(text, sizeof(text), "ab %s cd\n", word);
	CHECK(strcmp(buffer(&t), text) == 0);
	sel_fini(&t);

	/* its start gone from the scrollback: the word from its oldest line */
	sel_init(&t, 10, 4, NULL);
	tsm_screen_set_max_sb(t.f.screen, 4);
	snprintf(text, sizeof(text), "ab %s cd\r\nL1\r\nL2\r\nL3\r\nL4", word);
	fake_feed(&t.f, text);
	tsm_screen_sb_up(t.f.screen, 4);
	fake_term_read(&t.f);
	CHECK(strcmp(fake_row(&t.f, 0), "rstuvwxyz0") == 0);
	selection_start(t.s, 5, 2, 2, false);
	selection_end(t.s);
	CHECK(strcmp(buffer(&t), word + 17) == 0);
	selection_start(t.s, 5, 1, 3, false);
	selection_end(t.s);
	snprintf(text, sizeof(text), "%s cd\n", word + 17);
	CHECK(strcmp(buffer(&t), text) == 0);
	sel_fini(&t);
}

/* A copy longer than SELECTION_MAX keeps every whole character that fits:
 * the cut falls between characters, none dropped. */
static void test_copy_limit(void)
{
	/* é (2 bytes) fills the limit exactly; € (3 bytes) leaves a byte */
	static const struct {
		const char *ch;
		size_t len;
	} cases[] = {{"\xc3\xa9", 2}, {"\xe2\x82\xac", 3}};

	for (size_t k = 0; k < ELEMENTSOF(cases); k++) {
		size_t n = SELECTION_MAX / cases[k].len + 100, len, want;
		char *text = xmalloc(n * cases[k].len + 1);
		const char *b;
		struct sel_test t;

		for (size_t i = 0; i < n; i++)
			memcpy(text + i * cases[k].len, cases[k].ch, cases[k].len);
		text[n * cases[k].len] = '\0';
		sel_init(&t, 80, 24, NULL);
		tsm_screen_set_max_sb(t.f.screen, (unsigned)(n / 80 + 1));
		fake_feed(&t.f, text);
		/* one word (non-ASCII characters are word characters) */
		selection_start(t.s, 0, 0, 2, false);
		selection_end(t.s);
		b = selection_buffer(t.s, &len);
		want = SELECTION_MAX / cases[k].len * cases[k].len;
		CHECK_EQ_U(len, want);
		CHECK(b && memcmp(b, text, MIN(len, want)) == 0);
		free(text);
		sel_fini(&t);
	}
}

/* Output that changes a selected cell ends the selection; other output
 * does not. */
static void test_output_ends(void)
{
	struct sel_test t;

	sel_init(&t, 20, 5, NULL);
	fake_feed(&t.f, "keep this\r\nother\r\n");
	select_cells(&t, 0, 0, 3, 0);
	fake_feed(&t.f, "more output\r\n\033[2;1Hchanged");
	selection_check(t.s);
	CHECK(selection_active(t.s));
	CHECK(strcmp(inverted(&t, 0), "####................") == 0);
	/* the same text written again changes nothing */
	fake_feed(&t.f, "\033[1;1Hkee");
	selection_check(t.s);
	CHECK(selection_active(t.s));
	fake_feed(&t.f, "\033[1;3HX");
	selection_check(t.s);
	CHECK(!selection_active(t.s));
	CHECK(strcmp(inverted(&t, 0), "....................") == 0);
	CHECK(strcmp(buffer(&t), "keep") == 0); /* the buffer stays */

	/* clearing the screen ends it too */
	select_cells(&t, 0, 1, 3, 1);
	fake_feed(&t.f, "\033[H\033[2J");
	selection_check(t.s);
	CHECK(!selection_active(t.s));

	/* the session's end wipes both */
	fake_feed(&t.f, "text");
	select_cells(&t, 0, 0, 3, 0);
	selection_wipe(t.s);
	CHECK(!selection_active(t.s));
	CHECK(strcmp(buffer(&t), "(none)") == 0);
	selection_paste(t.s, false);
	CHECK(t.n_sent == 0);
	sel_fini(&t);
}

static void test_paste(void)
{
	static const char evil[] = "a\033[201~b\r\nc\td\ne\a\x7f\xc2\x9b"
				   "1;2H\xe4\xb8\xad\xff\xc3";
	static const char clean[] = "a[201~b\rc\td\re1;2H\xe4\xb8\xad";
	struct sel_test t;
	char out[sizeof(evil)];

	CHECK(selection_sanitize(evil, sizeof(evil) - 1, out) == sizeof(clean) - 1);
	CHECK(memcmp(out, clean, sizeof(clean) - 1) == 0);

	sel_init(&t, 20, 5, NULL);
	selection_paste(t.s, true); /* nothing copied: nothing sent */
	CHECK(t.n_sent == 0);
	selection_set_buffer(t.s, evil, sizeof(evil) - 1);
	selection_paste(t.s, false);
	CHECK(t.n_sent == sizeof(clean) - 1 && memcmp(t.sent, clean, t.n_sent) == 0);
	t.n_sent = 0;
	selection_paste(t.s, true);
	CHECK(strncmp(t.sent, "\033[200~", 6) == 0);
	CHECK(memcmp(t.sent + 6, clean, sizeof(clean) - 1) == 0);
	CHECK(strcmp(t.sent + 6 + sizeof(clean) - 1, "\033[201~") == 0);
	/* the only ESCs are the bracket's */
	CHECK(memchr(t.sent + 1, 0x1b, t.n_sent - 7) == NULL);

	/* a copied selection pastes as it was copied, newlines as CR */
	fake_feed(&t.f, "one\r\ntwo");
	select_cells(&t, 0, 0, 2, 1);
	t.n_sent = 0;
	selection_paste(t.s, false);
	CHECK(strcmp(t.sent, "one\rtwo") == 0);
	sel_fini(&t);
}

static void test_osc52(void)
{
	struct sel_test t;
	char big[2000], line[2100];

	sel_init(&t, 20, 5, NULL);
	fake_feed(&t.f, "\033]52;c;aGVsbG8=\a");
	CHECK(strcmp(buffer(&t), "hello") == 0);
	/* ST, no padding, an empty selection parameter */
	fake_feed(&t.f, "\033]52;;d29ybGQ\033\\");
	CHECK(strcmp(buffer(&t), "world") == 0);
	/* a query is never answered, nor changes the buffer */
	fake_feed(&t.f, "\033]52;c;?\a\033]52;p;?\033\\");
	CHECK(t.f.n_replies == 0);
	CHECK(strcmp(buffer(&t), "world") == 0);
	/* malformed base64: ignored */
	fake_feed(&t.f, "\033]52;c;a$b=\a");
	CHECK(strcmp(buffer(&t), "world") == 0);
	/* split over reads, longer than the stage's OSC buffer */
	memset(big, 'x', sizeof(big));
	{
		/* 1200 'x' are "eHh4" * 400 */
		size_t n = (size_t)snprintf(line, sizeof(line), "\033]52;c;");

		for (int i = 0; i < 400; i++)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "eHh4");
		n += (size_t)snprintf(line + n, sizeof(line) - n, "\a");
		fake_feed_n(&t.f, line, 100);
		fake_feed_n(&t.f, line + 100, n - 100);
	}
	{
		size_t len;
		const char *b = selection_buffer(t.s, &len);

		CHECK(len == 1200 && b && memcmp(b, big, 1200) == 0);
	}
	/* a text with a bracket's end and controls arrives neutralised:
	 * "a\e[201~b\r\n\x03" */
	fake_feed(&t.f, "\033]52;c;YRtbMjAxfmINCgM=\a");
	t.n_sent = 0;
	selection_paste(t.s, true);
	CHECK(strcmp(t.sent, "\033[200~a[201~b\r\033[201~") == 0);
	/* empty: cleared */
	fake_feed(&t.f, "\033]52;c;\a");
	CHECK(strcmp(buffer(&t), "(none)") == 0);
	/* nothing of it reached the screen */
	fake_term_read(&t.f);
	CHECK(strcmp(fake_row(&t.f, 0), "") == 0);
	sel_fini(&t);
}

int main(void)
{
	RUN(test_cells);
	RUN(test_words_and_lines);
	RUN(test_wide_and_clusters);
	RUN(test_image_tiles);
	RUN(test_wrap_and_blanks);
	RUN(test_scrollback);
	RUN(test_scrollback_word);
	RUN(test_copy_limit);
	RUN(test_output_ends);
	RUN(test_paste);
	RUN(test_osc52);
	return TESTS_RESULT();
}
