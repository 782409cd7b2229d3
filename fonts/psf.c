/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PSF1 and PSF2 parsing. The formats (kbd's psf.h, the kernel's
 * Documentation of setfont): PSF1 is a 4-byte header, 256 or 512 glyphs of
 * 8 x charsize pixels, and an optional table of little-endian UCS-2 values per
 * glyph ended by 0xFFFF (0xFFFE starts combining sequences, which we skip).
 * PSF2 has a 32-byte header with any width and height and a table of UTF-8
 * strings per glyph ended by 0xFF (0xFE starts sequences).
 *
 * Every length in the file is checked against the file's size before use:
 * fonts are untrusted input (a user may point --font-file anywhere).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../daemon/util/util.h"
#include "font.h"

#define PSF1_MAGIC0 0x36
#define PSF1_MAGIC1 0x04
#define PSF1_MODE512 0x01
#define PSF1_MODEHASTAB 0x02
#define PSF1_MODESEQ 0x04
#define PSF1_SEPARATOR 0xffff
#define PSF1_STARTSEQ 0xfffe

#define PSF2_MAGIC 0x864ab572u
#define PSF2_HAS_UNICODE_TABLE 0x01
#define PSF2_SEPARATOR 0xff
#define PSF2_STARTSEQ 0xfe

#define FONT_MAX_FILE_SIZE (8u << 20)
#define FONT_MAX_GLYPHS 65536u
#define FONT_MAX_WIDTH 64u
#define FONT_MAX_HEIGHT 128u

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void font_free(struct font *f)
{
	if (!f)
		return;
	free(f->bitmaps);
	free(f->bmp_map);
	free(f->astral);
	free(f);
}

static void font_map_add(struct font *f, uint32_t ucs4, unsigned glyph, size_t *astral_cap)
{
	if (ucs4 <= 0xffff) {
		/* A code point listed for several glyphs gets the last one, as
		 * the kernel's con_insert_unipair() overwrites earlier entries. */
		f->bmp_map[ucs4] = (uint16_t)glyph;
		return;
	}
	if (ucs4 > 0x10ffff)
		return;
	if (f->astral_count == *astral_cap) {
		*astral_cap = *astral_cap ? *astral_cap * 2 : 16;
		f->astral = xrealloc(f->astral, *astral_cap * sizeof(*f->astral));
	}
	f->astral[f->astral_count++] = (struct font_map_entry){ucs4, glyph};
}

/* Sorts by code point and, for equal code points, by glyph, which is table
 * order, so that lookup can take the last entry (the kernel's rule, above). */
static int cmp_map_entry(const void *a, const void *b)
{
	const struct font_map_entry *x = a, *y = b;

	if (x->ucs4 != y->ucs4)
		return x->ucs4 < y->ucs4 ? -1 : 1;
	return x->glyph < y->glyph ? -1 : x->glyph > y->glyph;
}

