/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for what a session writes to its pty: bytes go through
 * the combining-mark filter (cluster.c), in reads of the sizes the first
 * bytes choose, then libtsm, then the renderer onto a framebuffer in RAM
 * (32 bpp, the built-in font plus a fallback path for characters it lacks).
 * Nothing may crash; the filter never writes more than it promises, and
 * every stand-in on the screen must be one the table handed out.
 */
#include <libtsm.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../daemon/cluster.h"
#include "../../daemon/log.h"
#include "../../daemon/render.h"
#include "../../fonts/font.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct target {
	struct fbdev fb;
	struct palette palette;
	struct fontset *fonts;
	struct render *render;
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_filter filter;
};

static void vte_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	(void)u8;
	(void)len;
	(void)data;
}

static int check_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
		      unsigned width, unsigned posx, unsigned posy,
		      const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct target *t = data;
	size_t n;

	(void)con;
	(void)id;
	(void)width;
	(void)posx;
	(void)posy;
	(void)attr;
	(void)age;
	if (len > 0 && ch[0] >= CLUSTER_FIRST && ch[0] <= CLUSTER_LAST &&
	    !cluster_lookup(t->filter.table, ch[0], &n))
		__builtin_trap();
	return 0;
}

static struct target target;

/* fontconfig keeps offsets, not pointers, to what its patterns hold: what
 * is alive at exit looks leaked unless the fontset is freed first. */
static void target_free(void)
{
	render_free(target.render);
	fontset_free(target.fonts);
	free(target.fb.map);
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
	size_t chunk, i = 0;
	char *out;

	if (size < 1)
		return 0;
	/* the first byte picks the read size: 1 to 256 bytes */
	chunk = (size_t)data[0] + 1;
	data++;
	size--;

	t->filter = (struct cluster_filter){.table = cluster_table_new()};
	if (tsm_screen_new(&t->screen, NULL, NULL) < 0 ||
	    tsm_screen_resize(t->screen, render_cols(t->render), render_rows(t->render)) < 0 ||
	    tsm_vte_new(&t->vte, t->screen, vte_write, NULL, NULL, NULL) < 0)
		abort();
	tsm_screen_set_max_sb(t->screen, 50);
	render_set_clusters(t->render, t->filter.table);
	out = malloc(CLUSTER_FILTER_OUT(chunk));
	while (i < size) {
		size_t n = size - i < chunk ? size - i : chunk;
		size_t m = cluster_filter_feed(&t->filter, (const char *)data + i, n, out);

		if (m > CLUSTER_FILTER_OUT(n))
			__builtin_trap();
		tsm_vte_input(t->vte, out, m);
		i += n;
		/* a frame now and then, as output arrives */
		if ((i / chunk) % 4 == 0)
			render_frame(t->render, t->screen);
	}
	render_frame(t->render, t->screen);
	tsm_screen_draw(t->screen, check_cell, t);
	free(out);
	render_set_clusters(t->render, NULL);
	tsm_vte_unref(t->vte);
	tsm_screen_clear_sb(t->screen); /* libtsm leaks the scrollback otherwise */
	tsm_screen_unref(t->screen);
	cluster_filter_fini(&t->filter);
	cluster_table_free(t->filter.table);
	return 0;
}
