/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The floor, measured on the host: how fast consoled's path from the pty to
 * the glass can go, stage by stage, against libtsm alone (README.md here).
 *
 *   (a) tsm       libtsm's vte and screen fed the raw stream
 *   (b) filter    the stream stage (daemon/terminal/stream.c) in front of libtsm, as
 *                 term.c wires it (the key encoder reads its modes from
 *                 the stage: stream_key_modes())
 *   (c) detect    (b) plus, at a fixed frame rate, the frame's damage and
 *                 scroll detection: the cell snapshot of the screen as
 *                 render.c takes it, row hashes, damage_find_scroll(), the
 *                 move applied to the last frame's cells and the damaged runs
 *   (d) render    (b) plus render_frame() (which does (c)'s work itself) into
 *                 a framebuffer in RAM at 8, 16 and 32 bpp (640x480, the
 *                 built-in 8x16 PSF font: an 80x30 grid)
 *
 * Every stage gets the same reads (--read bytes, a pty's read) of the same
 * streams; (c) and (d) take a frame after the read that crosses every
 * multiple of F bytes, where F is what (a) parses in one frame interval
 * (16.7 ms) of that stream, so that both see the same frames. Times are the
 * process's CPU time (the host is shared: wall time would count other
 * processes), the best of --runs runs of --passes passes over the stream.
 *
 * Streams, generated here with a fixed seed except the first:
 *   lines      the scrolling benchmark's file (gen-lines.py, --lines-file)
 *   yes        "y\n" over and over
 *   colour     ls --color-like listings, 256-colour and truecolour SGR words
 *   cjk        lines of wide characters (CJK ideographs, kana, hangul)
 *   combining  Latin text with combining marks on many letters
 *
 * --smoke runs every stage once on a few kilobytes of each stream with a
 * small frame and checks that each stage ran (frames taken, cells drawn);
 * the unit suite runs it so (and --pause with 20 keys: every snapshot
 * update succeeds, the mirrors write something). It says nothing about
 * speed.
 *
 * --grid COLSxROWS sets the grid (the framebuffer: 8 x 16 pixels a cell);
 * --echo KEYS measures, instead of the streams, a key's echo in the render
 * stages: a screen of text drawn once, then KEYS characters written at the
 * prompt, a frame each (the one-cell change a typed key makes);
 * --pause KEYS the same keys, each followed by what consoled does once
 * output pauses: the vcs mirror (vcs.h), encoded as consoled does (the grid
 * read from libtsm's lines, the rows that did not change taken from the
 * last mirror) and, for comparison, anew (every cell through
 * tsm_screen_draw(), every row encoded), then what of it differs from the
 * last one (the bytes the VT gets); and session restore's snapshot update
 * (snapshot.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <libtsm.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../daemon/terminal/cluster.h"
#include "../../daemon/screen/damage.h"
#include "../../daemon/util/log.h"
#include "../../daemon/color/palette.h"
#include "../../daemon/screen/render.h"
#include "../../daemon/terminal/snapshot.h"
#include "../../daemon/terminal/stream.h"
#include "../../daemon/terminal/vcs.h"
#include "../../fonts/font.h"
#include "../unit/test-fb-ram.h"

/* The grid (--grid; 80x30 by default) and the framebuffer it fills with
 * the built-in 8x16 font. */
static unsigned floor_cols = 80, floor_rows = 30;
#define FLOOR_COLS floor_cols
#define FLOOR_ROWS floor_rows
#define FLOOR_XRES (FLOOR_COLS * 8)
#define FLOOR_YRES (FLOOR_ROWS * 16)
#define FLOOR_SB 1000		 /* consoled's default --sb-size */
#define FLOOR_FRAME_USEC 16667.0 /* one frame at 60 Hz */

enum floor_stage {
	STAGE_TSM,
	STAGE_FILTER,
	STAGE_DETECT,
	STAGE_RENDER8,
	STAGE_RENDER16,
	STAGE_RENDER32,
	_STAGE_MAX,
};

static const char *const stage_names[_STAGE_MAX] = {"tsm",     "filter",   "detect",
						    "render8", "render16", "render32"};
static const unsigned stage_bpp[_STAGE_MAX] = {0, 0, 0, 8, 16, 32};

struct floor_stream {
	const char *name;
	char *data;
	size_t len, cap;
};

struct floor_options {
	const char *lines_file;
	size_t stream_size; /* bytes of each generated stream */
	size_t read_size;
	size_t frame_bytes; /* 0: from (a)'s rate */
	unsigned passes, runs;
	unsigned stages; /* bit per enum floor_stage */
	const char *only_stream;
	bool smoke;
	unsigned echo;	/* --echo: keys echoed one frame each, instead of the streams */
	unsigned pause; /* --pause: keys echoed, each followed by a pause's work */
};

/* ---- streams ------------------------------------------------------------- */

static uint64_t rng_state;

/* xorshift64*: the same streams on every host and libc. */
static uint32_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static unsigned rng_range(unsigned lo, unsigned hi)
{
	return lo + rng_next() % (hi - lo + 1);
}

static void stream_put(struct floor_stream *s, const char *b, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->data = realloc(s->data, s->cap);
		if (!s->data) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
	}
	memcpy(s->data + s->len, b, n);
	s->len += n;
}

__attribute__((format(printf, 2, 3))) static void stream_putf(struct floor_stream *s,
							      const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		stream_put(s, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void stream_put_cp(struct floor_stream *s, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	}
	stream_put(s, b, n);
}

static void stream_put_word(struct floor_stream *s, unsigned len)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789_-";

	for (unsigned i = 0; i < len; i++)
		stream_put(s, &letters[rng_next() % (sizeof(letters) - 1)], 1);
}

static void gen_yes(struct floor_stream *s, size_t size)
{
	while (s->len < size)
		stream_put(s, "y\n", 2);
}

/* ls --color's listing (dircolors' defaults), and words in 256 colours and
 * in truecolour, as bat, delta or lolcat print them. */
static void gen_colour(struct floor_stream *s, size_t size)
{
	static const char *const ls_colours[] = {"01;34", "01;32",    "01;36", "01;31",
						 "01;35", "40;33;01", "00",    NULL};

	while (s->len < size) {
		unsigned kind = rng_next() % 3, col = 0;

		while (col < 60) {
			unsigned len = rng_range(3, 14);

			if (kind == 0) {
				const char *c = ls_colours[rng_next() % 7];

				stream_putf(s, "\033[0m\033[%sm", c);
				stream_put_word(s, len);
				stream_putf(s, "\033[0m%*s", (int)(16 - len), "");
				col += 16;
			} else if (kind == 1) {
				stream_putf(s, "\033[38;5;%um", rng_next() % 256);
				if (rng_next() % 4 == 0)
					stream_putf(s, "\033[48;5;%um", rng_next() % 256);
				stream_put_word(s, len);
				stream_put(s, "\033[0m ", 5);
				col += len + 1;
			} else {
				stream_putf(s, "\033[38;2;%u;%u;%um", rng_next() % 256,
					    rng_next() % 256, rng_next() % 256);
				if (rng_next() % 4 == 0)
					stream_putf(s, "\033[48;2;%u;%u;%um", rng_next() % 256,
						    rng_next() % 256, rng_next() % 256);
				stream_put_word(s, len);
				stream_put(s, "\033[m ", 4);
				col += len + 1;
			}
		}
		stream_put(s, "\n", 1);
	}
}

/* 30-39 wide characters a line (60-78 columns), a space now and then. */
static void gen_cjk(struct floor_stream *s, size_t size)
{
	while (s->len < size) {
		unsigned n = rng_range(30, 39);

		for (unsigned i = 0; i < n; i++) {
			unsigned pick = rng_next() % 10;

			if (pick < 6)
				stream_put_cp(s, rng_range(0x4e00, 0x9fff)); /* ideographs */
			else if (pick < 8)
				stream_put_cp(s, rng_range(0x3041, 0x3096)); /* hiragana */
			else if (pick < 9)
				stream_put_cp(s, rng_range(0xac00, 0xd7a3)); /* hangul */
			else
				stream_put(s, "\xe3\x80\x81", 3); /* U+3001, ideographic comma */
		}
		stream_put(s, "\n", 1);
	}
}

/* Words of Latin letters, about one in three with one or two of the marks
 * decomposed Latin text uses most (Vietnamese has two on a letter). Real
 * text has few distinct clusters: all of them here fit the stand-in table
 * (cluster.h) many times over, so every pass prints them. */
static void gen_combining(struct floor_stream *s, size_t size)
{
	static const uint16_t marks[] = {0x300, 0x301, 0x302, 0x303, 0x304, 0x306, 0x307,
					 0x308, 0x309, 0x30a, 0x30c, 0x323, 0x327, 0x328};
	const unsigned n_marks = sizeof(marks) / sizeof(marks[0]);

	while (s->len < size) {
		unsigned col = 0, width = rng_range(40, 79);

		while (col < width) {
			unsigned len = rng_range(2, 10);

			for (unsigned i = 0; i < len; i++) {
				stream_put_cp(s, 'a' + rng_next() % 26);
				if (rng_next() % 3 == 0) {
					stream_put_cp(s, marks[rng_next() % n_marks]);
					if (rng_next() % 4 == 0)
						stream_put_cp(s, marks[rng_next() % n_marks]);
				}
			}
			stream_put(s, " ", 1);
			col += len + 1;
		}
		stream_put(s, "\n", 1);
	}
}

static int load_file(struct floor_stream *s, const char *path)
{
	FILE *f = fopen(path, "re");
	char buf[65536];
	size_t n;

	if (!f)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		stream_put(s, buf, n);
	fclose(f);
	return 0;
}

/* ---- the pipeline -------------------------------------------------------- */

struct floor_pipeline {
	enum floor_stage stage;
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *table;
	struct stream *stream;
	struct palette palette;

	/* (c): the last frame's cells and this one's, as render.c keeps them */
	struct fbdev fb; /* (c): 32 bpp, for the pixel values only; (d): drawn */
	struct cell *prev, *cur;
	uint64_t *prev_hash, *cur_hash;
	struct damage_run *runs; /* FLOOR_COLS / 2 + 1 */
	bool prev_valid;
	uint64_t cells_damaged, rows_moved;

	/* (d) */
	struct fontset *fonts;
	struct render *render;

	uint64_t pos; /* bytes fed, over all passes */
	uint64_t frames;
	double frame_sec; /* CPU time in frames: detection, or render_frame() */
};

static void sink_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	(void)u8;
	(void)len;
	(void)data;
}

