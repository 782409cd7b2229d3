/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sixel decoder on hand-made streams with exact expected pixels:
 * repeats, $ and -, RGB and HLS registers, P2 = 1 against a background,
 * clipping, register wrapping, the registers' defaults and sharing, data cut
 * into pieces; and that declared sizes and huge repeat counts cost no
 * memory. Prints how long a 1920x1080 stream takes (not a check: the
 * figure for docs/ARCHITECTURE.md).
 */
#include <errno.h>
#include <time.h>

#include "../../daemon/terminal/sixel.h"
#include "tests.h"

#define BG 0x123456u
#define T 0x00000000u /* transparent */
#define B (0xff000000u | BG)

/* The VT340's defaults, 0..100 percent rounded to 0..255 */
#define GREEN 0xff33cc33u /* register 3 (20,80,20): the one selected at first */
#define BLUE 0xff3333ccu  /* register 1 (20,20,80) */
#define RED 0xffcc2121u	  /* register 2 (80,13,13) */

static int decode_max(const char *s, unsigned p2, unsigned max_w, unsigned max_h,
		      struct sixel_palette *pal, struct sixel_image *img)
{
	struct sixel_decoder *d = sixel_decoder_new(0, p2, BG, max_w, max_h, pal);
	int r;

	sixel_decoder_feed(d, s, strlen(s));
	r = sixel_decoder_finish(d, img);
	sixel_decoder_free(d);
	return r;
}

static int decode(const char *s, unsigned p2, struct sixel_image *img)
{
	return decode_max(s, p2, 1000, 1000, NULL, img);
}

/* img is w x h and equals want (row-major); says where it differs */
static void check_pixels(const struct sixel_image *img, unsigned w, unsigned h,
			 const uint32_t *want, int line)
{
	if (img->width != w || img->height != h) {
		fprintf(stderr, "line %d: %ux%u, expected %ux%u\n", line, img->width, img->height,
			w, h);
		tests_failed = 1;
		return;
	}
	for (unsigned y = 0; y < h; y++)
		for (unsigned x = 0; x < w; x++)
			if (img->pixels[y * w + x] != want[y * w + x]) {
				fprintf(stderr, "line %d: pixel %u,%u is 0x%08x, expected 0x%08x\n",
					line, x, y, img->pixels[y * w + x], want[y * w + x]);
				tests_failed = 1;
				return;
			}
}
#define CHECK_PIXELS(img, w, h, ...)                                                               \
	do {                                                                                       \
		const uint32_t want_[] = {__VA_ARGS__};                                            \
		check_pixels(img, w, h, want_, __LINE__);                                          \
	} while (0)

static void test_sixels(void)
{
	struct sixel_image img;

	/* one sixel, all six bits, in the first selected register (3) */
	CHECK(decode("~", 0, &img) == 0);
	CHECK_PIXELS(&img, 1, 6, GREEN, GREEN, GREEN, GREEN, GREEN, GREEN);
	sixel_image_free(&img);
	CHECK(img.pixels == NULL && img.width == 0);

	/* bit 0 is the top row: '@' (1) and 'B' (3) and 'G' (8 = row 3) */
	CHECK(decode("#1@BG", 0, &img) == 0);
	CHECK_PIXELS(&img, 3, 4, BLUE, BLUE, B, B, BLUE, B, B, B, B, B, B, BLUE);
	sixel_image_free(&img);
}

static void test_repeat_cr_nl(void)
{
	struct sixel_image img;

	/* three columns of red rows 0-1, then $ back: blue over row 0 of two */
	CHECK(decode("#2!3B$#1!2@", 0, &img) == 0);
	CHECK_PIXELS(&img, 3, 2, BLUE, BLUE, RED, RED, RED, RED);
	sixel_image_free(&img);

	/* - starts the next band six rows down, at column 0; a repeat of '?'
	 * moves right without drawing, !0 is one */
	CHECK(decode("#1@-!2?#2!0@", 0, &img) == 0);
	CHECK_PIXELS(&img, 3, 7, BLUE, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B,
		     RED);
	sixel_image_free(&img);

	/* a repeat followed by no sixel is dropped; the byte counts */
	CHECK(decode("#1!5$@", 0, &img) == 0);
	CHECK_PIXELS(&img, 1, 1, BLUE);
	sixel_image_free(&img);
}

