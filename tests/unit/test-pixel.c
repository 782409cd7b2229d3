/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../daemon/color/pixel.h"
#include "tests.h"

static struct fb_var_screeninfo var_rgb(unsigned bpp, unsigned ro, unsigned rl, unsigned go,
					unsigned gl, unsigned bo, unsigned bl)
{
	struct fb_var_screeninfo v = {.bits_per_pixel = bpp};

	v.red = (struct fb_bitfield){ro, rl, 0};
	v.green = (struct fb_bitfield){go, gl, 0};
	v.blue = (struct fb_bitfield){bo, bl, 0};
	return v;
}

static void test_formats(void)
{
	struct fb_fix_screeninfo fix = {.type = FB_TYPE_PACKED_PIXELS,
					.visual = FB_VISUAL_TRUECOLOR};
	struct pixel_format pf;
	struct fb_var_screeninfo v;
	struct rgb orange = {0xff, 0x80, 0x10};

	/* xRGB8888 */
	v = var_rgb(32, 16, 8, 8, 8, 0, 8);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK_EQ_U(pf.bytes_per_pixel, 4);
	CHECK_EQ_U(pixel_pack_rgb(&pf, orange), 0xff8010);

	/* BGR 32 bpp */
	v = var_rgb(32, 0, 8, 8, 8, 16, 8);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK_EQ_U(pixel_pack_rgb(&pf, orange), 0x1080ff);

	/* 24 bpp */
	v = var_rgb(24, 16, 8, 8, 8, 0, 8);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK_EQ_U(pf.bytes_per_pixel, 3);
	CHECK_EQ_U(pixel_pack_rgb(&pf, orange), 0xff8010);

	/* RGB565 */
	v = var_rgb(16, 11, 5, 5, 6, 0, 5);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK_EQ_U(pf.bytes_per_pixel, 2);
	CHECK_EQ_U(pixel_pack_rgb(&pf, orange), (0x1fu << 11) | (0x20u << 5) | 0x02u);

	/* RGB555 (15 bpp) */
	v = var_rgb(15, 10, 5, 5, 5, 0, 5);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK_EQ_U(pf.bytes_per_pixel, 2);
	CHECK_EQ_U(pixel_pack_rgb(&pf, orange), (0x1fu << 10) | (0x10u << 5) | 0x02u);

	/* directcolour is packed like truecolour */
	fix.visual = FB_VISUAL_DIRECTCOLOR;
	v = var_rgb(32, 16, 8, 8, 8, 0, 8);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK(!pf.indexed);
	CHECK_EQ_U(pixel_pack_rgb(&pf, orange), 0xff8010);
}

static void test_blend(void)
{
	struct fb_fix_screeninfo fix = {.type = FB_TYPE_PACKED_PIXELS,
					.visual = FB_VISUAL_TRUECOLOR};
	struct fb_var_screeninfo v = var_rgb(32, 16, 8, 8, 8, 0, 8);
	struct pixel_format pf;

	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK_EQ_U(pixel_blend(&pf, 0xffffff, 0, 0), 0);
	CHECK_EQ_U(pixel_blend(&pf, 0xffffff, 0, 255), 0xffffff);
	/* (0 * 127 + 255 * 128 + 127) / 255 = 128 */
	CHECK_EQ_U(pixel_blend(&pf, 0xffffff, 0, 128), 0x808080);
	/* per channel: red 0xaa over 0x10 at 64 -> (16*191 + 170*64 + 127) / 255 = 55 */
	CHECK_EQ_U(pixel_blend(&pf, 0xaa0000, 0x100000, 64), 0x370000);
	/* blending towards a darker foreground */
	CHECK_EQ_U(pixel_blend(&pf, 0x000000, 0x0000ff, 51), 0x0000cc);

	/* RGB565: 5- and 6-bit channels widen with their top bits repeated */
	v = var_rgb(16, 11, 5, 5, 6, 0, 5);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK_EQ_U(pixel_blend(&pf, 0xffff, 0, 255), 0xffff);
	CHECK_EQ_U(pixel_blend(&pf, 0xffff, 0, 128),
		   pixel_pack_rgb(&pf, (struct rgb){128, 128, 128}));

	/* 8 bpp: no colours between entries */
	fix.visual = FB_VISUAL_PSEUDOCOLOR;
	v = (struct fb_var_screeninfo){.bits_per_pixel = 8};
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK_EQ_U(pixel_blend(&pf, 7, 1, 127), 1);
	CHECK_EQ_U(pixel_blend(&pf, 7, 1, 128), 7);
}