/* Decodes one UTF-8 sequence; returns its length or 0 if malformed. */
static size_t utf8_decode(const uint8_t *p, size_t n, uint32_t *ret)
{
	uint32_t c;
	size_t len, i;

	if (n == 0)
		return 0;
	if (p[0] < 0x80) {
		*ret = p[0];
		return 1;
	} else if ((p[0] & 0xe0) == 0xc0) {
		c = p[0] & 0x1f;
		len = 2;
	} else if ((p[0] & 0xf0) == 0xe0) {
		c = p[0] & 0x0f;
		len = 3;
	} else if ((p[0] & 0xf8) == 0xf0) {
		c = p[0] & 0x07;
		len = 4;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	*ret = c;
	return len;
}

static void parse_psf1_table(struct font *f, const uint8_t *p, size_t n, size_t *astral_cap)
{
	size_t off = 0;

	for (unsigned g = 0; g < f->glyph_count && off + 2 <= n; g++) {
		bool in_seq = false;

		while (off + 2 <= n) {
			unsigned v = p[off] | p[off + 1] << 8;

			off += 2;
			if (v == PSF1_SEPARATOR)
				break;
			if (v == PSF1_STARTSEQ)
				in_seq = true;
			else if (!in_seq)
				font_map_add(f, v, g, astral_cap);
		}
	}
}

static void parse_psf2_table(struct font *f, const uint8_t *p, size_t n, size_t *astral_cap)
{
	size_t off = 0;

	for (unsigned g = 0; g < f->glyph_count && off < n; g++) {
		bool in_seq = false;

		while (off < n) {
			uint32_t c;
			size_t len;

			if (p[off] == PSF2_SEPARATOR) {
				off++;
				break;
			}
			if (p[off] == PSF2_STARTSEQ) {
				in_seq = true;
				off++;
				continue;
			}
			len = utf8_decode(p + off, n - off, &c);
			if (len == 0) {
				off++; /* skip a malformed byte, keep going */
				continue;
			}
			off += len;
			if (!in_seq)
				font_map_add(f, c, g, astral_cap);
		}
	}
}

int font_load_psf_buffer(const void *data, size_t size, struct font **ret, const char **ret_reason)
{
	const uint8_t *p = data;
	struct font *f;
	size_t header, table_off, bitmap_bytes;
	bool has_table;
	const char *reason;
	size_t astral_cap = 0;

	f = xcalloc(1, sizeof(*f));

	if (size >= 4 && p[0] == PSF1_MAGIC0 && p[1] == PSF1_MAGIC1) {
		f->glyph_count = (p[2] & PSF1_MODE512) ? 512 : 256;
		f->width = 8;
		f->height = p[3];
		f->glyph_size = p[3];
		has_table = p[2] & (PSF1_MODEHASTAB | PSF1_MODESEQ);
		header = 4;
	} else if (size >= 32 && get_le32(p) == PSF2_MAGIC) {
		header = get_le32(p + 8);
		has_table = get_le32(p + 12) & PSF2_HAS_UNICODE_TABLE;
		f->glyph_count = get_le32(p + 16);
		f->glyph_size = get_le32(p + 20);
		f->height = get_le32(p + 24);
		f->width = get_le32(p + 28);
		if (header < 32 || header > size) {
			reason = "bad PSF2 header size";
			goto fail;
		}
	} else {
		reason = "not a PSF1 or PSF2 font";
		goto fail;
	}

	if (f->width == 0 || f->width > FONT_MAX_WIDTH || f->height == 0 ||
	    f->height > FONT_MAX_HEIGHT) {
		reason = "glyph size out of range";
		goto fail;
	}
	if (f->glyph_count == 0 || f->glyph_count > FONT_MAX_GLYPHS) {
		reason = "glyph count out of range";
		goto fail;
	}
	f->stride = (f->width + 7) / 8;
	if (f->glyph_size != f->stride * f->height) {
		reason = "glyph size does not match width and height";
		goto fail;
	}
	bitmap_bytes = (size_t)f->glyph_count * f->glyph_size;
	if (bitmap_bytes > size - header) {
		reason = "file is shorter than its glyphs";
		goto fail;
	}
	f->bitmaps = xmalloc(bitmap_bytes);
	memcpy(f->bitmaps, p + header, bitmap_bytes);

	table_off = header + bitmap_bytes;
	if (has_table) {
		f->bmp_map = xmalloc(65536 * sizeof(uint16_t));
		memset(f->bmp_map, 0xff, 65536 * sizeof(uint16_t));
		if (p[0] == PSF1_MAGIC0 && p[1] == PSF1_MAGIC1)
			parse_psf1_table(f, p + table_off, size - table_off, &astral_cap);
		else
			parse_psf2_table(f, p + table_off, size - table_off, &astral_cap);
		if (f->astral_count)
			qsort(f->astral, f->astral_count, sizeof(*f->astral), cmp_map_entry);
	}

	/* What the kernel shows for a character the font lacks. */
	f->fallback_glyph = 0;
	if (f->bmp_map) {
		if (f->bmp_map[0xfffd] != UINT16_MAX)
			f->fallback_glyph = f->bmp_map[0xfffd];
		else if (f->bmp_map['?'] != UINT16_MAX)
			f->fallback_glyph = f->bmp_map['?'];
	} else if (f->glyph_count > '?')
		f->fallback_glyph = '?';

	*ret = f;
	return 0;

fail:
	font_free(f);
	if (ret_reason)
		*ret_reason = reason;
	return -EINVAL;
}

int font_load_psf_file(const char *path, struct font **ret, const char **ret_reason)
{
	_cleanup_(freep) uint8_t *buf = NULL;
	size_t size = 0, cap = 64 * 1024;
	gzFile gz;
	int n;

	/* gzread reads uncompressed files as they are, so one path serves both. */
	gz = gzopen(path, "rbe");
	if (!gz)
		return errno > 0 ? -errno : -ENOMEM;

	buf = xmalloc(cap);
	for (;;) {
		if (size == cap) {
			if (cap >= FONT_MAX_FILE_SIZE) {
				gzclose(gz);
				if (ret_reason)
					*ret_reason = "file too large for a console font";
				return -EFBIG;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		n = gzread(gz, buf + size, (unsigned)(cap - size));
		if (n < 0) {
			gzclose(gz);
			if (ret_reason)
				*ret_reason = "cannot decompress the file";
			return -EINVAL;
		}
		if (n == 0)
			break;
		size += (size_t)n;
	}
	gzclose(gz);

	return font_load_psf_buffer(buf, size, ret, ret_reason);
}

int font_load_builtin(struct font **ret)
{
	return font_load_psf_buffer(font_builtin_psf, font_builtin_psf_size, ret, NULL);
}

bool font_find_glyph(const struct font *f, uint32_t ucs4, unsigned *ret)
{
	size_t lo = 0, hi = f->astral_count;

	if (!f->bmp_map) {
		if (ucs4 >= f->glyph_count)
			return false;
		*ret = ucs4;
		return true;
	}
	if (ucs4 <= 0xffff) {
		if (f->bmp_map[ucs4] == UINT16_MAX)
			return false;
		*ret = f->bmp_map[ucs4];
		return true;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->astral[mid].ucs4 <= ucs4)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo is past the last entry <= ucs4 */
	if (lo == 0 || f->astral[lo - 1].ucs4 != ucs4)
		return false;
	*ret = f->astral[lo - 1].glyph;
	return true;
}

unsigned font_lookup(const struct font *f, uint32_t ucs4)
{
	unsigned g;

	return font_find_glyph(f, ucs4, &g) ? g : f->fallback_glyph;
}
