/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <zlib.h>

#include "../../fonts/font.h"
#include "tests.h"

static void test_builtin(void)
{
	struct font *f = NULL;

	CHECK(font_load_builtin(&f) == 0);
	CHECK_EQ_U(f->width, 8);
	CHECK_EQ_U(f->height, 16);
	CHECK_EQ_U(f->glyph_count, 256);
	/* 'A' has a glyph with pixels; space is blank; unknown -> fallback */
	unsigned a = font_lookup(f, 'A');
	unsigned sp = font_lookup(f, ' ');
	unsigned bits = 0, spbits = 0;
	for (unsigned i = 0; i < f->glyph_size; i++) {
		bits += (unsigned)__builtin_popcount(font_glyph(f, a)[i]);
		spbits += (unsigned)__builtin_popcount(font_glyph(f, sp)[i]);
	}
	CHECK(bits > 10);
	CHECK_EQ_U(spbits, 0);
	CHECK(font_lookup(f, 0x4e00) == f->fallback_glyph);
	CHECK(font_lookup(f, 0x1f600) == f->fallback_glyph);
	/* Latin-1 letters are in Lat15 */
	CHECK(font_lookup(f, 0xe9) != f->fallback_glyph);
	font_free(f);
}

/* Builds a PSF2 font in memory: 3 glyphs of 10x3, a Unicode table with a
 * sequence entry and an astral code point. */
static size_t make_psf2(uint8_t *buf)
{
	uint8_t *p = buf;
	const uint32_t hdr[8] = {0x864ab572u, 0, 32, 1, 3, 6, 3, 10};

	for (unsigned i = 0; i < 8; i++)
		put_le(p + 4 * i, hdr[i], 4); /* PSF2 is little-endian */
	p += sizeof(hdr);
	for (unsigned g = 0; g < 3; g++)
		for (unsigned i = 0; i < 6; i++)
			*p++ = (uint8_t)(g * 16 + i);
	/* glyph 0: 'a' */
	*p++ = 'a';
	*p++ = 0xff;
	/* glyph 1: U+00E9, then a sequence e + U+0301 which must not map 'e' */
	*p++ = 0xc3;
	*p++ = 0xa9;
	*p++ = 0xfe;
	*p++ = 'e';
	*p++ = 0xcc;
	*p++ = 0x81;
	*p++ = 0xff;
	/* glyph 2: U+1F600, '?' and again 'a' (the last glyph listed wins) */
	*p++ = 0xf0;
	*p++ = 0x9f;
	*p++ = 0x98;
	*p++ = 0x80;
	*p++ = '?';
	*p++ = 'a';
	*p++ = 0xff;
	return (size_t)(p - buf);
}

static void test_psf2(void)
{
	uint8_t buf[256];
	size_t n = make_psf2(buf);
	struct font *f = NULL;
	const char *reason = NULL;

	CHECK(font_load_psf_buffer(buf, n, &f, &reason) == 0);
	if (!f)
		return;
	CHECK_EQ_U(f->width, 10);
	CHECK_EQ_U(f->height, 3);
	CHECK_EQ_U(f->stride, 2);
	CHECK_EQ_U(font_lookup(f, 'a'), 2);
	CHECK_EQ_U(font_lookup(f, 0xe9), 1);
	CHECK_EQ_U(font_lookup(f, 0x1f600), 2);
	CHECK_EQ_U(font_lookup(f, 'e'), 2); /* not mapped: falls back to '?' */
	CHECK_EQ_U(font_glyph(f, 1)[0], 16);
	font_free(f);
}

static void test_psf1(void)
{
	uint8_t buf[4 + 512 * 2 + 4096];
	uint8_t *p = buf;
	struct font *f = NULL;

	*p++ = 0x36;
	*p++ = 0x04;
	*p++ = 0x03; /* 512 glyphs, has table */
	*p++ = 2;    /* 8x2 */
	for (unsigned g = 0; g < 512; g++) {
		*p++ = (uint8_t)g;
		*p++ = (uint8_t)(g >> 8);
	}
	for (unsigned g = 0; g < 512; g++) {
		unsigned u = g == 300 ? 0x263a : (g < 128 ? g : 0xfffe);
		if (u != 0xfffe) {
			*p++ = (uint8_t)u;
			*p++ = (uint8_t)(u >> 8);
		}
		*p++ = 0xff;
		*p++ = 0xff;
	}
	CHECK(font_load_psf_buffer(buf, (size_t)(p - buf), &f, NULL) == 0);
	if (!f)
		return;
	CHECK_EQ_U(f->glyph_count, 512);
	CHECK_EQ_U(font_lookup(f, 0x263a), 300);
	CHECK_EQ_U(font_lookup(f, 'x'), 'x');
	CHECK_EQ_U(font_glyph(f, 300)[0], 300 & 0xff);
	CHECK_EQ_U(font_lookup(f, 0x2603), '?');
	font_free(f);
}

static void test_malformed(void)
{
	uint8_t buf[256];
	size_t n = make_psf2(buf);
	struct font *f = NULL;
	const char *reason = NULL;
	uint32_t v;

	/* truncated glyph data */
	CHECK(font_load_psf_buffer(buf, 40, &f, &reason) == -EINVAL);
	CHECK(reason != NULL);
	/* not a font */
	CHECK(font_load_psf_buffer("hello world, no font here at all!!", 34, &f, &reason) ==
	      -EINVAL);
	CHECK(font_load_psf_buffer(buf, 3, &f, &reason) == -EINVAL);
	/* glyph size inconsistent with width/height */
	v = 7;
	put_le(buf + 20, v, 4);
	CHECK(font_load_psf_buffer(buf, n, &f, &reason) == -EINVAL);
	/* absurd glyph count */
	n = make_psf2(buf);
	v = 0xffffffffu;
	put_le(buf + 16, v, 4);
	CHECK(font_load_psf_buffer(buf, n, &f, &reason) == -EINVAL);
	/* header size past the end */
	n = make_psf2(buf);
	v = 100000;
	put_le(buf + 8, v, 4);
	CHECK(font_load_psf_buffer(buf, n, &f, &reason) == -EINVAL);
	/* zero width */
	n = make_psf2(buf);
	v = 0;
	put_le(buf + 28, v, 4);
	CHECK(font_load_psf_buffer(buf, n, &f, &reason) == -EINVAL);
	/* a truncated Unicode table is fine: what is there is used */
	n = make_psf2(buf);
	CHECK(font_load_psf_buffer(buf, n - 3, &f, &reason) == 0);
	font_free(f);
}

static void test_file_gz(void)
{
	char path[] = "/tmp/consoled-font-XXXXXX";
	int fd = mkstemp(path);
	uint8_t buf[256];
	size_t n = make_psf2(buf);
	struct font *f = NULL;
	gzFile gz;

	CHECK(fd >= 0);
	gz = gzdopen(fd, "wb");
	gzwrite(gz, buf, (unsigned)n);
	gzclose(gz);
	CHECK(font_load_psf_file(path, &f, NULL) == 0);
	CHECK(f && f->width == 10);
	font_free(f);
	unlink(path);
	CHECK(font_load_psf_file("/nonexistent/font.psf", &f, NULL) == -ENOENT);
}

int main(void)
{
	RUN(test_builtin);
	RUN(test_psf2);
	RUN(test_psf1);
	RUN(test_malformed);
	RUN(test_file_gz);
	return TESTS_RESULT();
}