static void sink_reply(const char *bytes, size_t len, void *data)
{
	(void)bytes;
	(void)len;
	(void)data;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int font_path_make(char *path, size_t size)
{
	int fd;

	snprintf(path, size, "/tmp/consoled-floor-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (write(fd, font_builtin_psf, font_builtin_psf_size) != (ssize_t)font_builtin_psf_size) {
		close(fd);
		unlink(path);
		return -EIO;
	}
	close(fd);
	return 0;
}

static int pipeline_init(struct floor_pipeline *p, enum floor_stage stage, const char *font_path)
{
	size_t cells = (size_t)FLOOR_COLS * FLOOR_ROWS;
	int r;

	memset(p, 0, sizeof(*p));
	p->stage = stage;
	palette_init(&p->palette, PALETTE_LINUX, NULL);
	r = tsm_screen_new(&p->screen, NULL, NULL);
	if (r < 0)
		return r;
	tsm_screen_set_max_sb(p->screen, FLOOR_SB);
	r = tsm_screen_resize(p->screen, FLOOR_COLS, FLOOR_ROWS);
	if (r < 0)
		return r;
	r = tsm_vte_new(&p->vte, p->screen, sink_write, NULL, NULL, NULL);
	if (r < 0)
		return r;
	/* libtsm gets the palette as term.c gives it (every stage: the same
	 * libtsm); the stream stage then prints plain text on the screen */
	r = stream_vte_set_palette(p->vte, &p->palette);
	if (r < 0)
		return r;
	if (stage == STAGE_TSM)
		return 0;
	p->table = cluster_table_new();
	p->stream = stream_new(&(struct stream_config){.vte = p->vte,
						       .screen = p->screen,
						       .table = p->table,
						       .palette = &p->palette,
						       .reply = sink_reply,
						       .userdata = p});
	if (stage == STAGE_FILTER)
		return 0;
	r = fb_ram_set_mode(&p->fb, stage == STAGE_DETECT ? 32 : stage_bpp[stage], FLOOR_XRES,
			    FLOOR_YRES, 0, 0);
	if (r < 0)
		return r;
	if (stage == STAGE_DETECT) {
		p->prev = calloc(cells, sizeof(struct cell));
		p->cur = calloc(cells, sizeof(struct cell));
		p->prev_hash = calloc(FLOOR_ROWS, sizeof(uint64_t));
		p->cur_hash = calloc(FLOOR_ROWS, sizeof(uint64_t));
		p->runs = calloc(FLOOR_COLS / 2 + 1, sizeof(struct damage_run));
		return p->prev && p->cur && p->prev_hash && p->cur_hash && p->runs ? 0 : -ENOMEM;
	}
	r = fontset_new(&(struct fontset_config){.file = font_path, .mono = stage_bpp[stage] == 8},
			&p->fonts);
	if (r < 0)
		return r;
	r = render_new(&p->fb, p->fonts, &p->palette, &p->render);
	if (r < 0)
		return r;
	render_set_clusters(p->render, p->table);
	return 0;
}

static void pipeline_fini(struct floor_pipeline *p)
{
	render_free(p->render);
	fontset_free(p->fonts);
	free(p->fb.map);
	free(p->prev);
	free(p->cur);
	free(p->prev_hash);
	free(p->cur_hash);
	free(p->runs);
	stream_free(p->stream);
	tsm_vte_unref(p->vte);
	if (p->screen)
		tsm_screen_clear_sb(p->screen);
	tsm_screen_unref(p->screen);
	cluster_table_free(p->table);
}

/* render.c's cell snapshot (render_snapshot_cell) for a bitmap font: glyph,
 * wide halves, stand-in flags, pixel values. */
static int detect_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
		       unsigned width, unsigned posx, unsigned posy,
		       const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct floor_pipeline *p = data;
	unsigned flags = 0;
	struct cell *c;
	size_t n;

	(void)con;
	(void)id;
	(void)age;
	if (posx >= FLOOR_COLS || posy >= FLOOR_ROWS)
		return 0;
	c = &p->cur[(size_t)posy * FLOOR_COLS + posx];
	if (width == 0 && posx > 0 && (c[-1].attr & 1u)) {
		*c = c[-1];
		c->attr = 2u;
		return 0;
	}
	c->glyph = len > 0 ? ch[0] : ' ';
	if (c->glyph >= CLUSTER_FIRST)
		cluster_lookup(p->table, c->glyph, &n, &flags);
	c->attr =
	    (width == 2 && posx + 1 < FLOOR_COLS ? 1u : 0u) | (flags & CLUSTER_STRIKE ? 4u : 0u);
	render_resolve_colors(&p->fb.format, &p->palette, attr, flags & CLUSTER_DIM, true, &c->fg,
			      &c->bg);
	return 0;
}

