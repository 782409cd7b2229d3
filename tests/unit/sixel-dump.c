/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Decodes one DECSIXEL string (ESC P P1;P2;P3 q ... ESC \, as img2sixel and
 * chafa write it) from stdin with consoled's decoder and writes the image to
 * stdout as a PAM (RGB_ALPHA), for sixel-oracle.py to compare with
 * libsixel's sixel2png. Unwritten pixels get a black background unless P2
 * is 1 (then alpha 0). Exit status 1: no DCS, or nothing drawn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/terminal/sixel.h"

#define MAX_SIZE 8192u

int main(void)
{
	size_t len = 0, cap = 1 << 20, i = 0;
	char *buf = malloc(cap);
	unsigned params[3] = {0, 0, 0}, n = 0;
	struct sixel_image img;
	struct sixel_decoder *d;
	size_t got;

	while (buf && (got = fread(buf + len, 1, cap - len, stdin)) > 0) {
		len += got;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf)
		return 1;
	/* ESC P (or 0x90), the parameters, then q */
	while (i < len && !(buf[i] == '\033' && i + 1 < len && buf[i + 1] == 'P') &&
	       (unsigned char)buf[i] != 0x90)
		i++;
	i += buf[i] == '\033' ? 2 : 1;
	for (; i < len && buf[i] != 'q'; i++) {
		if (buf[i] >= '0' && buf[i] <= '9' && n < 3)
			params[n] = params[n] * 10 + (unsigned)(buf[i] - '0');
		else if (buf[i] == ';')
			n++;
	}
	if (i >= len) {
		fprintf(stderr, "sixel-dump: no DCS q\n");
		return 1;
	}
	i++;
	size_t end = i;
	while (end < len && buf[end] != '\033' && (unsigned char)buf[end] != 0x9c)
		end++;
	d = sixel_decoder_new(params[0], params[1], 0, MAX_SIZE, MAX_SIZE, NULL);
	sixel_decoder_feed(d, buf + i, end - i);
	if (sixel_decoder_finish(d, &img) < 0) {
		fprintf(stderr, "sixel-dump: nothing drawn\n");
		return 1;
	}
	printf("P7\nWIDTH %u\nHEIGHT %u\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n",
	       img.width, img.height);
	for (size_t k = 0; k < (size_t)img.width * img.height; k++) {
		uint32_t p = img.pixels[k];
		unsigned char px[4] = {(unsigned char)(p >> 16), (unsigned char)(p >> 8),
				       (unsigned char)p, (unsigned char)(p >> 24)};
		fwrite(px, 1, 4, stdout);
	}
	sixel_image_free(&img);
	sixel_decoder_free(d);
	free(buf);
	return 0;
}