static void test_registers(void)
{
	struct sixel_image img;

	/* RGB in percent; a define selects; pixels keep the colour they were
	 * drawn in when the register changes afterwards */
	CHECK(decode("#7;2;100;0;0@#7;2;0;50;100@#7@", 0, &img) == 0);
	CHECK_PIXELS(&img, 3, 1, 0xffff0000u, 0xff0080ffu, 0xff0080ffu);
	sixel_image_free(&img);

	/* HLS, hue 0 = blue, 120 = red, 240 = green, 60 = magenta; L 75 is
	 * lighter; S 0 is grey */
	CHECK(decode("#1;1;0;50;100@#1;1;120;50;100@#1;1;240;50;100@#1;1;60;50;100@"
		     "#1;1;120;75;100@#1;1;300;50;0@#1;1;180;25;100@",
		     0, &img) == 0);
	CHECK_PIXELS(&img, 7, 1, 0xff0000ffu, 0xffff0000u, 0xff00ff00u, 0xffff00ffu, 0xffff8080u,
		     0xff808080u, 0xff808000u);
	sixel_image_free(&img);

	/* out of range: nothing is defined, the register is still selected */
	CHECK(decode("#1;2;101;0;0@#2;1;361;50;50@#3;9;1;1;1@", 0, &img) == 0);
	CHECK_PIXELS(&img, 3, 1, BLUE, RED, GREEN);
	sixel_image_free(&img);

	/* register numbers past the last wrap, as in xterm */
	CHECK(decode("#1025;2;100;100;100#1@#2047@#99999999999999999999@", 0, &img) == 0);
	CHECK_PIXELS(&img, 3, 1, 0xffffffffu, 0xff000000u, 0xff000000u);
	sixel_image_free(&img);

	/* shared registers: the caller's palette is used and changed */
	struct sixel_palette pal;
	sixel_palette_init(&pal);
	CHECK_EQ_U(pal.rgb[15], 0xcccccc);
	CHECK_EQ_U(pal.rgb[16], 0);
	pal.rgb[9] = 0xabcdef;
	CHECK(decode_max("#9@#20;2;0;100;0@", 0, 10, 10, &pal, &img) == 0);
	CHECK_PIXELS(&img, 2, 1, 0xffabcdefu, 0xff00ff00u);
	CHECK_EQ_U(pal.rgb[20], 0x00ff00);
	sixel_image_free(&img);
}

static void test_background(void)
{
	struct sixel_image img;

	/* 'A' is row 1 only: row 0 was never written */
	CHECK(decode("#1A", 1, &img) == 0);
	CHECK_PIXELS(&img, 1, 2, T, BLUE);
	sixel_image_free(&img);
	CHECK(decode("#1A", 0, &img) == 0);
	CHECK_PIXELS(&img, 1, 2, B, BLUE);
	sixel_image_free(&img);
	CHECK(decode("#1A", 2, &img) == 0);
	CHECK_PIXELS(&img, 1, 2, B, BLUE);
	sixel_image_free(&img);

	/* raster attributes pad the image once data came, P2 = 1: clear */
	CHECK(decode("\"1;1;3;2#1@", 1, &img) == 0);
	CHECK_PIXELS(&img, 3, 2, BLUE, T, T, T, T, T);
	sixel_image_free(&img);
	/* but never make it smaller */
	CHECK(decode("\"1;1;1;1#1!2B", 0, &img) == 0);
	CHECK_PIXELS(&img, 2, 2, BLUE, BLUE, BLUE, BLUE);
	sixel_image_free(&img);

	/* nothing drawn */
	CHECK(decode("", 0, &img) == -ENODATA);
	CHECK(decode("\"1;1;100;100#1;2;1;2;3$-", 0, &img) == -ENODATA);
	CHECK(decode("#1@", 0, &img) == 0);
	sixel_image_free(&img);
}

