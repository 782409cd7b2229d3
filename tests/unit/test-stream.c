/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pty stream stage in front of the real libtsm 4: what the screen shows
 * and what the session is answered after each sequence the tables list, and
 * that no way of cutting the stream into reads changes either.
 */
#include <stdio.h>
#include <xkbcommon/xkbcommon-keysyms.h>

#include "../../daemon/terminal/keys.h"
#include "../../daemon/color/pixel.h"
#include "../../daemon/util/util.h"
#include "test-stream-fake.h"

/* What a terminal shows and said: every cell (a stand-in as what it means),
 * the cursor, the screen's modes and the answers. */
static size_t fake_dump(struct fake_term *f, char *buf, size_t size)
{
	size_t n = 0;

	fake_term_read(f);
	for (unsigned y = 0; y < f->rows; y++)
		for (unsigned x = 0; x < f->cols; x++) {
			const struct fake_cell *c = &f->cells[y][x];
			const struct tsm_screen_attr *a = &c->attr;
			unsigned flags = 0;
			size_t len = 0;
			const uint32_t *seq = cluster_lookup(f->table, c->ch, &len, &flags);

			n += (size_t)snprintf(
			    buf + n, size - n, "%x/%zu/%u %d %d %u%u%u%u%u%u%u%u;",
			    seq ? seq[0] : c->ch, len, flags, a->fccode, a->bccode, a->fr, a->fg,
			    a->fb, a->bold, a->underline, a->italic, a->inverse, a->blink);
			if (n >= size)
				return size;
		}
	n +=
	    (size_t)snprintf(buf + n, size - n, "cursor %u,%u flags %x replies %s",
			     tsm_screen_get_cursor_x(f->screen), tsm_screen_get_cursor_y(f->screen),
			     tsm_screen_get_flags(f->screen), f->replies);
	return MIN(n, size);
}

/* ---- REP ---------------------------------------------------------------- */

static void test_rep(void)
{
	struct fake_term f;

	fake_term_init(&f, 20, 6);
	fake_feed(&f, "a\033[3bZ\r\n");
	fake_feed(&f, "x\033[b\033[0b|\r\n");		    /* 0 and empty mean 1 */
	fake_feed(&f, "\033[31mq\033[1m\033[2b\033[m\r\n"); /* the repeats in the current SGR */
	fake_feed(&f, "\xc3\xa9\033[2b\xe4\xb8\xad\033[1b");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "aaaaZ") == 0);
	CHECK(strcmp(fake_row(&f, 1), "xxx|") == 0);
	CHECK(strcmp(fake_row(&f, 2), "qqq") == 0);
	CHECK(f.cells[2][0].attr.fccode == 1 && !f.cells[2][0].attr.bold);
	CHECK(f.cells[2][1].attr.fccode == 1 && f.cells[2][1].attr.bold && f.cells[2][2].attr.bold);
	CHECK(fake_base(&f, 0, 3) == 0xe9 && fake_base(&f, 1, 3) == 0xe9 &&
	      fake_base(&f, 2, 3) == 0xe9);
	/* a wide character repeats wide */
	CHECK(fake_base(&f, 3, 3) == 0x4e2d && fake_base(&f, 5, 3) == 0x4e2d);
	fake_term_fini(&f);

	/* nothing printed yet: nothing to repeat */
	fake_term_init(&f, 20, 6);
	fake_feed(&f, "\033[5b\r\n\033[5bk");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "") == 0 && strcmp(fake_row(&f, 1), "k") == 0);
	fake_term_fini(&f);
}

/* A huge count is cut to what changes the screen: the same picture as the
 * whole count of characters. */
static void test_rep_limit(void)
{
	static char full[70000], a[4096], b[4096];
	struct fake_term f, g;

	CHECK_EQ_U(stream_rep_limit(5, 10, 4), 5);
	CHECK_EQ_U(stream_rep_limit(40, 10, 4), 40);
	CHECK_EQ_U(stream_rep_limit(41, 10, 4), 41);
	CHECK_EQ_U(stream_rep_limit(65535, 10, 4), 40 + (65535 - 40) % 10);
	for (unsigned count = 39; count <= 65535; count += 13107) {
		fake_term_init(&f, 10, 4);
		fake_term_init(&g, 10, 4);
		snprintf(full, sizeof(full), "ab\033[%ub.", count);
		fake_feed(&f, full);
		memset(full, 'b', count + 2);
		full[0] = 'a';
		full[count + 2] = '.';
		fake_feed_n(&g, full, count + 3);
		fake_dump(&f, a, sizeof(a));
		fake_dump(&g, b, sizeof(b));
		CHECK(strcmp(a, b) == 0);
		fake_term_fini(&f);
		fake_term_fini(&g);
	}
}

/* ---- DECRQM --------------------------------------------------------------- */

static void test_decrqm(void)
{
	struct fake_term f;

	fake_term_init(&f, 20, 6);
	/* the shell's screen, then vim: alternate screen, scroll region,
	 * cursor keys, and its query */
	fake_feed(&f, "shell$ \033[?1049h\033[?1h\033[2;4r\033[Halt");
	fake_feed(&f, "\033[?12$p");
	CHECK(strcmp(f.replies, "\033[?12;4$y") == 0);
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "alt") == 0);
	CHECK(tsm_screen_get_flags(f.screen) & TSM_SCREEN_ALTERNATE);
	/* the scroll region holds: line feeds at its bottom stay there */
	fake_feed(&f, "\033[4;1H\n\n\nX");
	CHECK_EQ_U(tsm_screen_get_cursor_y(f.screen), 3);
	/* cursor keys are still in application mode */
	fake_clear_replies(&f);
	CHECK(tsm_vte_handle_keyboard(f.vte, XKB_KEY_Up, XKB_KEY_NoSymbol, 0, 0));
	CHECK(strcmp(f.replies, "\033OA") == 0);

	fake_clear_replies(&f);
	fake_feed(&f, "\033[?1$p\033[?1049$p\033[?47$p\033[?25$p\033[?7$p\033[?6$p\033[?5$p");
	CHECK(strcmp(f.replies, "\033[?1;1$y\033[?1049;1$y\033[?47;1$y\033[?25;1$y\033[?7;1$y"
				"\033[?6;2$y\033[?5;2$y") == 0);
	fake_clear_replies(&f);
	fake_feed(&f, "\033[?1l\033[?25l\033[?7l\033[?1$p\033[?25$p\033[?7$p\033[?9999$p\033[?$p");
	CHECK(strcmp(f.replies, "\033[?1;2$y\033[?25;2$y\033[?7;2$y\033[?9999;0$y\033[?0;0$y") ==
	      0);
	/* ANSI modes */
	fake_clear_replies(&f);
	fake_feed(&f, "\033[4h\033[20h\033[4$p\033[20$p\033[4l\033[20l\033[4$p\033[20$p\033[3$p");
	CHECK(strcmp(f.replies, "\033[4;1$y\033[20;1$y\033[4;2$y\033[20;2$y\033[3;0$y") == 0);
	/* leaving the alternate screen: the shell's screen is back */
	fake_feed(&f, "\033[r\033[?1049l");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "shell$") == 0);
	/* DECSTR and RIS reset what the stage follows */
	fake_clear_replies(&f);
	fake_feed(&f, "\033[?1h\033[!p\033[?1$p\033[?1h\033c\033[?1$p");
	CHECK(strcmp(f.replies, "\033[?1;2$y\033[?1;2$y") == 0);
	/* synchronized output: followed, answered, reset by RIS and DECSTR;
	 * the text between still reaches the screen */
	fake_clear_replies(&f);
	fake_feed(&f, "\033[?2026$p\033[?2026hsync\033[?2026$p");
	CHECK(stream_synchronized(f.stream));
	fake_feed(&f, "\033[?2026l\033[?2026$p");
	CHECK(!stream_synchronized(f.stream));
	CHECK(strcmp(f.replies, "\033[?2026;2$y\033[?2026;1$y\033[?2026;2$y") == 0);
	fake_term_read(&f);
	CHECK(strstr(fake_row(&f, 0), "sync") != NULL);
	fake_feed(&f, "\033[?25;2026h");
	CHECK(stream_synchronized(f.stream));
	fake_feed(&f, "\033c");
	CHECK(!stream_synchronized(f.stream));
	fake_feed(&f, "\033[?2026h\033[!p");
	CHECK(!stream_synchronized(f.stream));
	fake_term_fini(&f);
}

/* ---- queries: XTVERSION, XTWINOPS, XTGETTCAP, DECRQSS -------------------- */