/* render_frame() without drawing: what a pan or wrap strategy would do with
 * the full-screen move, else the region's move (copy, shadow), then the
 * damaged runs of every row. */
static void detect_frame(struct floor_pipeline *p)
{
	struct scroll_guess full, region;
	struct cell *tmp;

	tsm_screen_draw(p->screen, detect_cell, p);
	if (p->prev_valid) {
		bool any = false;

		damage_hash_rows(p->prev, FLOOR_COLS, FLOOR_ROWS, p->prev_hash);
		damage_hash_rows(p->cur, FLOOR_COLS, FLOOR_ROWS, p->cur_hash);
		for (unsigned y = 0; y < FLOOR_ROWS && !any; y++)
			any = p->prev_hash[y] != p->cur_hash[y];
		if (any) {
			damage_find_scroll(p->prev_hash, p->cur_hash, FLOOR_ROWS, &full, &region);
			if (full.shift && full.gain * 2 >= region.gain)
				region = full;
			damage_apply_scroll(p->prev, FLOOR_COLS, region.top, region.bottom,
					    region.shift);
			p->rows_moved += (unsigned)abs(region.shift);
		}
		for (unsigned y = 0; y < FLOOR_ROWS; y++) {
			size_t o = (size_t)y * FLOOR_COLS;
			unsigned n =
			    damage_row_runs(p->prev + o, p->cur + o, FLOOR_COLS, 2, p->runs);

			for (unsigned i = 0; i < n; i++)
				p->cells_damaged += p->runs[i].end - p->runs[i].start;
		}
	} else
		p->cells_damaged += (uint64_t)FLOOR_COLS * FLOOR_ROWS;
	tmp = p->prev;
	p->prev = p->cur;
	p->cur = tmp;
	p->prev_valid = true;
}

