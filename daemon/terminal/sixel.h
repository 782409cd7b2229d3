/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Sixel decoder: the data of a DECSIXEL device control string (DCS P1;P2;P3 q
 * ... ST) turned into an image of 0xAARRGGBB pixels, decoded as xterm decodes
 * it (its graphics_sixel.c and ctlseqs): " raster attributes, # colour
 * register select and define (HLS as the VT340 defines it, or RGB in
 * percent), ! repeat, $ carriage return, - next band of six rows, sixel bytes
 * 0x3f..0x7e; every other byte is skipped.
 *
 * The decoder runs inside a root daemon on data any program can send, so it
 * never allocates from a declared size: the raster attributes and repeat
 * counts are believed only as far as pixels are actually drawn, the pixel
 * buffer grows as bands and columns arrive, clipped to max_width x
 * max_height, and all size arithmetic is checked for overflow.
 */
#include <stddef.h>
#include <stdint.h>

#define SIXEL_REGISTERS 1024 /* colour registers (XTSMGRAPHICS reports it) */

struct sixel_palette {
	uint32_t rgb[SIXEL_REGISTERS]; /* 0x00RRGGBB */
};
/* The VT340's 16 default registers (xterm's), the rest black. */
void sixel_palette_init(struct sixel_palette *p);

struct sixel_image {
	unsigned width, height;
	/* width * height, row-major; 0xAARRGGBB: AA 0xff opaque, 0x00 transparent */
	uint32_t *pixels;
};
void sixel_image_free(struct sixel_image *img); /* frees pixels, zeroes the struct */

struct sixel_decoder;
/* p1, p2: the DCS parameters (P2 = 1: pixels never written stay transparent; else they get
 * `background`, 0x00RRGGBB). max_width, max_height: the most pixels kept; beyond them the
 * image is clipped (not an error). palette: the registers to use and change (shared registers,
 * DECSET 1070 reset) or NULL: private registers, initialised by sixel_palette_init(). Nothing is
 * allocated from raster attributes (" Pan;Pad;Ph;Pv): memory grows only as sixel data comes. */
struct sixel_decoder *sixel_decoder_new(unsigned p1, unsigned p2, uint32_t background,
					unsigned max_width, unsigned max_height,
					struct sixel_palette *palette);
/* The bytes after the final 'q' up to (not including) ST, in any number of pieces. Never fails:
 * malformed data is skipped as xterm skips it. */
void sixel_decoder_feed(struct sixel_decoder *d, const char *data, size_t len);
/* Bytes the decoder holds now (the memory budget counts them). */
size_t sixel_decoder_memory(const struct sixel_decoder *d);
/* The image so far (0: ret filled, the caller owns its pixels; -ENODATA: nothing was drawn;
 * -ENOMEM). The decoder is spent afterwards: only sixel_decoder_free() may follow. */
int sixel_decoder_finish(struct sixel_decoder *d, struct sixel_image *ret);
void sixel_decoder_free(struct sixel_decoder *d);
