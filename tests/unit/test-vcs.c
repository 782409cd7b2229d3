/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mirror's bytes (vcs.h) for screens of the real libtsm 4 behind the
 * real pty stream stage: read back by a model of the kernel's VT that
 * accepts only what the mirror may write (its preamble, CUP, CHA, EL, ED,
 * DECTCEM and UTF-8 text without controls) and fails on anything else, so
 * that screen content can never become an escape sequence for the kernel.
 * The model starts full of 'X' so that what the mirror does not clear shows.
 */
#include <stdio.h>

#include "../../daemon/util/util.h"
#include "../../daemon/screen/overlay.h"
#include "../../daemon/terminal/vcs.h"
#include "../../daemon/terminal/image.h"
#include "test-stream-fake.h"

#define VT_MAX 40

static const char preamble[] = "\033%G\033[0;10m\033[4l\033[?6l\033[?7l";

struct vt_model {
	unsigned cols, rows;
	uint32_t cells[VT_MAX][VT_MAX];
	unsigned x, y;
	bool cursor_shown;
	bool bad; /* a byte the mirror must never write */
};

/* The kernel's double-width ranges (drivers/tty/vt/vt.c, 6.1). */
static bool model_wide(uint32_t cp)
{
	return (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) ||
	       (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
	       (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
	       (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x20000 && cp <= 0x3fffd);
}

static void model_put(struct vt_model *m, uint32_t cp)
{
	unsigned w = model_wide(cp) ? 2 : 1;

	m->cells[m->y][m->x] = cp;
	if (w == 2 && m->x + 1 < m->cols)
		m->cells[m->y][m->x + 1] = ' ';
	/* autowrap off: the last column is written again */
	m->x = MIN(m->x + w, m->cols - 1);
}

static unsigned model_num(const char **p, const char *end)
{
	unsigned n = 0;

	while (*p < end && **p >= '0' && **p <= '9')
		n = n * 10 + (unsigned)(*(*p)++ - '0');
	return n;
}

static void model_run(struct vt_model *m, const char *s, size_t len)
{
	const char *p = s, *end = s + len;

	m->bad = false;
	if (len < sizeof(preamble) - 1 || memcmp(s, preamble, sizeof(preamble) - 1) != 0) {
		fprintf(stderr, "no preamble\n");
		m->bad = true;
		return;
	}
	p += sizeof(preamble) - 1;
	while (p < end && !m->bad) {
		unsigned char c = (unsigned char)*p;

		if (c == 0x1b) {
			unsigned a = 1, b = 1;

			if (end - p < 3 || p[1] != '[') {
				m->bad = true;
				break;
			}
			p += 2;
			if (*p == '?') {
				if (end - p >= 4 && memcmp(p, "?25", 3) == 0 &&
				    (p[3] == 'h' || p[3] == 'l')) {
					m->cursor_shown = p[3] == 'h';
					p += 4;
					continue;
				}
				m->bad = true;
				break;
			}
			if (*p >= '0' && *p <= '9')
				a = model_num(&p, end);
			if (p < end && *p == ';') {
				p++;
				b = model_num(&p, end);
			}
			if (p >= end) {
				m->bad = true;
				break;
			}
			switch (*p++) {
			case 'H':
				m->y = MIN(a, m->rows) - 1;
				m->x = MIN(b, m->cols) - 1;
				break;
			case 'G':
				m->x = MIN(a, m->cols) - 1;
				break;
			case 'K':
				if (a != 2) {
					m->bad = true;
					break;
				}
				for (unsigned x = 0; x < m->cols; x++)
					m->cells[m->y][x] = ' ';
				break;
			case 'J':
				for (unsigned x = m->x; x < m->cols; x++)
					m->cells[m->y][x] = ' ';
				for (unsigned y = m->y + 1; y < m->rows; y++)
					for (unsigned x = 0; x < m->cols; x++)
						m->cells[y][x] = ' ';
				break;
			default:
				m->bad = true;
			}
			continue;
		}
		/* UTF-8, shortest forms, no controls */
		unsigned n = c < 0x80		      ? 1
			     : c >= 0xc2 && c <= 0xdf ? 2
			     : c >= 0xe0 && c <= 0xef ? 3
			     : c >= 0xf0 && c <= 0xf4 ? 4
						      : 0;
		uint32_t cp = n == 1 ? c : c & (0x7f >> n);

		if (n == 0 || (size_t)(end - p) < n) {
			m->bad = true;
			break;
		}
		for (unsigned i = 1; i < n; i++) {
			if (((unsigned char)p[i] & 0xc0) != 0x80)
				m->bad = true;
			cp = cp << 6 | ((unsigned char)p[i] & 0x3f);
		}
		if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xdfff) ||
		    cp > 0x10ffff || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000))
			m->bad = true;
		if (m->bad)
			break;
		model_put(m, cp);
		p += n;
	}
	if (m->bad)
		fprintf(stderr, "bad byte at offset %zu: 0x%02x\n", (size_t)(p - s),
			p < end ? (unsigned char)*p : 0);
}

