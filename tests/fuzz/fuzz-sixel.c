/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the sixel decoder. The first four bytes choose P2
 * (0..2), the largest image (1..256 pixels wide, 1..256 high: small, so
 * that clipping is reached all the time), whether the registers are shared
 * and how large the pieces are; the rest is the data after DCS ... q.
 *
 * Whatever the bytes: nothing crashes; the decoder never holds more than
 * its own struct and max_width x max_height pixels; the image is within the
 * limits, every pixel opaque or wholly transparent (0), transparent ones
 * only with P2 = 1; and the data fed in pieces gives the same image, the
 * same result and the same registers as fed at once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/terminal/sixel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	int r;
	struct sixel_image img;
	struct sixel_palette pal;
};

static void decode(const uint8_t *data, size_t size, unsigned p2, unsigned w, unsigned h,
		   bool shared, size_t piece, struct run *out)
{
	struct sixel_decoder *d;
	size_t base;

	sixel_palette_init(&out->pal);
	d = sixel_decoder_new(0, p2, 0x102030, w, h, shared ? &out->pal : NULL);
	base = sixel_decoder_memory(d);
	for (size_t i = 0; i < size; i += piece) {
		sixel_decoder_feed(d, (const char *)data + i, size - i < piece ? size - i : piece);
		if (sixel_decoder_memory(d) - base > (size_t)w * h * sizeof(uint32_t))
			__builtin_trap();
	}
	memset(&out->img, 0, sizeof(out->img));
	out->r = sixel_decoder_finish(d, &out->img);
	sixel_decoder_free(d);
	if (out->r != 0 && out->r != -ENODATA)
		__builtin_trap();
	if (out->r)
		return;
	if (!out->img.width || !out->img.height || out->img.width > w || out->img.height > h)
		__builtin_trap();
	for (size_t k = 0; k < (size_t)out->img.width * out->img.height; k++) {
		uint32_t p = out->img.pixels[k];
		if (p >> 24 == 0xff)
			continue;
		if (p != 0 || p2 != 1)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run *a, *b;
	unsigned p2, w, h, piece;
	bool shared;

	if (size < 4)
		return 0;
	p2 = data[0] % 3;
	shared = data[0] & 0x80;
	w = data[1] + 1u;
	h = data[2] + 1u;
	piece = data[3] % 16 + 1u;
	data += 4;
	size -= 4;

	a = malloc(sizeof(*a));
	b = malloc(sizeof(*b));
	if (!a || !b)
		abort();
	decode(data, size, p2, w, h, shared, size ? size : 1, a);
	decode(data, size, p2, w, h, shared, piece, b);
	if (a->r != b->r || memcmp(&a->pal, &b->pal, sizeof(a->pal)))
		__builtin_trap();
	if (!a->r && (a->img.width != b->img.width || a->img.height != b->img.height ||
		      memcmp(a->img.pixels, b->img.pixels,
			     (size_t)a->img.width * a->img.height * sizeof(uint32_t))))
		__builtin_trap();
	sixel_image_free(&a->img);
	sixel_image_free(&b->img);
	free(a);
	free(b);
	return 0;
}