static void test_queries(void)
{
	struct fake_term f;
	char longq[200];

	fake_term_init(&f, 20, 6);
	fake_feed(&f, "\033[>q\033[>0q\033[>1q");
	CHECK(strcmp(f.replies, "\033P>|consoled " CONSOLED_VERSION "\033\\"
				"\033P>|consoled " CONSOLED_VERSION "\033\\") == 0);
	/* sizes: characters always, pixels once a cell's size is known */
	fake_clear_replies(&f);
	fake_feed(&f, "\033[18t\033[14t\033[16t\033[8;1;1t");
	CHECK(strcmp(f.replies, "\033[8;6;20t") == 0);
	stream_set_cell_size(f.stream, 8, 16);
	fake_clear_replies(&f);
	fake_feed(&f, "\033[14t\033[16t\033[19t");
	CHECK(strcmp(f.replies, "\033[4;96;160t\033[6;16;8t\033[9;6;20t") == 0);
	/* XTGETTCAP: TN, Co, an unknown name, a malformed one */
	fake_clear_replies(&f);
	fake_feed(&f, "\033P+q544E\033\\\033P+q436F;7A7A;4\033\\");
	CHECK(strcmp(f.replies, "\033P1+r544E=787465726D2D323536636F6C6F72\033\\"
				"\033P1+r436F=323536\033\\\033P0+r7A7A\033\\\033P0+r4\033\\") == 0);
	/* C1 DCS and ST */
	fake_clear_replies(&f);
	fake_feed(&f, "\xc2\x90+q524742\xc2\x9c");
	CHECK(strcmp(f.replies, "\033P1+r524742=382F382F38\033\\") == 0);
	/* DECRQSS: the pen, the margins, the cursor, anything else */
	fake_clear_replies(&f);
	fake_feed(&f, "\033[1;2;31;48;2;1;2;3m\033P$qm\033\\\033[0m\033P$qm\033\\");
	CHECK(strcmp(f.replies, "\033P1$r0;1;2;31;48;2;1;2;3m\033\\\033P1$r0m\033\\") == 0);
	fake_clear_replies(&f);
	fake_feed(&f, "\033[2;4r\033P$qr\033\\\033[r\033P$q q\033\\\033P$qx\033\\");
	CHECK(strcmp(f.replies, "\033P1$r2;4r\033\\\033P1$r2 q\033\\\033P0$r\033\\") == 0);
	/* not answered: a DCS too long to be a query, one cut by CAN, one
	 * cut by ESC and another sequence; and none of it is text */
	memset(longq, '4', sizeof(longq));
	memcpy(longq, "\033P+q", 4);
	memcpy(longq + sizeof(longq) - 3, "\033\\", 3);
	fake_clear_replies(&f);
	fake_feed(&f, "\033[H\033[2J");
	fake_feed(&f, longq);
	fake_feed(&f, "\033P+q544E\x18\033P$qm\033[1m");
	CHECK_EQ_U(f.n_replies, 0);
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "") == 0);
	fake_term_fini(&f);
}

/* ---- the cursor's shape: DECSCUSR, DECRQSS, DECRQM 12 ---------------------- */

/* DECRQSS SP q's answer now, and DECRQM 12's. */
static void cursor_answers(struct fake_term *f, const char *want_ps, const char *want_12)
{
	char want[64];

	fake_clear_replies(f);
	fake_feed(f, "\033P$q q\033\\\033[?12$p");
	snprintf(want, sizeof(want), "\033P1$r%s q\033\\\033[?12;%s$y", want_ps, want_12);
	if (strcmp(f->replies, want) != 0)
		fprintf(stderr, "answers %s, expected %s\n", f->replies + 1, want + 1);
	CHECK(strcmp(f->replies, want) == 0);
}

static void fake_cursor_config(struct fake_term *f, enum stream_cursor_shape shape, bool blink)
{
	fake_term_restream(f, (struct stream_config){.cursor = {shape, blink}});
}

static void test_cursor_shape(void)
{
	static const struct {
		const char *seq;
		enum stream_cursor_shape shape;
		bool blink;
		const char *ps; /* DECRQSS's answer */
	} cases[] = {
	    {"\033[1 q", STREAM_CURSOR_BLOCK, true, "1"},
	    {"\033[2 q", STREAM_CURSOR_BLOCK, false, "2"},
	    {"\033[3 q", STREAM_CURSOR_UNDERLINE, true, "3"},
	    {"\033[4 q", STREAM_CURSOR_UNDERLINE, false, "4"},
	    {"\033[5 q", STREAM_CURSOR_BAR, true, "5"},
	    {"\033[6 q", STREAM_CURSOR_BAR, false, "6"},
	    /* 0 and none: the default (here a blinking bar); above 6: no change */
	    {"\033[4 q\033[0 q", STREAM_CURSOR_BAR, true, "5"},
	    {"\033[4 q\033[ q", STREAM_CURSOR_BAR, true, "5"},
	    {"\033[4 q\033[7 q\033[99 q", STREAM_CURSOR_UNDERLINE, false, "4"},
	    /* the first parameter; cut by reads anywhere (below) */
	    {"\033[3;6 q", STREAM_CURSOR_UNDERLINE, true, "3"},
	    /* RIS, DECSTR and DECSCL go back to the default, as xterm's
	     * ReallyReset(); DECSC/DECRC and the alternate screen keep it */
	    {"\033[2 q\033c", STREAM_CURSOR_BAR, true, "5"},
	    {"\033[2 q\033[!p", STREAM_CURSOR_BAR, true, "5"},
	    {"\033[2 q\033[62\"p", STREAM_CURSOR_BAR, true, "5"},
	    {"\033[4 q\0337\033[1 q\0338", STREAM_CURSOR_BLOCK, true, "1"},
	    {"\033[4 q\033[?1049h", STREAM_CURSOR_UNDERLINE, false, "4"},
	    /* not DECSCUSR: a marker, another intermediate, a colon */
	    {"\033[4 q\033[?2 q\033[2!q\033[2:1 q", STREAM_CURSOR_UNDERLINE, false, "4"},
	};
	struct fake_term f;
	struct stream_cursor c;

	/* by default a steady block, whatever a program asks, never blinking:
	 * today's answers */
	fake_term_init(&f, 20, 6);
	c = stream_cursor(f.stream);
	CHECK(c.shape == STREAM_CURSOR_BLOCK && !c.blink);
	cursor_answers(&f, "2", "4");
	fake_feed(&f, "\033[5 q");
	c = stream_cursor(f.stream);
	CHECK(c.shape == STREAM_CURSOR_BAR && !c.blink);
	cursor_answers(&f, "6", "4");
	fake_feed(&f, "\033[3 q");
	cursor_answers(&f, "4", "4");

	/* cursor-shape=bar, cursor-blink=yes */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].seq);

		for (size_t cut = 0; cut <= len; cut += len / 3 + 1) {
			fake_cursor_config(&f, STREAM_CURSOR_BAR, true);
			fake_feed_n(&f, cases[i].seq, cut);
			fake_feed_n(&f, cases[i].seq + cut, len - cut);
			c = stream_cursor(f.stream);
			if (c.shape != cases[i].shape || c.blink != cases[i].blink)
				fprintf(stderr, "case %zu cut at %zu: shape %d blink %d\n", i, cut,
					c.shape, c.blink);
			CHECK(c.shape == cases[i].shape && c.blink == cases[i].blink);
			cursor_answers(&f, cases[i].ps, cases[i].blink ? "1" : "2");
		}
	}
	/* a new session starts with the default */
	fake_feed(&f, "\033[4 q");
	stream_reset(f.stream);
	cursor_answers(&f, "5", "1");
	fake_feed(&f, "\033[2 q");
	stream_wipe(f.stream);
	cursor_answers(&f, "5", "1");
	/* libtsm saw none of it: nothing on the screen */
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "") == 0);

	/* cursor-shape=underline, cursor-blink=no: programs' blinking shapes
	 * are steady */
	fake_cursor_config(&f, STREAM_CURSOR_UNDERLINE, false);
	cursor_answers(&f, "4", "4");
	fake_feed(&f, "\033[1 q");
	cursor_answers(&f, "2", "4");
	fake_feed(&f, "\033[5 q");
	c = stream_cursor(f.stream);
	CHECK(c.shape == STREAM_CURSOR_BAR && !c.blink);
	fake_feed(&f, "\033[ q");
	cursor_answers(&f, "4", "4");
	fake_term_fini(&f);
}

/* ---- OSC colour queries --------------------------------------------------- */

