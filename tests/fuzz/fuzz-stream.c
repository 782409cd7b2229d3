/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for what a session writes to its pty: bytes go through
 * the pty stream stage (stream.c) in reads of the sizes the first byte
 * chooses, then libtsm, then the renderer onto a framebuffer in RAM (32 bpp,
 * the built-in font plus a fallback path for characters it lacks). Every
 * terminal has the Linux console's palette, given to libtsm and to the stage
 * as term.c gives them, so the stage prints plain text on the screen itself
 * (stream_direct()), and an image store of 256 KiB (two images of the whole
 * text area: sixel data placed, the budget dropping images). Nothing may
 * crash; every stand-in on the screen must be one the table handed out; and
 * two more terminals fed the same bytes must end alike:
 *  - one printing everything through libtsm's vte (stream_set_direct()
 *    off), in the same reads: every cell with its width, whole pen and age,
 *    in the view and through the scrollback, the cursor, the screen's flags
 *    and the answers (and each OSC 52 handed on) must be the same (as test-stream.c's
 * test_direct_same compares them);
 *  - one fed a byte at a time: the same characters with the same
 *    attributes, cursor, modes and answers (combining marks join their base
 *    only within a read, so cells compare by base).
 */
#include <libtsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../daemon/terminal/cluster.h"
#include "../../daemon/terminal/image.h"
#include "../../daemon/util/log.h"
#include "../../daemon/screen/render.h"
#include "../../daemon/terminal/stream.h"
#include "../../fonts/font.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLIES_MAX 4096

/* One terminal: libtsm behind the stream stage, and what it answered. */
struct term {
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *table;
	struct image_store *images;
	struct stream *stream;
	char replies[REPLIES_MAX];
	size_t n_replies;
	/* every OSC 52 handed on, apart: the stage hands it on when it ends,
	 * libtsm answers what came before when it gets it, so their order
	 * depends on when the stage's output went to libtsm */
	char osc52s[REPLIES_MAX];
	size_t n_osc52s;
	char *dump;
	size_t dump_len, dump_cap;
};

struct target {
	struct fbdev fb;
	struct palette palette;
	struct fontset *fonts;
	struct render *render;
	struct term a, b, c; /* direct; through the vte; a byte at a time */
};

static void append(char *buf, size_t *n, const char *bytes, size_t len)
{
	len = len < REPLIES_MAX - *n ? len : REPLIES_MAX - *n;
	memcpy(buf + *n, bytes, len);
	*n += len;
}

static void term_reply(const char *bytes, size_t len, void *data)
{
	struct term *t = data;

	append(t->replies, &t->n_replies, bytes, len);
}

static void term_osc52(const char *args, size_t len, void *data)
{
	struct term *t = data;

	append(t->osc52s, &t->n_osc52s, args, len);
	append(t->osc52s, &t->n_osc52s, "\n", 1);
}

static void vte_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	term_reply(u8, len, data);
}

static void term_init(struct term *t, unsigned cols, unsigned rows, const struct palette *palette,
		      bool direct)
{
	t->n_replies = t->n_osc52s = 0;
	t->dump_len = 0;
	t->table = cluster_table_new();
	t->images = image_store_new(256 * 1024);
	if (tsm_screen_new(&t->screen, NULL, NULL) < 0 ||
	    tsm_screen_resize(t->screen, cols, rows) < 0 ||
	    tsm_vte_new(&t->vte, t->screen, vte_write, t, NULL, NULL) < 0 ||
	    stream_vte_set_palette(t->vte, palette) < 0)
		abort();
	tsm_screen_set_max_sb(t->screen, 50);
	t->stream = stream_new(&(struct stream_config){.vte = t->vte,
						       .screen = t->screen,
						       .table = t->table,
						       .images = t->images,
						       .palette = palette,
						       .reply = term_reply,
						       .osc52 = term_osc52,
						       .userdata = t});
	stream_set_direct(t->stream, direct);
	stream_set_cell_size(t->stream, 8, 16);
}

static void term_fini(struct term *t)
{
	stream_free(t->stream);
	tsm_vte_unref(t->vte);
	tsm_screen_clear_sb(t->screen); /* libtsm leaks the scrollback otherwise */
	tsm_screen_unref(t->screen);
	cluster_table_free(t->table);
	image_store_free(t->images);
}

static void dump_append(struct term *t, const char *str)
{
	size_t len = strlen(str);

	if (t->dump_len + len + 1 > t->dump_cap) {
		t->dump_cap = 2 * t->dump_cap + len + 1;
		t->dump = realloc(t->dump, t->dump_cap);
		if (!t->dump)
			abort();
	}
	memcpy(t->dump + t->dump_len, str, len + 1);
	t->dump_len += len;
}