static void model_init(struct vt_model *m, unsigned cols, unsigned rows)
{
	memset(m, 0, sizeof(*m));
	m->cols = cols;
	m->rows = rows;
	for (unsigned y = 0; y < VT_MAX; y++)
		for (unsigned x = 0; x < VT_MAX; x++)
			m->cells[y][x] = 'X';
}

/* Row y of the model as UTF-8, trailing blanks cut. */
static const char *model_row(struct vt_model *m, unsigned y)
{
	static char buf[VT_MAX * 4 + 1];
	size_t len = 0, n;

	for (unsigned x = 0; x < m->cols; x++)
		len += utf8_put(m->cells[y][x], buf + len);
	n = len;
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return buf;
}

/* Encodes f's screen for a VT of cols x rows and runs it through a model. */
static void mirror(struct fake_term *f, unsigned cols, unsigned rows, struct vt_model *m,
		   struct vcs_buf *out)
{
	struct vcs_source src = {f->screen, f->table};

	vcs_encode(&src, cols, rows, out);
	model_init(m, cols, rows);
	model_run(m, out->data, out->len);
	CHECK(!m->bad);
}

#define CHECK_ROW(m, y, text)                                                                      \
	do {                                                                                       \
		const char *r_ = model_row((m), (y));                                              \
		if (strcmp(r_, (text)) != 0) {                                                     \
			fprintf(stderr, "%s:%d: row %u is '%s', expected '%s'\n", __FILE__,        \
				__LINE__, (unsigned)(y), r_, (text));                              \
			tests_failed = 1;                                                          \
		}                                                                                  \
	} while (0)

/* The exact bytes of a tiny screen: the format is what the kernel gets. */
static void test_exact_bytes(void)
{
	struct fake_term f;
	struct vcs_buf b = {};
	struct vcs_source src;
	char expect[256];

	fake_term_init(&f, 4, 2);
	fake_feed(&f, "ab\r\nc");
	src = (struct vcs_source){f.screen, f.table};
	vcs_encode(&src, 4, 2, &b);
	snprintf(expect, sizeof(expect), "%s\033[1;1H\033[2Kab\033[2;1H\033[2Kc\033[2;2H\033[?25h",
		 preamble);
	CHECK_EQ_U(b.len, strlen(expect));
	CHECK(b.len == strlen(expect) && memcmp(b.data, expect, b.len) == 0);
	vcs_buf_fini(&b);
	fake_term_fini(&f);
}

/* Text with non-ASCII and wide characters, and the cursor. */
static void test_text_and_cursor(void)
{
	struct fake_term f;
	struct vcs_buf b = {};
	struct vt_model m;

	fake_term_init(&f, 20, 4);
	fake_feed(&f, "hello w\xc3\xb6rld \xc3\xa9\r\n\xe6\x97\xa5\xe6\x9c\xac x\r\n"
		      "\xe2\x82\xac\xf0\x9f\x98\x80!\033[3;5H");
	mirror(&f, 20, 4, &m, &b);
	CHECK_ROW(&m, 0, "hello w\xc3\xb6rld \xc3\xa9");
	/* each wide character is followed by its column (CHA) */
	CHECK_ROW(&m, 1, "\xe6\x97\xa5 \xe6\x9c\xac  x");
	CHECK(strstr(b.data, "\xe6\x97\xa5\033[3G\xe6\x9c\xac\033[5G") != NULL);
	CHECK_ROW(&m, 2, "\xe2\x82\xac\xf0\x9f\x98\x80 !");
	CHECK_ROW(&m, 3, "");
	CHECK_EQ_U(m.x, 4);
	CHECK_EQ_U(m.y, 2);
	CHECK(m.cursor_shown);

	/* hidden */
	fake_feed(&f, "\033[?25l");
	mirror(&f, 20, 4, &m, &b);
	CHECK(!m.cursor_shown);
	CHECK(b.len >= 6 && memcmp(b.data + b.len - 6, "\033[?25l", 6) == 0);

	/* a wrap pending after the last column: the cursor stays on it */
	fake_feed(&f, "\033[?25h\033[1;1H\033[2J\033[1;18Habc");
	mirror(&f, 20, 4, &m, &b);
	CHECK_ROW(&m, 0, "                 abc");
	CHECK_EQ_U(m.x, 19);
	CHECK_EQ_U(m.y, 0);
	vcs_buf_fini(&b);
	fake_term_fini(&f);
}