static void pipeline_frame(struct floor_pipeline *p)
{
	double t0 = cpu_now();

	if (p->stage == STAGE_DETECT)
		detect_frame(p);
	else
		render_frame(p->render, p->screen);
	p->frame_sec += cpu_now() - t0;
	p->frames++;
}

/* One pass over the stream in reads of read_size; a frame after the read
 * that crosses every multiple of frame_bytes (counted over all passes).
 * Never inlined: a profile collects in it alone (callgrind
 * --toggle-collect=pipeline_pass, README.md). */
__attribute__((noinline)) static void pipeline_pass(struct floor_pipeline *p,
						    const struct floor_stream *s, size_t read_size,
						    size_t frame_bytes, uint64_t *pos)
{
	for (size_t off = 0; off < s->len;) {
		size_t n = s->len - off < read_size ? s->len - off : read_size;

		if (p->stage == STAGE_TSM)
			tsm_vte_input(p->vte, s->data + off, n);
		else
			stream_feed(p->stream, s->data + off, n);
		off += n;
		if (p->stage >= STAGE_DETECT && (*pos + n) / frame_bytes != *pos / frame_bytes)
			pipeline_frame(p);
		*pos += n;
	}
}

struct floor_result {
	double mbps;		/* best run */
	double frame_usec;	/* CPU time per frame in the best run */
	uint64_t frames;	/* in the best run */
	uint64_t cells_drawn;	/* (d): over all runs */
	uint64_t cells_damaged; /* (c): over all runs */
};