/* Every cell as base code point, stand-in flags and attributes; a stand-in
 * nobody handed out traps. */
static int dump_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
		     unsigned width, unsigned posx, unsigned posy,
		     const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct term *t = data;
	uint32_t base = len > 0 ? ch[0] : ' ';
	unsigned flags = 0;
	size_t n;
	char buf[96];

	(void)con;
	(void)id;
	(void)age;
	if (base >= CLUSTER_FIRST && base <= CLUSTER_LAST) {
		const uint32_t *seq = cluster_lookup(t->table, base, &n, &flags);

		if (!seq)
			__builtin_trap();
		base = seq[0];
	}
	snprintf(buf, sizeof(buf), "%u,%u:%x/%u/%u %d %d %u %u %u %u%u%u%u%u%u;", posx, posy, base,
		 flags, width, attr->fccode, attr->bccode, attr->fr, attr->fg, attr->fb, attr->bold,
		 attr->underline, attr->italic, attr->inverse, attr->blink, attr->protect);
	dump_append(t, buf);
	return 0;
}

static void term_dump(struct term *t)
{
	char buf[64];

	t->dump_len = 0;
	tsm_screen_draw(t->screen, dump_cell, t);
	snprintf(buf, sizeof(buf), "cursor %u,%u flags %x", tsm_screen_get_cursor_x(t->screen),
		 tsm_screen_get_cursor_y(t->screen), tsm_screen_get_flags(t->screen));
	dump_append(t, buf);
}

/* Every cell as libtsm holds it: code point, length, width, the whole pen
 * (colour codes and both colours' rgb, which libtsm takes from its palette
 * or the stage from the one it knows) and the age. */
static int full_dump_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
			  unsigned width, unsigned posx, unsigned posy,
			  const struct tsm_screen_attr *a, tsm_age_t age, void *data)
{
	char buf[128];

	(void)con;
	(void)id;
	snprintf(buf, sizeof(buf), "%u,%u:%x/%zu w%u %d %d %u.%u.%u %u.%u.%u %u%u%u%u%u%u a%u;",
		 posx, posy, len ? ch[0] : 0, len, width, a->fccode, a->bccode, a->fr, a->fg, a->fb,
		 a->br, a->bg, a->bb, a->bold, a->italic, a->underline, a->inverse, a->protect,
		 a->blink, (unsigned)age);
	dump_append(data, buf);
	return 0;
}

/* The view and the scrollback cell by cell, the cursor and the flags. */
static void term_full_dump(struct term *t)
{
	char buf[64];

	t->dump_len = 0;
	tsm_screen_draw(t->screen, full_dump_cell, t);
	tsm_screen_sb_up(t->screen, 1000);
	tsm_screen_draw(t->screen, full_dump_cell, t);
	tsm_screen_sb_reset(t->screen);
	snprintf(buf, sizeof(buf), "cursor %u,%u flags %x", tsm_screen_get_cursor_x(t->screen),
		 tsm_screen_get_cursor_y(t->screen), tsm_screen_get_flags(t->screen));
	dump_append(t, buf);
}

static int draw_nothing(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
			unsigned width, unsigned posx, unsigned posy,
			const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	(void)con, (void)id, (void)ch, (void)len, (void)width, (void)posx, (void)posy, (void)attr,
	    (void)age, (void)data;
	return 0;
}

static bool terms_alike(struct term *x, struct term *y)
{
	return x->dump_len == y->dump_len && memcmp(x->dump, y->dump, x->dump_len) == 0 &&
	       x->n_replies == y->n_replies && memcmp(x->replies, y->replies, x->n_replies) == 0 &&
	       x->n_osc52s == y->n_osc52s && memcmp(x->osc52s, y->osc52s, x->n_osc52s) == 0;
}

static void terms_differ(const char *what, size_t chunk, struct term *x, struct term *y)
{
	if (getenv("FUZZ_STREAM_VERBOSE")) {
		size_t d = 0;

		while (d < x->dump_len && d < y->dump_len && x->dump[d] == y->dump[d])
			d++;
		fprintf(stderr, "%s, in reads of %zu: differ at %zu:\n  %.160s\n  %.160s\n", what,
			chunk, d, x->dump + (d > 60 ? d - 60 : 0), y->dump + (d > 60 ? d - 60 : 0));
		fprintf(stderr, "replies (%zu and %zu bytes):\n  ", x->n_replies, y->n_replies);
		for (size_t i = 0; i < x->n_replies; i++)
			fprintf(stderr, "%02x", (unsigned char)x->replies[i]);
		fprintf(stderr, "\n  ");
		for (size_t i = 0; i < y->n_replies; i++)
			fprintf(stderr, "%02x", (unsigned char)y->replies[i]);
		fprintf(stderr, "\nOSC 52:\n%.*s---\n%.*s", (int)x->n_osc52s, x->osc52s,
			(int)y->n_osc52s, y->osc52s);
	}
	__builtin_trap();
}