/* Cells holding what a session must never get into the kernel's terminal:
 * C0 (ESC, BEL), DEL, C1 (CSI U+009B, NEL U+0085), surrogates, beyond
 * U+10FFFF, zero-width characters the kernel does not move over. libtsm's
 * own parser keeps these out of cells; tsm_screen_write() puts them in. */
static void test_hostile_cells(void)
{
	static const uint32_t hostile[] = {0x1b,   0x07,     0x7f,   0x9b,   0x85,
					   0xd800, 0x110000, 0x200b, 0xfeff, 0x0a};
	struct fake_term f;
	struct vcs_buf b = {};
	struct vt_model m;
	struct tsm_screen_attr attr = {0};

	fake_term_init(&f, 20, 2);
	for (size_t i = 0; i < ELEMENTSOF(hostile); i++)
		tsm_screen_write(f.screen, hostile[i], &attr);
	mirror(&f, 20, 2, &m, &b);
	/* libtsm refuses C0, DEL and C1 itself (width < 0): the surrogate,
	 * the one beyond U+10FFFF and U+FEFF are stored */
	CHECK_ROW(&m, 0, "???");
	/* nothing but the ESCs of the mirror's own sequences */
	for (size_t i = 0; i < b.len; i++) {
		unsigned char c = (unsigned char)b.data[i];

		CHECK(c >= 0x20 || c == 0x1b);
		CHECK(c != 0x7f);
		if (c == 0xc2 && i + 1 < b.len)
			CHECK((unsigned char)b.data[i + 1] >= 0xa0);
	}

	/* the same bytes sent as output: libtsm's parser takes them, nothing
	 * of them reaches the mirror as a control */
	fake_feed(&f, "\033[2J\033[H\xc2\x9b"
		      "2J\xc2\x85x\033]0;t\007\x7f\xed\xa0\x80y");
	mirror(&f, 20, 2, &m, &b);
	for (size_t i = 0; i < b.len; i++)
		CHECK((unsigned char)b.data[i] >= 0x20 || b.data[i] == 0x1b);
	vcs_buf_fini(&b);
	fake_term_fini(&f);
}

/* Every code point that must not reach the kernel's terminal as itself. */
static void test_safe_cp(void)
{
	for (uint32_t cp = 0; cp < 0x20; cp++)
		CHECK_EQ_U(vcs_safe_cp(cp), '?');
	for (uint32_t cp = 0x7f; cp <= 0x9f; cp++)
		CHECK_EQ_U(vcs_safe_cp(cp), '?');
	for (uint32_t cp = 0xd800; cp <= 0xdfff; cp++)
		CHECK_EQ_U(vcs_safe_cp(cp), '?');
	CHECK_EQ_U(vcs_safe_cp(0x110000), '?');
	CHECK_EQ_U(vcs_safe_cp(0xffffffff), '?');
	CHECK_EQ_U(vcs_safe_cp(0xfffe), '?');
	CHECK_EQ_U(vcs_safe_cp(0x200b), '?');
	CHECK_EQ_U(vcs_safe_cp(0x200f), '?');
	CHECK_EQ_U(vcs_safe_cp(0xfeff), '?');
	CHECK_EQ_U(vcs_safe_cp(' '), ' ');
	CHECK_EQ_U(vcs_safe_cp('~'), '~');
	CHECK_EQ_U(vcs_safe_cp(0xa0), 0xa0);
	CHECK_EQ_U(vcs_safe_cp(0xe9), 0xe9);
	CHECK_EQ_U(vcs_safe_cp(0x65e5), 0x65e5);
	CHECK_EQ_U(vcs_safe_cp(0x10fffd), 0x10fffd);
}