static void test_osc(void)
{
	struct fake_term f;
	struct palette xterm;

	fake_term_init(&f, 20, 6);
	fake_feed(&f, "\033]11;?\007");
	CHECK(strcmp(f.replies, "\033]11;rgb:0000/0000/0000\007") == 0);
	fake_clear_replies(&f);
	fake_feed(&f, "\033]10;?\033\\");
	CHECK(strcmp(f.replies, "\033]10;rgb:aaaa/aaaa/aaaa\033\\") == 0);
	fake_clear_replies(&f);
	/* both in one, and cut into reads anywhere */
	fake_feed(&f, "\033]1");
	fake_feed(&f, "0;?;");
	fake_feed(&f, "?\033");
	CHECK(f.n_replies == 0);
	fake_feed(&f, "\\");
	CHECK(strcmp(f.replies,
		     "\033]10;rgb:aaaa/aaaa/aaaa\033\\\033]11;rgb:0000/0000/0000\033\\") == 0);
	fake_clear_replies(&f);
	fake_feed(&f, "\033]4;1;?;12;?;300;?\007\302\2354;9;?\302\234");
	CHECK(strcmp(f.replies, "\033]4;1;rgb:aaaa/0000/0000\007\033]4;12;rgb:5555/5555/ffff\007"
				"\033]4;9;rgb:ffff/5555/5555\033\\") == 0);
	/* not queries, or not ended: no answer, and no text either */
	fake_clear_replies(&f);
	fake_feed(&f, "\033]0;title?\007\033]11;rgb:ffff/0000/0000\007\033]11;?\033[mA\033]12;?\007"
		      "\033]10;?\030B");
	CHECK(f.n_replies == 0);
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "AB") == 0);
	fake_term_fini(&f);

	/* the palette the renderer uses */
	palette_init(&xterm, PALETTE_XTERM, NULL);
	fake_term_init(&f, 20, 6);
	stream_free(f.stream);
	f.stream = stream_new(&(struct stream_config){.vte = f.vte,
						      .screen = f.screen,
						      .table = f.table,
						      .palette = &xterm,
						      .reply = fake_reply,
						      .userdata = &f});
	fake_feed(&f, "\033]10;?\007\033]4;1;?\007");
	CHECK(strcmp(f.replies, "\033]10;rgb:e5e5/e5e5/e5e5\007\033]4;1;rgb:cdcd/0000/0000\007") ==
	      0);
	fake_term_fini(&f);
	/* the default colours of a named palette, and of their own */
	palette_init(&xterm, PALETTE_SOLARIZED, NULL);
	xterm.colors[PALETTE_FG] = (struct rgb){0x12, 0x34, 0x56};
	xterm.fg = PALETTE_FG;
	fake_term_init(&f, 20, 6);
	stream_free(f.stream);
	f.stream = stream_new(&(struct stream_config){.vte = f.vte,
						      .screen = f.screen,
						      .table = f.table,
						      .palette = &xterm,
						      .reply = fake_reply,
						      .userdata = &f});
	fake_feed(&f, "\033]10;?;?\007");
	CHECK(strcmp(f.replies, "\033]10;rgb:1212/3434/5656\007\033]11;rgb:0000/2b2b/3636\007") ==
	      0);
	fake_term_fini(&f);
}

/* ---- OSC 52: handed on, and wiped ---------------------------------------- */

static unsigned osc52_calls;
static char osc52_last[512];

static void count_osc52(const char *args, size_t len, void *userdata)
{
	(void)userdata;
	osc52_calls++;
	snprintf(osc52_last, sizeof(osc52_last), "%.*s", (int)len, args);
}

static void osc52_term_init(struct fake_term *f)
{
	fake_term_init(f, 20, 6);
	fake_term_restream(f, (struct stream_config){.osc52 = count_osc52});
	osc52_calls = 0;
}

/* An OSC 52 carries what a user copied, maybe a password: the stage keeps
 * none of it once the string is handed on, and none once something cuts it
 * (ESC but ST's '\', CAN, SUB, a C1 control), whether it still fitted the
 * first buffer or had grown into the OSC 52 one. */
static void test_osc52_wiped(void)
{
	static const char *const cuts[] = {
	    "\033X", "\033[m",	 "\033]0;t\007", "\033\033",	 "\030",
	    "\032",  "\302\205", "\302\233m",	 "\302\235\007", "\033c",
	};
	static const char *const texts[] = {
	    "c;c2VjcmV0",
	    ("c;MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2"
	     "Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIz"
	     "NDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkw"
	     "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5"),
	};
	struct fake_term f;

	for (size_t t = 0; t < ELEMENTSOF(texts); t++) {
		/* ended by BEL and by ST: handed on, nothing kept */
		osc52_term_init(&f);
		fake_feed(&f, "\033]52;");
		fake_feed(&f, texts[t]);
		CHECK(stream_string_held(f.stream) >= strlen(texts[t]));
		fake_feed(&f, "\007");
		CHECK_EQ_U(osc52_calls, 1);
		CHECK(strcmp(osc52_last, texts[t]) == 0);
		CHECK_EQ_U(stream_string_held(f.stream), 0);
		fake_feed(&f, "\033]52;");
		fake_feed(&f, texts[t]);
		fake_feed(&f, "\033");
		CHECK(stream_string_held(f.stream) > 0); /* may be ST yet */
		fake_feed(&f, "\\");
		CHECK_EQ_U(osc52_calls, 2);
		CHECK_EQ_U(stream_string_held(f.stream), 0);
		fake_term_fini(&f);

		for (size_t c = 0; c < ELEMENTSOF(cuts); c++) {
			osc52_term_init(&f);
			fake_feed(&f, "\033]52;");
			fake_feed(&f, texts[t]);
			CHECK(stream_string_held(f.stream) >= strlen(texts[t]));
			fake_feed(&f, cuts[c]);
			fake_feed(&f, "A");
			if (stream_string_held(f.stream) != 0 || osc52_calls != 0)
				fprintf(stderr,
					"text %zu cut by cuts[%zu]: %zu bytes held, %u handed on\n",
					t, c, stream_string_held(f.stream), osc52_calls);
			CHECK_EQ_U(stream_string_held(f.stream), 0);
			CHECK_EQ_U(osc52_calls, 0);
			fake_term_fini(&f);
		}
		/* not ASCII: refused, and wiped */
		osc52_term_init(&f);
		fake_feed(&f, "\033]52;");
		fake_feed(&f, texts[t]);
		fake_feed(&f, "\303\251\007");
		CHECK_EQ_U(osc52_calls, 0);
		CHECK_EQ_U(stream_string_held(f.stream), 0);
		/* a new session */
		fake_feed(&f, "\033]52;");
		fake_feed(&f, texts[t]);
		stream_reset(f.stream);
		CHECK_EQ_U(stream_string_held(f.stream), 0);
		fake_term_fini(&f);
	}
}

/* ---- what libtsm would misread ---------------------------------------------- */

static void test_dropped(void)
{
	struct fake_term f;

	fake_term_init(&f, 20, 6);
	/* vim's modifyOtherKeys: not SGR (underline + dim) */
	fake_feed(&f, "\033[?25l\033[>4;2mA\033[>4m\033[>1mB\033[?4mC\r\n");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "ABC") == 0);
	for (unsigned x = 0; x < 3; x++)
		CHECK(!f.cells[0][x].attr.underline && !f.cells[0][x].attr.bold &&
		      !f.cells[0][x].attr.blink && fake_flags(&f, x, 0) == 0);
	/* XTSMPOINTER (CSI > p) and XTPUSHSGR (CSI # p) are no soft resets;
	 * CSI ? r (XTRESTORE) no scroll region; ESC # 8 no DECRC */
	fake_feed(&f, "\033[?1049h\033[>1p\033[#p\033[?1;2r\033[5;5H\0337\033[H\033#8X");
	CHECK(tsm_screen_get_flags(f.screen) & TSM_SCREEN_ALTERNATE);
	CHECK_EQ_U(tsm_screen_get_cursor_x(f.screen), 1);
	CHECK_EQ_U(tsm_screen_get_cursor_y(f.screen), 0);
	fake_feed(&f, "\033[H\n\n\n");
	CHECK_EQ_U(tsm_screen_get_cursor_y(f.screen), 3);
	/* DA2 still answered by libtsm */
	fake_clear_replies(&f);
	fake_feed(&f, "\033[>c");
	CHECK(f.n_replies > 3 && memcmp(f.replies, "\033[>", 3) == 0);
	fake_term_fini(&f);

	/* strings show nothing, even with BEL inside a DCS (only ST ends it) */
	fake_term_init(&f, 20, 6);
	fake_feed(&f, "\033Pq#1\007abc\033\\X\033_apc\033\\Y\033^pm\302\234Z\033Xsos\033\\W");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "XYZW") == 0);
	/* SRM: keys never echo on the screen past the stage */
	fake_feed(&f, "\033[12l");
	CHECK(tsm_vte_handle_keyboard(f.vte, XKB_KEY_q, XKB_KEY_q, 0, 'q'));
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "XYZW") == 0);
	/* DECSCL: a soft reset; text is still UTF-8 */
	fake_feed(&f, "\033[62;1\"p\r\n\xc3\xa9\xe2\x94\x80");
	fake_term_read(&f);
	CHECK(fake_base(&f, 0, 1) == 0xe9 && fake_base(&f, 1, 1) == 0x2500);
	fake_term_fini(&f);
}

/* ---- CSI E F ` a s u, 3 J -------------------------------------------------- */