/* One run of a stage: --passes passes; its CPU seconds. */
static double pipeline_run(struct floor_pipeline *p, const struct floor_stream *s,
			   const struct floor_options *o, size_t frame_bytes)
{
	double t0 = cpu_now();

	for (unsigned i = 0; i < o->passes; i++)
		pipeline_pass(p, s, o->read_size, frame_bytes, &p->pos);
	return cpu_now() - t0;
}

/* The selected stages on one stream. The frame size comes from a first run
 * of (a) alone (unless *frame_bytes is set); then every run runs each stage
 * in turn, so that the host's load of the moment weighs on all of them
 * alike, and each stage's best run counts. */
static int measure_stream(const struct floor_stream *s, const struct floor_options *o,
			  const char *font_path, size_t *frame_bytes, struct floor_result *res,
			  bool *ran)
{
	struct floor_pipeline p[_STAGE_MAX];
	double best[_STAGE_MAX];
	int r = 0;

	memset(p, 0, sizeof(p));
	if (!*frame_bytes) {
		r = pipeline_init(&p[STAGE_TSM], STAGE_TSM, font_path);
		if (r < 0)
			goto out;
		*frame_bytes =
		    (size_t)((double)s->len * o->passes / pipeline_run(&p[STAGE_TSM], s, o, 1) *
			     FLOOR_FRAME_USEC / 1e6) +
		    1;
		pipeline_fini(&p[STAGE_TSM]);
		memset(&p[STAGE_TSM], 0, sizeof(p[STAGE_TSM]));
	}
	for (unsigned st = 0; st < _STAGE_MAX; st++) {
		ran[st] = st == STAGE_TSM || (o->stages & (1u << st));
		best[st] = -1;
		if (!ran[st])
			continue;
		r = pipeline_init(&p[st], st, font_path);
		if (r < 0) {
			fprintf(stderr, "%s, stage %s: %s\n", s->name, stage_names[st],
				strerror(-r));
			goto out;
		}
	}
	for (unsigned run = 0; run < o->runs; run++)
		for (unsigned st = 0; st < _STAGE_MAX; st++) {
			uint64_t frames = p[st].frames;
			double frame_sec = p[st].frame_sec, t;

			if (!ran[st])
				continue;
			t = pipeline_run(&p[st], s, o, *frame_bytes);
			if (best[st] >= 0 && t >= best[st])
				continue;
			best[st] = t;
			res[st].mbps = t > 0 ? (double)s->len * o->passes / t / 1e6 : 0;
			res[st].frames = p[st].frames - frames;
			res[st].frame_usec = res[st].frames ? (p[st].frame_sec - frame_sec) * 1e6 /
								  (double)res[st].frames
							    : 0;
		}
	for (unsigned st = 0; st < _STAGE_MAX; st++) {
		res[st].cells_damaged = p[st].cells_damaged;
		if (p[st].render)
			res[st].cells_drawn = render_get_stats(p[st].render)->cells_drawn;
	}
out:
	for (unsigned st = 0; st < _STAGE_MAX; st++)
		pipeline_fini(&p[st]);
	return r;
}

/* ---- the echo ------------------------------------------------------------ */

/* A screen of coloured text, rows - 1 lines and a prompt: what an echo
 * draws over. */
static void echo_fill(struct floor_pipeline *p)
{
	struct floor_stream s = {0};

	for (unsigned y = 0; y + 1 < FLOOR_ROWS; y++) {
		stream_putf(&s, "\033[3%um", y % 8);
		stream_put_word(&s, FLOOR_COLS - 1);
		stream_put(&s, "\033[m\r\n", 5);
	}
	stream_put(&s, "$ ", 2);
	stream_feed(p->stream, s.data, s.len);
	free(s.data);
}

/* The keys' echo: each a character written at the prompt and a frame
 * drawn. Never inlined: callgrind counts it alone (--toggle-collect=
 * echo_keys, README.md). */
__attribute__((noinline)) static void echo_keys(struct floor_pipeline *p, unsigned keys)
{
	for (unsigned i = 0; i < keys; i++) {
		char ch = (char)('a' + i % 26);

		if (i > 0 && i % (FLOOR_COLS - 3) == 0)
			stream_feed(p->stream, "\r\033[K$ ", 6);
		stream_feed(p->stream, &ch, 1);
		pipeline_frame(p);
	}
}

/* --echo: per render stage, a full screen drawn once, then `keys` echoes;
 * CPU time and cells drawn per echo. */