static void test_clip(void)
{
	struct sixel_image img;
	struct sixel_decoder *d;

	/* 4 x 4 at most: the band is cut at row 4, the repeat at column 4,
	 * the next band is gone */
	CHECK(decode_max("#1!10~#2-~", 0, 4, 4, NULL, &img) == 0);
	CHECK_PIXELS(&img, 4, 4, BLUE, BLUE, BLUE, BLUE, BLUE, BLUE, BLUE, BLUE, BLUE, BLUE, BLUE,
		     BLUE, BLUE, BLUE, BLUE, BLUE);
	sixel_image_free(&img);

	/* a declared size is clipped too */
	CHECK(decode_max("\"1;1;9;9#1@", 1, 3, 2, NULL, &img) == 0);
	CHECK_PIXELS(&img, 3, 2, BLUE, T, T, T, T, T);
	sixel_image_free(&img);

	/* only rows 4 and 5 set, both clipped: nothing drawn */
	CHECK(decode_max("o", 0, 4, 4, NULL, &img) == -ENODATA);

	/* nothing fits at all */
	CHECK(decode_max("~", 0, 0, 0, NULL, &img) == -ENODATA);

	/* a huge declared size allocates nothing: one sixel holds one small
	 * block; the image is padded to the (clipped) declared size only when
	 * it is handed out */
	d = sixel_decoder_new(0, 1, 0, 30000, 30000, NULL);
	sixel_decoder_feed(d, "\"1;1;30000;30000", 16);
	size_t before = sixel_decoder_memory(d);
	sixel_decoder_feed(d, "#1~", 3);
	fprintf(stderr, "memory: %zu bytes before the sixel, %zu after\n", before,
		sixel_decoder_memory(d));
	CHECK(sixel_decoder_memory(d) - before <= 64 * 6 * 4);
	/* a huge repeat count is clipped to the width limit */
	sixel_decoder_feed(d, "!999999999~!4294967296~", 23);
	CHECK(sixel_decoder_memory(d) - before <= (size_t)30000 * 6 * 4);
	sixel_decoder_free(d);

	d = sixel_decoder_new(0, 0, 0, 100, 100, NULL);
	sixel_decoder_feed(d, "!999999999~", 11);
	CHECK(sixel_decoder_memory(d) <= sizeof(struct sixel_palette) + 1024 + 100 * 6 * 4);
	CHECK(sixel_decoder_finish(d, &img) == 0);
	CHECK(img.width == 100 && img.height == 6);
	sixel_image_free(&img);
	sixel_decoder_free(d);
}

/* Fed in pieces of every size (1..7 bytes), the image is the same. */
static void test_pieces(void)
{
	const char *s = "\"1;1;7;9#4;2;10;20;30#4!3~$#1;1;200;40;60A-#4!2NW$??#2!4@";
	struct sixel_image whole, img;

	CHECK(decode(s, 1, &whole) == 0);
	for (size_t piece = 1; piece < 8; piece++) {
		struct sixel_decoder *d = sixel_decoder_new(0, 1, BG, 1000, 1000, NULL);
		size_t len = strlen(s);
		for (size_t i = 0; i < len; i += piece)
			sixel_decoder_feed(d, s + i, len - i < piece ? len - i : piece);
		CHECK(sixel_decoder_finish(d, &img) == 0);
		check_pixels(&img, whole.width, whole.height, whole.pixels, __LINE__);
		sixel_image_free(&img);
		sixel_decoder_free(d);
	}
	CHECK(whole.width == 7 && whole.height == 11);
	sixel_image_free(&whole);
}

/* A 1920x1080 image of 256 registers, in bands of runs and single sixels as
 * encoders write them; prints how long decoding takes. */
static void test_speed(void)
{
	size_t cap = 16u << 20, n = 0;
	char *s = malloc(cap);
	struct sixel_image img;
	struct timespec t0, t1;

	n += (size_t)sprintf(s + n, "\"1;1;1920;1080");
	for (unsigned c = 0; c < 256; c++)
		n += (size_t)sprintf(s + n, "#%u;2;%u;%u;%u", c, c * 100 / 255, (c * 7) % 101,
				     (c * 13) % 101);
	for (unsigned band = 0; band < 180; band++) {
		for (unsigned c = 0; c < 16; c++) {
			n += (size_t)sprintf(s + n, "#%u", (band + c * 16) % 256);
			for (unsigned x = 0; x < 1920; x += 32) {
				if ((x / 32 + c) % 3 == 0)
					n += (size_t)sprintf(s + n, "!32%c",
							     '?' + (int)((x + c) % 64));
				else
					for (unsigned k = 0; k < 32; k++)
						s[n++] = (char)('?' + (x + k + c) % 64);
			}
			s[n++] = '$';
		}
		s[n++] = '-';
	}
	struct sixel_decoder *d = sixel_decoder_new(0, 0, 0, 1920, 1080, NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	sixel_decoder_feed(d, s, n);
	CHECK(sixel_decoder_finish(d, &img) == 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	fprintf(stderr, "1920x1080, %zu bytes of sixel data: %.1f ms of CPU time\n", n,
		(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	CHECK(img.width == 1920 && img.height == 1080);
	sixel_image_free(&img);
	sixel_decoder_free(d);
	free(s);
}

int main(void)
{
	RUN(test_sixels);
	RUN(test_repeat_cr_nl);
	RUN(test_registers);
	RUN(test_background);
	RUN(test_clip);
	RUN(test_pieces);
	RUN(test_speed);
	return TESTS_RESULT();
}