static void test_cursor(void)
{
	struct fake_term f;

	fake_term_init(&f, 20, 6);
	fake_feed(&f, "ab\033[2Ecd\033[Fef\033[10`g\033[2ah\033[2;3Hi\033[sj\033[5;5Hk\033[ul");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "ab") == 0);
	CHECK(strcmp(fake_row(&f, 1), "efil     g  h") == 0);
	CHECK(strcmp(fake_row(&f, 2), "cd") == 0);
	CHECK(strcmp(fake_row(&f, 4), "    k") == 0);
	/* SCOSC saves the attributes as DECSC does */
	fake_feed(&f, "\033[H\033[31;2m\033[s\033[0m\033[u"
		      "m");
	fake_term_read(&f);
	CHECK(f.cells[0][0].attr.fccode == 1 && fake_flags(&f, 0, 0) == CLUSTER_DIM);
	fake_term_fini(&f);

	/* DECSTBM homes the cursor as in xterm (also with DECOM: the region's
	 * top); margins it refuses leave the cursor alone */
	fake_term_init(&f, 20, 6);
	fake_feed(&f, "\033[5;9H\033[2;4ra\033[4;9H\033[4;2rb\033[4;10H\033[6rc");
	fake_feed(&f, "\033[6;1H\033[?6h\033[3;5rd\033[?6l\033[r");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "a") == 0);
	CHECK(strcmp(fake_row(&f, 2), "d") == 0);
	CHECK(strcmp(fake_row(&f, 3), "        bc") == 0);
	CHECK_EQ_U(tsm_screen_get_cursor_x(f.screen), 0);
	CHECK_EQ_U(tsm_screen_get_cursor_y(f.screen), 0);
	fake_term_fini(&f);
}

/* xterm's DEC special graphics: '~' is U+00B7 (libtsm: U+22C5), also in G1
 * shifted in; the rest is libtsm's */
static void test_dec_graphics(void)
{
	struct fake_term f;

	fake_term_init(&f, 20, 6);
	fake_feed(&f, "\033(0~q~\033(B~\033)0\x0e~\x0f~");
	fake_term_read(&f);
	CHECK(fake_base(&f, 0, 0) == 0xb7 && fake_base(&f, 1, 0) == 0x2500 &&
	      fake_base(&f, 2, 0) == 0xb7 && fake_base(&f, 3, 0) == '~' &&
	      fake_base(&f, 4, 0) == 0xb7 && fake_base(&f, 5, 0) == '~');
	/* repeated, and dim (a stand-in, as for any unmapped character) */
	fake_feed(&f, "\r\n\033(0~\033[2b\033[2m~\033[m\033(B");
	fake_term_read(&f);
	CHECK(fake_base(&f, 0, 1) == 0xb7 && fake_base(&f, 2, 1) == 0xb7);
	CHECK(fake_base(&f, 3, 1) == 0xb7 && fake_flags(&f, 3, 1) == CLUSTER_DIM);
	fake_term_fini(&f);
}

static void test_clear_scrollback(void)
{
	struct fake_term f;
	char before[4096], after[4096];

	fake_term_init(&f, 20, 6);
	for (int i = 0; i < 20; i++) {
		char line[32];

		snprintf(line, sizeof(line), "line %d\r\n", i);
		fake_feed(&f, line);
	}
	/* there is a scrollback: a page up shows other lines */
	fake_dump(&f, before, sizeof(before));
	tsm_screen_sb_page_up(f.screen, 1);
	fake_dump(&f, after, sizeof(after));
	CHECK(strcmp(before, after) != 0);
	tsm_screen_sb_reset(f.screen);

	/* clear's E3 while looking at the scrollback: back at the bottom,
	 * the screen as it was, nothing to scroll back to */
	tsm_screen_sb_page_up(f.screen, 1);
	fake_feed(&f, "\033[3J");
	fake_dump(&f, after, sizeof(after));
	CHECK(strcmp(before, after) == 0);
	tsm_screen_sb_page_up(f.screen, 1);
	fake_dump(&f, after, sizeof(after));
	CHECK(strcmp(before, after) == 0);
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 4), "line 19") == 0);
	fake_term_fini(&f);
}

/* ---- SGR ---------------------------------------------------------------- */

static void test_sgr(void)
{
	struct fake_term f;
	const struct tsm_screen_attr *a;

	fake_term_init(&f, 40, 6);
	fake_feed(&f, "\033[?25l");
	fake_feed(&f, "\033[38:5:1mA\033[38:2::1:2:3mB\033[38:2:4:5:6mC\033[48:5:21mD"
		      "\033[0;4:3mE\033[4:0mF\033[0;58:2::1:2:3;1mG\033[0;58;5;1mH\033[0;38;5mI"
		      "\033[0;1;;4mJ\033[0;21mK\033[0;38;5;300mL\033[0;38:5:2;1mM");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "ABCDEFGHIJKLM") == 0);
	a = &f.cells[0][0].attr;
	CHECK(a->fccode == 1);
	a = &f.cells[0][1].attr;
	CHECK(a->fccode < 0 && a->fr == 1 && a->fg == 2 && a->fb == 3);
	a = &f.cells[0][2].attr;
	CHECK(a->fccode < 0 && a->fr == 4 && a->fg == 5 && a->fb == 6);
	a = &f.cells[0][3].attr;
	CHECK(a->bccode < 0 && a->br == 0 && a->bg == 0 && a->bb == 0xff);
	CHECK(f.cells[0][4].attr.underline && !f.cells[0][5].attr.underline);
	/* underline colours are not known: dropped with their arguments */
	a = &f.cells[0][6].attr;
	CHECK(a->bold && !a->blink && a->fccode == TSM_COLOR_FOREGROUND);
	a = &f.cells[0][7].attr;
	CHECK(!a->bold && !a->blink);
	/* a colour without its index is dropped, not read as blink */
	CHECK(!f.cells[0][8].attr.blink);
	/* an empty parameter is 0, as in xterm */
	a = &f.cells[0][9].attr;
	CHECK(!a->bold && a->underline);
	CHECK(f.cells[0][10].attr.underline);
	CHECK(f.cells[0][11].attr.fccode == TSM_COLOR_FOREGROUND);
	CHECK(f.cells[0][12].attr.fccode == 2 && f.cells[0][12].attr.bold);

	/* more than libtsm's 16 parameters: all of them count */
	fake_feed(&f, "\r\n\033[0;31;32;33;34;35;36;37;31;32;33;34;35;36;37;31;32;33;1;4;7mN");
	fake_term_read(&f);
	a = &f.cells[1][0].attr;
	CHECK(a->fccode == 3 && a->bold && a->underline && a->inverse);
	fake_term_fini(&f);
}

/* Dim, strikethrough and concealed text: what libtsm does not keep. */
static void test_extra_attributes(void)
{
	struct fake_term f;

	fake_term_init(&f, 40, 6);
	fake_feed(&f, "\033[?25l\033[2mab\033[22mc\033[9md\033[2me\033[0mf\033[1;2mg\033[22mh");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "abcdefgh") == 0);
	CHECK(fake_flags(&f, 0, 0) == CLUSTER_DIM && fake_flags(&f, 1, 0) == CLUSTER_DIM);
	CHECK(fake_flags(&f, 2, 0) == 0 && f.cells[0][2].ch == 'c');
	CHECK(fake_flags(&f, 3, 0) == CLUSTER_STRIKE);
	CHECK(fake_flags(&f, 4, 0) == (CLUSTER_STRIKE | CLUSTER_DIM));
	CHECK(fake_flags(&f, 5, 0) == 0);
	CHECK(fake_flags(&f, 6, 0) == CLUSTER_DIM && f.cells[0][6].attr.bold);
	CHECK(fake_flags(&f, 7, 0) == 0 && !f.cells[0][7].attr.bold);

	/* concealed: spaces of the text's width, in its colours */
	fake_feed(&f, "\r\n\033[8;41mpw\xe4\xb8\xad!\033[28mok\033[0m");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 1), "     ok") == 0);
	CHECK(f.cells[1][0].attr.bccode == 1 && f.cells[1][4].attr.bccode == 1);

	/* line drawing stays line drawing (no stand-in for what libtsm maps) */
	fake_feed(&f, "\r\n\033[2;9m\033(0qx\033(Bq\016q\017\033Nqq\033[m");
	fake_term_read(&f);
	CHECK(f.cells[2][0].ch == 0x2500 && f.cells[2][1].ch == 0x2502);
	CHECK(fake_base(&f, 2, 2) == 'q' && fake_flags(&f, 2, 2) == (CLUSTER_DIM | CLUSTER_STRIKE));
	CHECK(f.cells[2][3].ch == 0xf1); /* SO: G1, libtsm's "upper" set */
	CHECK(f.cells[2][4].ch == 'q');	 /* SS2: G2 for one character */
	CHECK(fake_flags(&f, 5, 2) == (CLUSTER_DIM | CLUSTER_STRIKE));

	/* DECSC/DECRC and RIS */
	fake_feed(&f, "\r\n\033[2m\0337\033[0m\0338x\033[0my\033[9m\033cz");
	fake_term_read(&f);
	CHECK(fake_flags(&f, 0, 0) == 0 && fake_base(&f, 0, 0) == 'z');
	fake_term_fini(&f);

	fake_term_init(&f, 40, 6);
	fake_feed(&f, "\033[2m\0337\033[0m\0338x\033[0my");
	fake_term_read(&f);
	CHECK(fake_flags(&f, 0, 0) == CLUSTER_DIM && fake_flags(&f, 1, 0) == 0);
	/* a wide character cannot be a stand-in: it stays wide, plain */
	fake_feed(&f, "\033[2m\xe4\xb8\xad\033[m");
	fake_term_read(&f);
	CHECK(f.cells[0][2].ch == 0x4e2d && fake_flags(&f, 2, 0) == 0);
	fake_term_fini(&f);
}