static int measure_echo(const struct floor_options *o, const char *font_path)
{
	printf("consoled echo: %ux%u grid, a screen of text, then %u keys echoed, a frame each, "
	       "best of %u runs\n",
	       FLOOR_COLS, FLOOR_ROWS, o->echo, o->runs);
	printf("%-8s %12s %14s\n", "stage", "us per echo", "cells per echo");
	for (unsigned st = STAGE_RENDER8; st < _STAGE_MAX; st++) {
		struct floor_pipeline p;
		double best = -1;
		uint64_t cells = 0;
		int r;

		if (!(o->stages & (1u << st)))
			continue;
		for (unsigned run = 0; run < o->runs; run++) {
			uint64_t drawn;
			double t;

			r = pipeline_init(&p, st, font_path);
			if (r < 0) {
				fprintf(stderr, "echo, stage %s: %s\n", stage_names[st],
					strerror(-r));
				pipeline_fini(&p);
				return r;
			}
			echo_fill(&p);
			pipeline_frame(&p);
			drawn = render_get_stats(p.render)->cells_drawn;
			t = cpu_now();
			echo_keys(&p, o->echo);
			t = cpu_now() - t;
			cells = render_get_stats(p.render)->cells_drawn - drawn;
			pipeline_fini(&p);
			if (best < 0 || t < best)
				best = t;
		}
		printf("%-8s %12.1f %14.1f\n", stage_names[st], best * 1e6 / o->echo,
		       (double)cells / o->echo);
	}
	return 0;
}

/* ---- a pause's work -------------------------------------------------------- */

enum pause_work { PAUSE_MIRROR, PAUSE_MIRROR_ANEW, PAUSE_SNAPSHOT, _PAUSE_MAX };

static const char *const pause_names[_PAUSE_MAX] = {"mirror", "mirror-anew", "snapshot"};

struct pause_state {
	struct vcs_buf b[3]; /* the mirror the VT holds, the next, its changes */
	struct snapshot *snap;
};

/* The keys, each a character written at the prompt and then the pause's
 * work; the mirrors' bytes written (the changes to the last one) in all.
 * Never inlined: callgrind counts it alone (--toggle-collect=pause_keys,
 * README.md). */
__attribute__((noinline)) static int64_t pause_keys(struct floor_pipeline *p, unsigned keys,
						    enum pause_work work, struct pause_state *ps)
{
	struct vcs_source src = {p->screen, p->table};
	struct vcs_buf *b = ps->b;
	int64_t bytes = 0;
	int r = 0;

	vcs_test_draw_only = work == PAUSE_MIRROR_ANEW;
	for (unsigned i = 0; i < keys; i++) {
		char ch = (char)('a' + i % 26);
		struct vcs_buf held;

		if (i > 0 && i % (FLOOR_COLS - 3) == 0)
			stream_feed(p->stream, "\r\033[K$ ", 6);
		stream_feed(p->stream, &ch, 1);
		if (work == PAUSE_SNAPSHOT) {
			r = r < 0 ? r : snapshot_update(ps->snap, p->screen, p->stream, p->table);
			continue;
		}
		vcs_encode_after(&src, NULL, NULL, FLOOR_COLS, FLOOR_ROWS,
				 work == PAUSE_MIRROR ? &b[0] : NULL, &b[1]);
		vcs_encode_changes(&b[0], &b[1], &b[2]);
		bytes += (int64_t)b[2].len;
		held = b[0];
		b[0] = b[1];
		b[1] = held;
	}
	vcs_test_draw_only = false;
	return r < 0 ? r : bytes;
}

/* --pause: a full screen written once (mirrored, snapshotted), then `keys`
 * echoes, each followed by one kind of a pause's work; CPU time per key
 * and the mirror's bytes per key. Fails (the smoke run's check) when a
 * snapshot update fails or the mirrors of the keys wrote nothing. */
