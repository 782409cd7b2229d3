/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Bitmap fonts. A struct font is a set of glyph bitmaps of one size plus a
 * map from Unicode code points to glyphs, loaded from the kernel's PSF1 or
 * PSF2 format (optionally gzip'ed), the formats setfont loads into fbcon, so
 * consoled and the kernel console draw the very same pixels from one file.
 *
 * Bitmaps are stored as in PSF: one glyph is `height` rows of `stride` bytes,
 * most significant bit leftmost. Lookup follows the kernel's vt: a code point
 * without a glyph shows U+FFFD's glyph, else '?', else glyph 0. A font without
 * a Unicode table maps code points below its glyph count to themselves.
 *
 * Loading never logs; it returns a negative errno and, for a malformed file,
 * a short reason in *ret_reason for the caller's message.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct font {
	unsigned width, height; /* pixels */
	unsigned glyph_count;
	unsigned stride;	       /* bytes per glyph row */
	unsigned glyph_size;	       /* bytes per glyph */
	uint8_t *bitmaps;	       /* glyph_count * glyph_size bytes */
	uint16_t *bmp_map;	       /* 65536 entries, UINT16_MAX = no glyph; NULL = identity */
	struct font_map_entry *astral; /* code points above U+FFFF, sorted */
	size_t astral_count;
	unsigned fallback_glyph;
};

struct font_map_entry {
	uint32_t ucs4;
	uint32_t glyph;
};

extern const unsigned char font_builtin_psf[];
extern const size_t font_builtin_psf_size;

int font_load_psf_buffer(const void *data, size_t size, struct font **ret, const char **ret_reason);
int font_load_psf_file(const char *path, struct font **ret, const char **ret_reason);
int font_load_builtin(struct font **ret);
void font_free(struct font *f);

/* Returns the glyph index for a code point (never fails; see above). */
unsigned font_lookup(const struct font *f, uint32_t ucs4);

/* Only the font's own answer: the glyph its Unicode table lists for ucs4
 * (whatever glyph, even one it shares with U+FFFD), or without a table the
 * code points below the glyph count; false for anything else. */
bool font_find_glyph(const struct font *f, uint32_t ucs4, unsigned *ret);

static inline const uint8_t *font_glyph(const struct font *f, unsigned index)
{
	return f->bitmaps + (size_t)index * f->glyph_size;
}
