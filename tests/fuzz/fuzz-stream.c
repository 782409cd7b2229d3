/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for what a session writes to its pty: bytes go through
 * the pty stream stage (stream.c) in reads of the sizes the first bytes
 * choose, then libtsm, then the renderer onto a framebuffer in RAM (32 bpp,
 * the built-in font plus a fallback path for characters it lacks). Nothing
 * may crash; every stand-in on the screen must be one the table handed out;
 * and a second terminal fed the same bytes one at a time must show the same
 * characters with the same attributes, cursor, modes and answers (combining
 * marks join their base only within a read, so cells compare by base).
 */
#include <libtsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../daemon/cluster.h"
#include "../../daemon/log.h"
#include "../../daemon/render.h"
#include "../../daemon/stream.h"
#include "../../fonts/font.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLIES_MAX 4096

/* One terminal: libtsm behind the stream stage, and what it answered. */
struct term {
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *table;
	struct stream *stream;
	char replies[REPLIES_MAX];
	size_t n_replies;
	char *dump;
	size_t dump_len, dump_cap;
};

struct target {
	struct fbdev fb;
	struct palette palette;
	struct fontset *fonts;
	struct render *render;
	struct term a, b;
};

static void term_reply(const char *bytes, size_t len, void *data)
{
	struct term *t = data;

	len = len < REPLIES_MAX - t->n_replies ? len : REPLIES_MAX - t->n_replies;
	memcpy(t->replies + t->n_replies, bytes, len);
	t->n_replies += len;
}

static void vte_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	term_reply(u8, len, data);
}

static void term_init(struct term *t, unsigned cols, unsigned rows)
{
	t->n_replies = 0;
	t->dump_len = 0;
	t->table = cluster_table_new();
	if (tsm_screen_new(&t->screen, NULL, NULL) < 0 ||
	    tsm_screen_resize(t->screen, cols, rows) < 0 ||
	    tsm_vte_new(&t->vte, t->screen, vte_write, t, NULL, NULL) < 0)
		abort();
	tsm_screen_set_max_sb(t->screen, 50);
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
	tsm_screen_clear_sb(t->screen); /* libtsm leaks the scrollback otherwise */
	tsm_screen_unref(t->screen);
	cluster_table_free(t->table);
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

	term_init(&t->a, cols, rows);
	term_init(&t->b, cols, rows);
	render_set_clusters(t->render, t->a.table);
	while (i < size) {
		size_t n = size - i < chunk ? size - i : chunk;

		stream_feed(t->a.stream, (const char *)data + i, n);
		i += n;
		/* a frame now and then, as output arrives */
		if ((i / chunk) % 4 == 0)
			render_frame(t->render, t->a.screen);
	}
	for (i = 0; i < size; i++)
		stream_feed(t->b.stream, (const char *)data + i, 1);
	render_frame(t->render, t->a.screen);
	term_dump(&t->a);
	term_dump(&t->b);
	if (t->a.dump_len != t->b.dump_len || memcmp(t->a.dump, t->b.dump, t->a.dump_len) != 0 ||
	    t->a.n_replies != t->b.n_replies ||
	    memcmp(t->a.replies, t->b.replies, t->a.n_replies) != 0) {
		if (getenv("FUZZ_STREAM_VERBOSE"))
			fprintf(stderr, "in reads of %zu:\n%s\none by one:\n%s\n", chunk, t->a.dump,
				t->b.dump);
		__builtin_trap();
	}
	render_set_clusters(t->render, NULL);
	term_fini(&t->a);
	term_fini(&t->b);
	return 0;
}
