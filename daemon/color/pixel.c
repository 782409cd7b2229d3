/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "pixel.h"
#include "../util/util.h"

static bool bitfield_ok(const struct fb_bitfield *f, unsigned bpp)
{
	return f->length >= 1 && f->length <= 8 && f->offset + f->length <= bpp;
}

int pixel_format_from_fb(const struct fb_fix_screeninfo *fix, const struct fb_var_screeninfo *var,
			 struct pixel_format *ret)
{
	struct pixel_format pf = {.bits_per_pixel = var->bits_per_pixel};

	if (fix->type != FB_TYPE_PACKED_PIXELS)
		return -ENOTSUP;

	if (var->bits_per_pixel == 1) {
		if (fix->visual != FB_VISUAL_MONO01 && fix->visual != FB_VISUAL_MONO10)
			return -ENOTSUP;
		pf.bytes_per_pixel = 1;
		pf.indexed = pf.mono = true;
		/* fbcon's get_color() at depth 1: the foreground is 0 on
		 * MONO01 (a set bit is black), 1 on MONO10. */
		pf.mono_fg = fix->visual == FB_VISUAL_MONO01 ? 0 : 1;
		pf.mono_bg = (uint8_t)!pf.mono_fg;
		pf.lsb_first = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
		if (var->nonstd & FB_NONSTD_REV_PIX_IN_B)
			pf.lsb_first = !pf.lsb_first;
		*ret = pf;
		return 0;
	}

	switch (var->bits_per_pixel) {
	case 8:
		pf.bytes_per_pixel = 1;
		break;
	case 15:
	case 16:
		pf.bytes_per_pixel = 2;
		break;
	case 24:
		pf.bytes_per_pixel = 3;
		break;
	case 32:
		pf.bytes_per_pixel = 4;
		break;
	default:
		return -ENOTSUP;
	}

	switch (fix->visual) {
	case FB_VISUAL_PSEUDOCOLOR:
		if (var->bits_per_pixel != 8)
			return -ENOTSUP;
		pf.indexed = true;
		break;
	case FB_VISUAL_TRUECOLOR:
	case FB_VISUAL_DIRECTCOLOR:
		if (var->bits_per_pixel == 8 && fix->visual == FB_VISUAL_DIRECTCOLOR)
			return -ENOTSUP;
		if (!bitfield_ok(&var->red, var->bits_per_pixel) ||
		    !bitfield_ok(&var->green, var->bits_per_pixel) ||
		    !bitfield_ok(&var->blue, var->bits_per_pixel))
			return -ENOTSUP;
		pf.red = var->red;
		pf.green = var->green;
		pf.blue = var->blue;
		break;
	default:
		return -ENOTSUP;
	}

	*ret = pf;
	return 0;
}

static uint32_t pack_channel(uint8_t v, const struct fb_bitfield *f)
{
	return ((uint32_t)v >> (8 - f->length)) << f->offset;
}

uint32_t pixel_pack_rgb(const struct pixel_format *pf, struct rgb c)
{
	return pack_channel(c.r, &pf->red) | pack_channel(c.g, &pf->green) |
	       pack_channel(c.b, &pf->blue);
}

/* The channel widened back to 8 bits, its top bits repeated below (a 5-bit
 * 31 becomes 255, not 248). */
static unsigned unpack_channel(uint32_t v, const struct fb_bitfield *f)
{
	unsigned x = (v >> f->offset) & ((1u << f->length) - 1);
	unsigned out = 0;

	if (f->length == 0)
		return 0;
	for (int shift = 8 - (int)f->length; shift > -(int)f->length; shift -= (int)f->length)
		out |= shift >= 0 ? x << shift : x >> -shift;
	return out & 0xff;
}

static uint8_t blend_channel(unsigned fg, unsigned bg, unsigned a)
{
	return (uint8_t)((bg * (255 - a) + fg * a + 127) / 255);
}

uint32_t pixel_blend(const struct pixel_format *pf, uint32_t fg, uint32_t bg, uint8_t a)
{
	if (a == 0)
		return bg;
	if (a == 255)
		return fg;
	if (pf->indexed)
		return a >= 128 ? fg : bg;
	return pixel_pack_rgb(
	    pf,
	    (struct rgb){
		blend_channel(unpack_channel(fg, &pf->red), unpack_channel(bg, &pf->red), a),
		blend_channel(unpack_channel(fg, &pf->green), unpack_channel(bg, &pf->green), a),
		blend_channel(unpack_channel(fg, &pf->blue), unpack_channel(bg, &pf->blue), a)});
}

void pixel_pack_line(uint8_t *dst, const uint8_t *src, unsigned n, unsigned bits, bool lsb_first)
{
	unsigned per_byte = 8 / bits, mask = (1u << bits) - 1;

	for (unsigned i = 0; i < n; i += per_byte, dst++) {
		unsigned m = MIN(per_byte, n - i), v = 0;

		for (unsigned k = 0; k < m; k++) {
			unsigned shift = lsb_first ? k * bits : 8 - (k + 1) * bits;

			v |= (src[i + k] & mask) << shift;
		}
		*dst = (uint8_t)v;
	}
}

uint32_t pixel_from_index(const struct pixel_format *pf, const struct palette *p, unsigned index)
{
	/* fbcon shows every colour as its foreground at depth 1, and the
	 * background (margins, cleared VRAM) as its background */
	if (pf->mono)
		return index == p->bg || index == PALETTE_BG ? pf->mono_bg : pf->mono_fg;
	if (index >= PALETTE_ENTRIES)
		index = p->bg;
	if (pf->indexed)
		return p->slot[index];
	return pixel_pack_rgb(pf, p->colors[index]);
}