/* The grid larger than the VT: the window that holds the cursor; a wide
 * character cut by its edge becomes a blank. Smaller: the rest is erased. */
static void test_sizes(void)
{
	struct fake_term f;
	struct vcs_buf b = {};
	struct vt_model m;

	fake_term_init(&f, 12, 5);
	fake_feed(&f, "row0\r\nrow1\r\nrow2 abcdef\r\nrow3\r\nrow4 \xe6\x97\xa5xyz");
	/* cursor at column 10 (0-based) of row 4 */
	mirror(&f, 8, 3, &m, &b);
	CHECK_ROW(&m, 0, "2 abcdef");
	CHECK_ROW(&m, 1, "3");
	/* the CJK character's right half would fall outside on the left:
	 * cursor x 10, window columns 3..10 */
	CHECK_ROW(&m, 2, "4 \xe6\x97\xa5 xyz");
	CHECK_EQ_U(m.x, 7);
	CHECK_EQ_U(m.y, 2);

	/* cursor top-left: the top-left window; the wide character at its
	 * last column is a blank, one column more shows it */
	fake_feed(&f, "\033[H");
	mirror(&f, 6, 5, &m, &b);
	CHECK_ROW(&m, 4, "row4");
	mirror(&f, 7, 5, &m, &b);
	CHECK_ROW(&m, 4, "row4 \xe6\x97\xa5");
	CHECK_EQ_U(m.x, 0);
	CHECK_EQ_U(m.y, 0);

	/* a VT larger than the grid: no 'X' of the model is left */
	mirror(&f, 30, 8, &m, &b);
	CHECK_ROW(&m, 2, "row2 abcdef");
	CHECK_ROW(&m, 4, "row4 \xe6\x97\xa5 xyz");
	for (unsigned y = 5; y < 8; y++)
		CHECK_ROW(&m, y, "");
	vcs_buf_fini(&b);
	fake_term_fini(&f);
}

/* A combining sequence (a stand-in of the stream stage) is mirrored as its
 * base: the kernel's console does not combine. */
static void test_cluster(void)
{
	struct fake_term f;
	struct vcs_buf b = {};
	struct vt_model m;

	fake_term_init(&f, 10, 2);
	fake_feed(&f, "e\xcc\x81!");
	fake_term_read(&f);
	CHECK(f.cells[0][0].ch >= CLUSTER_FIRST);
	mirror(&f, 10, 2, &m, &b);
	CHECK_ROW(&m, 0, "e!");
	vcs_buf_fini(&b);
	fake_term_fini(&f);
}

/* An image's tiles are mirrored as blanks. */
static void test_image_tiles(void)
{
	struct fake_term f;
	struct vcs_buf b = {};
	struct vt_model m;
	struct tsm_screen_attr a = {.fccode = TSM_COLOR_FOREGROUND, .bccode = TSM_COLOR_BACKGROUND};

	fake_term_init(&f, 10, 2);
	fake_feed(&f, "a");
	tsm_screen_write(f.screen, IMAGE_FIRST, &a);
	tsm_screen_write(f.screen, IMAGE_LAST, &a);
	fake_feed(&f, "b");
	mirror(&f, 10, 2, &m, &b);
	CHECK_ROW(&m, 0, "a  b");
	vcs_buf_fini(&b);
	fake_term_fini(&f);
}

/* The view scrolled back is what is mirrored, as it is what is shown. */
static void test_scrollback_view(void)
{
	struct fake_term f;
	struct vcs_buf b = {};
	struct vt_model m;

	fake_term_init(&f, 10, 2);
	fake_feed(&f, "one\r\ntwo\r\nthree\r\nfour");
	mirror(&f, 10, 2, &m, &b);
	CHECK_ROW(&m, 0, "three");
	tsm_screen_sb_up(f.screen, 2);
	mirror(&f, 10, 2, &m, &b);
	CHECK_ROW(&m, 0, "one");
	CHECK_ROW(&m, 1, "two");
	vcs_buf_fini(&b);
	fake_term_fini(&f);
}

/* Rows drawn over the screen (the kernel messages' band, overlay.h) are
 * mirrored in place of the screen's, wide characters and all; the other
 * rows and the cursor stay the session's. */
static bool band_row(void *userdata, unsigned row, unsigned cols, uint32_t *cps)
{
	return overlay_row_text(userdata, row, cols, cps);
}