/* ---- malformed input, C1 controls ------------------------------------------- */

static void test_malformed(void)
{
	struct fake_term f;

	fake_term_init(&f, 40, 6);
	/* one U+FFFD per maximal subpart; no C1 or ESC out of an overlong */
	fake_feed(&f, "a\xe4\xb8x\xff\xc0\x9b"
		      "1b\xe0\x80\x9b\xed\xa0\x80z");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "a#x###1b######z") == 0);
	for (unsigned x = 1; x < 14; x++)
		CHECK(x == 2 || x == 6 || x == 7 || fake_base(&f, x, 0) == 0xfffd);
	/* 8-bit C1 controls as UTF-8: CSI, OSC */
	fake_feed(&f, "\r\nq\302\2332b\302\23511;?\007");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 1), "qqq") == 0);
	CHECK(strcmp(f.replies, "\033]11;rgb:0000/0000/0000\007") == 0);
	/* CAN ends a sequence; SUB too, and libtsm shows it */
	fake_feed(&f, "\r\n\033[31\030m\033[1\032n");
	fake_term_read(&f);
	CHECK(f.cells[2][0].ch == 'm' && f.cells[2][0].attr.fccode == TSM_COLOR_FOREGROUND);
	CHECK(f.cells[2][1].ch == 0xbf && f.cells[2][2].ch == 'n');
	/* C0 controls inside a sequence work where they are */
	fake_feed(&f, "\r\nab\033[\b3\bD1");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 3), "1b") == 0);
	fake_term_fini(&f);
}

/* ---- plain text in one piece (stream_plain_run()) ------------------------- */

/* The fast path over text hands on what the character-by-character path
 * did: its edges are the reads' ends, marks, C1 controls, shifts, DEC
 * graphics and REP's character. */
/* A base and its marks, two bytes (decoded in stream_text() itself) and
 * three (utf8_next()), become one stand-in for exactly those code points;
 * the same cluster again gets the same stand-in, another one a new one. */
static void test_cluster_marks(void)
{
	static const uint32_t want[][4] = {
	    {'e', 0x301, 0x323, 0x20d0}, {'e', 0x301, 0x323, 0x20d0}, {'e', 0x301, 0x324, 0x20d0}};
	struct fake_term f;
	uint32_t cps[3];

	fake_term_init(&f, 20, 4);
	fake_feed(&f, "e\xcc\x81\xcc\xa3\xe2\x83\x90"
		      "e\xcc\x81\xcc\xa3\xe2\x83\x90"
		      "e\xcc\x81\xcc\xa4\xe2\x83\x90");
	fake_term_read(&f);
	for (unsigned x = 0; x < 3; x++) {
		size_t len = 0;
		const uint32_t *seq = cluster_lookup(f.table, f.cells[0][x].ch, &len, NULL);

		cps[x] = f.cells[0][x].ch;
		CHECK(seq != NULL && len == 4);
		for (size_t k = 0; seq && k < len && k < 4; k++)
			CHECK_EQ_U(seq[k], want[x][k]);
	}
	CHECK(cps[0] == cps[1] && cps[1] != cps[2]);
	fake_term_fini(&f);
}

/* The stage takes printable ASCII for narrow without asking libtsm
 * (stream_width()): libtsm must agree. */
static void test_ascii_width(void)
{
	for (uint32_t c = 0x20; c < 0x7f; c++)
		CHECK_EQ_U(tsm_ucs4_get_width(c), 1);
}

static void test_plain_runs(void)
{
	struct fake_term f;

	fake_term_init(&f, 20, 8);
	/* a mark in the next read has no base (libtsm drops it); in the
	 * same read it makes a stand-in */
	fake_feed(&f, "ab");
	fake_feed(&f, "\xcc\x81|ab\xcc\x81|\r\n");
	/* UTF-8 cut by reads; C1 CSI (U+009B) after text, cut too */
	fake_feed(&f, "x\xe4");
	fake_feed(&f, "\xb8");
	fake_feed(&f, "\xady ab\xc2");
	fake_feed(&f, "\x9b");
	fake_feed(&f, "31mc\033[m\r\n");
	/* '~' under DEC graphics (a stand-in for the middle dot), SO with G1
	 * DEC graphics, a mark after a control */
	fake_feed(&f, "\033(0A~B\033(B~\033)0\016q\017q\r\xcc\x81\r\n");
	/* REP after a run, a cluster, a wide character, a control */
	fake_feed(&f, "abc\033[2b e\xcc\x81\033[b \xe4\xb8\xad\033[b\r\n\033[b\r\n");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "ab|ab|") == 0);
	CHECK(f.cells[0][1].ch == 'b' && fake_flags(&f, 1, 0) == 0);
	CHECK(f.cells[0][4].ch >= CLUSTER_FIRST && fake_base(&f, 4, 0) == 'b');
	CHECK(f.cells[1][0].ch == 'x' && f.cells[1][1].ch == 0x4e2d && f.cells[1][3].ch == 'y');
	CHECK(f.cells[1][5].ch == 'a' && f.cells[1][6].ch == 'b' && f.cells[1][7].ch == 'c');
	CHECK(f.cells[1][6].attr.fccode == TSM_COLOR_FOREGROUND && f.cells[1][7].attr.fccode == 1);
	CHECK(f.cells[2][0].ch == 'A' && fake_base(&f, 1, 2) == 0xb7 && f.cells[2][2].ch == 'B');
	CHECK(f.cells[2][3].ch == '~' && f.cells[2][4].ch == 0x2500 && f.cells[2][5].ch == 'q');
	CHECK(f.cells[2][0].ch < CLUSTER_FIRST && f.cells[2][6].ch == ' ');
	CHECK(strcmp(fake_row(&f, 3), "abccc ee # #") == 0);
	CHECK(fake_base(&f, 6, 3) == 'e' && f.cells[3][7].ch == f.cells[3][6].ch);
	CHECK(f.cells[3][9].ch == 0x4e2d && f.cells[3][11].ch == 0x4e2d);
	CHECK(f.cells[4][0].ch == 0x4e2d && f.cells[4][2].ch == ' ');
	fake_term_fini(&f);
}

/* SGR handed on as it came, or rewritten: the pen is the same either way. */
static void test_sgr_as_is(void)
{
	struct fake_term f;
	const struct tsm_screen_attr *a;

	fake_term_init(&f, 20, 4);
	fake_feed(&f, "\033[01;38;5;196;48;2;1;2;3mA\033[0m\033[38;5;300mB\033[3");
	fake_feed(&f, "8;2;4;5;6mC\033[0;21mD\033[m\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;32mE"
		      "\033[;34mF\033[00035mG");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "ABCDEFG") == 0);
	a = &f.cells[0][0].attr;
	CHECK(a->bold && a->fccode == -1 && a->fr == 255 && a->fg == 0 && a->fb == 0);
	CHECK(a->bccode == -1 && a->br == 1 && a->bg == 2 && a->bb == 3);
	a = &f.cells[0][1].attr; /* a malformed colour is dropped with its arguments */
	CHECK(a->fccode == TSM_COLOR_FOREGROUND && !a->bold && !a->italic && !a->blink);
	a = &f.cells[0][2].attr;
	CHECK(a->fccode == -1 && a->fr == 4 && a->fg == 5 && a->fb == 6);
	CHECK(f.cells[0][3].attr.underline && f.cells[0][3].attr.fccode == TSM_COLOR_FOREGROUND);
	CHECK(f.cells[0][4].attr.bold && f.cells[0][4].attr.fccode == 2);
	CHECK(!f.cells[0][5].attr.bold && f.cells[0][5].attr.fccode == 4);
	CHECK(f.cells[0][6].attr.fccode == 5);
	fake_term_fini(&f);
}

/* Replies nobody reads. */
static void keys_seen_reply(const char *bytes, size_t len, void *data)
{
	(void)bytes;
	(void)len;
	(void)data;
}

/* What libtsm got, for test_sgr_fast(). */
struct seen_log {
	char buf[4096];
	size_t len;
};

static void seen_log_add(const char *bytes, size_t len, void *data)
{
	struct seen_log *l = data;

	CHECK(l->len + len < sizeof(l->buf));
	if (l->len + len < sizeof(l->buf)) {
		memcpy(l->buf + l->len, bytes, len);
		l->len += len;
	}
}

/* An SGR in one read takes stream_sgr_fast() when it can; cut into single
 * bytes it takes the general path (csi_parse(), stream_sgr()). Both must give
 * libtsm the same bytes and leave the same pen, whichever way each SGR goes:
 * as it came, rewritten, or dropped. */