static struct target target;

/* fontconfig keeps offsets, not pointers, to what its patterns hold: what
 * is alive at exit looks leaked unless the fontset is freed first. */
static void target_free(void)
{
	render_free(target.render);
	fontset_free(target.fonts);
	free(target.fb.map);
	free(target.a.dump);
	free(target.b.dump);
	free(target.c.dump);
}

/* Set up once: the font file and fontconfig are the slow part. */
static struct target *target_get(void)
{
	static bool ready;
	char path[] = "/tmp/fuzz-stream-XXXXXX";
	int fd;

	if (ready)
		return &target;
	log_set_max_level(LOG_ERR);
	target.fb.fix.type = FB_TYPE_PACKED_PIXELS;
	target.fb.fix.visual = FB_VISUAL_TRUECOLOR;
	target.fb.var.xres = target.fb.var.xres_virtual = 320;
	target.fb.var.yres = target.fb.var.yres_virtual = 96;
	target.fb.var.bits_per_pixel = 32;
	target.fb.var.red = (struct fb_bitfield){16, 8, 0};
	target.fb.var.green = (struct fb_bitfield){8, 8, 0};
	target.fb.var.blue = (struct fb_bitfield){0, 8, 0};
	if (pixel_format_from_fb(&target.fb.fix, &target.fb.var, &target.fb.format) < 0)
		abort();
	target.fb.line_length = 320 * 4;
	target.fb.map_size = (size_t)target.fb.line_length * 96;
	target.fb.map = calloc(1, target.fb.map_size);
	palette_init(&target.palette, PALETTE_LINUX, NULL);
	fd = mkstemp(path);
	if (fd < 0 || write(fd, font_builtin_psf, font_builtin_psf_size) < 0)
		abort();
	close(fd);
	if (fontset_new(&(struct fontset_config){.file = path}, &target.fonts) < 0)
		abort();
	unlink(path);
	if (render_new(&target.fb, target.fonts, &target.palette, &target.render) < 0)
		abort();
	atexit(target_free);
	ready = true;
	return &target;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct target *t = target_get();
	unsigned cols = render_cols(t->render), rows = render_rows(t->render);
	size_t chunk, i = 0;

	if (size < 1)
		return 0;
	/* the first byte picks the read size: 1 to 256 bytes */
	chunk = (size_t)data[0] + 1;
	data++;
	size--;

	term_init(&t->a, cols, rows, &t->palette, true);
	term_init(&t->b, cols, rows, &t->palette, false);
	term_init(&t->c, cols, rows, &t->palette, true);
	render_set_clusters(t->render, t->a.table);
	/* the images' tiles drawn too (a's store, as seat.c sets it) */
	render_set_images(t->render, t->a.images);
	while (i < size) {
		size_t n = size - i < chunk ? size - i : chunk;

		stream_feed(t->a.stream, (const char *)data + i, n);
		stream_feed(t->b.stream, (const char *)data + i, n);
		i += n;
		/* a frame now and then, as output arrives (b's screen is drawn
		 * too: a draw may change the ages libtsm reports) */
		if ((i / chunk) % 4 == 0) {
			render_frame(t->render, t->a.screen);
			tsm_screen_draw(t->b.screen, draw_nothing, NULL);
		}
	}
	for (i = 0; i < size; i++)
		stream_feed(t->c.stream, (const char *)data + i, 1);
	render_frame(t->render, t->a.screen);
	tsm_screen_draw(t->b.screen, draw_nothing, NULL);
	/* printed directly or through the vte: the same screen */
	term_full_dump(&t->a);
	term_full_dump(&t->b);
	if (!terms_alike(&t->a, &t->b))
		terms_differ("printed directly and through the vte", chunk, &t->a, &t->b);
	/* in reads or a byte at a time: the same text */
	term_dump(&t->a);
	term_dump(&t->c);
	if (!terms_alike(&t->a, &t->c))
		terms_differ("in reads and one by one", chunk, &t->a, &t->c);
	render_set_clusters(t->render, NULL);
	render_set_images(t->render, NULL);
	term_fini(&t->a);
	term_fini(&t->b);
	term_fini(&t->c);
	return 0;
}