static void test_refused(void)
{
	struct fb_fix_screeninfo fix = {.type = FB_TYPE_PACKED_PIXELS,
					.visual = FB_VISUAL_PSEUDOCOLOR};
	struct fb_var_screeninfo v = {.bits_per_pixel = 8};
	struct pixel_format pf;

	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK(pf.indexed);

	v.bits_per_pixel = 4;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	v.bits_per_pixel = 2;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	/* 1 bpp pseudocolour; monochrome at 2 bpp */
	v.bits_per_pixel = 1;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	fix.visual = FB_VISUAL_MONO01;
	v.bits_per_pixel = 2;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	/* planar monochrome */
	v.bits_per_pixel = 1;
	fix.type = FB_TYPE_PLANES;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	fix.type = FB_TYPE_PLANES;
	fix.visual = FB_VISUAL_PSEUDOCOLOR;
	v.bits_per_pixel = 8;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	fix.type = FB_TYPE_VGA_PLANES;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	/* pseudocolour beyond 8 bpp, static pseudocolour, fourcc */
	fix.type = FB_TYPE_PACKED_PIXELS;
	v.bits_per_pixel = 16;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	fix.visual = FB_VISUAL_STATIC_PSEUDOCOLOR;
	v.bits_per_pixel = 8;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	/* truecolour with a bitfield outside the pixel */
	fix.visual = FB_VISUAL_TRUECOLOR;
	v = var_rgb(16, 16, 8, 8, 8, 0, 8);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
	v = var_rgb(32, 16, 0, 8, 8, 0, 8);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == -ENOTSUP);
}

/* Pixels in memory as fbdev lays them out (the kernel's cfb/sys blitters
 * with fb_be_math()): 16 and 32 bpp values in the CPU's byte order, 24 bpp
 * the 24-bit value in the CPU's byte order too (on a big-endian CPU the
 * field at offset 16 is the first byte), 1 bpp the leftmost pixel in the
 * lowest bit on a little-endian CPU, the highest on a big-endian one. The
 * bytes expected are written out for each order, not computed with the
 * code under test: on s390x this checks the big-endian layout. */
static void test_store(void)
{
	const bool be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	struct fb_fix_screeninfo fix = {.type = FB_TYPE_PACKED_PIXELS,
					.visual = FB_VISUAL_TRUECOLOR};
	struct fb_var_screeninfo v;
	struct pixel_format pf;
	uint8_t buf[8];

	memset(buf, 0xee, sizeof(buf));
	pixel_store(buf, 3, 0x112233);
	if (be)
		CHECK(buf[0] == 0x11 && buf[1] == 0x22 && buf[2] == 0x33 && buf[3] == 0xee);
	else
		CHECK(buf[0] == 0x33 && buf[1] == 0x22 && buf[2] == 0x11 && buf[3] == 0xee);
	pixel_store(buf, 1, 0x1ab);
	CHECK(buf[0] == 0xab && buf[1] == 0x22);
	pixel_store(buf, 2, 0xbeef);
	if (be)
		CHECK(buf[0] == 0xbe && buf[1] == 0xef && buf[2] == 0x33);
	else
		CHECK(buf[0] == 0xef && buf[1] == 0xbe && buf[2] == 0x11);
	pixel_store(buf, 4, 0xdeadbeef);
	if (be)
		CHECK(buf[0] == 0xde && buf[1] == 0xad && buf[2] == 0xbe && buf[3] == 0xef &&
		      buf[4] == 0xee);
	else
		CHECK(buf[0] == 0xef && buf[1] == 0xbe && buf[2] == 0xad && buf[3] == 0xde &&
		      buf[4] == 0xee);

	/* pure red at each depth, from the driver's bitfields to the bytes */
	v = var_rgb(24, 16, 8, 8, 8, 0, 8);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	memset(buf, 0, sizeof(buf));
	pixel_store(buf, pf.bytes_per_pixel, pixel_pack_rgb(&pf, (struct rgb){0xff, 0, 0}));
	CHECK_EQ_U(buf[be ? 0 : 2], 0xff);
	CHECK_EQ_U(buf[be ? 2 : 0], 0);
	v = var_rgb(16, 11, 5, 5, 6, 0, 5);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	memset(buf, 0, sizeof(buf));
	pixel_store(buf, pf.bytes_per_pixel, pixel_pack_rgb(&pf, (struct rgb){0xff, 0, 0}));
	CHECK_EQ_U(buf[be ? 0 : 1], 0xf8);
	CHECK_EQ_U(buf[be ? 1 : 0], 0);
	v = var_rgb(32, 16, 8, 8, 8, 0, 8);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	memset(buf, 0, sizeof(buf));
	pixel_store(buf, pf.bytes_per_pixel, pixel_pack_rgb(&pf, (struct rgb){0xff, 0, 0}));
	CHECK_EQ_U(buf[be ? 1 : 2], 0xff);
	CHECK_EQ_U(buf[be ? 2 : 1], 0);
}