static void test_overlay_rows(void)
{
	struct fake_term f;
	struct vcs_buf b = {};
	struct vt_model m;
	struct overlay o;
	struct vcs_source src;
	static const struct overlay_msg msgs[] = {
	    {1234567, 3, "disk \xe6\x97\xa5 error on a line too long for the band"},
	    {2000000, 6, "ok"},
	};

	fake_term_init(&f, 30, 5);
	fake_feed(&f, "one\r\ntwo\r\nthree\r\nfour\r\nfive\033[2;2H");
	overlay_init(&o);
	overlay_band(&o, 30, 5, 2, OVERLAY_BOTTOM, msgs, 2, 0);
	src = (struct vcs_source){f.screen, f.table};
	vcs_encode_rows(&src, band_row, &o, 30, 5, &b);
	model_init(&m, 30, 5);
	model_run(&m, b.data, b.len);
	CHECK(!m.bad);
	CHECK_ROW(&m, 0, "one");
	CHECK_ROW(&m, 2, "three");
	CHECK_ROW(&m, 3, "[    1.234567] disk \xe6\x97\xa5  error o");
	CHECK_ROW(&m, 4, "[    2.000000] ok");
	CHECK_EQ_U(m.x, 1);
	CHECK_EQ_U(m.y, 1);
	/* without the rows: the screen's own */
	vcs_encode_rows(&src, NULL, NULL, 30, 5, &b);
	model_init(&m, 30, 5);
	model_run(&m, b.data, b.len);
	CHECK_ROW(&m, 4, "five");
	overlay_fini(&o);
	vcs_buf_fini(&b);
	fake_term_fini(&f);
}

/* Mirrors after the first carry only the rows that changed: a model fed
 * the whole first mirror and then only the changes holds what a whole
 * mirror of each screen gives, row by row and the cursor; an echo's
 * change is one row (one CUP) with the preamble and the cursor. */
static void test_changes(void)
{
	static const char *const steps[] = {
	    "a",
	    "b",
	    "\r\nsecond line",
	    "\033[1;1Hfirst",
	    "\033[?25l",
	    "\033[?25h\033[3;2H\xe6\x97\xa5x",
	    "\r\n\r\n\r\nscrolled",
	    "\033[2J\033[H",
	    "",
	};
	struct fake_term f;
	struct vcs_buf prev = {}, cur = {}, out = {};
	struct vcs_source src;
	struct vt_model inc, whole;

	fake_term_init(&f, 12, 4);
	src = (struct vcs_source){f.screen, f.table};
	vcs_encode(&src, 12, 4, &prev);
	model_init(&inc, 12, 4);
	model_run(&inc, prev.data, prev.len);
	CHECK(!inc.bad);
	for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
		size_t cups = 0;

		fake_feed(&f, steps[i]);
		vcs_encode(&src, 12, 4, &cur);
		vcs_encode_changes(&prev, &cur, &out);
		model_run(&inc, out.data, out.len);
		CHECK(!inc.bad);
		model_init(&whole, 12, 4);
		model_run(&whole, cur.data, cur.len);
		for (unsigned y = 0; y < 4; y++) {
			char want[VT_MAX * 4 + 1];

			snprintf(want, sizeof(want), "%s", model_row(&whole, y));
			CHECK_ROW(&inc, y, want);
		}
		CHECK_EQ_U(inc.x, whole.x);
		CHECK_EQ_U(inc.y, whole.y);
		CHECK(inc.cursor_shown == whole.cursor_shown);
		for (const char *p = out.data;
		     (p = memmem(p, out.len - (size_t)(p - out.data), "\033[2K", 4)); p += 4)
			cups++;
		/* "a", "b": the echo's row only; nothing changed: no row */
		if (i < 2)
			CHECK_EQ_U(cups, 1);
		if (i == ELEMENTSOF(steps) - 1)
			CHECK_EQ_U(cups, 0);
		CHECK(out.len <= cur.len);
		struct vcs_buf held = prev;

		prev = cur;
		cur = held;
	}
	/* another row count (a VT of another size): all of it */
	vcs_encode(&src, 12, 3, &cur);
	vcs_encode_changes(&prev, &cur, &out);
	CHECK(out.len == cur.len && memcmp(out.data, cur.data, cur.len) == 0);
	vcs_buf_fini(&prev);
	vcs_buf_fini(&cur);
	vcs_buf_fini(&out);
	fake_term_fini(&f);
}

