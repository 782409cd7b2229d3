/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "render"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "render.h"
#include "util/util.h"

/* Direct-mapped cache of expanded glyphs; a console screen uses far fewer
 * (glyph, fg, bg) triples than this at a time. */
#define GLYPH_CACHE_SLOTS 2048u

struct glyph_slot {
	bool used;
	struct cell key;
};

struct render {
	struct fbdev *fb;
	const struct font *font;
	const struct palette *palette;
	unsigned cols, rows;
	unsigned cell_bytes; /* bytes of one glyph line: font width * bytes per pixel */

	struct cell *prev, *cur;
	bool prev_valid;
	struct damage_run *runs;

	struct glyph_slot *slots;
	uint8_t *glyph_pixels; /* GLYPH_CACHE_SLOTS blocks of cell_bytes * height */
	uint8_t *line;	       /* one pixel line of the screen */
	uint8_t *rowbuf;       /* the pixels of one text row */

	struct render_stats stats;
};

int render_new(struct fbdev *fb, const struct font *font, const struct palette *palette,
	       struct render **ret)
{
	struct render *r;
	size_t block;

	if (fb->var.xres < font->width || fb->var.yres < font->height)
		return log_error_errno(EINVAL, "The font (%ux%u) is larger than the screen (%ux%u)",
				       font->width, font->height, fb->var.xres, fb->var.yres);

	r = xcalloc(1, sizeof(*r));
	r->fb = fb;
	r->font = font;
	r->palette = palette;
	r->cols = fb->var.xres / font->width;
	r->rows = fb->var.yres / font->height;
	r->cell_bytes = font->width * fb->format.bytes_per_pixel;
	r->prev = xcalloc((size_t)r->cols * r->rows, sizeof(struct cell));
	r->cur = xcalloc((size_t)r->cols * r->rows, sizeof(struct cell));
	r->runs = xcalloc(r->cols / 2 + 1, sizeof(struct damage_run));
	r->slots = xcalloc(GLYPH_CACHE_SLOTS, sizeof(struct glyph_slot));
	block = (size_t)r->cell_bytes * font->height;
	r->glyph_pixels = malloc(GLYPH_CACHE_SLOTS * block);
	r->line = malloc((size_t)fb->line_length);
	r->rowbuf = malloc((size_t)r->cols * r->cell_bytes * font->height);
	if (!r->glyph_pixels || !r->line || !r->rowbuf) {
		render_free(r);
		return log_error_errno(ENOMEM, "Failed to allocate the glyph cache: %m");
	}
	log_info("Text grid %ux%u with a %ux%u font", r->cols, r->rows, font->width, font->height);
	*ret = r;
	return 0;
}

void render_free(struct render *r)
{
	if (!r)
		return;
	free(r->prev);
	free(r->cur);
	free(r->runs);
	free(r->slots);
	free(r->glyph_pixels);
	free(r->line);
	free(r->rowbuf);
	free(r);
}

unsigned render_cols(const struct render *r)
{
	return r->cols;
}

unsigned render_rows(const struct render *r)
{
	return r->rows;
}

void render_invalidate(struct render *r)
{
	r->prev_valid = false;
}

const struct render_stats *render_get_stats(const struct render *r)
{
	return &r->stats;
}

static uint32_t color_pixel(const struct pixel_format *pf, const struct palette *palette, int code,
			    uint8_t cr, uint8_t cg, uint8_t cb, bool bold)
{
	if (code >= 0) {
		unsigned idx = (unsigned)code;

		if (idx == TSM_COLOR_FOREGROUND)
			idx = 7;
		else if (idx == TSM_COLOR_BACKGROUND)
			idx = 0;
		if (bold && idx < 8)
			idx += 8;
		return pixel_from_index(pf, palette, idx);
	}
	if (pf->indexed)
		return palette_nearest(palette, (struct rgb){cr, cg, cb});
	return pixel_pack_rgb(pf, (struct rgb){cr, cg, cb});
}

void render_resolve_colors(const struct pixel_format *pf, const struct palette *palette,
			   const struct tsm_screen_attr *attr, uint32_t *ret_fg, uint32_t *ret_bg)
{
	uint32_t fg =
	    color_pixel(pf, palette, attr->fccode, attr->fr, attr->fg, attr->fb, attr->bold);
	uint32_t bg = color_pixel(pf, palette, attr->bccode, attr->br, attr->bg, attr->bb, false);

	if (attr->inverse) {
		uint32_t t = fg;
		fg = bg;
		bg = t;
	}
	*ret_fg = fg;
	*ret_bg = bg;
}

static int render_snapshot_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
				unsigned width, unsigned posx, unsigned posy,
				const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct render *r = data;
	struct cell *c;

	(void)con;
	(void)id;
	(void)width;
	(void)age;
	if (posx >= r->cols || posy >= r->rows)
		return 0;
	c = &r->cur[(size_t)posy * r->cols + posx];
	c->glyph = font_lookup(r->font, len > 0 ? ch[0] : ' ');
	render_resolve_colors(&r->fb->format, r->palette, attr, &c->fg, &c->bg);
	return 0;
}

