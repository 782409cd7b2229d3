/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Fonts as the renderer sees them. A fontset has one cell size and draws a
 * character cluster (a base character and the combining marks that follow
 * it) as a coverage map over one or two cells: one byte per pixel, 0 is the
 * cell's background, 255 its foreground, values between are blended by the
 * renderer. Providers:
 *
 *  - PSF (psf.c): the kernel's bitmap fonts; coverage is 0 or 255 and the
 *    pixels are fbcon's, bit for bit. No sizes: zoom is not supported.
 *  - FreeType: TTF/OTF (and anything else FreeType reads) at a size in
 *    points and a resolution in dpi; found by name with fontconfig.
 *  - built-in: the PSF compiled into consoled, the last resort.
 *
 * A font file is recognised by its content (PSF magic, else FreeType), never
 * by its name. A cluster whose base character the main font lacks comes from
 * a fallback font that fontconfig finds by charset, rendered at the main
 * font's pixel size on the main font's baseline; with no font for it, a PSF
 * main font shows its own substitute glyph (U+FFFD's, else '?'), as the
 * kernel console does, and a FreeType one a replacement box (a 1-pixel
 * rectangle inset 1 pixel from the cluster's cells): never a blank.
 *
 * Geometry of a FreeType font (test references depend on it):
 *  - FT_Set_Char_Size(face, 0, round(size * 64), dpi, dpi);
 *  - glyphs load hinted (FT_LOAD_DEFAULT | FT_LOAD_TARGET_NORMAL) and render
 *    with FT_RENDER_MODE_NORMAL (8-bit coverage); with `mono` (8 bpp
 *    framebuffers) FT_LOAD_TARGET_MONO and FT_RENDER_MODE_MONO, so coverage
 *    is only ever 0 or 255;
 *  - cell_width = (advance.x of 'M' + 32) >> 6, at least 1;
 *  - ascent = (size->metrics.ascender + 63) >> 6,
 *    descent = (-size->metrics.descender + 63) >> 6,
 *    cell_height = ascent + descent; the baseline is `ascent` rows below
 *    the top of the cell;
 *  - a glyph's bitmap goes at x = bitmap_left, y = ascent - bitmap_top
 *    relative to the top-left of the cluster's first cell; whatever falls
 *    outside the cluster's cells (cells * cell_width by cell_height) is
 *    dropped;
 *  - a combining mark is drawn at the same origin as its base, except a mark
 *    with a zero advance, whose origin is the base's advance; coverage is
 *    the maximum of base and marks.
 *
 * Coverage maps are cached inside the fontset with a fixed bound, keyed by
 * cluster, style and width, so a `cat` of every code point cannot grow
 * memory without limit.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fontset;

enum font_style {
	FONT_STYLE_BOLD = 1 << 0,   /* the family's bold face, else synthetic bold */
	FONT_STYLE_ITALIC = 1 << 1, /* the family's italic face, else upright */
	FONT_STYLE_UNDERLINE = 1 << 2,
	FONT_STYLE_STRIKE = 1 << 3, /* crossed out */
};

struct fontset_config {
	const char *file; /* --font-file: PSF or TTF/OTF; NULL: by name */
	const char *name; /* --font-name, a fontconfig pattern; NULL: "monospace" */
	double size;	  /* --font-size in points; <= 0: 12 */
	double dpi;	  /* --font-dpi; <= 0: 96 */
	bool mono;	  /* monochrome rendering: coverage is 0 or 255 */
};

/* Opens the font the config asks for. Never fails but on OOM: a missing or
 * broken file or name logs a line naming it and the fallback taken (the
 * default font by name, then the built-in font). */
int fontset_new(const struct fontset_config *cfg, struct fontset **ret);
void fontset_free(struct fontset *fs);

unsigned fontset_cell_width(const struct fontset *fs);
unsigned fontset_cell_height(const struct fontset *fs);

/* Whether the main font scales (FreeType), and its size in points. */
bool fontset_scalable(const struct fontset *fs);
double fontset_size(const struct fontset *fs);

/* Zoom: sets the size in points of a scalable fontset; the cell size
 * changes and the coverage cache is emptied. -EOPNOTSUPP for bitmap fonts,
 * -EINVAL for a size whose cell would be under 4 pixels or over 256. */
int fontset_set_size(struct fontset *fs, double points);

/* Whether the main font has a glyph for ucs4 itself (no fallback). */
bool fontset_has_glyph(const struct fontset *fs, uint32_t ucs4);

/* Returns the coverage of the cluster ch[0..len) (len >= 1; ch[0] the base)
 * drawn over `cells` cells (1 or 2) in `style` (enum font_style bits): rows of
 * cells * cell_width bytes, cell_height rows. The pointer is valid until the
 * next call on fs. Never fails: missing glyphs come from fallbacks or the
 * replacement box. A bitmap font ignores bold and italic (the renderer
 * brightens bold colours, as fbcon does); FreeType fonts draw underline as a
 * line at the font's underline position and thickness (at least 1 pixel).
 * Strikethrough is drawn with both kinds (fontset.c says where). */
const uint8_t *fontset_render(struct fontset *fs, const uint32_t *ch, size_t len, unsigned cells,
			      unsigned style);