static int measure_pause(const struct floor_options *o, const char *font_path)
{
	printf("consoled pause: %ux%u grid, a screen of text, then %u keys echoed, each "
	       "followed by a pause's work, best of %u runs\n",
	       FLOOR_COLS, FLOOR_ROWS, o->pause, o->runs);
	printf("%-12s %10s %14s\n", "work", "us per key", "bytes per key");
	for (unsigned w = 0; w < _PAUSE_MAX; w++) {
		double best = -1;
		int64_t bytes = 0;

		for (unsigned run = 0; run < o->runs; run++) {
			struct floor_pipeline p;
			struct pause_state ps = {0};
			double t;
			int r = pipeline_init(&p, STAGE_FILTER, font_path);

			if (r >= 0 && w == PAUSE_SNAPSHOT) {
				r = snapshot_new(FLOOR_SB, &ps.snap);
				if (r >= 0) {
					echo_fill(&p);
					r = snapshot_update(ps.snap, p.screen, p.stream, p.table);
				}
			}
			if (r < 0) {
				fprintf(stderr, "pause, %s: %s\n", pause_names[w], strerror(-r));
				snapshot_free(ps.snap);
				pipeline_fini(&p);
				return r;
			}
			if (w != PAUSE_SNAPSHOT) {
				echo_fill(&p);
				vcs_encode(&(struct vcs_source){p.screen, p.table}, FLOOR_COLS,
					   FLOOR_ROWS, &ps.b[0]);
			}
			t = cpu_now();
			bytes = pause_keys(&p, o->pause, (enum pause_work)w, &ps);
			t = cpu_now() - t;
			for (unsigned i = 0; i < 3; i++)
				vcs_buf_fini(&ps.b[i]);
			snapshot_free(ps.snap);
			pipeline_fini(&p);
			if (bytes < 0 || (w != PAUSE_SNAPSHOT && bytes == 0)) {
				fprintf(stderr, "pause, %s: %s\n", pause_names[w],
					bytes < 0 ? strerror((int)-bytes)
						  : "the mirrors wrote nothing");
				return bytes < 0 ? (int)bytes : -EIO;
			}
			if (best < 0 || t < best)
				best = t;
		}
		printf("%-12s %10.1f %14.1f\n", pause_names[w], best * 1e6 / o->pause,
		       (double)bytes / o->pause);
	}
	return 0;
}

/* ---- main ---------------------------------------------------------------- */

static void print_figure(bool ran, double v, int width)
{
	if (ran)
		printf(" %*.1f", width, v);
	else
		printf(" %*s", width, "-");
}

static void usage(void)
{
	printf("floor [--lines-file FILE] [--size BYTES] [--read BYTES] [--frame-bytes BYTES]\n"
	       "      [--passes N] [--runs N] [--stages a,b,c,d8,d16,d32] [--stream NAME] "
	       "[--smoke]\n"
	       "      [--grid COLSxROWS] [--echo KEYS] [--pause KEYS]\n");
}