static void test_palette(void)
{
	struct palette p;
	struct pixel_format indexed = {.bits_per_pixel = 8, .bytes_per_pixel = 1, .indexed = true};

	CHECK(!palette_init(&p, PALETTE_LINUX, NULL));
	CHECK(p.colors[1].r == 0xaa && p.colors[1].g == 0 && p.colors[1].b == 0);
	CHECK(p.colors[3].r == 0xaa && p.colors[3].g == 0x55 && p.colors[3].b == 0);
	CHECK(p.colors[15].r == 0xff && p.colors[15].g == 0xff);
	/* xterm cube and ramp */
	CHECK(p.colors[16].r == 0 && p.colors[16].g == 0 && p.colors[16].b == 0);
	CHECK(p.colors[21].b == 0xff && p.colors[21].r == 0);
	CHECK(p.colors[196].r == 0xff && p.colors[196].g == 0 && p.colors[196].b == 0);
	CHECK(p.colors[231].r == 0xff && p.colors[231].g == 0xff && p.colors[231].b == 0xff);
	CHECK(p.colors[232].r == 8 && p.colors[255].r == 238);
	/* every cube and ramp colour maps back to itself at 8 bpp */
	for (unsigned i = 16; i < 256; i++)
		CHECK_EQ_U(palette_nearest(&p, p.colors[i]), i);
	/* the console colours sit where fbcon puts them: VGA order */
	CHECK_EQ_U(pixel_from_index(&indexed, &p, 1), 4);
	CHECK_EQ_U(pixel_from_index(&indexed, &p, 4), 1);
	CHECK_EQ_U(pixel_from_index(&indexed, &p, 9), 12);
	CHECK_EQ_U(pixel_from_index(&indexed, &p, 7), 7);
	CHECK_EQ_U(pixel_from_index(&indexed, &p, 100), 100);

	CHECK(!palette_init(&p, PALETTE_XTERM, NULL));
	CHECK(p.colors[1].r == 0xcd && p.colors[4].b == 0xee);
}

static void test_palette_sysfs(void)
{
	char dir[] = "/tmp/consoled-test-XXXXXX";
	static const char *const files[3][2] = {
	    {"default_red", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,255\n"},
	    {"default_grn", "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n"},
	    {"default_blu", "16,0,0,0,0,0,0,0,0,0,0,0,0,0,0,17\n"},
	};
	struct palette p;
	char path[256];

	CHECK(mkdtemp(dir) != NULL);
	for (unsigned i = 0; i < 3; i++) {
		FILE *f;
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		f = fopen(path, "w");
		CHECK(f != NULL);
		fputs(files[i][1], f);
		fclose(f);
	}
	CHECK(palette_init(&p, PALETTE_LINUX, dir));
	CHECK(p.colors[0].r == 1 && p.colors[0].b == 16);
	CHECK(p.colors[15].r == 255 && p.colors[15].b == 17);

	/* malformed: 15 values -> built-in table */
	snprintf(path, sizeof(path), "%s/default_grn", dir);
	FILE *f = fopen(path, "w");
	fputs("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n", f);
	fclose(f);
	CHECK(!palette_init(&p, PALETTE_LINUX, dir));
	CHECK(p.colors[1].r == 0xaa);

	for (unsigned i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		unlink(path);
	}
	rmdir(dir);

	uint8_t ch[16];
	CHECK(palette_parse_channel("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,300", ch) < 0);
	CHECK(palette_parse_channel("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", ch) < 0);
	CHECK(palette_parse_channel("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,", ch) < 0);
	CHECK(palette_parse_channel("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,x", ch) < 0);
	CHECK(palette_parse_channel("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15", ch) == 0);
	CHECK(ch[15] == 15);
}

/* The reference: pixel x's value at bit position x * bits of the line,
 * counted from the lowest bit of the first byte (lsb_first) or the highest. */
static unsigned ref_pixel(const uint8_t *line, unsigned x, unsigned bits, bool lsb_first)
{
	unsigned bit = x * bits, byte = bit / 8, in = bit % 8;
	unsigned shift = lsb_first ? in : 8 - in - bits;

	return (line[byte] >> shift) & ((1u << bits) - 1);
}

static void test_pack(void)
{
	static const unsigned widths[] = {1, 7, 8, 9, 15, 16, 17, 640, 641};
	uint8_t src[641], dst[700];

	srand(17);
	for (unsigned bits = 1; bits <= 4; bits *= 2)
		for (unsigned lsb = 0; lsb < 2; lsb++)
			for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
				unsigned n = widths[w];
				size_t bytes = ((size_t)n * bits + 7) / 8;

				for (unsigned i = 0; i < n; i++)
					src[i] = (uint8_t)(rand() & ((1 << bits) - 1));
				memset(dst, 0xa5, sizeof(dst));
				pixel_pack_line(dst, src, n, bits, lsb);
				for (unsigned i = 0; i < n; i++)
					CHECK_EQ_U(ref_pixel(dst, i, bits, lsb), src[i]);
				/* the rest of the last byte is 0, nothing after it
				 * is written */
				for (unsigned i = n; i < bytes * 8 / bits; i++)
					CHECK_EQ_U(ref_pixel(dst, i, bits, lsb), 0);
				CHECK_EQ_U(dst[bytes], 0xa5);
			}

	/* two known lines: the leftmost pixel set */
	uint8_t one[8] = {1, 0, 0, 0, 0, 0, 0, 0}, b;
	pixel_pack_line(&b, one, 8, 1, true);
	CHECK_EQ_U(b, 0x01);
	pixel_pack_line(&b, one, 8, 1, false);
	CHECK_EQ_U(b, 0x80);
	uint8_t two[2] = {3, 1};
	pixel_pack_line(&b, two, 2, 4, false);
	CHECK_EQ_U(b, 0x31);
	pixel_pack_line(&b, two, 2, 4, true);
	CHECK_EQ_U(b, 0x13);
}