static void test_sgr_fast(void)
{
	static const char *const sgrs[] = {
	    "\033[01;38;5;196m",
	    "\033[m",
	    "\033[0m",
	    "\033[;1m",
	    "\033[1;m",
	    "\033[21m",
	    "\033[58;5;3m",
	    "\033[38;5;256m",
	    "\033[38;2;1;2;3m",
	    "\033[38;2;1;2m",
	    "\033[48;5m",
	    "\033[65534m",
	    "\033[65535m",
	    "\033[99999999m",
	    "\033[2;9;8m",
	    "\033[22;29;28m",
	    "\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;32m",
	    "\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;32m",
	    "\033[38:5:1m",
	    "\033[?1m",
	    "\033[1 m",
	    "\033[1\nm",
	    "\033[00035m",
	    "\033[",
	    "\033[000000000000000000000000000000000000000000000000000000000000000000000000000000"
	    "00000000000000000000000000000000000000000000000001m",
	    "\033[000000000000000000000000000000000000000000000000000000000000000000000000000000"
	    "0000000000000000000000000000000000000000000000001m",
	};

	for (size_t k = 0; k < sizeof(sgrs) / sizeof(sgrs[0]); k++) {
		struct seen_log whole = {0}, bytes = {0};
		struct stream_state a, b;
		char in[256];
		size_t len;

		len = (size_t)snprintf(in, sizeof(in), "%sx\033[1;4mp", sgrs[k]);
		for (int cut = 0; cut < 2; cut++) {
			struct fake_term f;
			struct seen_log *l = cut ? &bytes : &whole;

			fake_term_init(&f, 20, 4);
			stream_free(f.stream);
			f.stream = stream_new(&(struct stream_config){.vte = f.vte,
								      .screen = f.screen,
								      .table = f.table,
								      .reply = keys_seen_reply,
								      .seen = seen_log_add,
								      .userdata = l});
			for (size_t i = 0; i < len; i += cut ? 1 : len)
				fake_feed_n(&f, in + i, cut ? 1 : len);
			stream_get_state(f.stream, cut ? &b : &a);
			fake_term_fini(&f);
		}
		if (whole.len != bytes.len || memcmp(whole.buf, bytes.buf, whole.len) != 0 ||
		    !stream_pen_eq(&a.pen, &b.pen)) {
			fprintf(stderr, "SGR %zu: libtsm got %.*s in one read, %.*s byte by byte\n",
				k, (int)whole.len, whole.buf, (int)bytes.len, bytes.buf);
			CHECK(false);
		}
	}
}

/* ---- cutting the stream ---------------------------------------------------- */

static const char split_text[] =
    "\033[?25lplain text\r\n"
    "\033[1;31mred\033[0m \033[38:5:2mgreen\033[38:2::10:20:30m rgb\033[m\r\n"
    "x\033[5b \033[2mdim\033[22m \033[9mstrike\033[29m \033[8mhidden\033[28m shown\r\n"
    "\xc3\xa9t\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xe2\x94\x80\033[3b\r\n"
    "\033(0lqqk\033(B \033]0;a title\007\033]11;?\033\\\033]10;?\007\033[?1049h"
    "\033[?12$p\033[?1049$p alt\033[2;5r\033[4$p\033[>4;2m\033[>c\033[?1049l\r\n"
    "\033[2Enext\033[Fprev\033[20`col\033[3asp\033[sS\033[HH\033[uU\033[6n\033[3J"
    "\033P$q\"p\033\\\033_x\033\\\033[62\"p\xf4\x80\x80\x80\xf4\x8f\xbf\xbd!"
    "\xe4\xb8\033[4:3mu\033[4:0m\033[58:5:1m \033[#p\033[?4m\033[>1p\033[12l\033#8end";

static void dump_split(size_t chunk_seed, char *buf, size_t size)
{
	struct fake_term f;
	size_t len = sizeof(split_text) - 1, i = 0;

	fake_term_init(&f, 40, 12);
	srand((unsigned)chunk_seed);
	while (i < len) {
		/* 0: at once; 1: byte by byte; else random reads of 1-16 */
		size_t n = chunk_seed == 0 ? len : chunk_seed == 1 ? 1 : 1 + (size_t)rand() % 16;

		n = MIN(n, len - i);
		fake_feed_n(&f, split_text + i, n);
		i += n;
	}
	fake_dump(&f, buf, size);
	fake_term_fini(&f);
}

static void test_split(void)
{
	static char whole[65536], other[65536];

	dump_split(0, whole, sizeof(whole));
	CHECK(strstr(whole, "replies \033]11;rgb:0000/0000/0000\033\\") != NULL);
	CHECK(strstr(whole, "\033[?12;4$y\033[?1049;1$y") != NULL);
	for (size_t seed = 1; seed < 40; seed++) {
		dump_split(seed, other, sizeof(other));
		if (strcmp(whole, other) != 0) {
			fprintf(stderr, "cut with seed %zu differs\n", seed);
			CHECK(strcmp(whole, other) == 0);
		}
	}
}

/* A new session: nothing of the last one's state stays. */
static void test_reset(void)
{
	struct fake_term f;

	fake_term_init(&f, 40, 6);
	fake_feed(&f, "x\033[2;8m\033(0\016\033]11;?\033\xe4\xb8");
	tsm_vte_hard_reset(f.vte);
	stream_reset(f.stream);
	cluster_table_reset(f.table);
	fake_clear_replies(&f);
	fake_feed(&f, "\\q\033[3b");
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "\\qqqq") == 0);
	CHECK(fake_flags(&f, 1, 0) == 0 && f.cells[0][1].ch == 'q');
	CHECK(f.n_replies == 0);
	fake_term_fini(&f);
}

static void keys_seen(const char *bytes, size_t len, void *data)
{
	keys_modes_feed(data, bytes, len);
}

/* A stream whose seen feeds a key mode follower. */
struct keys_term {
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *table;
	struct keys_modes km;
	struct stream *st;
};

static struct stream *keys_term_init(struct keys_term *k)
{
	keys_modes_init(&k->km);
	k->table = cluster_table_new();
	CHECK(tsm_screen_new(&k->screen, NULL, NULL) == 0);
	CHECK(tsm_screen_resize(k->screen, 40, 10) == 0);
	CHECK(tsm_vte_new(&k->vte, k->screen, fake_vte_write, NULL, NULL, NULL) == 0);
	k->st = stream_new(&(struct stream_config){.vte = k->vte,
						   .screen = k->screen,
						   .table = k->table,
						   .reply = keys_seen_reply,
						   .seen = keys_seen,
						   .userdata = &k->km});
	return k->st;
}

static void keys_term_fini(struct keys_term *k)
{
	stream_free(k->st);
	tsm_vte_unref(k->vte);
	tsm_screen_unref(k->screen);
	cluster_table_free(k->table);
}

/* The key encoder's mode tracker follows what libtsm gets (stream_config's
 * seen), so the two agree on cursor-key mode even where the stage rewrites
 * a sequence: DECSCL is a soft reset for both. */
static void test_keys_follow_stream(void)
{
	struct keys_term k;
	struct stream *st = keys_term_init(&k);

	stream_feed(st, "\033[?1h\033=", 7);
	CHECK(k.km.modes & KEYS_MODE_CURSOR_APP);
	CHECK(k.km.modes & KEYS_MODE_KEYPAD_APP);
	CHECK_EQ_U(stream_key_modes(st), k.km.modes);
	stream_feed(st, "\033[61\"p", 6); /* DECSCL */
	CHECK(!(k.km.modes & KEYS_MODE_CURSOR_APP));
	CHECK(!(k.km.modes & KEYS_MODE_KEYPAD_APP));
	CHECK_EQ_U(stream_key_modes(st), k.km.modes);
	/* the daemon reads the stage's own view (stream_key_modes()), which
	 * must be the follower's: DECNKM and LNM, which DECSTR keeps for the
	 * encoder only */
	stream_feed(st, "\033[?66h\033[20h\033[!p", 15);
	CHECK_EQ_U(k.km.modes, KEYS_MODE_NEWLINE);
	CHECK_EQ_U(stream_key_modes(st), k.km.modes);
	stream_feed(st, "\033[?66;1h", 8);
	CHECK_EQ_U(stream_key_modes(st),
		   KEYS_MODE_NEWLINE | KEYS_MODE_KEYPAD_APP | KEYS_MODE_CURSOR_APP);
	CHECK_EQ_U(stream_key_modes(st), k.km.modes);
	stream_feed(st, "\033c", 2); /* RIS */
	CHECK_EQ_U(stream_key_modes(st), 0);
	CHECK_EQ_U(k.km.modes, 0);
	keys_term_fini(&k);
}

/* stream_key_modes() against the follower on what libtsm got, after every
 * read of a pseudo-random mix of mode sequences, malformed and dropped
 * ones, strings, C1 controls, text and marks, in reads of 1 to 64 bytes. */