static int parse_stages(const char *arg, unsigned *ret)
{
	static const char *const keys[_STAGE_MAX] = {"a", "b", "c", "d8", "d16", "d32"};
	char *copy = strdup(arg), *save = NULL;
	unsigned stages = 0;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned i;

		for (i = 0; i < _STAGE_MAX; i++)
			if (strcmp(t, keys[i]) == 0 || strcmp(t, stage_names[i]) == 0)
				break;
		if (i == _STAGE_MAX) {
			free(copy);
			return -EINVAL;
		}
		stages |= 1u << i;
	}
	free(copy);
	*ret = stages;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"lines-file", required_argument, NULL, 'l'},
	    {"size", required_argument, NULL, 's'},
	    {"read", required_argument, NULL, 'r'},
	    {"frame-bytes", required_argument, NULL, 'f'},
	    {"passes", required_argument, NULL, 'p'},
	    {"runs", required_argument, NULL, 'n'},
	    {"stages", required_argument, NULL, 'S'},
	    {"stream", required_argument, NULL, 'o'},
	    {"smoke", no_argument, NULL, 'k'},
	    {"grid", required_argument, NULL, 'g'},
	    {"echo", required_argument, NULL, 'e'},
	    {"pause", required_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct floor_options o = {
	    .stream_size = 2 * 1024 * 1024,
	    .read_size = 4096,
	    .passes = 8,
	    .runs = 3,
	    .stages = (1u << _STAGE_MAX) - 1,
	};
	struct floor_stream streams[5] = {{.name = "lines"},
					  {.name = "yes"},
					  {.name = "colour"},
					  {.name = "cjk"},
					  {.name = "combining"}};
	void (*const gen[5])(struct floor_stream *, size_t) = {NULL, gen_yes, gen_colour, gen_cjk,
							       gen_combining};
	char font_path[64];
	int c, failed = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) >= 0) {
		switch (c) {
		case 'l':
			o.lines_file = optarg;
			break;
		case 's':
			o.stream_size = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			o.read_size = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			o.frame_bytes = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			o.passes = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			o.runs = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			if (parse_stages(optarg, &o.stages) < 0) {
				fprintf(stderr, "bad --stages: %s\n", optarg);
				return 2;
			}
			break;
		case 'o':
			o.only_stream = optarg;
			break;
		case 'k':
			o.smoke = true;
			break;
		case 'g':
			if (sscanf(optarg, "%ux%u", &floor_cols, &floor_rows) != 2 ||
			    floor_cols < 8 || floor_rows < 2 || floor_cols > 1024 ||
			    floor_rows > 1024) {
				fprintf(stderr, "bad --grid: %s\n", optarg);
				return 2;
			}
			break;
		case 'e':
			o.echo = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'P':
			o.pause = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	if (o.smoke) {
		o.stream_size = 16 * 1024;
		o.read_size = 512;
		o.frame_bytes = 2048;
		o.passes = o.runs = 1;
	}
	if (o.read_size == 0 || o.passes == 0 || o.runs == 0 || o.stream_size == 0) {
		usage();
		return 2;
	}
	log_set_max_level(LOG_WARNING);
	if (font_path_make(font_path, sizeof(font_path)) < 0) {
		fprintf(stderr, "cannot write the font to /tmp\n");
		return 1;
	}

	rng_state = 0x9e3779b97f4a7c15ull;
	if (o.pause) {
		failed = measure_pause(&o, font_path) < 0;
		unlink(font_path);
		return failed;
	}
	if (o.echo) {
		failed = measure_echo(&o, font_path) < 0;
		unlink(font_path);
		return failed;
	}
	for (size_t i = 0; i < 5; i++) {
		if (gen[i])
			gen[i](&streams[i], o.stream_size);
		else if (o.lines_file && load_file(&streams[i], o.lines_file) < 0) {
			fprintf(stderr, "cannot read %s: %m\n", o.lines_file);
			unlink(font_path);
			return 1;
		}
	}

	printf("consoled floor: %ux%u grid, reads of %zu bytes, frames every 16.7 ms of (a)'s "
	       "rate%s, best of %u runs x %u passes, CPU time\n",
	       FLOOR_COLS, FLOOR_ROWS, o.read_size,
	       o.frame_bytes ? " (fixed by --frame-bytes)" : "", o.runs, o.passes);
	printf("%-10s %9s %8s %8s %8s %8s %8s %8s %6s %6s %7s %9s %9s %9s %9s\n", "stream", "bytes",
	       "a MB/s", "b MB/s", "c MB/s", "d8 MB/s", "d16 MB/s", "d32 MB/s", "c/a", "frames",
	       "F KiB", "c us/fr", "d8 us/fr", "d16 us/fr", "d32 us/fr");
	for (size_t i = 0; i < 5; i++) {
		const struct floor_stream *s = &streams[i];
		struct floor_result res[_STAGE_MAX] = {0};
		size_t frame_bytes = o.frame_bytes;
		bool ran[_STAGE_MAX] = {false};

		if (!s->len || (o.only_stream && strcmp(o.only_stream, s->name) != 0))
			continue;
		if (measure_stream(s, &o, font_path, &frame_bytes, res, ran) < 0) {
			failed = 1;
			continue;
		}
		printf("%-10s %9zu", s->name, s->len);
		for (unsigned st = 0; st < _STAGE_MAX; st++)
			print_figure(ran[st], res[st].mbps, 8);
		if (ran[STAGE_DETECT] && res[STAGE_TSM].mbps > 0)
			printf(" %6.2f", res[STAGE_DETECT].mbps / res[STAGE_TSM].mbps);
		else
			printf(" %6s", "-");
		printf(" %6llu %7.1f", (unsigned long long)res[STAGE_DETECT].frames,
		       (double)frame_bytes / 1024);
		for (unsigned st = STAGE_DETECT; st < _STAGE_MAX; st++)
			print_figure(ran[st], res[st].frame_usec, 9);
		printf("\n");

		/* the smoke run's checks: every stage ran and did its work */
		for (unsigned st = STAGE_DETECT; o.smoke && st < _STAGE_MAX; st++) {
			if (!ran[st])
				continue;
			if (res[st].frames < s->len / frame_bytes) {
				fprintf(stderr,
					"%s, %s: %llu frames for %zu bytes in frames of %zu\n",
					s->name, stage_names[st],
					(unsigned long long)res[st].frames, s->len, frame_bytes);
				failed = 1;
			}
			if (st == STAGE_DETECT ? !res[st].cells_damaged : !res[st].cells_drawn) {
				fprintf(stderr, "%s, %s: nothing damaged or drawn\n", s->name,
					stage_names[st]);
				failed = 1;
			}
		}
	}
	/* and a pause's work after a few keys */
	if (o.smoke) {
		o.pause = 20;
		if (measure_pause(&o, font_path) < 0)
			failed = 1;
	}
	for (size_t i = 0; i < 5; i++)
		free(streams[i].data);
	unlink(font_path);
	return failed;
}