static void test_mono(void)
{
	struct fb_fix_screeninfo fix = {.type = FB_TYPE_PACKED_PIXELS, .visual = FB_VISUAL_MONO01};
	/* vfb reports 8-bit colour fields at 1 bpp: they do not matter */
	struct fb_var_screeninfo v = var_rgb(1, 0, 8, 0, 8, 0, 8);
	struct pixel_format pf;
	struct palette p;
	bool le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

	palette_init(&p, PALETTE_LINUX, NULL);
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK(pf.mono && pf.indexed);
	CHECK_EQ_U(pf.bits_per_pixel, 1);
	CHECK_EQ_U(pf.bytes_per_pixel, 1);
	CHECK(pf.lsb_first == le);
	/* MONO01: a set bit is black; fbcon's foreground is 0 */
	CHECK_EQ_U(pf.mono_fg, 0);
	CHECK_EQ_U(pf.mono_bg, 1);
	CHECK_EQ_U(pixel_from_index(&pf, &p, p.bg), 1);
	CHECK_EQ_U(pixel_from_index(&pf, &p, PALETTE_BG), 1);
	for (unsigned i = 0; i < PALETTE_ENTRIES; i++)
		if (i != p.bg && i != PALETTE_BG)
			CHECK_EQ_U(pixel_from_index(&pf, &p, i), 0);
	CHECK_EQ_U(pixel_blend(&pf, 0, 1, 200), 0);
	CHECK_EQ_U(pixel_blend(&pf, 0, 1, 100), 1);
	CHECK_EQ_U(pixel_line_bytes(&pf, 640), 80);
	CHECK_EQ_U(pixel_line_bytes(&pf, 641), 81);

	fix.visual = FB_VISUAL_MONO10;
	v.nonstd = FB_NONSTD_REV_PIX_IN_B;
	CHECK(pixel_format_from_fb(&fix, &v, &pf) == 0);
	CHECK(pf.lsb_first == !le);
	CHECK_EQ_U(pf.mono_fg, 1);
	CHECK_EQ_U(pf.mono_bg, 0);
	CHECK_EQ_U(pixel_from_index(&pf, &p, 7), 1);
	CHECK_EQ_U(pixel_from_index(&pf, &p, p.bg), 0);
}

int main(void)
{
	RUN(test_formats);
	RUN(test_blend);
	RUN(test_refused);
	RUN(test_store);
	RUN(test_palette);
	RUN(test_palette_sysfs);
	RUN(test_pack);
	RUN(test_mono);
	return TESTS_RESULT();
}