static uint32_t glyph_hash(const struct cell *c)
{
	uint32_t h = c->glyph * 0x9e3779b1u;
	h ^= c->fg * 0x85ebca6bu;
	h ^= c->bg * 0xc2b2ae35u;
	return (h ^ (h >> 15)) % GLYPH_CACHE_SLOTS;
}

/* Returns the glyph expanded to pixels: height lines of cell_bytes. */
static const uint8_t *render_glyph(struct render *r, const struct cell *c)
{
	uint32_t slot = glyph_hash(c);
	size_t block = (size_t)r->cell_bytes * r->font->height;
	uint8_t *px = r->glyph_pixels + slot * block;
	const uint8_t *bits;
	unsigned bpp = r->fb->format.bytes_per_pixel;

	if (r->slots[slot].used && cell_equal(&r->slots[slot].key, c))
		return px;

	bits = font_glyph(r->font, c->glyph);
	for (unsigned y = 0; y < r->font->height; y++) {
		const uint8_t *row = bits + (size_t)y * r->font->stride;
		uint8_t *dst = px + (size_t)y * r->cell_bytes;

		for (unsigned x = 0; x < r->font->width; x++) {
			bool on = row[x / 8] & (0x80 >> (x % 8));
			pixel_store(dst + (size_t)x * bpp, bpp, on ? c->fg : c->bg);
		}
	}
	r->slots[slot].used = true;
	r->slots[slot].key = *c;
	return px;
}

static void render_run(struct render *r, unsigned row, const struct damage_run *run)
{
	const struct cell *cells = r->cur + (size_t)row * r->cols;
	size_t bytes = (size_t)(run->end - run->start) * r->cell_bytes;
	uint8_t *vis = fbdev_visible(r->fb);

	/* Compose the run in RAM (a cache slot may be reused by a later cell of
	 * the same run), then write each pixel line to VRAM in one piece. */
	for (unsigned x = run->start; x < run->end; x++) {
		const uint8_t *g = render_glyph(r, &cells[x]);
		uint8_t *dst = r->rowbuf + (size_t)(x - run->start) * r->cell_bytes;

		for (unsigned y = 0; y < r->font->height; y++)
			memcpy(dst + y * bytes, g + (size_t)y * r->cell_bytes, r->cell_bytes);
	}
	for (unsigned y = 0; y < r->font->height; y++) {
		uint8_t *dst = vis + ((size_t)row * r->font->height + y) * r->fb->line_length +
			       (size_t)run->start * r->cell_bytes;
		memcpy(dst, r->rowbuf + y * bytes, bytes);
	}
	r->stats.cells_drawn += run->end - run->start;
	r->stats.vram_bytes_written += bytes * r->font->height;
}

static void fill_rect(struct render *r, unsigned x, unsigned y, unsigned w, unsigned h,
		      uint32_t pixel)
{
	unsigned bpp = r->fb->format.bytes_per_pixel;
	uint8_t *vis = fbdev_visible(r->fb);

	if (w == 0 || h == 0)
		return;
	for (unsigned i = 0; i < w; i++)
		pixel_store(r->line + (size_t)i * bpp, bpp, pixel);
	for (unsigned j = 0; j < h; j++)
		memcpy(vis + (size_t)(y + j) * r->fb->line_length + (size_t)x * bpp, r->line,
		       (size_t)w * bpp);
	r->stats.vram_bytes_written += (uint64_t)w * h * bpp;
}

/* The strips right of and below the text grid, in the default background as
 * fbcon clears them. */
static void render_clear_margins(struct render *r)
{
	unsigned tw = r->cols * r->font->width, th = r->rows * r->font->height;
	uint32_t bg = pixel_from_index(&r->fb->format, r->palette, 0);

	fill_rect(r, tw, 0, r->fb->var.xres - tw, th, bg);
	fill_rect(r, 0, th, r->fb->var.xres, r->fb->var.yres - th, bg);
}

void render_frame(struct render *r, struct tsm_screen *screen)
{
	uint64_t start = now_usec();
	struct cell *tmp;

	tsm_screen_draw(screen, render_snapshot_cell, r);

	for (unsigned y = 0; y < r->rows; y++) {
		const struct cell *cur = r->cur + (size_t)y * r->cols;
		unsigned n;

		if (r->prev_valid)
			n = damage_row_runs(r->prev + (size_t)y * r->cols, cur, r->cols, 2,
					    r->runs);
		else {
			r->runs[0] = (struct damage_run){0, r->cols};
			n = 1;
		}
		for (unsigned i = 0; i < n; i++)
			render_run(r, y, &r->runs[i]);
	}
	if (!r->prev_valid)
		render_clear_margins(r);

	tmp = r->prev;
	r->prev = r->cur;
	r->cur = tmp;
	r->prev_valid = true;
	r->stats.frames++;
	r->stats.render_usec += now_usec() - start;
}