static void test_key_modes_random(void)
{
	static const char *const bits[] = {
	    "\033[?1h",
	    "\033[?1l",
	    "\033[?66h",
	    "\033[?66l",
	    "\033=",
	    "\033>",
	    "\033c",
	    "\033[!p",
	    "\033[20h",
	    "\033[20l",
	    "\033[?1;66h",
	    "\033[61\"p",
	    "\033[?1$p",
	    "\033[1$h",
	    "\033[?;1h",
	    "\033[? 1h",
	    "\033[?1:2h",
	    "\033[>1h",
	    "\033[1;20h",
	    "\033[?01l",
	    "\033[20;?h",
	    "\033[ 20h",
	    "\033 =",
	    "\033(=",
	    "\033]1;\033[?1h\007",
	    "\033P\033[?1h\033\\",
	    "\302\233?1h",
	    "\030",
	    "\032",
	    "e\314\201",
	    "\344\270\200",
	    "\033[2m",
	    "\033[0m",
	    "xy",
	    "\033[?1\030h",
	    "\033[?1\nh",
	    "\033[5b",
	};
	struct keys_term k;
	struct stream *st = keys_term_init(&k);
	uint32_t rng = 12345;
	char buf[4096];
	size_t len = 0, changes = 0;
	unsigned last = 0;

	for (int round = 0; round < 2000; round++) {
		size_t at = 0;

		len = 0;
		for (int i = 0; i < 8; i++) {
			const char *b = bits[(rng = rng * 1103515245 + 12345) %
					     (sizeof(bits) / sizeof(bits[0]))];

			memcpy(buf + len, b, strlen(b));
			len += strlen(b);
		}
		while (at < len) {
			size_t n = 1 + (rng = rng * 1103515245 + 12345) / 65536 % 64;

			n = MIN(n, len - at);
			stream_feed(st, buf + at, n);
			at += n;
			CHECK_EQ_U(stream_key_modes(st), k.km.modes);
			changes += stream_key_modes(st) != last;
			last = stream_key_modes(st);
		}
	}
	CHECK(changes > 100); /* the mix does move the modes */
	keys_term_fini(&k);
}

/* ---- BEL ------------------------------------------------------------------ */

static unsigned bell_count, bell_calls;

static void count_bells(unsigned count, void *data)
{
	(void)data;
	bell_count += count;
	bell_calls++;
}

/* A stream whose BELs are counted (stream_config.bell). */
static void bell_term_init(struct fake_term *f)
{
	fake_term_init(f, 20, 6);
	stream_free(f->stream);
	f->stream = stream_new(&(struct stream_config){.vte = f->vte,
						       .screen = f->screen,
						       .table = f->table,
						       .reply = fake_reply,
						       .bell = count_bells,
						       .userdata = f});
	bell_count = bell_calls = 0;
}

static void test_bell(void)
{
	static const char *const silent[] = {
	    "\033]0;title\007",		  /* BEL ends an OSC */
	    "\033]11;?\007",		  /* a query's BEL is its terminator */
	    "\302\2352;title\007",	  /* the 8-bit OSC */
	    "\033Pq#0;2;0;0;0\007\033\\", /* DCS: ignored inside, as xterm */
	    "\033_app\007\033\\",	  /* APC */
	    "\033^pm\007\033\\",	  /* PM */
	};
	struct fake_term f;

	bell_term_init(&f);
	fake_feed(&f, "a\007b");
	CHECK_EQ_U(bell_count, 1);
	CHECK_EQ_U(bell_calls, 1);
	fake_term_read(&f);
	CHECK(strcmp(fake_row(&f, 0), "ab") == 0);
	/* several in one read: one call */
	fake_feed(&f, "\007\007\007");
	CHECK_EQ_U(bell_count, 4);
	CHECK_EQ_U(bell_calls, 2);
	/* inside a CSI (libtsm executes C0 there) and right after an ST */
	fake_feed(&f, "\033[1\0073m\033]0;x\033\\\007");
	CHECK_EQ_U(bell_count, 6);
	fake_term_fini(&f);

	for (size_t i = 0; i < ELEMENTSOF(silent); i++) {
		bell_term_init(&f);
		fake_feed(&f, silent[i]);
		/* and byte by byte: the string state carries over reads */
		for (const char *p = silent[i]; *p; p++)
			fake_feed_n(&f, p, 1);
		if (bell_count != 0)
			fprintf(stderr, "rang for silent[%zu]\n", i);
		CHECK_EQ_U(bell_count, 0);
		CHECK_EQ_U(bell_calls, 0);
		fake_term_fini(&f);
	}

	/* an OSC cut anywhere still keeps its BEL; one after it rings */
	bell_term_init(&f);
	fake_feed(&f, "\033]2;ti");
	fake_feed(&f, "tle\007\007");
	CHECK_EQ_U(bell_count, 1);
	/* a new session: nothing of an OSC the last one left open */
	fake_feed(&f, "\033]2;open");
	stream_reset(f.stream);
	fake_feed(&f, "\007");
	CHECK_EQ_U(bell_count, 2);
	fake_term_fini(&f);
}

/* ---- text printed without libtsm's vte ------------------------------------ */

/* Everything a screen holds, cell by cell with its width, its whole pen and
 * its age, in the view and back through the scrollback, and the cursor. */
struct full_dump {
	char *buf;
	size_t size, n;
};

static int full_dump_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
			  unsigned width, unsigned posx, unsigned posy,
			  const struct tsm_screen_attr *a, tsm_age_t age, void *data)
{
	struct full_dump *d = data;

	(void)con;
	(void)id;
	if (d->n < d->size)
		d->n +=
		    (size_t)snprintf(d->buf + d->n, d->size - d->n,
				     "%u,%u:%x/%zu w%u %d %d %u.%u.%u %u.%u.%u %u%u%u%u%u%u a%u;",
				     posx, posy, len ? ch[0] : 0, len, width, a->fccode, a->bccode,
				     a->fr, a->fg, a->fb, a->br, a->bg, a->bb, a->bold, a->italic,
				     a->underline, a->inverse, a->protect, a->blink, (unsigned)age);
	return 0;
}

static void full_dump(struct fake_term *f, char *buf, size_t size)
{
	struct full_dump d = {buf, size, 0};

	tsm_screen_draw(f->screen, full_dump_cell, &d);
	tsm_screen_sb_up(f->screen, 1000);
	tsm_screen_draw(f->screen, full_dump_cell, &d);
	tsm_screen_sb_reset(f->screen);
	if (d.n < size)
		snprintf(buf + d.n, size - d.n, "cursor %u,%u flags %x replies %s",
			 tsm_screen_get_cursor_x(f->screen), tsm_screen_get_cursor_y(f->screen),
			 tsm_screen_get_flags(f->screen), f->replies);
}

/* Random output: text, line ends and controls among everything that
 * changes how libtsm prints (pens, every designation, shifts, LNM, insert
 * mode, wrap, margins, origin, saved cursors, resets, the alternate
 * screen, C1, sequences with controls inside), cut into random reads. A
 * second pair of eyes (a review) widened it. */
static const char *const direct_pieces[] = {
    "txt ",
    "~",
    "\r\n",
    "\n",
    "\r",
    "\t",
    "\b",
    "\x7f",
    "\v",
    "\f",
    "\a",
    "\005",
    "\030",
    "\032",
    "\033[m",
    "\033[1m",
    "\033[22m",
    "\033[31m",
    "\033[1;34m",
    "\033[92m",
    "\033[45m",
    "\033[105m",
    "\033[39;49m",
    "\033[7m",
    "\033[27m",
    "\033[4m",
    "\033[3m",
    "\033[5m",
    "\033[2m",
    "\033[8m",
    "\033[28m",
    "\033[9m",
    "\033[29m",
    "\033[38;5;3m",
    "\033[38;5;13m",
    "\033[38;5;200m",
    "\033[48;5;9m",
    "\033[38;2;1;2;3m",
    "\033[48;2;200;100;50m",
    "\033[38:5:12m",
    "\033[38:2::9:8:7m",
    "\033[;1m",
    "\033[1;2;3;4;5;7;9;21;22;23;24;25;27;28;29;30;31;32;33m",
    "\033[0;38;5;1;48;5;2;1;4;7;38;2;4;5;6;39;49;1;97;107;4;5m",
    "\033[38;5m",
    "\033[38;2;1m",
    "\033(0",
    "\033(B",
    "\033(A",
    "\033(<",
    "\033(7",
    "\033(=",
    "\033(K",
    "\033)0",
    "\033)B",
    "\033)A",
    "\033)<",
    "\033*0",
    "\033*B",
    "\033*<",
    "\033*A",
    "\033+0",
    "\033+B",
    "\033+<",
    "\033+A",
    "\033( B",
    "\033(%5",
    "\016",
    "\017",
    "\033N",
    "\033O",
    "\033n",
    "\033o",
    "\033~",
    "\033}",
    "\033|",
    "\302\216",
    "\302\217",
    "\302\204",
    "\302\205",
    "\302\215",
    "\302\210",
    "\302\232",
    "\302\2331m",
    "\302\2340",
    "\302\2350;t\007",
    "\302\220q\033\\",
    "\033[20h",
    "\033[20l",
    "\033[12;20h",
    "\033[?20h",
    "\033[=20h",
    "\033[20$h",
    "\033[4h",
    "\033[4l",
    "\033[?7l",
    "\033[?7h",
    "\033[?6h",
    "\033[?6l",
    "\033[2;5r",
    "\033[r",
    "\033[?1049h",
    "\033[?1049l",
    "\033[?1047h",
    "\033[?1047l",
    "\033[?47h",
    "\033[?47l",
    "\033[?1048h",
    "\033[?1048l",
    "\033[H",
    "\033[3;9H",
    "\033[A",
    "\033[2B",
    "\033[J",
    "\033[2J",
    "\033[K",
    "\033[1K",
    "\0337",
    "\0338",
    "\033[s",
    "\033[u",
    "\033M",
    "\033D",
    "\033E",
    "\033[L",
    "\033[2M",
    "\033[3@",
    "\033[2P",
    "\033[4X",
    "\033[5b",
    "\033[2S",
    "\033[T",
    "\033c",
    "\033[!p",
    "\033[61\"p",
    "\033[62;1\"p",
    "\033[64\"p",
    "\033[61p",
    "\033[>p",
    "\033[?p",
    "\033['p",
    "\033[ p",
    "\033#8",
    "\033%8",
    "\033%G",
    "\033 F",
    "\033 G",
    "\033 8",
    "\033[?25l",
    "\033[?25h",
    "\033[1\n2m",
    "\033(\n0",
    "\033[\0161m",
    "\033[\0171m",
    "\303\251",
    "\344\270\255",
    "e\314\201",
    "\314\201",
    "\342\200\213",
    "\302\240",
    "\302\241",
    "\303\276",
    "\303\277",
    "\342\224\200",
    "\360\237\230\200",
    "\377",
    "\303",
    "\355\240\200",
    "\340\200\200",
    "\033[6n",
    "\033[5n",
    "\033[c",
    "\033[>c",
    "\033]0;title\007",
    "\033]4;1;?\007",
    "\033P1$r\033\\",
    "\033_x\033\\",
    "\033[3g",
    "\033H",
    "\033[?5h",
    "\033[?5l",
    "\033=",
    "\033>",
    "\033[?1h",
    "\033[?66h",
    "\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1m",
    "\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;20h",
    "\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;12;20h"};