/* A mirror built on the last one (vcs_encode_after(): the bytes of rows
 * whose cells did not change taken from it) has the bytes of one built
 * anew, whether the grid is read from libtsm's lines or through
 * tsm_screen_draw(): after each step (a change in the last column only, a
 * wide character, a stand-in, a scroll, the alternate screen, a view into
 * the scrollback and back, a clear), for a VT as large as the grid and for
 * a smaller one (a window that follows the cursor), with and without rows
 * drawn over the screen's (taken away at the second key: the row under
 * them, unchanged in libtsm, is libtsm's again). */
static void test_after(void)
{
	static const struct {
		const char *feed;
		int sb; /* > 0: the view up so many lines; < 0: back down */
	} steps[] = {
	    {"a", 0},
	    {"b", 0},
	    {"\r\nsecond line", 0},
	    {"\0337\033[1;16Hz\0338", 0},
	    {"\033[3;2H\xe6\x97\xa5x", 0},
	    {"e\xcc\x81", 0},
	    {"\033[6;1H\r\n\r\nscrolled", 0},
	    {"", 3},
	    {"", -3},
	    {"\033[?1049halt", 0},
	    {"\033[?1049l", 0},
	    {"\033[1;1H\033[2J", 0},
	    {"", 0},
	};
	static const struct overlay_msg msgs[] = {{1234567, 3, "band \xe6\x97\xa5"}};
	static const unsigned vts[][2] = {{16, 6}, {12, 4}};

	for (unsigned v = 0; v < ELEMENTSOF(vts); v++) {
		for (unsigned band = 0; band < 2; band++) {
			struct fake_term f;
			struct vcs_buf prev = {}, cur = {}, fresh = {}, drawn = {};
			struct vcs_source src;
			struct overlay o;
			vcs_row_fn fn = band ? band_row : NULL;

			fake_term_init(&f, 16, 6);
			fake_feed(&f, "one\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix\r\n");
			overlay_init(&o);
			overlay_band(&o, 16, 6, 1, OVERLAY_TOP, msgs, 1, 0);
			src = (struct vcs_source){f.screen, f.table};
			vcs_encode_after(&src, fn, &o, vts[v][0], vts[v][1], NULL, &prev);
			for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
				if (i == 1)
					fn = NULL;
				fake_feed(&f, steps[i].feed);
				if (steps[i].sb > 0)
					tsm_screen_sb_up(f.screen, (unsigned)steps[i].sb);
				else if (steps[i].sb < 0)
					tsm_screen_sb_down(f.screen, (unsigned)-steps[i].sb);
				vcs_encode_after(&src, fn, &o, vts[v][0], vts[v][1], &prev, &cur);
				vcs_encode_rows(&src, fn, &o, vts[v][0], vts[v][1], &fresh);
				vcs_test_draw_only = true;
				vcs_encode_rows(&src, fn, &o, vts[v][0], vts[v][1], &drawn);
				vcs_test_draw_only = false;
				if (cur.len != fresh.len || memcmp(cur.data, fresh.data, cur.len) ||
				    drawn.len != fresh.len ||
				    memcmp(drawn.data, fresh.data, fresh.len)) {
					fprintf(stderr,
						"VT %ux%u, band %u, step %zu: after the last "
						"'%.*s', anew '%.*s', drawn '%.*s'\n",
						vts[v][0], vts[v][1], band, i, (int)cur.len,
						cur.data, (int)fresh.len, fresh.data,
						(int)drawn.len, drawn.data);
					tests_failed = 1;
				}
				struct vcs_buf held = prev;

				prev = cur;
				cur = held;
			}
			vcs_buf_fini(&prev);
			vcs_buf_fini(&cur);
			vcs_buf_fini(&fresh);
			vcs_buf_fini(&drawn);
			overlay_fini(&o);
			fake_term_fini(&f);
		}
	}
}

int main(void)
{
	RUN(test_exact_bytes);
	RUN(test_text_and_cursor);
	RUN(test_hostile_cells);
	RUN(test_safe_cp);
	RUN(test_sizes);
	RUN(test_cluster);
	RUN(test_image_tiles);
	RUN(test_scrollback_view);
	RUN(test_overlay_rows);
	RUN(test_changes);
	RUN(test_after);
	return TESTS_RESULT();
}
