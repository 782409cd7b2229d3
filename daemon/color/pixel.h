/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Pixel formats: how a colour of the palette (palette.h) becomes a pixel
 * value. At 8 bpp pseudocolour the palette *is* the colour map, so a cell's
 * pixel is its palette index (its colour map slot); at 15/16/24/32 bpp a
 * colour is packed into the visual's bitfields.
 */
#include <linux/fb.h>
#include <stdbool.h>
#include <stdint.h>

#include "palette.h"

/*
 * Below 8 bits a pixel (1 bpp monochrome, FB_VISUAL_MONO01 and MONO10)
 * several pixels share a byte: consoled draws one byte a pixel (the pixel's
 * value) into a RAM copy of the screen and packs its changed lines into
 * video memory (pixel_pack_line()). The order of the pixels in a byte is
 * the kernel's (drivers/video/fbdev/core, FB_SHIFT_HIGH()): the leftmost
 * pixel in the lowest bits on a little-endian machine, in the highest on a
 * big-endian one, reversed when the driver sets FB_NONSTD_REV_PIX_IN_B in
 * var.nonstd. (A driver with FBINFO_FOREIGN_ENDIAN flips it too, but that
 * flag is not visible to programs.)
 *
 * Monochrome has two pixel values, and fbcon (get_color()) shows every
 * colour as the same foreground and background there: bit 0 on 1 for
 * MONO01 (a set bit is black), 1 on 0 for MONO10; reverse video swaps
 * them, and bold, italic and underline change the glyph instead
 * (render.h).
 */
struct pixel_format {
	unsigned bits_per_pixel;  /* 1, 8, 15/16, 24 or 32 */
	unsigned bytes_per_pixel; /* as consoled draws it: 1 below 8 bpp */
	bool indexed;		  /* pixel value = palette index (8 bpp pseudocolour), or mono */
	bool mono;		  /* 1 bpp FB_VISUAL_MONO01 or MONO10 */
	bool lsb_first;		  /* below 8 bpp: the leftmost pixel in a byte's lowest bits */
	uint8_t mono_fg, mono_bg; /* mono: fbcon's pixel values */
	struct fb_bitfield red, green, blue;
};

/* Fills a pixel format from a framebuffer's fix and var, or returns -ENOTSUP
 * for anything consoled cannot draw (planar, 2/4 bpp, 1 bpp pseudocolour,
 * ...). */
int pixel_format_from_fb(const struct fb_fix_screeninfo *fix, const struct fb_var_screeninfo *var,
			 struct pixel_format *ret);

/* The bytes `pixels` pixels take in video memory (rounded up). */
static inline size_t pixel_line_bytes(const struct pixel_format *pf, unsigned pixels)
{
	if (pf->bits_per_pixel < 8)
		return ((size_t)pixels * pf->bits_per_pixel + 7) / 8;
	return (size_t)pixels * pf->bytes_per_pixel;
}

/* Packs n pixel values (one byte each, below 2^bits) into `bits` (1, 2 or 4)
 * bits a pixel, the leftmost pixel in the lowest bits of a byte with
 * lsb_first, else in the highest; the bits of a last, partial byte after
 * the n pixels are 0. Writes (n * bits + 7) / 8 bytes to dst. */
void pixel_pack_line(uint8_t *dst, const uint8_t *src, unsigned n, unsigned bits, bool lsb_first);

uint32_t pixel_pack_rgb(const struct pixel_format *pf, struct rgb c);

/* Coverage `a` of fg over bg (0 gives bg, 255 fg), mixed per 8-bit channel
 * as (bg * (255 - a) + fg * a + 127) / 255 and packed again. Indexed formats
 * have no colours between entries: fg from a = 128 on. */
uint32_t pixel_blend(const struct pixel_format *pf, uint32_t fg, uint32_t bg, uint8_t a);

/* The pixel value of palette entry `index` (< PALETTE_ENTRIES). */
uint32_t pixel_from_index(const struct pixel_format *pf, const struct palette *p, unsigned index);

/* Stores one pixel value at dst in the framebuffer's (native) byte order. */
static inline void pixel_store(uint8_t *dst, unsigned bytes_per_pixel, uint32_t v)
{
	switch (bytes_per_pixel) {
	case 1:
		dst[0] = (uint8_t)v;
		break;
	case 2: {
		uint16_t w = (uint16_t)v;
		__builtin_memcpy(dst, &w, 2);
		break;
	}
	case 3: /* the 24-bit value in the CPU's byte order, as fbdev has it */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		dst[0] = (uint8_t)(v >> 16);
		dst[1] = (uint8_t)(v >> 8);
		dst[2] = (uint8_t)v;
#else
		dst[0] = (uint8_t)v;
		dst[1] = (uint8_t)(v >> 8);
		dst[2] = (uint8_t)(v >> 16);
#endif
		break;
	default:
		__builtin_memcpy(dst, &v, 4);
		break;
	}
}