static void direct_fill(char *buf, size_t size, size_t *ret_len)
{
	static const char text[] = "The quick brown fox jumps over the lazy dog 0123~";
	size_t n = 0;

	for (;;) {
		const char *p = direct_pieces[rand() % (int)ELEMENTSOF(direct_pieces)];
		size_t k = strlen(p);

		/* text most of the time, as in real output */
		if (rand() % 3 == 0) {
			p = text + rand() % 20;
			k = strlen(p) - (size_t)(rand() % 10);
		}
		if (n + k > size)
			break;
		memcpy(buf + n, p, k);
		n += k;
	}
	*ret_len = n;
}

/* in[0..len) in reads of `cut` bytes (0: at once) through two terminals,
 * one printing plain text itself, one through the vte: true if they end
 * alike. */
static bool direct_both(const char *in, size_t len, size_t cut, unsigned what)
{
	static char a[1 << 17], b[1 << 17];
	struct fake_term f, g;
	bool same;

	fake_term_init(&f, 23, 7);
	fake_term_init(&g, 23, 7);
	stream_set_direct(g.stream, false);
	for (size_t i = 0; i < len;) {
		size_t k = cut ? MIN(len - i, cut) : len - i;

		fake_feed_n(&f, in + i, k);
		fake_feed_n(&g, in + i, k);
		i += k;
	}
	full_dump(&f, a, sizeof(a));
	full_dump(&g, b, sizeof(b));
	fake_term_fini(&f);
	fake_term_fini(&g);
	same = strcmp(a, b) == 0;
	if (!same) {
		size_t d = 0;

		while (a[d] == b[d])
			d++;
		fprintf(stderr,
			"%u (reads of %zu): printed directly differs at %zu:\n  %.120s\n  %.120s\n",
			what, cut, d, a + (d > 40 ? d - 40 : 0), b + (d > 40 ? d - 40 : 0));
	}
	CHECK(same);
	return same;
}

static void test_direct_same(void)
{
	static char out[4096];

	for (unsigned seed = 1; seed <= 1500; seed++) {
		size_t len;

		srand(seed);
		direct_fill(out, sizeof(out), &len);
		if (!direct_both(out, len, 1 + (size_t)(rand() % 200), seed))
			break; /* one is enough */
	}
}

/* Cases the random mix may miss (found in review). */
static void test_direct_cases(void)
{
	static const char *const cases[] = {
	    /* LNM as the 17th parameter: libtsm reads 16 */
	    "\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;20hab\ncd\nef",
	    "\033[20h\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;20lab\ncd\nef",
	    "\033[4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;4;20hab\ncd",
	    "\033[12;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;20hab\ncd",
	    /* zero-width code points that start a run */
	    "ab\n\314\201x\r\342\200\213y\n\357\273\277z",
	    "\314\201\314\201abc",
	    /* U+00A0..U+00FF at GR's edges, with each GR */
	    "\302\240\302\241\303\276\303\277\303\251|",
	    "\033)0\302\240\302\241\303\276\303\277\303\251|",
	    "\033)<\302\240\302\241\303\276\303\277\303\251|",
	    "\033)A\302\240\302\241\303\276\303\277\303\251|",
	    "\033}\302\240\302\241\303\276\303\277\303\251|",
	    "\033*0\033}\302\240\302\241\303\276\303\277\303\251|",
	    "\033+<\033|\302\240\302\241\303\276\303\277\303\251|",
	    "\033*A\033n\302\240abc\303\251",
	    /* C1 that answers */
	    "a\302\232b\033[6nc",
	    /* pens: 256-colour codes below 16 with bold, DECSC/DECRC, SGR 0 */
	    "\033[1;38;5;1mA\033[38;5;9mB\033[48;5;3mC\033[38;5;15mD\033[22mE",
	    "\033[1;31m\0337\033[0;38;2;9;8;7mX\0338Y\033[mZ",
	    "\033[38;2;300;1;2mA\033[38;5;300mB\033[48;5;255mC",
	    /* wide characters at the right edge, with and without wrap */
	    ("0123456789012345678901\344\270\255x\033[?7l"
	     "0123456789012345678901\344\270\255\344\270\255y"),
	    /* RIS, DECSTR, DECSCL after LNM and shifts */
	    "\033[20h\016\033c\na\nb",
	    "\033[20h\033[!pa\nb",
	    "\033[20h\033[61\"pa\nb",
	};
	static const char controls[] = "a\005b\000c\021d\023e\034f\037g";

	for (unsigned i = 0; i < ELEMENTSOF(cases); i++)
		for (size_t cut = 0; cut <= 3; cut++)
			direct_both(cases[i], strlen(cases[i]), cut, i);
	direct_both(controls, sizeof(controls) - 1, 0, 100);
}

/* A session restored (stream_set_state()), then printing both ways. */
static void test_direct_restore(void)
{
	static char out[2048], a[1 << 17], b[1 << 17];

	for (unsigned seed = 1; seed <= 300; seed++) {
		struct fake_term src, f, g;
		struct stream_state st;
		size_t n;

		srand(seed * 31u);
		direct_fill(out, sizeof(out), &n);
		fake_term_init(&src, 23, 7);
		fake_feed_n(&src, out, n);
		stream_get_state(src.stream, &st);
		fake_term_fini(&src);
		fake_term_init(&f, 23, 7);
		fake_term_init(&g, 23, 7);
		stream_set_direct(g.stream, false);
		CHECK(stream_set_state(f.stream, &st) == 0);
		CHECK(stream_set_state(g.stream, &st) == 0);
		direct_fill(out, sizeof(out), &n);
		fake_feed_n(&f, out, n);
		fake_feed_n(&g, out, n);
		full_dump(&f, a, sizeof(a));
		full_dump(&g, b, sizeof(b));
		fake_term_fini(&f);
		fake_term_fini(&g);
		if (strcmp(a, b) != 0) {
			fprintf(stderr, "restored, seed %u: printed directly differs\n", seed);
			CHECK(strcmp(a, b) == 0);
			break;
		}
	}
}

int main(void)
{
	RUN(test_keys_follow_stream);
	RUN(test_key_modes_random);
	RUN(test_rep);
	RUN(test_rep_limit);
	RUN(test_decrqm);
	RUN(test_queries);
	RUN(test_cursor_shape);
	RUN(test_osc);
	RUN(test_osc52_wiped);
	RUN(test_dropped);
	RUN(test_cursor);
	RUN(test_dec_graphics);
	RUN(test_clear_scrollback);
	RUN(test_sgr);
	RUN(test_extra_attributes);
	RUN(test_malformed);
	RUN(test_ascii_width);
	RUN(test_cluster_marks);
	RUN(test_plain_runs);
	RUN(test_sgr_as_is);
	RUN(test_sgr_fast);
	RUN(test_split);
	RUN(test_reset);
	RUN(test_bell);
	RUN(test_direct_same);
	RUN(test_direct_cases);
	RUN(test_direct_restore);
	return TESTS_RESULT();
}
